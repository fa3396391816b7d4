"""Priors: what the shape of a query and the kind and place of an entry say about whether the entry answers it,
before the evidence is weighed. One row per prior.

PRIORS are the multiplicative priors, the `prior` component: `lexical × prior × aboutness`, so they only scale
evidence that exists. Each row is `(name, kinds, applies, factor, why, shown)`: the kinds of entry it is about,
the predicate on a candidate of those kinds (the entry, the query's shape, its terms), the factor (a number, or a
function of the candidate), the principle the prior encodes, and the text `--explain` lists for it (`{kind}`,
`{kinds}` and `{variants}` are filled in). They apply in table order, which is the order `--explain` lists them
in. Rows that exclude each other say so in their predicates (a question has one `QueryShape.form`).

ADDITIVE_PRIORS are the components that are properties of the entry rather than evidence of the query:
canonicality, audience fit and accepted agent signals, each its own component.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docbridge.engine.base.lexicon import has_token
from docbridge.engine.base.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE
from docbridge.engine.retrieval.project import DIRECTORY, TYPES_ONLY, Entry
from docbridge.engine.retrieval.query_shape import QueryShape, vocabulary
from docbridge.engine.views.graph import canonicality_boost

if TYPE_CHECKING:
    from docbridge.engine.retrieval.rank import Retriever

UNITS = (AREA, PACKAGE, DIRECTORY)  # what one edits as a whole: a routing question's answers
AGENT_AUDIENCES = ("agent", "human-and-agent")
DECLARED_PAGE_FACTOR = 0.8
DECLARED_PAGE_WHY = "a page, for a query that is the name a module declares"
DECLARED_PAGE = f"prior ×{DECLARED_PAGE_FACTOR:g}: {DECLARED_PAGE_WHY}"
TASK_PAGE = 1.2  # a page, for "how do I…" / "how to…": guides walk through tasks
TASK_MODULE = 0.75  # a module, for the same
TASK_GUIDE = 1.15  # ...and a page in a guide folder (guide/, tutorials/, recipes/), more
# a page, for a question about where something is done in the code: where it says so ("in the code", "which
# file", "no código"), a page is not an answer; where only its verb says so ("where are X created"), less likely one
LOCATION_PAGE = {True: 0.5, False: 0.75}
SHARED_DEPENDENTS = 2  # "shared" by one is not shared: a package at least two others depend on
EXCLUDED_NAMED = 0.5  # an entry named after a word the query excludes
AUDIENCE_FIT = 25.0
DATED_POST = 0.7  # a blog or news post, for a how-to, routing or implementation question
DECLARATION_FILE = re.compile(r"\.d\.[cm]?ts$")  # TypeScript's declaration files: types, no code that runs
ACCEPTED_SIGNALS_WEIGHT = 30.0  # share 0.15 of exactId 200: live accepted rank hints and canonical markers


@dataclass(slots=True)  # not frozen: one is made per candidate, and a frozen one takes four times as long
class Subject:
    """One candidate as a prior reads it: the entry (and its position in the index), the query's shape and terms."""

    index: Retriever
    at: int
    entry: Entry
    shape: QueryShape
    terms: list[str]
    agent: bool = False  # the caller is an agent

    def declares_code(self) -> bool:
        return bool(self.index.symbol_sets(self.at)[1])

    def implements(self) -> bool:
        """Whether the module declares code that runs: a declaration file (`.d.ts`), or a module that declares
        only types and interfaces, describes shapes."""
        return self.declares_code() and not DECLARATION_FILE.search(self.entry.path) and \
            TYPES_ONLY not in self.entry.tags

    def in_folder(self, listed: str) -> bool:
        """Whether the entry's path goes through a folder of a word list (`guide_folders`: `docs/guide/`,
        `tutorials/`; `post_folders`: `blog/`, `news/`)."""
        folders = vocabulary().words[listed]
        return any(part.lower() in folders for part in self.entry.path.split("/")[:-1])

    def title_covers_query(self) -> bool:
        return len(self.terms) >= 2 and all(has_token(self.entry.title, t) for t in self.terms)


def _always(shape: QueryShape) -> bool:
    return True


def _every(s: Subject) -> bool:
    """A prior that applies to every candidate its kinds and the query allow (not called: see `prior`)."""
    return True


