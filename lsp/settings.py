"""`docbridge.*` settings, read from `initializationOptions` and `workspace/configuration`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as T

SEVERITIES = ("error", "warning", "info", "hint", "off")
LOG_LEVELS = {"error": T.MessageType.Error, "warning": T.MessageType.Warning, "info": T.MessageType.Info,
              "debug": T.MessageType.Log}


@dataclass(slots=True)
class Settings:
    diagnostics_enabled: bool = True
    debounce_ms: int = 200
    severity: dict[str, str] = field(default_factory=dict)
    code_lens: bool = True
    completion_max_items: int = 50
    log_level: str = "info"
    # once a search index was used, it is rebuilt after this much quiet following a change (0: only on demand)
    search_warm_after_ms: int = 2000
    approver: str | None = None  # who approves enrichment proposals (else `git config user.name`)

    @classmethod
    def from_client(cls, raw: Any) -> Settings:
        """Settings from what a client sent; anything malformed keeps its default."""
        settings = cls()
        if not isinstance(raw, dict):
            return settings
        diagnostics = raw.get("diagnostics") if isinstance(raw.get("diagnostics"), dict) else {}
        if isinstance(diagnostics.get("enabled"), bool):
            settings.diagnostics_enabled = diagnostics["enabled"]
        debounce = diagnostics.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 60_000:
            settings.debounce_ms = int(debounce)
        if isinstance(diagnostics.get("severity"), dict):
            settings.severity = {str(k): str(v) for k, v in diagnostics["severity"].items() if v in SEVERITIES}
        lens = raw.get("codeLens") if isinstance(raw.get("codeLens"), dict) else {}
        if isinstance(lens.get("enabled"), bool):
            settings.code_lens = lens["enabled"]
        completion = raw.get("completion") if isinstance(raw.get("completion"), dict) else {}
        items = completion.get("maxItems")
        if isinstance(items, int) and not isinstance(items, bool) and 0 < items <= 10_000:
            settings.completion_max_items = items
        search = raw.get("search") if isinstance(raw.get("search"), dict) else {}
        warm = search.get("warmAfterMs")
        if isinstance(warm, (int, float)) and not isinstance(warm, bool) and 0 <= warm <= 3_600_000:
            settings.search_warm_after_ms = int(warm)
        logging_ = raw.get("log") if isinstance(raw.get("log"), dict) else {}
        if logging_.get("level") in LOG_LEVELS:
            settings.log_level = logging_["level"]
        approver = raw.get("approver")
        if isinstance(approver, str) and approver.strip():
            settings.approver = approver.strip()
        return settings
