"""`docbridge.*` settings, read from `initializationOptions` and `workspace/configuration`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as T

SEVERITIES = ("error", "warning", "info", "hint", "off")
LOG_LEVELS = {"error": T.MessageType.Error, "warning": T.MessageType.Warning, "info": T.MessageType.Info,
              "debug": T.MessageType.Log}


def _section(raw: dict[Any, Any], key: str) -> dict[Any, Any]:
    """`raw[key]` if it is an object, else an empty one (the section's settings keep their defaults)."""
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


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
        diagnostics = _section(raw, "diagnostics")
        if isinstance(diagnostics.get("enabled"), bool):
            settings.diagnostics_enabled = diagnostics["enabled"]
        debounce = diagnostics.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 60_000:
            settings.debounce_ms = int(debounce)
        if isinstance(diagnostics.get("severity"), dict):
            settings.severity = {str(k): str(v) for k, v in diagnostics["severity"].items() if v in SEVERITIES}
        lens = _section(raw, "codeLens")
        if isinstance(lens.get("enabled"), bool):
            settings.code_lens = lens["enabled"]
        completion = _section(raw, "completion")
        items = completion.get("maxItems")
        if isinstance(items, int) and not isinstance(items, bool) and 0 < items <= 10_000:
            settings.completion_max_items = items
        search = _section(raw, "search")
        warm = search.get("warmAfterMs")
        if isinstance(warm, (int, float)) and not isinstance(warm, bool) and 0 <= warm <= 3_600_000:
            settings.search_warm_after_ms = int(warm)
        level = _section(raw, "log").get("level")
        if isinstance(level, str) and level in LOG_LEVELS:  # a list or an object is unhashable: not a level
            settings.log_level = level
        approver = raw.get("approver")
        if isinstance(approver, str) and approver.strip():
            settings.approver = approver.strip()
        return settings