@dataclass(frozen=True, slots=True)
class Prior:
    name: str
    kinds: tuple[str, ...]  # the kinds of entry it is about (ANY: every kind)
    applies: Callable[[Subject], bool]  # on a candidate, once `given` holds
    factor: float | Callable[[Subject], float]
    why: str  # the principle
    shown: str  # what --explain says of it
    given: Callable[[QueryShape], bool] = _always  # on the query alone: read once per search, not per candidate

    def value(self, subject: Subject) -> float:
        return self.factor(subject) if callable(self.factor) else self.factor


@dataclass(frozen=True, slots=True)
class AdditivePrior:
    name: str
    component: str
    applies: Callable[[Subject], bool]
    amount: Callable[[Subject], float]
    why: str


# ------------------------------------------------------------------------------------------------ predicates

def partial_name(identifier: str, token: str) -> bool:
    """`token` is part of a name: one of its dash-separated ends, or inside it with at most four letters more."""
    if token not in identifier or identifier == token or len(token) < 3:
        return False
    return len(identifier) <= len(token) + 4 or identifier.startswith(token + "-") or identifier.endswith("-" + token)


def named_file(name: str, words: tuple[str, ...]) -> bool:
    """A file name (without - and _) is one of the words or holds it, with at most four letters more (as
    `partial_name` reads a name): `parser` for `parse`."""
    return any(word in name and len(name) <= len(word) + 4 for word in words)


def _part_of_name(s: Subject) -> bool:
    words = s.shape.words
    for identifier in s.index.identifiers[s.at]:
        for token in words:  # most pairs fail `in`, which is asked first, without a call
            if token in identifier and partial_name(identifier, token):
                return True
    return False


def _file_named_for_mechanism(s: Subject) -> bool:
    """(Only when no query word is part of its name: that prior already says the same.)"""
    return bool(s.shape.file_words) and not _part_of_name(s) and named_file(s.index.file_name(s.at), s.shape.file_words)


def _change_route(s: Subject) -> float:
    return 1.4 * (1.6 if s.title_covers_query() else 1.0)


def _canonical_copy(s: Subject) -> float:
    return 1 + min(0.3, 0.1 * s.entry.variants)


# ------------------------------------------------------------------------------------------------ the table

ANY: tuple[str, ...] = ()  # a prior for entries of every kind

