"""markdown-it's block stage, re-run from the first top-level block an edit can have changed.

A keystroke in a 900-line document used to re-run the whole block parse (about 40 % of an edit's time). Block
structure is decided top-down: a top-level block depends on its own lines, on the first non-blank line after it
(where a list or an indented code block would continue) and on one line beyond that (a table's delimiter row
interrupts a paragraph). So the blocks of the previous parse of the same document that end well before the
first changed line are kept as they are; the parse restarts at the end of the last of them. It stops again at a
block of the previous parse after the last changed line when that block follows a blank line and the re-parsed
part cannot continue into it (it ends before the blank line and is not a list or indented code); the blocks
from there on are the previous ones, moved by the change in line count.

Link reference definitions are a document-wide table (the first definition of a label wins): the kept parts
bring theirs, and the stop above is taken only when the re-parsed part defines exactly what the part it
replaces defined. Documents with footnotes are always parsed whole (footnotes move tokens to the end).

The previous parses are kept per thread (the language server edits on one thread; scan workers have their
own), a few documents each, keyed by the path `analyze_markdown` puts in the environment. The result is the
token stream a whole parse gives; `tests/test_markdown_blocks.py` compares the two after random edits."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_core.block import block as whole_block
from markdown_it.token import Token

PATH_KEY = "docbridge.path"  # the environment key naming the document parsed (absent: no memo)
_SLOTS = 8  # documents remembered per thread
_MAX_CHARS = 1_000_000
_CONTINUES_AFTER_BLANK = frozenset({"bullet_list_open", "ordered_list_open", "code_block"})


@dataclass(slots=True)
class _Parse:
    md: Any  # the parser that made it (another parser's rules may differ)
    lines: list[str]
    tokens: list[Token]  # the block stage's tokens; inline tokens get their children later, in place
    starts: list[int]  # index in `tokens` of each top-level block's first token
    references: dict[str, dict[str, Any]]
    duplicates: list[dict[str, Any]]


_local = threading.local()


def _memo() -> OrderedDict[str, _Parse]:
    memo: OrderedDict[str, _Parse] | None = getattr(_local, "memo", None)
    if memo is None:
        memo = _local.memo = OrderedDict()
    return memo


def forget() -> None:
    """Drop this thread's previous parses (tests; memory)."""
    _memo().clear()


def incremental_block(state: StateCore) -> None:
    """The core `block` rule: a whole parse, or the previous parse of the same document with what an edit
    changed parsed again."""
    path = state.env.get(PATH_KEY)
    src = state.src
    if state.inlineMode or path is None or not src or len(src) > _MAX_CHARS or "[^" in src or "^[" in src:
        whole_block(state)
        if path is not None:
            _memo().pop(path, None)
        return
    memo = _memo()
    previous = memo.pop(path, None)
    lines = src.split("\n")
    if previous is None or previous.md is not state.md:
        whole_block(state)
    else:
        _reparse(state, previous, lines)
    memo[path] = _Parse(state.md, lines, list(state.tokens), _block_starts(state.tokens),
                        dict(state.env.get("references") or {}), list(state.env.get("duplicate_refs") or ()))
    while len(memo) > _SLOTS:
        memo.popitem(last=False)


def _block_starts(tokens: list[Token]) -> list[int]:
    return [index for index, token in enumerate(tokens) if token.level == 0 and token.nesting >= 0]


def _blank(line: str) -> bool:
    return not line.strip(" \t")


def _reset_references(env: MutableMapping[str, Any], references: dict[str, dict[str, Any]],
                      duplicates: list[dict[str, Any]]) -> None:
    env.pop("references", None)
    env.pop("duplicate_refs", None)
    if references:
        env["references"] = references
    if duplicates:
        env["duplicate_refs"] = duplicates


_Definition = tuple[str | None, str | None, str | None, int]  # label, target, title, line from the start


def _definitions(references: dict[str, dict[str, Any]], duplicates: list[dict[str, Any]], start: int,
                 end: int) -> list[_Definition]:
    """The definitions made in lines [start, end): label, target, title and position from `start`."""
    found: list[_Definition] = [(label, value.get("href"), value.get("title"), value["map"][0] - start)
             for label, value in references.items() if start <= value["map"][0] < end]
    found += [(value.get("label"), value.get("href"), value.get("title"), value["map"][0] - start)
              for value in duplicates if start <= value["map"][0] < end]
    return sorted(found, key=repr)


