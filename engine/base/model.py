"""The engine's data model.

Per-file facts and relations are slotted dataclasses, hashable and never mutated once built (not declared
`frozen`, whose `__init__` is several times slower): a scan builds hundreds of thousands of them, and
they round-trip through the on-disk cache as plain JSON rows (`to_row` / `from_row`). pydantic validates
only what crosses a boundary (configuration, frontmatter, artifacts read back from disk).

Positions are 0-based lines and 0-based columns counted in Unicode code points. Surfaces convert: the
CLI prints 1-based `line:col`, SARIF uses 1-based positions, the language server speaks UTF-16 (or UTF-8).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar, Protocol

SCHEMA_VERSION = 1
CONFIDENCE_ORDER = ("observed", "declared", "fuzzy", "proposed")

DOCUMENT, MODULE, AREA, PACKAGE, EXTERNAL, INTENT, CHANGE = (
    "document", "module", "area", "package", "external", "intent", "change")
UNRESOLVED = "unresolved-reference"  # a name a document declares (`covers`, `docbridge.relations`) that names nothing
ENTITY_KINDS = (DOCUMENT, MODULE, AREA, PACKAGE, EXTERNAL, INTENT, CHANGE, UNRESOLVED)
RELATION_KINDS = ("contains", "imports", "re-exports", "runtime-wiring", "depends-on", "links-to", "mentions",
                  "mentions-symbol", "covers")


def entity_id(kind: str, value: str) -> str:
    # interned: one copy of each id however many relations and references name it (a tenth of a resolved model's
    # strings were copies of ids)
    return sys.intern(f"{kind}:{value}")


def split_id(eid: str) -> tuple[str, str]:
    kind, _, value = eid.partition(":")
    return kind, value


def weaker_confidence(a: str, b: str) -> str:
    """The less trustworthy of two confidence levels (observed < declared < fuzzy < proposed)."""
    return a if CONFIDENCE_ORDER.index(a) >= CONFIDENCE_ORDER.index(b) else b


# --------------------------------------------------------------------------------------------------
# Row codec: every dataclass below (each a slotted `Row`) is stored as a list of its field values, nested ones too.


def to_row(obj: Any) -> Any:
    if isinstance(obj, Row):
        return [to_row(getattr(obj, f)) for f in obj.__slots__]
    if isinstance(obj, tuple):
        return [to_row(x) for x in obj]
    return obj


INTERNED_LENGTH = 96  # names, kinds, paths, slugs: repeated across files; longer text (bodies, prose) is not


def _tupled(value: Any) -> Any:
    if type(value) is list:
        return tuple(_tupled(x) for x in value)
    if type(value) is str and len(value) <= INTERNED_LENGTH:
        return sys.intern(value)
    return value


_Conversion = Callable[[Any], tuple[Any, ...]]  # a nested field's rows to a tuple of row instances


class Positional:
    """Mixin for a slotted dataclass: pickled as its class and its field values, rebuilt by calling the class.

    The default pickling of a slotted instance goes through `copyreg` and a dictionary of its slots per object,
    several times slower both ways; the resolved model kept between runs (`engine.state.resume`) holds a few
    hundred thousand of them. The positional form also lets that artifact's reader allow these classes alone."""

    __slots__: ClassVar[tuple[str, ...]] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        cls = type(self)
        values: Callable[[Any], tuple[Any, ...]] | None = cls.__dict__.get("_positional_values")
        if values is None:
            from dataclasses import fields
            from operator import attrgetter
            names = [f.name for f in fields(cls) if f.init]  # type: ignore[arg-type]
            values = attrgetter(*names) if len(names) > 1 else (lambda obj, get=attrgetter(*names): (get(obj),))
            type.__setattr__(cls, "_positional_values", values)
        return (cls, values(self))