PRIORS: tuple[Prior, ...] = (
    Prior("agent-audience", ANY, lambda s: s.entry.audience in AGENT_AUDIENCES, 1.15,
          "documentation written for agents is curated for them: the better entry point to the same evidence",
          "written for agents"),
    Prior("part-of-name", ANY, _part_of_name, 1.2,
          "an entry whose name (alias, ownership id) holds a word of the query is about that word",
          "a query word is part of its name", given=lambda q: bool(q.words)),
    Prior("file-named-for-mechanism", (MODULE,), _file_named_for_mechanism, 1.2,
          "code is named after what it does: the module whose file a question's word names holds the mechanism",
          "a query word is its file name or part of it, for a question about how something is implemented",
          given=lambda q: bool(q.file_words)),
    Prior("routing-ownership-record", ANY, lambda s: bool(s.entry.ownership_id), 1.1,
          "a routing question asks who owns a thing and where to edit it: an ownership record says so",
          "an ownership record, for a routing question", given=lambda q: q.routing),
    Prior("routing-unit", UNITS, _every, 1.4,
          "a routing question is answered by the unit one edits (package, area, directory), not prose about it",
          "a {kind}, for a routing question", given=lambda q: q.routing),
    Prior("routing-unit-of-kind-named", UNITS, lambda s: s.entry.kind in s.shape.kinds_named, 1.3,
          "a question that names the kind of unit it wants is answered by a unit of that kind",
          "the question asks for a {kind}", given=lambda q: q.routing and bool(q.kinds_named)),
    Prior("routing-module", (MODULE,), _every, 1.1,
          "a module is a place one edits too, nearer a routing answer than a page",
          "a module, for a routing question", given=lambda q: q.routing),
    Prior("routing-file-for-unit-question", (MODULE, DOCUMENT), _every,
          0.6, "a question that asks for a package or an area is not answered by one file",
          "a {kind}, for a question that asks for a {kinds}", given=lambda q: q.routing and bool(q.kinds_named)),
    Prior("routing-page-for-where-to-edit", (DOCUMENT,), _every, 0.6,
          "a question that asks where to change something asks for the code one edits: a page only describes it",
          "a page, for a question that asks where to change something",
          given=lambda q: q.asks_where_to_edit and not q.kinds_named),
    Prior("shared-package-for-shared", (PACKAGE,), lambda s: s.entry.dependents >= SHARED_DEPENDENTS, 1.25,
          "what several packages share lives in a package they depend on: a question about shared logic is answered "
          "by one that others depend on, not by one of those that use it",
          "a package other packages depend on, for a question about what they share", given=lambda q: q.asks_shared),
    Prior("route-title-covers-query", (INTENT,), lambda s: s.title_covers_query(), 1.6,
          "a configured route whose title says all of the query is the answer written for it",
          "the route's title covers the whole query"),
    Prior("change-route-for-change", (CHANGE,), _every, _change_route,
          "a change route answers a request to change something (more when its title covers the request)",
          "a change route, for a request to change something", given=lambda q: q.asks_change),
    Prior("change-route-otherwise", (CHANGE,), _every, 0.15,
          "for an ordinary question a change route stays reachable when nothing better matches, without crowding "
          "the answers", "a change route, for a query that asks no change", given=lambda q: not q.asks_change),
    Prior("module-for-name", (MODULE,), _every, 1.15,
          "a symbol or a path names code: the module is the thing named",
          "a module, for a symbol- or path-shaped query", given=lambda q: q.form == "name" and not q.file_name),
    Prior("page-for-declared-name", (DOCUMENT,), _every, DECLARED_PAGE_FACTOR,
          "a name a module declares is answered by its declaration; pages about it (even one named after it) "
          "follow", DECLARED_PAGE_WHY, given=lambda q: q.form == "name" and q.declared),
    Prior("module-for-implementation", (MODULE,), lambda s: s.implements(),
          1.3, "how something works is answered by the code that declares the mechanism",
          "a module that declares code, for a question about how something is implemented",
          given=lambda q: q.form == "implementation"),
    Prior("module-for-task", (MODULE,), _every, TASK_MODULE,
          "instructions are written in pages: the module that implements a thing does not say how to use it",
          "a module, for a question that asks how to do something",
          given=lambda q: q.asks_task and not q.asks_location and q.form != "name"),
    Prior("page-for-location", (DOCUMENT,), _every, lambda s: LOCATION_PAGE[s.shape.says_code],
          "a question about where in the code something is or happens is answered by the code that does it: a page "
          "about the topic is not where it happens",
          "a page, for a question about where in the code", given=lambda q: q.asks_location),
    Prior("named-after-excluded", ANY, lambda s: bool(s.index.lexical.titled(s.at, list(s.shape.excluded_terms))),
          EXCLUDED_NAMED, "a word the question excludes (without X, sem X) is not its subject: an entry named after "
          "it answers another question", "its title or path holds a word the question excludes",
          given=lambda q: bool(q.excluded_terms)),
    Prior("document-for-sentence", (DOCUMENT,), _every, 1.15,
          "a sentence asks for an explanation, which documents give",
          "a document, for a sentence", given=lambda q: q.form == "sentence"),
    Prior("document-for-phrase", (DOCUMENT,), _every, 1.15,
          "two plain words (not an identifier, not a path) are a topic, not a name: a page explains it",
          "a document, for a phrase of plain words", given=lambda q: q.form == "phrase"),
    Prior("page-for-task", (DOCUMENT,), _every, TASK_PAGE,
          "guides walk through tasks: a question that asks how to do something is answered by a page",
          "a page, for a question that asks how to do something", given=lambda q: q.asks_task),
    Prior("guide-for-task", (DOCUMENT,), lambda s: s.in_folder("guide_folders"), TASK_GUIDE,
          "a guide walks through a task where a reference page describes one option or function: of two pages that "
          "match a how-to question alike, the guide answers it (how to configure a thing is the option's reference)",
          "a page in a guide folder, for a question that asks how to do something",
          given=lambda q: q.asks_task and not q.asks_configuration),
    Prior("dated-post", (DOCUMENT,), lambda s: s.in_folder("post_folders"), DATED_POST,
          "a blog or news post tells what changed at a moment (a release, a beta): how to do something, and where "
          "it is done, are answered by the guides and the code as they are now, unless the question asks about "
          "the release", "a dated post (blog, news), for a question about how to do something or where it is",
          given=lambda q: (q.asks_task or q.routing or q.form == "implementation") and not q.asks_news),
    Prior("directory-for-content", (DIRECTORY,), _every, 0.7,
          "a directory's only text is its name: a question about content is rarely answered by the folder",
          "a directory, for a question about content", given=lambda q: not q.routing and not q.code_shaped),
    Prior("canonical-copy", ANY, lambda s: bool(s.entry.variants), _canonical_copy,
          "the copy of a page its variants point to stands for all of them",
          "the canonical copy of a page with {variants} variants"),
    Prior("peripheral", ANY, lambda s: s.entry.surface == "peripheral", 0.5,
          "tests, fixtures, examples and playgrounds (and forms to fill in) illustrate or exercise the code: they "
          "answer a query that asks for them",
          "under a test, fixture, example or playground directory, or a form to fill in",
          given=lambda q: not q.asks_peripheral),
)