def _reparse(state: StateCore, previous: _Parse, lines: list[str]) -> None:
    """Fill `state.tokens` from `previous` and a parse of what the edit can have changed."""
    old_lines = previous.lines
    old_count, new_count = len(old_lines), len(lines)
    shortest = min(old_count, new_count)
    first_changed = 0
    while first_changed < shortest and old_lines[first_changed] == lines[first_changed]:
        first_changed += 1
    if first_changed == old_count == new_count:  # same text
        state.tokens.extend(_kept(previous.tokens))
        _reset_references(state.env, dict(previous.references), list(previous.duplicates))
        return
    same_tail = 0
    while same_tail < shortest - first_changed and \
            old_lines[old_count - 1 - same_tail] == lines[new_count - 1 - same_tail]:
        same_tail += 1
    old_tail_start = old_count - same_tail  # the first line of the unchanged end, in the previous text
    shift = new_count - old_count

    # keep the blocks whose lines, the first non-blank line after them and one more are all unchanged
    tokens, starts = previous.tokens, previous.starts
    kept = 0
    restart = 0
    # a first line that could open front matter opens it wherever a closing line appears later
    whole_from_top = old_lines[0].startswith("---") and not (starts and tokens[starts[0]].type == "front_matter")
    for index in ([] if whole_from_top else starts):
        block_map = tokens[index].map
        end = block_map[1] if block_map else None
        if end is None:
            break
        decider = end
        while decider < old_count and _blank(old_lines[decider]):
            decider += 1
        if decider + 1 >= first_changed:
            break
        kept += 1
        restart = end
    prefix = _kept(tokens[:starts[kept]] if kept < len(starts) else tokens)

    # a block of the previous parse, after the change and a blank line, where the parse can stop
    resume: int | None = None
    resume_line = 0  # the first line of block `resume`, in the previous text
    # front matter closes at any later line: a parse from the top that may open it runs to the end
    may_open_front_matter = restart == 0 and lines[0].startswith("---")
    for block, index in enumerate([] if may_open_front_matter else starts):
        block_map = tokens[index].map
        first = block_map[0] if block_map else None
        if first is None or block < kept:
            continue
        if first - 1 >= old_tail_start and first + shift > restart and _blank(old_lines[first - 1]):
            resume, resume_line = block, first
            break

    kept_references = {label: value for label, value in previous.references.items() if value["map"][1] <= restart}
    kept_duplicates = [value for value in previous.duplicates if value["map"][1] <= restart]
    _reset_references(state.env, dict(kept_references), list(kept_duplicates))
    block_state = StateBlock(state.src, state.md, state.env, state.tokens)
    state.tokens.extend(prefix)
    parser = state.md.block
    if resume is not None:
        stop_old = resume_line
        stop = stop_old + shift
        before = (dict(block_state.env.get("references") or {}), list(block_state.env.get("duplicate_refs") or ()))
        parser.tokenize(block_state, restart, stop)
        if _can_stop(state.tokens, stop) and \
                _definitions(previous.references, previous.duplicates, restart, stop_old) == \
                _definitions(*_added(block_state.env, before), restart, stop):
            _append_moved(state, previous, starts[resume], shift, stop_old)
            return
        del state.tokens[len(prefix):]
        _reset_references(state.env, dict(kept_references), list(kept_duplicates))
    parser.tokenize(block_state, restart, block_state.lineMax)


def _added(env: MutableMapping[str, Any], before: tuple[dict[str, Any], list[Any]]) -> tuple[dict[str, Any], list[Any]]:
    references, duplicates = before
    now = env.get("references") or {}
    return ({label: value for label, value in now.items() if label not in references},
            list(env.get("duplicate_refs") or ())[len(duplicates):])


def _can_stop(tokens: list[Token], stop: int) -> bool:
    """Whether the last top-level block parsed ends before the blank line above `stop` and cannot go on
    after it."""
    for token in reversed(tokens):
        if token.level == 0 and token.nesting >= 0:
            return token.map is not None and token.map[1] < stop and token.type not in _CONTINUES_AFTER_BLANK
    return True


def _append_moved(state: StateCore, previous: _Parse, first_token: int, shift: int, stop_old: int) -> None:
    """The previous parse's blocks from `first_token` on, and their definitions, moved by `shift` lines."""
    moved = previous.tokens[first_token:]
    state.tokens.extend([_moved(token, shift) for token in moved] if shift else _kept(moved))
    references = state.env.setdefault("references", {})
    for label, value in previous.references.items():
        if value["map"][0] >= stop_old:
            references[label] = {**value, "map": [value["map"][0] + shift, value["map"][1] + shift]}
    duplicates = [{**value, "map": [value["map"][0] + shift, value["map"][1] + shift]}
                  for value in previous.duplicates if value["map"][0] >= stop_old]
    if duplicates:
        state.env.setdefault("duplicate_refs", []).extend(duplicates)
    if not references:
        state.env.pop("references", None)


def _kept(tokens: list[Token]) -> list[Token]:
    """Tokens of the previous parse for the new one: the same objects, except inline tokens, whose children
    the inline stage fills (a previous result keeps its own)."""
    return [_moved(token, 0) if token.type == "inline" else token for token in tokens]


def _moved(token: Token, shift: int) -> Token:
    copy = Token(token.type, token.tag, token.nesting, attrs=token.attrs, map=None, level=token.level,
                 children=None, content=token.content, markup=token.markup, info=token.info,
                 meta=token.meta, block=token.block, hidden=token.hidden)
    if token.map is not None:
        copy.map = [token.map[0] + shift, token.map[1] + shift]
    return copy
