"""Markdown analyzer: one document's facts, a pure function of its path and text.

markdown-it-py (CommonMark + GFM tables, task lists, footnotes, autolinks, front matter) plus a small
`[[wiki link]]` rule. markdown-it gives inline tokens no positions, so the inline rules we care about are
wrapped to record where in the inline source each token starts and ends; those offsets are then mapped
back to (line, column) of the document. Fenced code, indented code and generated regions never yield
links or mentions; the names written in a fence of a JS/TS language are kept apart (`fence_tokens`), for
resolution to cite exported symbols by (a citation that never enters ranking, see `references.py`).
"""

from __future__ import annotations

import bisect
import functools
import re
import sys
import unicodedata
from typing import Any, Literal

import regex
import yaml
from docbridge.engine.base.hashing import region_hash, sha256_bytes
from docbridge.engine.base.model import (
    CodeSpan,
    Declaration,
    FenceToken,
    Heading,
    Issue,
    Link,
    MarkdownFacts,
    Region,
)
from docbridge.engine.discovery import versions
from docbridge.engine.discovery.markdown_blocks import PATH_KEY, incremental_block
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_core.text_join import text_join
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.gfm import gfm_plugin
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ANALYZER_VERSION = versions.MARKDOWN
SUMMARY_LIMIT = 400
BODY_LIMIT = 16000
MAX_HEADINGS = 1000
# Budgets: a document beyond one of them is skipped with a counted reason (`budget_reason`), so the time
# analysis takes stays linear in the input whatever its shape
MAX_LINE_CHARS = 100_000  # one line longer than this: `line-too-long`
MAX_NESTING = 16  # more nested containers (`>`, list items) on one line: `nesting-too-deep`
# frontmatter by which a site places a page in its navigation (Eleventy, Docusaurus, Just the Docs, Hugo...)
NAVIGATION_KEYS = ("eleventyNavigation", "sidebar_position", "sidebar_label", "nav_order", "order", "weight", "menu",
                   "navigation", "sidebar", "nav", "parent")
FRONTMATTER_KEYS = ("title", "type", "audience", "owner", "lifecycle", "tier", "ref", "canonical", "id", "slug",
                    "permalink")

_OPEN_RE = re.compile(r"^\s*<!--\s*doc-bridge:generated\b(.*?)-->\s*$")
_CLOSE_RE = re.compile(r"^\s*<!--\s*/doc-bridge:generated\s*-->\s*$")
_HASH_RE = re.compile(r"\bhash=([A-Za-z0-9]+)")
_SLUG_DROP = regex.compile(r"[^\p{L}\p{M}\p{N}\p{Pc} -]")
# `## Title {#custom-id}`: the explicit anchor of VitePress, MkDocs (attr_list), Docusaurus and Pandoc; `[#id]`
# is Fumadocs' spelling of it
_CUSTOM_ID = re.compile(r"\s*[{\[]#([A-Za-z0-9_][\w.:-]*)[}\]]\s*$")
# `{#id}` alone on a line: VitePress and markdown-it-attrs give the block before it that id
_STANDALONE_ID = re.compile(r"^\s*\{#([A-Za-z0-9_][\w.:-]*)\}\s*$")
# HTML anchors: `id="x"` on any element, `<a name="x">` (GitHub and every documentation site link to both)
_HTML_ID = re.compile(r"""\bid\s*=\s*["']([^"'\s]+)["']""", re.I)
_HTML_HEADING = re.compile(r"<h[1-6]\b[^>]*>(.*?)</h[1-6]>", re.I | re.S)
_HTML_NAME = re.compile(r"""<a\b[^>]*?\bname\s*=\s*["']([^"'\s]+)["']""", re.I)
# `<!--@include: ./part.md-->` (VitePress): the included document's headings are this one's anchors too
_INCLUDE = re.compile(r"<!--\s*@include:\s*([^\s{}>]+?)(?:\{[^}]*\})?\s*-->")
# MDX: a JSX element's link attribute (`<Link href="/x">`, `<LinkCard href=...>`, `<a href=...>`, `to=`)
_JSX_LINK = re.compile(r"""<(?:[A-Z][\w.]*|a)\b[^<>]*?\b(?:href|to)\s*=\s*"""
                       r"""(?:["']([^"'{}\s]+)["']|\{\s*["']([^"'{}\s]+)["']\s*\})""")
_ESM_LINE = re.compile(r"^(?:import|export)\b")
_JSX_TAG_LINE = re.compile(r"^\s*</?[A-Z][\w.]*(?:\s[^<>]*)?/?>\s*$")
_JSX_OPEN = re.compile(r"^\s*<[A-Z][\w.]*(?=\s|$)")  # a component's opening tag, its attributes to follow
# words that introduce a value or a name, not a reference: "set to `test`", "a cookie named `h3`"
_LITERAL_LEAD = re.compile(r"\b(?:named|called|set to|sets? it to|defaults? to|equal to|equals|value of|values? "
                           r"(?:is|are))\s*$", re.I)
# "in the `eslint/eslint.org` repository, in `tools/release-data.js`": what follows names another repository's file
_ELSEWHERE = re.compile(r"\b(?:in|from|of) the `?([\w.-]+/[\w.-]+)`? (?:repo|repository)\b", re.I)
ELSEWHERE_WINDOW = 300  # characters before a code span (in its sentence) in which another repository is looked for
# Directives by which a documentation site writes part of a page (and its headings) when it builds: svelte.dev's
# `> TYPES: Module`, mkdocstrings' `::: package.module`, MDX components that render API tables
_BUILD_DIRECTIVE = re.compile(r"^(?:>\s*[A-Z][A-Z_]{2,}:[ \t]*[\w@$#./:-]+[ \t]*|:::[ \t]+\w+(?:\.\w+)+[ \t]*|"
                              r"<(?:Auto\w+|TypeTable|APIReference|ApiReference|DocCardList|TSDoc|PropsTable)\b.*)$",
                              re.M)
# admonitions look like directives (`> NOTE: Read this.`, `> IMPORTANT: x`): never one
_ADMONITION = re.compile(r"^>\s*(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION|INFO|DANGER|DEPRECATED|LEGACY|TODO|EXAMPLE)\b")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_LONE_CR = re.compile(r"\r(?!\n)")
MDX_EXTENSIONS = (".mdx",)
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
_LETTER = regex.compile(r"\p{L}")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_PT_HINTS = frozenset(
    "que não uma para com como são também está você pela pelo dos das isso quando onde ao aos é ou mais muito "
    "seu sua sobre entre".split())