class Row(Positional):
    """Mixin: `from_row` rebuilds an instance from `to_row` output.

    `_nested` names fields holding tuples of other row classes; every other list becomes a tuple. The
    conversion plan is computed once per class: rebuilding tens of thousands of facts is on the warm path.
    """

    __slots__: ClassVar[tuple[str, ...]] = ()
    _nested: ClassVar[dict[str, type[Row]]] = {}

    @classmethod
    def _conversions(cls) -> tuple[tuple[int, _Conversion | None], ...]:
        plan: tuple[tuple[int, _Conversion | None], ...] | None = cls.__dict__.get("_plan_cache")
        if plan is None:
            steps: list[tuple[int, _Conversion | None]] = []
            for index, name in enumerate(cls.__slots__):
                nested = cls._nested.get(name)
                if nested is not None:
                    steps.append((index, _rebuild_all(nested)))
                else:
                    steps.append((index, None))
            plan = tuple(steps)
            type.__setattr__(cls, "_plan_cache", plan)
        return plan

    @classmethod
    def from_row(cls, row: list[Any]) -> Any:
        rebuild: Callable[[list[Any]], Any] | None = cls.__dict__.get("_from_row_code")
        if rebuild is None:
            rebuild = _compiled_from_row(cls)
            type.__setattr__(cls, "_from_row_code", rebuild)
        return rebuild(row)

    @classmethod
    def _from_row_generic(cls, row: list[Any]) -> Any:
        """`from_row` by the conversion plan, field by field (a row of another length than the class's fields)."""
        values = list(row)
        for index, convert in cls._conversions():
            value = values[index]
            if convert is not None:
                values[index] = convert(value)
            elif type(value) is list:
                values[index] = _tupled(value)
            elif type(value) is str and len(value) <= INTERNED_LENGTH:
                # one copy of each name, kind and path however many facts repeat it (a tenth of the facts' memory)
                values[index] = sys.intern(value)
        return cls(*values)


_PLAIN_TYPES = frozenset({"int", "bool", "float"})  # fields whose values are taken as they are


def _compiled_from_row(cls: type[Row]) -> Callable[[list[Any]], Any]:
    """`from_row` of one class as straight-line code, its fields converted as the plan says but without a loop
    over them (a cold scan rebuilds every file's facts from its worker's rows: 100,000 files, 1.3 million rows,
    on the process that also feeds the workers). A row of another length goes through the plan."""
    from dataclasses import fields
    types = {f.name: f.type for f in fields(cls)}  # type: ignore[arg-type]
    env: dict[str, Any] = {"_cls": cls, "_i": sys.intern, "_t": _tupled, "_list": list, "_str": str,
                           "_tuple": tuple, "_map": map, "_len": len, "_type": type, "_L": INTERNED_LENGTH,
                           "_generic": cls._from_row_generic}
    names = [f"a{index}" for index in range(len(cls.__slots__))]
    converted = []
    for index, name in enumerate(cls.__slots__):
        value = names[index]
        nested = cls._nested.get(name)
        if nested is not None:
            env[f"_n{index}"] = nested.from_row
            converted.append(f"_tuple(_map(_n{index}, {value}))")
        elif str(types.get(name)) in _PLAIN_TYPES:
            converted.append(value)
        else:
            converted.append(f"(_t({value}) if _type({value}) is _list else _i({value}) if _type({value}) is _str "
                             f"and _len({value}) <= _L else {value})")
    source = (f"def from_row(row):\n"
              f"    if _len(row) != {len(names)}:\n"
              f"        return _generic(row)\n"
              f"    {', '.join(names)}{',' if len(names) == 1 else ''} = row\n"
              f"    return _cls({', '.join(converted)})\n")
    exec(source, env)  # code made here from the class's own field names
    made: Callable[[list[Any]], Any] = env["from_row"]
    return made


def _rebuild_all(row_class: type[Row]) -> _Conversion:
    """The conversion of a `_nested` field: each of its rows rebuilt as a `row_class`."""
    return lambda rows: tuple(map(row_class.from_row, rows))


# --------------------------------------------------------------------------------------------------
# Evidence and relations


class Positioned(Protocol):
    """What has a place in a file: a `Span`, and the facts read from one place (a link, an inline code span)."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def end_column(self) -> int: ...


@dataclass(slots=True, unsafe_hash=True)
class Span(Row):
    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, line: int, column: int) -> bool:
        if line < self.line or line > self.end_line:
            return False
        if line == self.line and column < self.column:
            return False
        return not (line == self.end_line and column > self.end_column)


@dataclass(slots=True, unsafe_hash=True)
class Evidence(Row):
    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def to_json(self, content_hash: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "column": self.column,
                               "end_line": self.end_line, "end_column": self.end_column}
        if content_hash:
            out["content_hash"] = content_hash
        return out

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


@dataclass(slots=True, unsafe_hash=True)
class Relation(Row):
    source: str
    target: str
    kind: str
    evidence: tuple[Evidence, ...]
    confidence: str = "observed"
    provenance: str = "observed"
    metadata: tuple[tuple[str, Any], ...] = ()
    symbol: str = ""  # mentions-symbol: the symbol named (one relation per symbol)
    _nested: ClassVar[dict[str, type[Row]]] = {"evidence": Evidence}

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.source, self.kind, self.target, self.symbol)

    @property
    def id(self) -> str:
        base = f"relation:{self.source}:{self.kind}:{self.target}"
        return f"{base}:{self.symbol}" if self.symbol else base

    def meta(self, key: str, default: Any = None) -> Any:
        for k, v in self.metadata:
            if k == key:
                return v
        return default


def sort_by_key(relations: list[Relation]) -> None:
    """Sort relations by their key in place, one field at a time (each sort stable): sorting by `key` made a tuple
    of every relation's key at once, the peak of building the search index on a large repository."""
    for field in ("symbol", "target", "kind", "source"):
        relations.sort(key=attrgetter(field))