# A row the query's shape allows, with its reason when that is the same for every candidate of the kind (a constant
# factor, a text without `{variants}`): written once per search, not once per candidate
_Row = tuple[Prior, str | None]


def _reason(row: Prior, factor: float, kind: str, shape: QueryShape, variants: int = 0) -> str:
    shown = row.shown
    if "{" in shown:
        shown = shown.format(kind=kind, kinds="/".join(sorted(shape.kinds_named)), variants=variants)
    return f"prior ×{factor:g}: {shown}"


def _rows(kind: str, shape: QueryShape) -> tuple[_Row, ...]:
    return tuple((row, None if callable(row.factor) or "{variants}" in row.shown else
                  _reason(row, row.factor, kind, shape))
                 for row in PRIORS if (not row.kinds or kind in row.kinds) and row.given(shape))


# The rows a query's shape allows, per kind of entry, for the query being ranked: every candidate of a search
# shares its shape, so the query-only conditions are read once per search (a tuple swapped whole: threads that
# rank other queries at the same time each see a consistent pair).
_ROWS_OF_SHAPE: tuple[QueryShape | None, dict[str, tuple[_Row, ...]]] = (None, {})


def priors_for(kind: str, shape: QueryShape) -> tuple[_Row, ...]:
    """The rows of PRIORS for entries of a kind that the query's shape allows, in table order, each with its
    reason when it is the same for every candidate."""
    global _ROWS_OF_SHAPE
    current, rows = _ROWS_OF_SHAPE
    if current is not shape:
        rows = {}
        _ROWS_OF_SHAPE = (shape, rows)
    found = rows.get(kind)
    if found is None:
        found = rows[kind] = _rows(kind, shape)
    return found


ADDITIVE_PRIORS: tuple[AdditivePrior, ...] = (
    AdditivePrior("canonicality", "canonicality", _every,
                  lambda s: canonicality_boost(s.entry.pagerank - s.index.rank_floor, len(s.index.entries)),
                  "what the repository's pages link to and cover is central (PageRank, log-scaled): a tie-breaker"),
    AdditivePrior("audience-fit", "audienceFit", lambda s: s.agent and s.entry.audience in AGENT_AUDIENCES,
                  lambda s: AUDIENCE_FIT, "an agent that asks gets the documentation written for agents first"),
    AdditivePrior("accepted-agent-signals", "acceptedAgentSignals", _every,
                  lambda s: round(s.entry.agent_signal * ACCEPTED_SIGNALS_WEIGHT, 6),
                  "an accepted enrichment (rank hint, canonical marker) is a reviewer's word on the entry"),
)


def prior(subject: Subject, reasons: list[str]) -> float:
    """The product of the priors that apply, each listed in `reasons`."""
    value = 1.0
    for row, reason in priors_for(subject.entry.kind, subject.shape):
        if row.applies is _every or row.applies(subject):
            factor = row.factor(subject) if callable(row.factor) else row.factor
            if reason is None:
                reason = _reason(row, factor, subject.entry.kind, subject.shape, subject.entry.variants)
            value *= factor
            reasons.append(reason)
    return value


def additive_priors(subject: Subject, components: dict[str, float]) -> None:
    for row in ADDITIVE_PRIORS:
        if row.applies is _every or row.applies(subject):
            components[row.component] = row.amount(subject)