_EN_HINTS = frozenset(
    "the and is are this that with for you your when where which from into should will would have has".split())
_CONTAINER = r"[ \t]{0,3}(?:>[ \t]?|[-+*][ \t]+|[0-9]{1,9}[.)][ \t]+)"
# a line starting with enough container markers to be worth counting (a list item counts twice: markdown-it
# opens a list and an item), then all of its markers
_DEEP_CONTAINERS = re.compile(rf"^(?:{_CONTAINER}){{{MAX_NESTING // 2 + 1}}}", re.M)
_CONTAINERS = re.compile(rf"(?:{_CONTAINER})+")
_THEMATIC_BREAK = re.compile(r"[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$")
_WIKI_STOP = re.compile(r"[\[\]\n]")
_POSITIONED_RULES = ("backticks", "link", "image", "autolink", "wikilink",
                     "gfm_autolink_www", "gfm_autolink_protocol", "gfm_autolink_email")
# Fenced code cites code by name: the names written in a fence of a JS/TS language are kept (`fence_tokens`) and
# resolve to exported symbols only, never to a path or a package (what a fence says about paths is the reader's
# project). JSON, YAML and TOML fences name configuration keys, not symbols: they are not read. What the example
# declares itself is no citation: a name after `const`/`function`/`class`..., a key or an annotated parameter
# (`name:`), a string's content (`from 'vitest'`), and a plain lowercase word (`config`, `app`) unless the fence
# imports it (`import { test } from ...`).
FENCE_LANGUAGES = frozenset({"ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "typescript", "javascript"})
MAX_FENCE_TOKENS = 4096  # kept per document; beyond it `fence_truncated` (a coverage note)
MAX_FENCE_LINES = 8  # lines kept per name (a relation keeps at most 8 lines of evidence)
_FENCE_LANGUAGE = re.compile(r"^[A-Za-z0-9_+-]+")
# a name or a dotted name (`order.status`, a member: never a symbol on its own), not part of a longer word, a path
# (`./x.js`) or a flag (`--watch`)
_FENCE_NAME = re.compile(r"(?<![\w$.-])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?![\w$.-])")
_FENCE_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_DECLARING = re.compile(r"\b(?:const|let|var|function\*?|class|interface|type|enum|namespace)\s+$")
_IMPORTING = re.compile(r"^\s*import\b|\brequire\s*\(")
# written as code (camelCase, PascalCase, snake_case, `$`, a digit after a letter): a plain lowercase word may be the
# example's own variable
_CODE_NAME = re.compile(r"[A-Z_$]|[a-z][0-9]")
_JS_WORDS = frozenset(
    "abstract as async await break case catch class const continue debugger declare default delete do else enum "
    "export extends false finally for from function get if implements import in instanceof interface is keyof let "
    "module namespace new null of package private protected public readonly require return satisfies set static "
    "super switch this throw true try type typeof undefined var void while with yield any boolean never number "
    "object string symbol unknown bigint console".split())


# --------------------------------------------------------------------------------------------------
# Parser setup


def _wikilink(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if not src.startswith("[[", pos):
        return False
    # the inner text holds no bracket and no line break: look no further than the first of them (searching
    # for `]]` from every `[[` was quadratic in a run of unclosed ones)
    stop = _WIKI_STOP.search(src, pos + 2)
    if stop is None or not src.startswith("]]", stop.start()):
        return False
    end = stop.start()
    inner = src[pos + 2:end]
    if not inner.strip():
        return False
    if not silent:
        target, _, label = inner.partition("|")
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target.strip(), "label": (label or target).strip()}
        token.content = inner
    state.pos = end + 2
    return True


def _positioned(rule: Any) -> Any:
    """Wrap an inline rule so the first token it pushes remembers its [start, end) in the inline source."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start = state.pos
        before = len(state.tokens)
        flushes = 1 if state.pending else 0
        ok = rule(state, silent)
        if ok and not silent:
            index = before + flushes
            if index < len(state.tokens):
                token = state.tokens[index]
                if token.type == "text" and index + 1 < len(state.tokens):
                    token = state.tokens[index + 1]
                meta = dict(token.meta) if token.meta else {}
                meta["src"] = (start, state.pos)
                token.meta = meta
        return ok

    return wrapped


_INLINE_MEMO: dict[tuple[str, int], list[Token]] = {}
_INLINE_MEMO_SIZE = 4096
# the memo holds small runs (what an edit re-parses) up to a total: a huge paragraph's tokens are not kept
# alive after its document is analyzed
_INLINE_MEMO_RUN_CHARS = 16_384
_INLINE_MEMO_CHARS = 2_000_000
_inline_memo_chars = 0


def _memoised_inline(state: StateCore) -> None:
    """The core `inline` rule with a memo of each inline run's tokens by its text (and the document's link
    reference definitions): an edit re-parses the paragraphs it changed, not the whole document. The memo holds
    tokens after `text_join`, which is then a no-op on them; nothing downstream mutates them. Runs with a
    footnote (`[^`, `^[`) are never memoised: their parse writes footnote state into `env`."""
    references = state.env.get("references") or {}
    refs_key = hash(tuple(sorted((k, v.get("href"), v.get("title")) for k, v in references.items()))) \
        if references else 0
    global _inline_memo_chars
    md = state.md
    for token in state.tokens:
        if token.type != "inline":
            continue
        content = token.content
        if "[^" in content or "^[" in content or len(content) > _INLINE_MEMO_RUN_CHARS:
            token.children = []
            md.inline.parse(content, md, state.env, token.children)
            continue
        key = (content, refs_key)
        cached = _INLINE_MEMO.get(key)
        if cached is None:
            children: list[Token] = []
            md.inline.parse(content, md, state.env, children)
            holder = StateCore("", md, state.env, [Token("inline", "", 0, children=children)])
            text_join(holder)
            cached = holder.tokens[0].children or []
            if len(_INLINE_MEMO) >= _INLINE_MEMO_SIZE or _inline_memo_chars + len(content) > _INLINE_MEMO_CHARS:
                _INLINE_MEMO.clear()
                _inline_memo_chars = 0
            _INLINE_MEMO[key] = cached
            _inline_memo_chars += len(content)
        token.children = cached


_PROTOCOLS = ("http", "https", "mailto", "xmpp")
_AUTOLINK_SPACE = re.compile("[ \t\r\n\x00\x0b\x0c]")  # where GFM autolinks (URLs, addresses) end
# src, from, the first space at or after `from` (len(src) if none); replaced whole, so threads read it safely
_space_after: tuple[str | None, int, int] = (None, 0, 0)


def _next_space(src: str, pos: int) -> int:
    """The first autolink-ending space at or after `pos`, memoised over the run it ends: linear overall."""
    global _space_after
    cached, start, end = _space_after
    if cached is src and start <= pos <= end:
        return end
    found = _AUTOLINK_SPACE.search(src, pos)
    end = found.start() if found else len(src)
    _space_after = (src, pos, end)
    return end


def _autolink_bounded(rule: Any, protocol: bool = False) -> Any:
    """A GFM autolink rule that sees the inline run only up to the next space (no autolink spans one; the
    rules copy everything up to the end of the run on every try: quadratic in a long paragraph). The protocol
    rule is tried only where it can match: at a `:` after a protocol name (its own first checks)."""

    def bounded(state: StateInline, silent: bool) -> bool:
        pos, limit = state.pos, state.posMax
        if pos >= limit or state.linkLevel > 0:
            return False
        if protocol:
            if state.src[pos] != ":":
                return False
            pending = state.pending  # the rule's `(https?|mailto|xmpp)$`: `$` also matches before a final \n
            if not (pending.endswith(_PROTOCOLS) or (pending.endswith("\n")
                                                       and pending.endswith(_PROTOCOLS, 0, len(pending) - 1))):
                return False
        # the space itself stays in view: the rules tell a run that ends at a space from one that ends the text
        state.posMax = min(limit, _next_space(state.src, pos) + 1)
        try:
            return bool(rule(state, silent))
        finally:
            state.posMax = limit

    return bounded


# In a long inline run, `[` (a link, an image, a footnote reference) is tried only when a `]` closes it: the
# link rules scan for the closing bracket from every `[`, quadratic in a run of unclosed ones (1 MB of `[[`
# took seconds per keystroke). A short run keeps markdown-it's own scan, which also skips code spans.
BRACKET_RUN_CHARS = 2_000
# src, and the offsets of the `[` a `]` closes in it (backslash escapes honoured); replaced whole: thread-safe
_closed_brackets: tuple[str | None, frozenset[int]] = (None, frozenset())


def _closed_openers(src: str) -> frozenset[int]:
    global _closed_brackets
    cached, closed = _closed_brackets
    if cached is src:
        return closed
    found: list[int] = []
    openers: list[int] = []
    for match in _BRACKET_OR_ESCAPE.finditer(src):  # an escape is consumed with the character it escapes
        char = match.group()
        if char == "[":
            openers.append(match.start())
        elif char == "]" and openers:
            found.append(openers.pop())
    closed = frozenset(found)
    _closed_brackets = (src, closed)
    return closed


_BRACKET_OR_ESCAPE = re.compile(r"\\[\s\S]|[\[\]]")


def _unclosed_brackets(state: StateInline, silent: bool) -> bool:
    """In a long run, a stretch of `[` that no `]` closes is text, taken at once (not one rule round each)."""
    src, pos = state.src, state.pos
    if len(src) <= BRACKET_RUN_CHARS or src[pos] != "[":
        return False
    closed = _closed_openers(src)
    end = pos
    while end < state.posMax and src[end] == "[" and end not in closed:
        end += 1
    if end == pos:
        return False
    if not silent:
        state.pending += src[pos:end]
    state.pos = end
    return True


def _bracket_bounded(rule: Any, offset: int) -> Any:
    """A rule that starts with `[` at `pos + offset` (`![`: 1), tried in a long run only when a `]` closes it."""

    def bounded(state: StateInline, silent: bool) -> bool:
        src = state.src
        if len(src) > BRACKET_RUN_CHARS:
            at = state.pos + offset
            if at >= len(src) or src[at] != "[" or at not in _closed_openers(src):
                return False
        return bool(rule(state, silent))

    return bounded


class _QuietLogger:
    """markdown-it's block rules log a debug line on entering each rule at each line: 3,000 logger calls for a
    900-line document, a tenth of its parse on every keystroke. Those records are of no use here."""

    @staticmethod
    def debug(*_args: Any, **_kwargs: Any) -> None:
        return None


def _quiet_block_rules() -> None:
    for name, module in list(sys.modules.items()):
        if name.startswith("markdown_it.rules_block.") and hasattr(module, "LOGGER"):
            module.LOGGER = _QuietLogger()  # type: ignore[attr-defined]  # markdown-it's module logger, silenced


_HTML_FRAMED = re.compile(r"-{3,}[ \t]*\n(?:[ \t]*\n)*[ \t]*<(?!<)")


def _yaml_front_matter(rule: Any) -> Any:
    """markdown-it's front matter rule, except for a block whose first line is HTML: YAML never starts with a tag,
    so `---`, an HTML table of contents, `---` is that HTML between two rules, as GitHub renders it."""
    def front_matter(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        if start_line == 0 and _HTML_FRAMED.match(state.src):
            return False
        return bool(rule(state, start_line, end_line, silent))
    return front_matter


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(gfm_plugin).use(front_matter_plugin)
    for block_rule in md.block.ruler.__rules__:
        if block_rule.name == "front_matter":
            md.block.ruler.at(block_rule.name, _yaml_front_matter(block_rule.fn))
    _quiet_block_rules()
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.inline.ruler.after("text", "unclosed_brackets", _unclosed_brackets)
    for rule in md.inline.ruler.__rules__:
        if rule.name in ("gfm_autolink_protocol", "gfm_autolink_email", "gfm_autolink_www"):
            md.inline.ruler.at(rule.name, _autolink_bounded(rule.fn, rule.name == "gfm_autolink_protocol"))
    for rule in md.inline.ruler.__rules__:
        if rule.name in ("link", "image", "footnote_ref"):
            md.inline.ruler.at(rule.name, _bracket_bounded(rule.fn, 1 if rule.name == "image" else 0))
    for rule in md.inline.ruler.__rules__:
        if rule.name in _POSITIONED_RULES:
            md.inline.ruler.at(rule.name, _positioned(rule.fn))
    md.core.ruler.at("block", incremental_block)
    md.core.ruler.at("inline", _memoised_inline)
    # Emphasis and typography change nothing we extract; skipping them is measurably faster.
    md.disable(["emphasis", "strikethrough", "replacements", "smartquotes"], ignoreInvalid=True)
    return md


_PARSER: MarkdownIt | None = None


def parser() -> MarkdownIt:
    global _PARSER
    if _PARSER is None:
        _PARSER = _build_parser()
    return _PARSER


# --------------------------------------------------------------------------------------------------
# Frontmatter schema


def _stringify(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


class DeclaredRelation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    from_: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    kind: str = "imports"
    detection: Literal["static", "dynamic", "external"] = "static"


class DocbridgeBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    covers: list[str] = Field(default_factory=list)
    relations: list[DeclaredRelation] = Field(default_factory=list)

    @field_validator("covers", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Frontmatter(BaseModel):
    model_config = ConfigDict(extra="allow")
    title: str | None = None
    type: str | None = None
    audience: str | None = None
    owner: str | None = None
    lifecycle: str | None = None
    tier: str | None = None
    # the page this one is a variant of (documentation sites that share pages); any other shape is ignored,
    # never an error: these keys belong to the site generator
    ref: Any = None
    canonical: Any = None
    # where a documentation site serves the page (Docusaurus `id`/`slug`, Jekyll/Eleventy `permalink`); any other
    # shape is the site's business, never an error
    id: Any = None
    slug: Any = None
    permalink: Any = None
    covers: list[str] = Field(default_factory=list)
    docbridge: DocbridgeBlock | None = None

    @field_validator("title", "type", "audience", "owner", "lifecycle", "tier", mode="before")
    @classmethod
    def _scalar(cls, value: Any) -> Any:
        return _stringify(value)

    @field_validator("id", "slug", "permalink", mode="before")
    @classmethod
    def _route(cls, value: Any) -> Any:
        value = _stringify(value)
        return value if isinstance(value, str) else None

    @field_validator("covers", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Frontmatter is a handful of keys: more nodes than this (counting every alias as the nodes it stands for,
# so an alias bomb counts as what it would expand to) or deeper nesting is refused before it is built.
YAML_MAX_NODES = 10_000
YAML_MAX_DEPTH = 64


def _yaml_too_complex(content: str) -> str | None:
    """Why the YAML `content` is too complex to build, or None; reads the event stream only (iteratively,
    nothing is constructed), so neither an alias bomb nor deep nesting costs more than one pass."""
    sizes: dict[str, int] = {}  # anchor -> the nodes its value expands to
    stack: list[list[Any]] = []  # open collections: [anchor, nodes so far]
    total = 0
    for event in yaml.parse(content, Loader=_YAML_LOADER):
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            weight = sizes.get(event.anchor or "", 1) if isinstance(event, yaml.AliasEvent) else 1
            total += weight
            if isinstance(event, yaml.ScalarEvent) and event.anchor:
                sizes[event.anchor] = 1
            if stack:
                stack[-1][1] += weight
        elif isinstance(event, yaml.CollectionStartEvent):
            total += 1
            stack.append([event.anchor, 1])
            if len(stack) > YAML_MAX_DEPTH:
                return f"it nests deeper than {YAML_MAX_DEPTH} levels"
        elif isinstance(event, yaml.CollectionEndEvent) and stack:
            anchor, count = stack.pop()
            if anchor:
                sizes[anchor] = count
            if stack:
                stack[-1][1] += count
        if total > YAML_MAX_NODES:
            return f"it expands to more than {YAML_MAX_NODES} values (counting what each alias stands for)"
    return None


def yaml_load(content: str) -> Any:
    """YAML read safely within the frontmatter budgets (alias bombs and deep nesting refused)."""
    reason = _yaml_too_complex(content) if content.strip() else None
    if reason is not None:
        raise ValueError(reason)
    return yaml.load(content, Loader=_YAML_LOADER) if content.strip() else None


def _key_line(lines: list[str], first: int, last: int, key: str, after: int | None = None) -> int:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
    for index in range(after if after is not None else first, last):
        if pattern.match(lines[index]):
            return index
    return first


def declaration_code(loc: list[str], error_type: str) -> str:
    """The original's distinct declaration code for a frontmatter validation error at `loc`."""
    if not loc:
        return "DOCBRIDGE_STRUCTURE_INVALID"
    if loc[0] == "covers":
        return "DOCBRIDGE_COVERS_INVALID"
    if loc[0] != "docbridge":
        return "DOCBRIDGE_FRONTMATTER_MALFORMED"
    if len(loc) == 1:
        return "DOCBRIDGE_BLOCK_MALFORMED"
    if error_type == "extra_forbidden" and len(loc) == 2:
        return "DOCBRIDGE_FIELD_UNKNOWN"
    if loc[1] == "covers":
        return "DOCBRIDGE_COVERS_INVALID"
    if loc[1] == "relations":
        if len(loc) <= 3:
            return "DOCBRIDGE_RELATIONS_INVALID"
        if loc[3] == "detection":
            return "DOCBRIDGE_DETECTION_INVALID"
        if error_type == "missing":
            return "DOCBRIDGE_RELATION_FIELD_MISSING"
        return "DOCBRIDGE_RELATION_INVALID"
    return "DOCBRIDGE_BLOCK_MALFORMED"


def _frontmatter(lines: list[str], first: int, last: int, content: str) -> tuple[
        tuple[tuple[str, str], ...], tuple[Declaration, ...], tuple[Issue, ...]]:
    """Parse the YAML between lines `first` and `last` (exclusive): subset, declarations, issues."""
    def issue(message: str, line: int, code: str = "DOCBRIDGE_FRONTMATTER_MALFORMED") -> tuple[Issue, ...]:
        width = len(lines[line]) if 0 <= line < len(lines) else 0
        return (Issue(code, message, line, 0, line, width),)

    try:
        complex_reason = _yaml_too_complex(content) if content.strip() else None
        if complex_reason is not None:
            return (), (), issue(f"Frontmatter is too complex to read: {complex_reason}.", first)
        data = yaml.load(content, Loader=_YAML_LOADER) if content.strip() else {}
    except yaml.YAMLError as exc:
        flat = _flat_frontmatter(content)
        if flat is not None:  # `title: @scope/pkg`: not YAML, but what sites that read `key: value` lines accept
            return _frontmatter_values(lines, first, last, flat)
        # "while parsing a flow sequence" errors carry where the construct began: the line a person fixes
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = first + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        text = f"{context}, {problem}" if context else str(problem)
        return (), (), issue(f"Frontmatter is not valid YAML: {text}.", min(line, last - 1))
    except Exception as exc:  # a tag the constructor cannot build (`0: !!int`, `!!timestamp x`), deep recursion
        detail = str(exc).strip().rstrip(".") or type(exc).__name__
        return (), (), issue(f"Frontmatter is not valid YAML: a value cannot be read ({detail}).", first)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return (), (), issue("Frontmatter must be a YAML mapping of keys to values.", first,
                             "DOCBRIDGE_STRUCTURE_INVALID")
    return _frontmatter_values(lines, first, last, data)


_FLAT_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
OWN_KEYS = ("covers", "docbridge")  # Doc Bridge's own keys: they must be valid YAML


def _flat_frontmatter(content: str) -> dict[str, str] | None:
    """Frontmatter that YAML refuses only because a plain value starts with a character YAML reserves (`@`,
    `` ` ``), read as one `key: value` per line, as documentation sites read it; None when any line is not such a
    pair, a value opens a YAML collection or quote (a real mistake), or one of Doc Bridge's own keys is there."""
    found: dict[str, str] = {}
    reserved = False
    for line in content.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _FLAT_LINE.match(line)
        if match is None or match.group(1) in OWN_KEYS or match.group(2).startswith(("[", "{", '"', "'", "|", ">")):
            return None
        reserved = reserved or match.group(2).startswith(("@", "`"))
        found[match.group(1)] = match.group(2)
    return found if reserved else None


def _frontmatter_values(lines: list[str], first: int, last: int, data: dict[str, Any]) -> tuple[
        tuple[tuple[str, str], ...], tuple[Declaration, ...], tuple[Issue, ...]]:
    def issue(message: str, line: int, code: str = "DOCBRIDGE_FRONTMATTER_MALFORMED") -> tuple[Issue, ...]:
        width = len(lines[line]) if 0 <= line < len(lines) else 0
        return (Issue(code, message, line, 0, line, width),)

    try:
        parsed = Frontmatter.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(x) for x in error["loc"]]
        line = _key_line(lines, first, last, loc[0]) if loc else first
        if len(loc) > 1 and loc[0] == "docbridge" and not loc[1].isdigit():
            line = _key_line(lines, first, last, loc[1], after=line)
        where = ".".join(loc)
        return (), (), issue(f"Frontmatter key `{where}`: {error['msg']}.", line, declaration_code(loc, error["type"]))
    subset = []
    for key in FRONTMATTER_KEYS:
        value = getattr(parsed, key)
        if isinstance(value, str) and value.strip():
            subset.append((key, value.strip()[:128]))
    if any(key in data for key in NAVIGATION_KEYS):  # the site lists the page in its navigation itself
        subset.append(("navigation", "true"))
    # keys a layout may render as a section of the page (`further_reading` -> `<h2 id="further-reading">`)
    sections = sorted(slugify(str(key).replace("_", " ")) for key in data if isinstance(key, str) and "_" in key)
    if sections:
        subset.append(("sections", " ".join(sections)[:512]))
    declarations: list[Declaration] = []
    block = parsed.docbridge
    refs = list(parsed.covers) + (list(block.covers) if block else [])
    seen_lines: dict[str, int] = {}
    for ref in refs:
        line, column = _locate(lines, first, last, ref, seen_lines)
        declarations.append(Declaration("covers", ref.strip(), line, column, column + len(ref)))
    if block:
        for relation in block.relations:
            line, column = _locate(lines, first, last, relation.from_, seen_lines, "from")
            declarations.append(Declaration("relation", relation.from_.strip(), line, column,
                                            column + len(relation.from_), relation.to.strip(), relation.kind,
                                            relation.detection))
    return tuple(subset), tuple(declarations), ()


