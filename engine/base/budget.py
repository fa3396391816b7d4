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


# ------------------------------------------------------------------------------------------------ compile_budget
# The budgets of the MCP tools and the Python API (behaviours §17): each section that holds content is one message
# (its content's JSON), the payload stripped of every present section is the last message and is never dropped;
# while more than one message is left and the total exceeds the budget, the oldest message (the first section in
# the declared order) is dropped. Tokens per message: ceil((len(role) + len(content)) / 4) + 2, role "user",
# lengths in UTF-16 code units.

Extractor = Callable[[dict[str, Any]], list[Any]]  # removes a section's content in place and returns what it removed
ROLE = "user"


def message_tokens(content: str) -> int:
    units = len(content.encode("utf-16-le")) // 2
    return math.ceil((len(ROLE) + units) / 4) + 2


def compile_budget(payload: dict[str, Any], budget: int, sections: list[tuple[str, Extractor]],
                   option: str = "budgetTokens") -> dict[str, Any]:
    """`payload` with the sections dropped (in the declared order) until it fits `budget`, plus its `budget`
    report; `BudgetError` when the core alone (the payload without any section) does not fit."""
    check_budget(budget, option)
    present: list[tuple[str, Extractor, int]] = []
    core = copy.deepcopy(payload)
    for name, extract in sections:
        removed = extract(core)
        if any(value not in (None, "", [], {}) for value in removed):
            present.append((name, extract, message_tokens(compact(removed))))
    core_tokens = message_tokens(compact(core))
    kept = list(present)
    total = core_tokens + sum(tokens for _, _, tokens in kept)
    dropped: list[str] = []
    while kept and total > budget:
        name, _, tokens = kept.pop(0)
        dropped.append(name)
        total -= tokens
    if total > budget:
        raise BudgetError(f"{option} {budget} is too small for the minimum grounded answer: its core needs "
                          f"{core_tokens} tokens ({TOKEN_METHOD}).")
    result = copy.deepcopy(payload)
    for name, extract, _ in present:
        if name in dropped:
            extract(result)
    result["budget"] = {"budgetTokens": budget,
                        "tokens": {"total": total, "budget": budget, "core": core_tokens,
                                   "sections": {name: tokens for name, _, tokens in present}},
                        "fits": True, "order": [name for name, _ in sections],
                        "kept": [name for name, _, _ in kept], "dropped": dropped, "tokenMethod": TOKEN_METHOD}
    return result


def remove_key(key: str, *paths: tuple[str, ...]) -> Extractor:
    """An extractor that removes `key` from the dicts (or lists of dicts) found at `paths`."""

    def extract(payload: dict[str, Any]) -> list[Any]:
        removed = []
        for path in paths:
            for node in _walk(payload, path):
                if isinstance(node, dict) and key in node:
                    removed.append(node.pop(key))
        return removed

    return extract


def _walk(node: Any, path: tuple[str, ...]) -> list[Any]:
    if not path:
        return node if isinstance(node, list) else [node]
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        return [found for item in node for found in _walk(item, path)]
    if isinstance(node, dict) and head in node:
        return _walk(node[head], rest)
    return []