def sorted_by_key(relations: Iterable[Relation]) -> list[Relation]:
    ordered = list(relations)
    sort_by_key(ordered)
    return ordered


# --------------------------------------------------------------------------------------------------
# Markdown facts


@dataclass(slots=True, unsafe_hash=True)
class Heading(Row):
    level: int
    text: str
    slug: str
    line: int
    column: int
    end_column: int


@dataclass(slots=True, unsafe_hash=True)
class Link(Row):
    """A link as written: `kind` is inline, reference, autolink, wiki or image; `target` is the raw href."""

    target: str
    text: str
    kind: str
    line: int
    column: int
    end_line: int
    end_column: int
    in_code: bool = False  # the link text is a single code span (the span is recorded separately)

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


@dataclass(slots=True, unsafe_hash=True)
class CodeSpan(Row):
    """Inline code: `text` is the code, the span covers the backticks."""

    text: str
    line: int
    column: int
    end_line: int
    end_column: int
    literal: bool = False  # introduced as a value or a name ("set to `test`", "a cookie named `h3`")
    elsewhere: str = ""  # the repository its sentence places it in ("in the `owner/repo` repository, ..."), lowercase

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


@dataclass(slots=True, unsafe_hash=True)
class FenceToken(Row):
    """An identifier written in a fenced code block of a JS/TS language, on one line (`column` to `end_column`)."""

    text: str
    line: int
    column: int
    end_column: int

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.line, self.end_column)


@dataclass(slots=True, unsafe_hash=True)
class Declaration(Row):
    """A frontmatter reference: a `covers` entry, or a declared relation `from -> to`."""

    kind: str  # covers | relation
    ref: str
    line: int
    column: int
    end_column: int
    target: str = ""  # relations only: the `to` side; `ref` holds the `from` side
    relation_kind: str = ""
    detection: str = ""  # relations only: static | dynamic | external


@dataclass(slots=True, unsafe_hash=True)
class Issue(Row):
    """A problem found while reading a file (malformed frontmatter, unparseable manifest)."""

    code: str
    message: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(slots=True, unsafe_hash=True)
class Region(Row):
    """A generated region: marker lines `start_line`/`end_line` (inclusive), recorded and recomputed hash."""

    start_line: int
    end_line: int
    recorded_hash: str | None
    computed_hash: str
    closed: bool

    @property
    def edited(self) -> bool:
        return self.recorded_hash is not None and self.recorded_hash != self.computed_hash


@dataclass(slots=True, unsafe_hash=True)
class MarkdownFacts(Row):
    path: str
    content_hash: str
    title: str | None
    headings: tuple[Heading, ...]
    summary: str | None
    word_count: int
    frontmatter: tuple[tuple[str, str], ...]
    declarations: tuple[Declaration, ...]
    issues: tuple[Issue, ...]
    links: tuple[Link, ...]
    code_spans: tuple[CodeSpan, ...]
    regions: tuple[Region, ...]
    language: str
    line_count: int
    body: str
    anchors: tuple[tuple[str, int], ...] = ()  # explicit anchors (HTML `id`/`name`, `{#id}` lines) and their lines
    includes: tuple[str, ...] = ()  # documents included whole (`<!--@include: ./x.md-->`), as written
    builds: str = ""  # a directive by which the site adds content (and headings) at build time ('' when none)
    # identifiers in fenced JS/TS code (each name on at most 8 lines), and whether more were left out than kept
    fence_tokens: tuple[FenceToken, ...] = ()
    fence_truncated: bool = False
    ascii: bool = False  # the whole text is ASCII: its columns are the same in every position encoding
    kind: ClassVar[str] = DOCUMENT
    _nested: ClassVar[dict[str, type[Row]]] = {
        "headings": Heading, "declarations": Declaration, "issues": Issue, "links": Link,
        "code_spans": CodeSpan, "regions": Region, "fence_tokens": FenceToken}

    def fm(self, key: str) -> str | None:
        for k, v in self.frontmatter:
            if k == key:
                return v
        return None

    @property
    def slugs(self) -> frozenset[str]:
        return frozenset(h.slug for h in self.headings) | frozenset(a for a, _ in self.anchors)


# --------------------------------------------------------------------------------------------------
# JS/TS facts