def _locate(lines: list[str], first: int, last: int, needle: str, seen: dict[str, int],
            key: str | None = None) -> tuple[int, int]:
    """The line and column of a frontmatter value (the next occurrence after the last one found); with `key`,
    only where it is that key's value (`from: <needle>`)."""
    marker = f"{key}\0{needle}" if key else needle
    start = seen.get(marker, first)
    pattern = re.compile(rf"\b{re.escape(key)}\s*:\s*[\"']?") if key else None
    for index in range(start, last):
        if pattern is not None:
            match = pattern.search(lines[index])
            column = match.end() if match and lines[index].startswith(needle, match.end()) else -1
        else:
            column = lines[index].find(needle)
        if column >= 0:
            seen[marker] = index + 1
            return index, column
    return (_locate(lines, first, last, needle, seen) if key else (first, 0))


# --------------------------------------------------------------------------------------------------
# Helpers


def custom_heading_id(text: str) -> re.Match[str] | None:
    """The `{#id}` that ends a heading's text, if any (its group 1 is the anchor)."""
    return _CUSTOM_ID.search(text)


def budget_reason(text: str) -> str | None:
    """Why a document is beyond the analyzer's budgets (`line-too-long`, `nesting-too-deep`), else None.
    Linear in the text; markdown-it would otherwise stop at its nesting limit and drop the rest silently."""
    # line lengths from one split (a regex for a long run of non-newlines retries from every position of
    # every line: quadratic in the line length)
    if len(text) > MAX_LINE_CHARS and max(map(len, text.split("\n"))) > MAX_LINE_CHARS:
        return "line-too-long"
    for match in _DEEP_CONTAINERS.finditer(text):
        end = text.find("\n", match.start())
        line = text[match.start():end if end >= 0 else len(text)]
        if _THEMATIC_BREAK.match(line):  # `* * * * ...` is a rule, not nested lists
            continue
        prefix = _CONTAINERS.match(line)
        markers = prefix.group(0) if prefix else ""
        quotes = markers.count(">")
        items = len(re.findall(r"[-+*][ \t]|[0-9][.)][ \t]", markers))
        if quotes + 2 * items > MAX_NESTING:
            return "nesting-too-deep"
    return None


