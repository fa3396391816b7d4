"""Token budgets for agent payloads.

Tokens are estimated as characters / 4 of the compact JSON (reported as `tokenMethod: "approximate"`): no
provider tokenizer, the same figure every time. Sections are dropped in a declared order until the payload
fits; the report says what was dropped. When even the minimum grounded answer does not fit, the payload is
refused (`BudgetError`) rather than sent over budget. `tokens.total` is the estimate of the emitted payload
without its own `budget` report.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any

TOKEN_METHOD = "approximate"
MIN_BUDGET, MAX_BUDGET = 1, 1_000_000


class BudgetError(Exception):
    """The minimum grounded answer does not fit the budget (exit 2)."""


def compact(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(payload: Any) -> int:
    return math.ceil(len(compact(payload)) / 4)


def check_budget(value: int, option: str = "--budget") -> int:
    if not isinstance(value, int) or not MIN_BUDGET <= value <= MAX_BUDGET:
        raise BudgetError(f"{option} must be an integer between {MIN_BUDGET} and {MAX_BUDGET:,}.")
    return value


Section = tuple[str, Callable[[dict[str, Any]], bool]]  # name, strip-in-place (returns whether it held content)


def apply_budget(payload: dict[str, Any], budget: int, sections: list[Section]) -> dict[str, Any]:
    """Drop `sections` in order until `payload` fits `budget`; add the `budget` report."""
    check_budget(budget)
    current = copy.deepcopy(payload)
    dropped = []
    for name, strip in sections:
        if estimate_tokens(current) <= budget:
            break
        if strip(current):
            dropped.append(name)
    total = estimate_tokens(current)
    if total > budget:
        raise BudgetError(f"--budget {budget} is too small for the minimum grounded answer: it needs {total} tokens "
                          f"({TOKEN_METHOD}: characters / 4) after dropping {', '.join(dropped) or 'nothing'}.")
    current["budget"] = {"budgetTokens": budget, "tokens": {"total": total, "budget": budget},
                         "fits": True, "order": [name for name, _ in sections], "dropped": dropped,
                         "kept": [name for name, _ in sections if name not in dropped],
                         "tokenMethod": TOKEN_METHOD}
    return current


def strip_key(key: str, *paths: tuple[str, ...]) -> Callable[[dict[str, Any]], bool]:
    """A stripper that removes `key` from the dicts (or lists of dicts) found at `paths`."""

    def strip(payload: dict[str, Any]) -> bool:
        removed = False
        for path in paths:
            for node in _walk(payload, path):
                if isinstance(node, dict) and node.get(key) not in (None, "", [], {}):
                    del node[key]
                    removed = True
                elif isinstance(node, dict) and key in node:
                    del node[key]
        return removed

    return strip


def _walk(node: Any, path: tuple[str, ...]) -> list[Any]:
    if not path:
        return node if isinstance(node, list) else [node]
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        return [found for item in node for found in _walk(item, path)]
    if isinstance(node, dict) and head in node:
        return _walk(node[head], rest)
    return []
