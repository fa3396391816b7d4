"""The names the governance commands accept, kept apart from the engines that use them so that building the
command line (for every command, `search` included) imports neither those engines nor pydantic."""

from __future__ import annotations

RECONCILIATION_SCOPES = ("file", "module", "package", "area")
RULES_MODES = ("default", "recommended", "strict")