@dataclass(slots=True, unsafe_hash=True)
class Export(Row):
    """An exported name. `source` is set when the name comes from another module (a re-export)."""

    name: str
    kind: str
    line: int
    column: int
    end_column: int
    source: str | None = None
    original: str = ""  # a renaming re-export's name in its source (`export { a as b } from`: `a`)

    @property
    def declared(self) -> bool:
        return self.source is None and self.name not in ("*",)


@dataclass(slots=True, unsafe_hash=True)
class Import(Row):
    """An import of any form; the span is the specifier string's."""

    specifier: str
    kind: str  # static | type | side-effect | dynamic | require | re-export
    line: int
    column: int
    end_line: int
    end_column: int
    names: tuple[str, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class ModuleFacts(Row):
    path: str
    content_hash: str
    exports: tuple[Export, ...]
    imports: tuple[Import, ...]
    parse_errors: int
    dynamic_unanalyzed: int
    line_count: int
    summary: str | None = None  # the first sentence of the file's leading comment
    prose: str = ""  # what the module says about itself: comments and message strings, bounded
    outline: tuple[str, ...] = ()  # member names of its exported classes (its public methods), bounded
    generated: str = ""  # the marker in its leading comment that says it is generated ('' when none)
    documented: int = 0  # exported declarations that carry a doc comment (`/** ... */`)
    # runtime wiring: an imported binding handed to a registration call (`app.use(router)`), as an Import of the
    # binding's specifier with kind `wiring`, the argument's span and names (method, binding)
    wiring: tuple[Import, ...] = ()
    ascii: bool = False  # the whole text is ASCII: its columns are the same in every position encoding
    # a documentation site's configuration: (route base, folder as written) of each content folder it serves
    site_mounts: tuple[tuple[str, str], ...] = ()
    # ...and (folder as written, sidebar file as written) of each that names its sidebar (`sidebarPath`)
    site_sidebars: tuple[tuple[str, str], ...] = ()
    # the names its code is written with, each once, space-separated and bounded: what search reads for a question
    # about how something is implemented (`docbridge.engine.discovery.typescript`)
    code_words: str = ""
    kind: ClassVar[str] = MODULE
    _nested: ClassVar[dict[str, type[Row]]] = {"exports": Export, "imports": Import, "wiring": Import}


# --------------------------------------------------------------------------------------------------
# Manifests


@dataclass(slots=True, unsafe_hash=True)
class PackageFacts(Row):
    """A `package.json`: `path` is the manifest's path, `directory` the package root ('.' at the top)."""

    path: str
    content_hash: str
    directory: str
    name: str | None
    name_line: int
    workspaces: tuple[str, ...]
    scripts: tuple[tuple[str, str], ...]
    dependencies: tuple[tuple[str, str], ...]
    entry_points: tuple[str, ...]
    package_manager: str | None
    issues: tuple[Issue, ...]
    private: bool = False
    subpaths: tuple[tuple[str, str], ...] = ()  # `exports` subpaths (`./tiny`) and the file each names first
    repository: str = ""  # `owner/name` of the manifest's `repository`, lowercase ('' when it names none)
    # every entry of every dependency field, in field order: (field, name, line, column, end column of its key)
    dependency_lines: tuple[tuple[str, str, int, int, int], ...] = ()
    description: str = ""  # the manifest's one-line `description` ('' when it has none)
    kind: ClassVar[str] = "package-manifest"
    _nested: ClassVar[dict[str, type[Row]]] = {"issues": Issue}


@dataclass(slots=True, unsafe_hash=True)
class TsconfigFacts(Row):
    path: str
    content_hash: str
    base_url: str | None
    paths: tuple[tuple[str, tuple[str, ...]], ...]
    extends: str | None
    issues: tuple[Issue, ...]
    kind: ClassVar[str] = "tsconfig"
    _nested: ClassVar[dict[str, type[Row]]] = {"issues": Issue}


@dataclass(slots=True, unsafe_hash=True)
class NavigationFacts(Row):
    """A documentation site's navigation kept as data (`sidebars.json`, `_meta.json`, `mkdocs.yml`, a docs folder's
    `config.json`): the routes and page paths it names."""

    path: str
    content_hash: str
    routes: tuple[str, ...]
    kind: ClassVar[str] = "navigation"


FileFacts = MarkdownFacts | ModuleFacts | PackageFacts | TsconfigFacts | NavigationFacts
FACT_CLASSES: dict[str, type[Row]] = {
    DOCUMENT: MarkdownFacts, MODULE: ModuleFacts, "package-manifest": PackageFacts, "tsconfig": TsconfigFacts,
    "navigation": NavigationFacts}
