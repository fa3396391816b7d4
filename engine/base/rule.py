"""What a finding code is: its default severity, title and help (the tables: `engine.base.findings.RULES`, with the
governance gates' codes from `docbridge.engine.base.rule_catalog`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning", "info", "hint"]


class Rule(BaseModel):
    model_config = ConfigDict(frozen=True)
    code: str
    severity: Severity
    title: str
    help: str


__all__ = ["Rule", "Severity"]