def slugify(text: str) -> str:
    """GitHub's heading anchor: lowercase, punctuation dropped, spaces to hyphens."""
    return _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")


def _summarise(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= SUMMARY_LIMIT:
        return text
    head = text[:SUMMARY_LIMIT]
    cut = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if cut > SUMMARY_LIMIT * 0.4:
        return head[:cut + 1]
    space = head.rfind(" ")
    return head[:space] if space > 0 else head


def detect_language(text: str) -> str:
    sample = text[:20000]
    # ASCII text holds no CJK letter, and text without one needs no count of its letters (a list of every
    # letter: most of this function's time on a long document, run on every edit)
    if not sample.isascii() and _CJK.search(sample):
        letters = len(_LETTER.findall(sample))
        if letters and len(_CJK.findall(sample)) / letters > 0.2:
            return "cjk"
    words = _WORD.findall(sample.lower())
    pt = len([w for w in words if w in _PT_HINTS])
    en = len([w for w in words if w in _EN_HINTS])
    return "pt" if pt > en and pt >= 3 else "en"


class _Positions:
    """Maps offsets inside an inline token's content back to document (line, column)."""

    def __init__(self, lines: list[str], cursors: dict[int, int]) -> None:
        self.lines = lines
        self.cursors = cursors  # table rows: where the next cell on a line may start

    def bases(self, inline: Any) -> tuple[list[int], list[int]]:
        first = inline.map[0] if inline.map else 0
        content_lines = inline.content.split("\n")
        starts, bases = [], []
        offset = 0
        for index, content_line in enumerate(content_lines):
            line_no = first + index
            source = self.lines[line_no] if line_no < len(self.lines) else ""
            stripped, needle = source.rstrip(), content_line.rstrip()
            if needle and stripped.endswith(needle) and not self.cursors.get(line_no):
                base = len(stripped) - len(needle)
            else:
                base = source.find(needle, self.cursors.get(line_no, 0)) if needle else 0
                if base < 0:
                    base = max(source.find(needle), 0)
            starts.append(offset)
            bases.append(base)
            offset += len(content_line) + 1
        return starts, bases

    @staticmethod
    def at(inline: Any, starts: list[int], bases: list[int], offset: int) -> tuple[int, int]:
        first = inline.map[0] if inline.map else 0
        index = max(bisect.bisect_right(starts, offset) - 1, 0)
        return first + index, bases[index] + (offset - starts[index])


def _plain(children: list[Any]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "wikilink":
            parts.append(child.meta.get("label", ""))
    return "".join(parts)


# --------------------------------------------------------------------------------------------------
# The analyzer


def _mdx_source(lines: list[str]) -> tuple[list[str], list[tuple[int, int, int, str]]]:
    """MDX read as Markdown: ESM `import`/`export` statements and `{/* comments */}` blanked (lines keep their
    numbers), and the link attributes of JSX elements (`<Link href="/x">`) as (line, column, end, href)."""
    out = list(lines)
    links: list[tuple[int, int, int, str]] = []
    fence: str | None = None
    statement = False  # inside a multi-line import/export
    comment = False  # inside a multi-line {/* */}
    tag: tuple[int, str] | None = None  # inside a component's opening tag that spans lines: (brace depth, quote)
    for number, line in enumerate(lines):
        if tag is not None:
            # its attributes are JavaScript (`bios={[{ links: [['site', 'https://…']] }]}`), not Markdown; a blank
            # line outside braces and quotes ends a tag never closed
            ended = not line.strip() and tag == (0, "")
            if not ended:
                depth, quote, ended = _scan_tag(line, *tag)
                tag = (depth, quote)
                out[number] = ""
            tag = None if ended else tag
            continue
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened and not statement and not comment:
            fence = opened.group(1)
            continue
        if statement or (not comment and _ESM_LINE.match(line)):
            out[number] = ""
            stripped = line.rstrip()
            # a statement ends at a line ending in `;`, a closing quote or `}` of a one-line form
            statement = not (stripped.endswith((";", "'", '"', "`")) or re.search(r"\bfrom\s*['\"][^'\"]*['\"]", line)
                             or (stripped.endswith("}") and stripped.count("{") >= stripped.count("}")))
            if _ESM_LINE.match(line) and stripped.endswith(("{", ",", "(")):
                statement = True
            continue
        if comment or "{/*" in line:
            start = 0 if comment else line.find("{/*")
            end = line.find("*/}", start)
            comment = end < 0
            out[number] = line[:start] + " " * ((len(line) if end < 0 else end + 3) - start) + \
                ("" if end < 0 else line[end + 3:])
            line = out[number]
        for match in _JSX_LINK.finditer(line):
            href = match.group(1) or match.group(2)
            column = match.start(1) if match.group(1) else match.start(2)
            links.append((number, column, column + len(href), href))
        if _JSX_TAG_LINE.match(line):  # `<Tabs>`, `</Tab>`, `<Card title="x" />`: MDX wraps Markdown in them
            out[number] = ""
        elif (component := _JSX_OPEN.match(line)) is not None:
            depth, quote, ended = _scan_tag(line[component.end():], 0, "")
            if not ended:
                out[number], tag = "", (depth, quote)
    return out, links


def _scan_tag(text: str, depth: int, quote: str) -> tuple[int, str, bool]:
    """A JSX opening tag read on through `text` from brace depth `depth` inside quote `quote` ('' for none): the
    depth and quote at its end, and whether the tag closed (a `>` outside braces and quotes)."""
    escaped = False
    for char in text:
        if quote:
            escaped, quote = (False, quote) if escaped else (char == "\\", "" if char == quote else quote)
        elif char in "\"'`":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == ">" and depth == 0:
            return depth, quote, True
    return depth, quote, False


def _build_directive(text: str, code_lines: set[int]) -> str:
    """The first directive outside code by which the site writes part of the page when it builds ('' if none)."""
    for match in _BUILD_DIRECTIVE.finditer(text):
        if text.count("\n", 0, match.start()) not in code_lines and not _ADMONITION.match(match.group(0)):
            return match.group(0).strip()[:80]
    return ""


def _html_anchors(content: str) -> list[str]:
    """`id="x"` on any element, `<a name="x">`, and the slug of a raw HTML heading's text (`<h3>Sponsors</h3>`)."""
    return [m.group(1) for m in _HTML_ID.finditer(content)] + [m.group(1) for m in _HTML_NAME.finditer(content)] + \
        [slugify(re.sub(r"<[^>]+>", "", m.group(1))) for m in _HTML_HEADING.finditer(content)]


def fence_language(info: str) -> str:
    """The language a fence declares (```` ```ts twoslash ````, ```` ```js{4} ````, ```` ```TS [vite.config.ts] ````:
    `ts`), lowercase; '' when none."""
    match = _FENCE_LANGUAGE.match(info.strip())
    return match.group(0).lower() if match else ""


def _fence_names(lines: list[str], first: int, count: int) -> list[tuple[str, int, int, int]]:
    """(name, line, start, end) of each name one fence's code cites, on lines `first` to `first + count - 1`."""
    found: list[tuple[str, int, int, int]] = []
    imported: set[str] = set()
    depth = -1  # braces open in the import statement under way (-1: none under way)
    for line in range(first, min(first + count, len(lines))):
        text = _FENCE_STRING.sub(lambda m: " " * len(m.group()), lines[line])  # columns kept
        importing = depth >= 0 or bool(_IMPORTING.search(text))
        for match in _FENCE_NAME.finditer(text):
            name, start, end = match.group(), match.start(), match.end()
            if "." in name or name in _JS_WORDS or text.startswith((":", "?:"), end):
                continue
            if importing:
                imported.add(name)
            elif _DECLARING.search(text, max(0, start - 12), start):
                continue
            found.append((name, line, start, end))
        if importing:  # the statement goes on while a brace it opened is open (`import {` ... `} from 'x'`)
            depth = max(depth, 0) + text.count("{") - text.count("}")
            if depth <= 0:
                depth = -1
    return [item for item in found if item[0] in imported or (len(item[0]) > 1 and _CODE_NAME.search(item[0]))]


def _fence_tokens(tokens: list[Token], lines: list[str], region_lines: set[int]) -> tuple[
        tuple[FenceToken, ...], bool]:
    """The names fences of a JS/TS language cite outside generated regions, each on at most `MAX_FENCE_LINES`
    lines, at most `MAX_FENCE_TOKENS` in all (then the second value is True). Positions are read from the
    document's own lines, so a fence inside a list or a quote keeps its columns."""
    found: list[FenceToken] = []
    lines_of: dict[str, set[int]] = {}
    for token in tokens:
        if token.type != "fence" or not token.map or fence_language(token.info) not in FENCE_LANGUAGES:
            continue
        # the opening fence's line is not code; each line of code ends with a newline in `content`
        for name, line, start, end in _fence_names(lines, token.map[0] + 1, token.content.count("\n")):
            seen = lines_of.setdefault(name, set())
            if line in region_lines or line in seen or len(seen) >= MAX_FENCE_LINES:
                continue
            if len(found) >= MAX_FENCE_TOKENS:
                return tuple(found), True
            seen.add(line)
            found.append(FenceToken(name, line, start, end))
    return tuple(found), False


def analyze_markdown(path: str, text: str, data: bytes | None = None) -> MarkdownFacts:  # noqa: C901 (to split)
    """Facts of one Markdown (or MDX) document. Never raises on content: problems become `issues`."""
    content_hash = sha256_bytes(data if data is not None else text.encode("utf-8"))
    ascii_text = text.isascii()
    text = text.removeprefix("\ufeff")
    if "\r" in text:  # a lone CR ends a line (for editors and markdown-it alike): one character for another
        text = _LONE_CR.sub("\n", text)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    jsx_links: list[tuple[int, int, int, str]] = []
    if path.lower().endswith(MDX_EXTENSIONS):
        lines, jsx_links = _mdx_source(lines)
        text = "\n".join(lines)
    if budget_reason(text) is not None:  # scans skip such a document (a counted reason); others get no facts
        return MarkdownFacts(path, content_hash, None, (), None, 0, (), (), (), (), (), (), "en", len(lines), "")
    env: dict[str, Any] = {PATH_KEY: path}  # an edit re-parses the blocks it changed (markdown_blocks)
    try:
        tokens = parser().parse(text, env)
    except Exception as exc:  # pathological input must not take the scan down
        issue = Issue("DOCBRIDGE_FRONTMATTER_MALFORMED", f"The document could not be parsed: {exc}.", 0, 0, 0, 0)
        return MarkdownFacts(path, content_hash, None, (), None, 0, (), (), (issue,), (), (), (), "en",
                             len(lines), "")

    code_lines: set[int] = set()
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map:
            code_lines.update(range(token.map[0], token.map[1]))
    regions = _regions(lines, code_lines)
    region_lines: set[int] = set()
    for region in regions:
        region_lines.update(range(region.start_line, region.end_line + 1))

    frontmatter: tuple[tuple[str, str], ...] = ()
    declarations: tuple[Declaration, ...] = ()
    issues: tuple[Issue, ...] = ()
    headings: list[Heading] = []
    links: list[Link] = []
    spans: list[CodeSpan] = []
    slug_counts: dict[str, int] = {}
    summary: str | None = None
    body_parts: list[str] = []
    words = 0
    positions = _Positions(lines, {})
    in_paragraph = False
    heading_level = 0
    anchors: list[tuple[str, int]] = []
    includes: list[str] = []

    for _index, token in enumerate(tokens):
        kind = token.type
        if kind == "html_block" and token.map:
            anchors.extend((anchor, token.map[0]) for anchor in _html_anchors(token.content))
            includes.extend(m.group(1) for m in _INCLUDE.finditer(token.content))
            continue
        if kind == "front_matter" and token.map:
            first, last = token.map[0] + 1, token.map[1] - 1
            frontmatter, declarations, issues = _frontmatter(lines, first, max(first, last), token.content)
            continue
        if kind in ("fence", "code_block"):
            words += len(token.content.split())
            continue
        if kind == "paragraph_open":
            in_paragraph = True
            continue
        if kind == "paragraph_close":
            in_paragraph = False
            continue
        if kind == "heading_open":
            heading_level = int(token.tag[1])
            continue
        if kind == "heading_close":
            heading_level = 0
            continue
        if kind in ("tr_open", "table_open"):
            positions.cursors.clear()
            continue
        if kind != "inline" or not token.map:
            continue
        children = token.children or []
        starts, bases = positions.bases(token)
        line_no = token.map[0]
        for child in children:
            if child.type == "html_inline" and ("id" in child.content or "name" in child.content):
                anchors.extend((anchor, line_no) for anchor in _html_anchors(child.content))
        standalone = _STANDALONE_ID.match(token.content) if in_paragraph else None
        if standalone is not None:
            anchors.append((standalone.group(1), line_no))
            continue
        plain = _plain(children)
        words += len(plain.split())
        if heading_level and len(headings) < MAX_HEADINGS and plain.strip():
            custom = _CUSTOM_ID.search(plain)
            if custom:
                plain = plain[:custom.start()]
            base_slug = custom.group(1) if custom else slugify(plain)
            count = slug_counts.get(base_slug, 0)
            slug_counts[base_slug] = count + 1
            slug = base_slug if count == 0 else f"{base_slug}-{count}"
            source = lines[line_no] if line_no < len(lines) else ""
            column = bases[0] if bases else 0
            headings.append(Heading(heading_level, plain.strip()[:256], slug, line_no, column,
                                    len(source.rstrip())))
        if line_no in region_lines:
            continue
        if in_paragraph and summary is None and plain.strip() and not _lone_link(children):
            summary = _summarise(plain)
        body_parts.append(_search_text(children))
        _inline_facts(token, children, starts, bases, lines, region_lines, links, spans)
        # table cells on one line: the next cell starts after this one
        if token.map and token.map[1] - token.map[0] == 1 and not heading_level and not in_paragraph:
            end_offset = len(token.content)
            _, end_col = positions.at(token, starts, bases, end_offset)
            positions.cursors[line_no] = end_col

    for line, column, end_column, href in jsx_links:
        if line not in region_lines and line not in code_lines:
            links.append(Link(href, "", "inline", line, column, line, end_column))
    links.sort(key=lambda link: (link.line, link.column))
    title = dict(frontmatter).get("title") or next((h.text for h in headings if h.level == 1), None)
    body = " ".join(" ".join(body_parts).split())[:BODY_LIMIT]
    fence_tokens, fence_truncated = _fence_tokens(tokens, lines, region_lines)
    return MarkdownFacts(
        path=path, content_hash=content_hash, title=title, headings=tuple(headings), summary=summary,
        word_count=words, frontmatter=frontmatter, declarations=declarations, issues=issues,
        links=tuple(links), code_spans=tuple(spans), regions=tuple(regions),
        language=detect_language(text), line_count=len(lines), body=body,
        anchors=tuple(sorted(set(anchors) | {(name, 0) for name in dict(frontmatter).get("sections", "").split()},
                             key=lambda a: (a[1], a[0]))), includes=tuple(dict.fromkeys(includes)),
        builds=_build_directive(text, code_lines), fence_tokens=fence_tokens, fence_truncated=fence_truncated,
        ascii=ascii_text)


def _lone_link(children: list[Any]) -> bool:
    meaningful = [c for c in children if not (c.type == "text" and not c.content.strip())]
    if not meaningful:
        return False
    if meaningful[0].type == "image":
        return all(c.type == "image" or c.type.startswith("link_") for c in meaningful)
    return meaningful[0].type == "link_open" and meaningful[-1].type == "link_close" and all(
        c.type != "link_open" for c in meaningful[1:-1])


def _search_text(children: list[Any]) -> str:
    """Text for the search body: prose and inline code, without link text and images."""
    parts, depth = [], 0
    for child in children:
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth = max(0, depth - 1)
        elif depth == 0 and child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


def _inline_facts(inline: Any, children: list[Any], starts: list[int], bases: list[int], lines: list[str],
                  region_lines: set[int], links: list[Link], spans: list[CodeSpan]) -> None:
    def position(offset: int) -> tuple[int, int]:
        return _Positions.at(inline, starts, bases, offset)

    open_links: list[tuple[Any, int]] = []
    for index, child in enumerate(children):
        src = child.meta.get("src") if child.meta else None
        if child.type == "code_inline" and src:
            line, column = position(src[0])
            end_line, end_column = position(src[1])
            if line in region_lines:
                continue
            code = " ".join(child.content.split())
            if code:
                window = max(src[0] - ELSEWHERE_WINDOW, 0)  # searched only as far back as it counts (linear)
                sentence = max(inline.content.rfind(". ", window, src[0]),
                               inline.content.rfind("\n\n", window, src[0]), window)
                literal = bool(_LITERAL_LEAD.search(inline.content, max(0, src[0] - 40), src[0]))
                elsewhere = ([m.group(1) for m in _ELSEWHERE.finditer(inline.content, sentence, src[0])]
                             if "repo" in inline.content[sentence:src[0]].lower() else [])
                spans.append(CodeSpan(code, line, column, end_line, end_column, literal,
                                      elsewhere[-1].lower() if elsewhere else ""))
        elif child.type == "link_open" and src:
            open_links.append((child, index))
        elif child.type == "link_close" and open_links:
            opener, start_index = open_links.pop()
            inner = children[start_index + 1:index]
            src = opener.meta["src"]
            line, column = position(src[0])
            if line in region_lines:
                continue
            end_line, end_column = position(src[1])
            raw = inline.content[src[0]:src[1]]
            if opener.markup in ("autolink", "linkify") or opener.info == "auto":
                kind = "autolink"
            elif raw.rstrip().endswith(")"):
                kind = "inline"
            else:
                kind = "reference"
            in_code = len([c for c in inner if c.type != "text" or c.content.strip()]) == 1 and any(
                c.type == "code_inline" for c in inner)
            links.append(Link(str(opener.attrs.get("href", "")), _plain(inner).strip()[:256], kind, line,
                              column, end_line, end_column, in_code))
        elif child.type == "image" and src:
            line, column = position(src[0])
            if line in region_lines:
                continue
            end_line, end_column = position(src[1])
            links.append(Link(str(child.attrs.get("src", "")), child.content[:256], "image", line, column,
                              end_line, end_column))
        elif child.type == "wikilink" and src:
            line, column = position(src[0])
            if line in region_lines:
                continue
            end_line, end_column = position(src[1])
            links.append(Link(child.meta["target"], child.meta["label"][:256], "wiki", line, column,
                              end_line, end_column))


def _regions(lines: list[str], code_lines: set[int]) -> list[Region]:
    regions: list[Region] = []
    open_at: int | None = None
    recorded: str | None = None

    def close(end: int, closed: bool) -> None:
        assert open_at is not None
        inner = lines[open_at + 1:end] if closed else lines[open_at + 1:end + 1]
        regions.append(Region(open_at, end, recorded, region_hash(inner), closed))

    for number, line in enumerate(lines):
        if number in code_lines:
            continue
        opened = _OPEN_RE.match(line)
        if opened:
            if open_at is not None:
                close(number - 1, False)
            match = _HASH_RE.search(opened.group(1))
            open_at, recorded = number, (match.group(1) if match else None)
        elif _CLOSE_RE.match(line) and open_at is not None:
            close(number, True)
            open_at, recorded = None, None
    if open_at is not None:
        last = len(lines) - 1
        while last > open_at and not lines[last].strip():
            last -= 1
        close(last, False)
    return regions


ROUTE_FRONTMATTER = ("id", "slug", "permalink")  # frontmatter keys that give a page its site route
_SITE_SLUG_SPECIAL = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'\u201c\u201d\u2018\u2019<>,.?/]+")
_COMBINING = re.compile(r"[\u0300-\u036f]")


@functools.lru_cache(maxsize=16384)
def site_slug(text: str) -> str:
    """The heading anchor of VitePress and markdown-it-anchor: accents dropped, runs of punctuation and
    spaces to one hyphen, trimmed, lowercase (a leading digit gets `_`)."""
    slug = _COMBINING.sub("", unicodedata.normalize("NFKD", text))
    slug = _SITE_SLUG_SPECIAL.sub("-", slug).strip("-")
    slug = re.sub(r"^(\d)", r"_\1", slug)
    return slug.lower()
