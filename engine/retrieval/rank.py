"""Explainable ranking over the projection.

    score = lexical × prior × aboutness + exactId + exactPath + exactSymbol
          + graphProximity + canonicality + audienceFit + acceptedAgentSignals

- lexical: BM25 (docbridge.engine.retrieval.lexical) on the 0–50-per-term scale of the original ranking.
- prior: multipliers that can only scale evidence that exists: query shape (an agent-audience document,
  an ownership record or a unit for a routing question, a route whose title covers the query, a module for
  a symbol- or path-shaped query or for an implementation question, a document for a sentence and a page
  for a how-to question, less a document for a word that a module outside tests and examples declares), and
  properties of the repository (the canonical copy of a page that has variants, something under a test,
  fixture, example or playground directory). Each factor other than 1 is listed in `reasons`.
- aboutness: 1 + 0.2 × the share of the query's IDF mass found in the title, headings or path (a word the
  glossary or a typo correction added counts with its reduced weight, as in BM25; a compound identifier's
  whole token and its parts share one word's weight), + 0.3 × the share found in the title or path alone
  when that is at least half, for a sentence (three or more words, not a routing question).
- exactId / exactPath / exactSymbol: the query names the thing. Per-word identity applies to queries of at
  most two words: a sentence does not name a thing by containing one of its words; two adjacent words that
  together spell a file name or a declared name ("random sequencer": RandomSequencer.ts) earn COMPOUND. A
  re-exporting barrel earns less for a symbol than the module that declares it; a declaration on a package's
  public surface, in a package other packages depend on, earns more; one under a test or example directory
  earns half. A directory named by its path (or its last segments) outranks the files inside it.
- graphProximity: entries within two hops of one of the ten strongest lexical hits, scaled by that anchor's
  share of the best lexical score, never past that anchor (unless the query names the entry); a strong hit
  that two or more other strong hits link to or import earns one hop's, scaled by the second strongest of
  them. A result that only a relation surfaced earns proximity and nothing else.
- canonicality: 4 × ln(1 + (PageRank − floor) × entries), for lexical hits only (a tie-breaker).
- audienceFit: +25 for documentation written for agents when the caller is an agent.
- acceptedAgentSignals: the live accepted enrichment signal of the entry (0..1) × 30 (docbridge.engine.base.overlay).

Before ranking, the query is read through the glossary (`docbridge.engine.base.lexicon.translations`: Portuguese terms
and abbreviations add their English words), and a word that matches nothing is replaced by the closest
indexed word. Results below a third of the best score are dropped (`floor=0` keeps the neighbourhood); ties
break on an exact id, then on an ownership record, then on the id; variants of one page collapse into the
best-ranked copy, which lists the others as `alsoIn`. Explaining never changes the order.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.heap import built
from docbridge.engine.base.lexicon import (
    STOPWORDS,
    fold,
    has_token,
    is_cjk,
    raw_tokens,
    singularize,
    tokens,
    translations,
)
from docbridge.engine.base.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE, weaker_confidence
from docbridge.engine.retrieval.lexical import LexicalIndex
from docbridge.engine.retrieval.project import DIRECTORY, Entry, Projection, projection_of
from docbridge.engine.views.graph import canonicality_boost

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState
from docbridge.engine.base.memo import ViewKey

COMPONENTS = ("lexical", "prior", "aboutness", "exactId", "exactPath", "exactSymbol", "graphProximity",
              "canonicality", "audienceFit", "acceptedAgentSignals")
ACCEPTED_SIGNALS_WEIGHT = 30.0  # share 0.15 of exactId 200: live accepted rank hints and canonical markers
LEXICAL_DEPTH = 200
TYPO_SIMILARITY = 0.9
TYPO_BOOST = 0.7
TYPO_SPREAD = 0.03
# a word the glossary adds weighs less than one the query said; a related topic (`slow`: performance) as much
# as a typo correction; an English query reaching for Portuguese words weighs least (a translation of the
# page it wants is rarely the page it wants)
READING_BOOST = {"pt-en": 0.9, "abbreviation": 0.9, "related": TYPO_BOOST, "en-pt": 0.3}
ANCHORS = 10
LENT_MARGIN = 0.01  # an entry lifted by a strong hit's proximity stays this far below it
CONVERGING = 2  # strong hits that link to or import another strong hit lend it proximity
_CONVERGING_KINDS = frozenset({"links-to", "imports", "re-exports"})
FLOOR = 1 / 3
DECLARED_PAGE_FACTOR = 0.8
DECLARED_PAGE_WHY = "a page, for a query that is the name a module declares"
DECLARED_PAGE = f"prior ×{DECLARED_PAGE_FACTOR:g}: {DECLARED_PAGE_WHY}"
TITLED = 0.3  # aboutness added for a title or path that holds the query's weight, for a sentence
TITLED_SHARE = 0.5  # ...when it holds at least this share of it
UNIT_NAMED = 160  # exactId for a unit whose name carries all of a routing question's weight
TASK_PAGE = 1.2  # a page, for "how do I…" / "how to…": guides walk through tasks
COMPOUND = 60  # two adjacent query words that together spell a file name or a declared name

_PACKAGE_INTENT = re.compile(
    r"\b(package|pkg|edit|change|where|owns?|ownership|owners?|handoff|start|responsible|maintainers?)\b"
    r"|\b(pacotes?|onde|quem|donos?|responsave(l|is)|comec\w*|inici\w*|edit\w*|mud\w*|alter\w*)", re.I)
_CHANGE_INTENT = re.compile(
    r"\b(change|edit|modify|update|fix|migrate|replace)\b"
    r"|\b(alter\w*|mud\w*|modific\w*|edit\w*|atualiz\w*|corrig\w*|migr\w*|substitu\w*|troc\w*)", re.I)
# ("module" asks for a unit only beside a routing verb: "how do I mock a module" asks how to mock)
_ROUTING_QUESTION = re.compile(r"^(where|how)\b.*\b(edit|change|package)", re.I)
# In a routing question these words say what kind of answer is wanted, not what it is about: they set the
# priors and are not matched as text (unless nothing else is left).
_ROUTING_WORDS = frozenset(
    "own owns owner owners ownership owned responsible maintain maintains maintainer maintainers team teams area "
    "areas where change changes changing edit edits editing modify update handoff start package packages module "
    "modules dono donos responsavel responsaveis onde mudar alterar editar modificar pacote pacotes modulo "
    "modulos equipe time".split())
# In a where/which/how question, "implemented" says the answer is code, not what it is about ("where are the
# reporters implemented", "which package implements spies"): a routing word too.
_IMPLEMENT_WORDS = frozenset(
    "implement implements implemented implementing implementation implementations implementado implementada "
    "implementados implementadas implementa implementacao".split())
_ASKING = re.compile(r"^(where|which|how|onde|qual|quais|como)\b", re.I)
# "how does X decide…", "how are X batched", "where is X implemented": the mechanism, which modules hold,
# rather than a task a guide walks through ("how do I…", "how to…", "how is X configured")
_MECHANISM = (r"(implement\w*|defin(e|es|ed)|declar\w*|comput\w*|calculat\w*|decid\w*|detect\w*|determin\w*|"
              r"dispatch\w*|pars(e|es|ed|ing)|resolv\w*|propagat\w*|schedul\w*|batch\w*|hash(es|ed|ing)?|"
              r"serializ\w*|escap\w*|shuffl\w*|split\w*|track\w*|generat\w*|garbage|writ(e|es|ten|ing)|rewrit\w*)")
_IMPLEMENTATION = re.compile(
    r"^(how|where|when)\s+(does|do|did)\s+(?!(i|we|you|one)\b)"
    rf"|^(how|where|when)\s+(is|are|was|were)\s+.*\b{_MECHANISM}\b"
    r"|\b(implemented|implementation|implements)\b"
    r"|^(como|onde|quando)\b.*\b(implementad\w*|implementa\w*|calculad\w*|detectad\w*|decidid\w*|definid\w*|"
    r"agendad\w*|propagad\w*)", re.I)
# "how do I…", "how to…", "como configurar…": a task, which a page walks through (not how code works)
_TASK = re.compile(r"^(how\s+(do|can|should|would)\s+(i|we|you|one)\b|how\s+to\b)"
                   r"|^como\s+((posso|podemos|devo|faço|faco|fazer)\b|\w+(ar|er|ir)\b)", re.I)
# words by which a query asks for examples or fixtures themselves (not "test": in a test runner's repository
# that is the subject, not a place)
# words by which a routing question names the kind of unit it wants ("which package…", "which area…")
_KIND_WORDS = {"package": (PACKAGE,), "packages": (PACKAGE,), "pacote": (PACKAGE,), "pacotes": (PACKAGE,),
               "area": (AREA, DIRECTORY), "areas": (AREA, DIRECTORY), "folder": (DIRECTORY, AREA),
               "directory": (DIRECTORY, AREA), "pasta": (DIRECTORY, AREA), "diretorio": (DIRECTORY, AREA)}
_PERIPHERAL_WORDS = frozenset({"example", "examples", "fixture", "fixtures", "playground", "playgrounds", "demo",
                               "demos", "sandbox", "e2e", "sample", "samples", "__tests__"})
_IDENTIFIER = re.compile(r"[a-z0-9][A-Z]|[A-Za-z]_[A-Za-z]")
_SYMBOL_SHAPED = re.compile(r"[a-z0-9][A-Z]|^[A-Za-z_$][\w$]{2,}$")
_PATH_SHAPED = re.compile(r"/|\.[A-Za-z]{1,4}$")


@dataclass(slots=True)
class Result:
    entry: Entry
    score: float
    components: dict[str, float]
    matched: dict[str, list[str]]
    confidence: str
    surfaced_by: dict[str, Any] | None = None
    terms: list[str] = field(default_factory=list)  # the query's tokens, as matched
    corrected: dict[str, str] = field(default_factory=dict)  # typo-tolerant substitutions
    reasons: list[str] = field(default_factory=list)  # why the prior and identity components are what they are
    also_in: list[str] = field(default_factory=list)  # the other copies of this page, folded into it
    translated: dict[str, str] = field(default_factory=dict)  # glossary readings of the query
    complete: Any = None  # adds the body's matches to `matched` when they are first shown
    fusion: dict[str, Any] | None = None  # hybrid search: both ranks, the fused score, the best chunk

    def matches(self) -> dict[str, list[str]]:
        """The query terms each field holds, the body's included (worked out when first asked)."""
        if self.complete is not None:
            self.matched, self.complete = self.complete(), None
        return self.matched

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        entry = self.entry
        out: dict[str, Any] = {
            "id": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title,
            "score": round(self.score, 2 if self.fusion is None else 8), "confidence": self.confidence,
            "provenance": entry.provenance,
            "evidence": [{"path": entry.path, "content_hash": entry.content_hash}],
        }
        if entry.summary:
            out["summary"] = entry.summary
        if entry.ownership_id:
            out["ownership_id"] = entry.ownership_id
        if self.also_in:
            out["alsoIn"] = self.also_in
        if explain:
            out["explain"] = {"terms": self.terms, "matched": self.matches(),
                              "components": {k: round(v, 6) for k, v in self.components.items()},
                              **({"reasons": self.reasons} if self.reasons else {}),
                              **({"translated": self.translated} if self.translated else {}),
                              **({"corrected": self.corrected} if self.corrected else {}),
                              **({"surfaced_by": self.surfaced_by} if self.surfaced_by else {}),
                              **({"fusion": self.fusion} if self.fusion is not None else {})}
        if self.fusion is not None and self.fusion.get("bestChunk"):
            chunk = self.fusion["bestChunk"]
            out["evidence"].append({"path": entry.path, "chunk_id": chunk["id"], "heading": chunk["heading"],
                                    "lines": [chunk["startLine"], chunk["endLine"]]})
        return out


@dataclass(slots=True)
class _QueryShape:
    """What a query is, read once: its words, whether it names one thing, what kind of answer it asks."""

    query: str
    words: list[str]  # folded, singular
    naming: bool  # at most two words: per-word identity applies
    whole: str  # the whole query as a name or path
    want_ownership: bool
    change_intent: bool
    shape_module: bool
    implementation: bool
    peripheral: bool  # the query asks about examples, fixtures or playgrounds
    identifier: bool = False  # one word shaped like a code identifier (camelCase, snake_case), not a path
    kinds_named: frozenset[str] = frozenset()  # unit kinds the question names ("which package…")
    declared: bool = False  # one word that a module outside tests and examples declares and exports
    term_count: int = 0
    sentence: bool = False  # three or more words that are not stopwords
    task: bool = False  # "how do I…", "how to…": a page walks through it
    compounds: frozenset[str] = frozenset()  # two adjacent words written as one name ("random sequencer")
    phrase: bool = False  # two plain words (no identifier, no path), not a routing question
    file_words: tuple[str, ...] = ()  # an implementation question's words that may name a module's file


@dataclass(slots=True)
class _Candidate:
    index: int
    bm25: float = 0.0
    lexical_hit: bool = False
    hops: int = 0
    via: dict[str, Any] | None = None
    share: float = 0.0
    anchor: int = -1  # the strong hit whose proximity it has (-1: none, or several)


@dataclass(slots=True)
class Retriever:
    projection: Projection
    mode: str = "combined"
    lexical: LexicalIndex = None  # type: ignore[assignment]  # built from the projection unless given (on disk)
    entries: list[Entry] = field(init=False)
    index_of: dict[str, int] = field(init=False)
    identifiers: list[frozenset[str]] = field(init=False)
    paths: list[str] = field(init=False)
    sorted_paths: list[tuple[str, int]] = field(init=False)
    by_identifier: dict[str, list[int]] = field(init=False)
    by_path: dict[str, list[int]] = field(init=False)
    by_base: dict[str, list[int]] = field(init=False)
    by_symbol: dict[str, list[int]] = field(init=False)
    dependents: dict[str, int] = field(init=False)
    _symbols: dict[int, tuple[frozenset[str], frozenset[str]]] = field(init=False)
    _adjacency: dict[int, list[tuple[int, str, str]]] = field(init=False)
    _unit_names: dict[int, frozenset[str]] = field(init=False)
    _file_names: dict[int, str] = field(init=False)
    rank_floor: float = field(init=False)
    reused: bool = False  # the projection came from the on-disk index (set by the caller)
    # how the index was had: "memory" (built here), "built" (and stored), "reused" (stored, after a scan),
    # "current" (stored, the tree unchanged: nothing scanned)
    source: str = "memory"
    edge_loader: Any = None  # index -> edges, when the entries came without them (docbridge.engine.retrieval.store)

    def __post_init__(self) -> None:
        self.entries = self.projection.entries
        if self.lexical is None:
            self.lexical = LexicalIndex(self.entries, self.projection.weights, self.mode)
        self.index_of = {e.id: i for i, e in enumerate(self.entries)}
        self.paths = [e.path.lower() for e in self.entries]
        self.sorted_paths = sorted((path, i) for i, path in enumerate(self.paths))
        self.identifiers = []
        self._symbols, self._adjacency, self._unit_names, self._file_names = {}, {}, {}, {}
        self.by_identifier, self.by_path = defaultdict(list), defaultdict(list)
        self.by_base, self.by_symbol = defaultdict(list), defaultdict(list)
        self.dependents = {e.id: e.dependents for e in self.entries if e.dependents}
        for i, entry in enumerate(self.entries):
            ids = {fold(a) for a in entry.aliases}
            if entry.ownership_id:
                ids.add(fold(entry.ownership_id))
            if entry.kind in (INTENT, CHANGE):
                ids.add(fold(entry.id.split(":", 1)[1]))
            self.identifiers.append(frozenset(ids))
            for identifier in ids:
                self.by_identifier[identifier].append(i)
            self.by_identifier[entry.id.lower()].append(i)
            path = self.paths[i]
            self.by_path[path].append(i)
            if entry.kind in (DOCUMENT, MODULE):
                self.by_base[_base(path)].append(i)
            for symbol in entry.symbols:
                self.by_symbol[symbol.lower()].append(i)
        positive = [e.pagerank for e in self.entries if e.pagerank > 0]
        self.rank_floor = min(positive) if positive else 0.0

    def symbol_sets(self, index: int) -> tuple[frozenset[str], frozenset[str]]:
        """The lower-cased exported and declared names of an entry."""
        found = self._symbols.get(index)
        if found is None:
            entry = self.entries[index]
            found = self._symbols[index] = (frozenset(n.lower() for n in entry.symbols),
                                            frozenset(n.lower() for n in entry.declared_symbols))
        return found

    def edges_of(self, index: int) -> tuple[Any, ...]:
        """An entry's edges (an index opened from disk reads them when first asked)."""
        if self.edge_loader is not None:
            return self.edge_loader(index)  # type: ignore[no-any-return]  # the loader returns the edges of an entry
        return self.entries[index].edges

    def adjacency(self, index: int) -> list[tuple[int, str, str]]:
        """An entry's neighbours (projection edges are already unique per kind and other, and sorted)."""
        found = self._adjacency.get(index)
        if found is None:
            found = self._adjacency[index] = [(self.index_of[e.other], e.kind, e.confidence)
                                              for e in self.edges_of(index) if e.other in self.index_of]
        return found

    def file_name(self, index: int) -> str:
        """A document's or module's file name, lower-cased, without its extensions, - and _ (randomsequencer)."""
        found = self._file_names.get(index)
        if found is None:
            found = self._file_names[index] = _squash(_base(self.paths[index]))
        return found

    def unit_name(self, index: int) -> frozenset[str]:
        """The words a unit (package, area, directory) is called by: a routing question names it by them."""
        found = self._unit_names.get(index)
        if found is None:
            entry = self.entries[index]
            found = self._unit_names[index] = frozenset(tokens(
                entry.title.rsplit("/", 1)[-1] if entry.kind == PACKAGE else entry.path.rsplit("/", 1)[-1]))
        return found

    # ------------------------------------------------------------------ search

    def search(self, query: str, limit: int = 20, *, kinds: list[str] | None = None, agent: bool = False,  # noqa: C901 (to split)
               floor: float = FLOOR) -> list[Result]:
        terms = tokens(query, unique=True)
        if not terms or not self.entries:
            return []
        stripped = query.strip()
        words = raw_tokens(query)
        naming = len(words) <= 2
        one_word = len(words) == 1
        shape_module = one_word and bool(_SYMBOL_SHAPED.search(stripped) or _PATH_SHAPED.search(stripped))
        # an identifier or a path names a thing: it is not read through the glossary
        readings = [] if shape_module else translations(query)
        want_ownership = bool(_PACKAGE_INTENT.search(query) or _ROUTING_QUESTION.search(stripped))
        routing: set[str] = set()
        if want_ownership or _ASKING.match(stripped):
            routing_words = (_ROUTING_WORDS | _IMPLEMENT_WORDS) if want_ownership else _IMPLEMENT_WORDS
            routing = set(tokens(" ".join(w for w in words if fold(w) in routing_words)))
            if any(t not in routing for t in terms):
                # the words that make it a routing question set the priors and are not matched as text, and
                # neither are their readings (`change`: `mudança`, `package`: `pacote`)
                readings = [r for r in readings
                            if not all(fold(w) in routing_words for w in raw_tokens(r.source))]
        translated = {r.source: r.target for r in readings}
        protected = set(tokens(" ".join(translated)))  # words the glossary knows are not typos
        added: dict[str, float] = {}
        for reading in readings:
            # one word of the query reads as one word's weight, shared by its alternatives (`executar`: run,
            # execute), so a word with many readings does not outweigh the words around it
            targets = tokens(reading.target, unique=True)
            for token in targets:
                added[token] = max(added.get(token, 0.0), READING_BOOST[reading.how] / len(targets))
        extra = list(added)
        if routing:
            content = [t for t in terms if t not in routing]
            terms = content or terms
            extra = [t for t in extra if t not in routing]
        shape = _QueryShape(
            query=query, words=[singularize(fold(w)) for w in words], naming=naming,
            whole=fold(stripped).removesuffix("()").removeprefix("./").rstrip("/"),
            want_ownership=want_ownership, change_intent=bool(_CHANGE_INTENT.search(query)),
            shape_module=shape_module, implementation=bool(_IMPLEMENTATION.search(stripped)),
            peripheral=any(fold(w) in _PERIPHERAL_WORDS for w in words),
            identifier=one_word and not _PATH_SHAPED.search(stripped) and bool(_IDENTIFIER.search(stripped)),
            kinds_named=frozenset(k for w in words for k in _KIND_WORDS.get(fold(w), ())),
            compounds=_compounds(words), task=bool(_TASK.search(stripped)))
        if shape.implementation:
            shape.file_words = tuple(w for w in dict.fromkeys(shape.words) if len(w) >= 3 and w not in STOPWORDS)

        terms, boosts, corrected = self._tolerate_typos(terms, protected)
        for token in extra:
            if token not in terms:
                terms.append(token)
                boosts[token] = added[token]
        shape.term_count = len(terms)
        shape.sentence = not want_ownership and sum(1 for w in shape.words if w not in STOPWORDS) >= 3
        shape.phrase = not want_ownership and not shape.sentence and \
            sum(1 for w in shape.words if w not in STOPWORDS) == 2 and not any(
                _IDENTIFIER.search(w) or _PATH_SHAPED.search(w) for w in words)
        candidates: dict[int, _Candidate] = {}
        hits = self.lexical.search(terms, LEXICAL_DEPTH, boosts)
        for hit in hits:
            candidates[hit.entry] = _Candidate(hit.entry, hit.bm25, True)
        for index in self._identity_candidates(shape):
            candidates.setdefault(index, _Candidate(index, 0.0, True))
        shape.declared = shape.shape_module and not _PATH_SHAPED.search(stripped) and any(
            shape.whole in self.symbol_sets(i)[1] and self.entries[i].surface != "peripheral"
            for i in self.by_symbol.get(shape.whole, ()))

        # pass 1: every component of the lexical hits but proximity
        # the query's weight (for aboutness and a unit named by a question): each term's IDF, scaled as BM25
        # scales it, so a word the glossary or a typo correction added weighs what it weighs in BM25 (`mock`
        # read as Portuguese `simulação` adds a rare word that must not outweigh the words the query said)
        # a word the query says weighs once: a compound identifier's whole token and its parts share it
        # (`AppError`: apperror, app, error, a third each), so its parts do not count it three times
        shares = _word_shares(words, corrected)
        idf = {t: self.lexical.idf(t) * boosts.get(t, 1.0) * shares.get(t, 1.0) for t in terms}
        idf_total = sum(idf.values()) or 1.0
        scored: dict[int, tuple[dict[str, float], dict[str, list[str]], list[str]]] = {}
        for candidate in candidates.values():
            entry = self.entries[candidate.index]
            components = dict.fromkeys(COMPONENTS, 0.0)
            matched: dict[str, list[str]] = {}  # worked out for what is shown (Result.matches)
            reasons: list[str] = []
            components["lexical"] = candidate.bm25
            components["prior"] = self._prior(entry, candidate.index, terms, shape, reasons)
            named = self.lexical.named(candidate.index, terms)
            components["aboutness"] = 1 + 0.2 * sum(idf[t] for t in named) / idf_total
            if shape.sentence:
                # a sentence most of whose weight is in what an entry is called (its title or path) is about
                # it, more than a long page whose sections happen to mention each word
                titled = sum(idf[t] for t in self.lexical.titled(candidate.index, terms)) / idf_total
                if titled >= TITLED_SHARE:
                    components["aboutness"] += TITLED * titled
                    reasons.append(f"aboutness +{TITLED * titled:.3g}: its title or path holds {titled:.0%} of "
                                   "the sentence's weight")
            self._identity(components, entry, candidate.index, shape, reasons)
            if shape.want_ownership and self.entries[candidate.index].kind in (AREA, PACKAGE, DIRECTORY):
                self._unit_named(components, candidate.index, terms, idf, idf_total, shape, reasons)
            components["canonicality"] = canonicality_boost(entry.pagerank - self.rank_floor, len(self.entries))
            if agent and entry.audience in ("agent", "human-and-agent"):
                components["audienceFit"] = 25.0
            components["acceptedAgentSignals"] = round(entry.agent_signal * ACCEPTED_SIGNALS_WEIGHT, 6)
            scored[candidate.index] = (components, matched, reasons)
        self._base_declarations(scored, shape.whole)
        own = {index: _total(c) for index, (c, _, _) in scored.items()}  # every component but proximity
        best_base = max(own.values(), default=0.0)

        # pass 2: proximity to the strongest hits; an entry only a relation surfaces can earn at most 30, so
        # when that cannot reach the floor it is not even considered
        new_entries = floor <= 0 or best_base * floor <= 30
        self._proximity(candidates, hits[:ANCHORS], max((h.bm25 for h in hits), default=0.0), new_entries,
                        shape.peripheral)

        # the strong hits' own scores (with what they earn from each other): what they lend to their
        # neighbours never lifts a neighbour past them
        lenders: dict[int, float] = {}
        for hit in hits[:ANCHORS]:
            candidate = candidates[hit.entry]
            lent = round((30 if candidate.hops == 1 else 12) * candidate.share, 6) if candidate.hops else 0.0
            lenders[hit.entry] = own[hit.entry] + lent
        results = []
        for candidate in candidates.values():
            entry = self.entries[candidate.index]
            if candidate.lexical_hit:
                components, matched, reasons = scored[candidate.index]
            else:
                components, matched, reasons = dict.fromkeys(COMPONENTS, 0.0), {}, []
                components["prior"] = components["aboutness"] = 1.0
            if candidate.hops:
                proximity = round((30 if candidate.hops == 1 else 12) * candidate.share, 6)
                lender = lenders.get(candidate.anchor)
                if lender is not None and own.get(candidate.index, 0.0) + proximity > lender - LENT_MARGIN and not (
                        components["exactId"] or components["exactPath"] or components["exactSymbol"]):
                    # proximity is relevance borrowed from a strong hit: it does not lift an entry past it (an
                    # entry the query names stands on that)
                    room = max(0.0, round(lender - own.get(candidate.index, 0.0) - LENT_MARGIN, 6))
                    if room < proximity:
                        proximity = room
                        reasons.append(f"graphProximity {room:g}: not past {self.entries[candidate.anchor].id}, "
                                       "the strong match it comes from")
                components["graphProximity"] = proximity
                if candidate.via is not None and candidate.via["kind"] == "converging":
                    reasons.append(f"graphProximity {components['graphProximity']:g}: "
                                   f"{len(candidate.via['from'])} strong matches link to or import it")
            if candidate.lexical_hit:
                score, confidence, via = _total(components), entry.confidence, None
            else:
                score, via = components["graphProximity"], candidate.via
                confidence = weaker_confidence(entry.confidence, via["confidence"]) if via else entry.confidence
            score = round(score, 6)
            if score <= 0:
                continue
            results.append(Result(entry, score, components, matched, confidence, via, terms, corrected, reasons,
                                  translated=translated))
        results.sort(key=lambda r: (-r.score, -(r.components["exactId"] > 0), not r.entry.ownership_id, r.entry.id))
        if results and floor > 0:
            threshold = results[0].score * floor
            # a page lowered for a declared name is kept when its score before that lowering passes: it comes
            # after the declaration, it is not dropped for it
            results = [r for r in results if r.score + _declared_lowering(r) >= threshold]
            # copies of one page are told apart by every term they hold
            held = self.lexical.containing([self.index_of[r.entry.id] for r in results
                                            if r.entry.variant_of or r.entry.variants], terms)
            results = _collapse_variants(results, {self.entries[i].id: terms for i, terms in held.items()})
        if kinds:
            results = [r for r in results[:max(4 * limit, 40)] if r.entry.kind in kinds]
        results = results[:limit]
        for result in results:  # which fields hold which terms, for an explanation
            if result.complete is None and result.surfaced_by is None:
                result.complete = partial(self.lexical.matched, self.index_of[result.entry.id], terms)
        return results

    # ------------------------------------------------------------------ components

    def _tolerate_typos(self, terms: list[str], protected: set[str] | frozenset[str] = frozenset()) -> tuple[
            list[str], dict[str, float], dict[str, str]]:
        """A term that matches nothing is replaced by an indexed word very close to it (Jaro-Winkler ≥ 0.9,
        same first letter; the most used of the nearly closest), at a reduced weight: `erros` finds `error`."""
        boosts: dict[str, float] = {}
        corrected: dict[str, str] = {}
        out = []
        for term in terms:
            if len(term) < 4 or is_cjk(term) or not term.isalpha() or term in protected or \
                    self.lexical.doc_freq(term) > 0:
                out.append(term)
                continue
            from rapidfuzz import process  # deferred: only a query with an unknown word needs it
            from rapidfuzz.distance import JaroWinkler
            found = process.extract(term, self.lexical.vocabulary(), scorer=JaroWinkler.normalized_similarity,
                                    limit=12, score_cutoff=TYPO_SIMILARITY)
            close = [(choice, score) for choice, score, _ in found if choice[0] == term[0] and choice.isalpha()]
            if close:
                # among the nearly closest words, the most used one: a misspelt word is more likely a common
                # word than one rare identifier (`invalidaton`: `invalid`, not `invalidateoption`)
                best = max(score for _, score in close)
                choice = max((c for c, score in close if score >= best - TYPO_SPREAD),
                             key=lambda c: (self.lexical.doc_freq(c), c))
                corrected[term] = choice
                boosts[choice] = TYPO_BOOST
                if choice not in out:
                    out.append(choice)
            else:
                out.append(term)
        return out, boosts, corrected

    def _identity_candidates(self, shape: _QueryShape) -> set[int]:
        found: set[int] = set()
        whole = shape.whole
        for table in (self.by_identifier, self.by_path, self.by_base, self.by_symbol):
            found.update(table.get(whole, ()))
        if whole:  # inside the directory the query names
            inside = whole + "/"
            position = bisect_left(self.sorted_paths, (inside, -1))
            while position < len(self.sorted_paths) and self.sorted_paths[position][0].startswith(inside):
                found.add(self.sorted_paths[position][1])
                position += 1
        if "/" in whole:  # named by the query's last segments
            tail = "/" + whole
            found.update(i for i, path in enumerate(self.paths) if path.endswith(tail))
        if shape.naming:
            for token in shape.words:
                found.update(self.by_identifier.get(token, ()))
                found.update(self.by_base.get(token, ()))
                found.update(self.by_symbol.get(token, ()))
        return found

    def _prior(self, entry: Entry, index: int, terms: list[str], shape: _QueryShape, reasons: list[str]) -> float:
        prior = 1.0

        def scale(factor: float, why: str) -> None:
            nonlocal prior
            prior *= factor
            reasons.append(f"prior ×{factor:g}: {why}")

        if entry.audience in ("agent", "human-and-agent"):
            scale(1.15, "written for agents")
        identifiers = self.identifiers[index]
        if any(_partial(identifier, token) for identifier in identifiers for token in shape.words):
            scale(1.2, "a query word is part of its name")
        elif shape.file_words and entry.kind == MODULE and _named_file(self.file_name(index), shape.file_words):
            # "how does watch mode decide…": the code is named after what it does (watcher.ts)
            scale(1.2, "a query word is its file name or part of it, for a question about how something is "
                       "implemented")
        if shape.want_ownership:
            # "where do I change X" / "who owns X" asks for the unit one edits, not for prose about it
            if entry.ownership_id:
                scale(1.1, "an ownership record, for a routing question")
            if entry.kind in (AREA, PACKAGE, DIRECTORY):
                scale(1.4, f"a {entry.kind}, for a routing question")
                if entry.kind in shape.kinds_named:
                    scale(1.3, f"the question asks for a {entry.kind}")
            elif entry.kind == MODULE:
                scale(1.1, "a module, for a routing question")
            if shape.kinds_named and entry.kind in (MODULE, DOCUMENT):
                # "which package…", "which area…": a file is not what the question asks for
                scale(0.6, f"a {entry.kind}, for a question that asks for a {'/'.join(sorted(shape.kinds_named))}")
        if entry.kind == INTENT and len(terms) >= 2 and all(has_token(entry.title, t) for t in terms):
            scale(1.6, "the route's title covers the whole query")
        if entry.kind == CHANGE:
            # a change route answers a request to change something; for an ordinary question it stays
            # reachable when nothing better matches, without crowding the answers
            if shape.change_intent:
                covered = len(terms) >= 2 and all(has_token(entry.title, t) for t in terms)
                scale(1.4 * (1.6 if covered else 1.0), "a change route, for a request to change something")
            else:
                scale(0.15, "a change route, for a query that asks no change")
        if shape.shape_module:
            if entry.kind == MODULE:
                scale(1.15, "a module, for a symbol- or path-shaped query")
            elif entry.kind == DOCUMENT and shape.declared:
                # the name is answered by its declaration; pages about it (even one named after it) follow
                scale(DECLARED_PAGE_FACTOR, DECLARED_PAGE_WHY)
        elif shape.implementation:
            # "how does X decide", "where is X implemented": the mechanism lives in code
            if entry.kind == MODULE and self.symbol_sets(index)[1]:
                scale(1.3, "a module that declares code, for a question about how something is implemented")
        elif shape.sentence and entry.kind == DOCUMENT:
            scale(1.15, "a document, for a sentence")
        elif shape.phrase and entry.kind == DOCUMENT:
            # "temporizadores falsos", "testes de tipos": words, not a name; a page explains them
            scale(1.15, "a document, for a phrase of plain words")
        if shape.task and entry.kind == DOCUMENT:
            scale(TASK_PAGE, "a page, for a question that asks how to do something")
        if entry.kind == DIRECTORY and not shape.want_ownership and not shape.shape_module:
            # a directory's text is its name: a question matching it is rarely answered by the folder
            scale(0.7, "a directory, for a question about content")
        if entry.variants:
            scale(1 + min(0.3, 0.1 * entry.variants), f"the canonical copy of a page with {entry.variants} variants")
        if entry.surface == "peripheral" and not shape.peripheral:
            scale(0.5, "under a test, fixture, example or playground directory, or a form to fill in")
        return prior

    def _identity(self, components: dict[str, float], entry: Entry, index: int, shape: _QueryShape,
                  reasons: list[str]) -> None:
        identifiers = self.identifiers[index]
        path = entry.path.lower()
        base = _base(path) if entry.kind in (DOCUMENT, MODULE) else None
        whole = shape.whole
        symbols, declared = self.symbol_sets(index)
        if whole in identifiers or entry.id.lower() == whole:
            components["exactId"] += 200
        if path == whole:
            components["exactPath"] += 150
        elif base is not None and base == whole:
            # a page named after an identifier comes after the identifier's declaration
            named_page = entry.kind == DOCUMENT and shape.identifier
            components["exactPath"] += 100 if named_page else 150
            if named_page:
                reasons.append("exactPath 100: a page named after the identifier, not its declaration")
        elif "/" in whole and path.endswith("/" + whole):
            components["exactPath"] += 140  # the query names it by its last segments
        elif path.startswith(whole + "/") or f"/{whole}/" in path:
            components["exactPath"] += 60  # inside the directory the query names
        if whole in declared:
            components["exactSymbol"] += 150
            self._declaration(components, entry, reasons)
        elif whole in symbols:
            components["exactSymbol"] += 60  # a barrel that re-exports the name, not the declaration
        if shape.naming:
            equal_ids = [t for t in shape.words if t in identifiers]
            components["exactId"] += 120 * len(equal_ids)
            if equal_ids:
                components["exactId"] += max(0, 40 - min(len(t) for t in equal_ids))
            if base is not None and base in shape.words and base != whole:
                components["exactPath"] += 100
            for token in shape.words:
                if token == whole:
                    continue
                if token in declared:
                    components["exactSymbol"] += 90
                    self._declaration(components, entry, reasons, 0.5)
                elif token in symbols:
                    components["exactSymbol"] += 30
        if shape.compounds:
            # "random sequencer" names RandomSequencer.ts, "fake timers" the fakeTimers a module declares: a
            # name written as one word is said as two
            if base is not None and self.file_name(index) in shape.compounds:
                components["exactPath"] += COMPOUND
                reasons.append(f"exactPath +{COMPOUND}: two adjacent query words spell its file name")
            elif declared and not declared.isdisjoint(shape.compounds):
                components["exactSymbol"] += COMPOUND
                reasons.append(f"exactSymbol +{COMPOUND}: two adjacent query words spell a name it declares "
                               f"({min(shape.compounds & declared)})")
        if entry.surface == "peripheral" and not shape.peripheral and path != whole:
            named = [k for k in ("exactId", "exactPath", "exactSymbol") if components[k]]
            if named:
                for key in named:
                    components[key] *= 0.5
                reasons.append(f"{'/'.join(named)} ×0.5: under a test, fixture, example or playground directory")

    def _base_declarations(self, scored: dict[int, tuple[dict[str, float], dict[str, list[str]], list[str]]],
                           whole: str) -> None:
        """When several modules declare the name the query is, the declaration the others import (directly
        or through a barrel that re-exports it) is the one they build on: the base class, the core hook."""
        declarers = [i for i in scored if whole in self.symbol_sets(i)[1]]
        if len(declarers) < 2:
            return
        wanted = set(declarers)
        for index in declarers:
            reached: set[int] = set()
            frontier = [index]
            for _hop in range(3):  # an import, then up to two re-exporting barrels
                following = []
                for node in frontier:
                    for edge in self.edges_of(node):
                        if edge.direction == "out" and edge.kind in ("imports", "re-exports"):
                            other = self.index_of.get(edge.other)
                            if other is not None and other not in reached:
                                reached.add(other)
                                following.append(other)
                frontier = following
            for base in (reached & wanted) - {index}:
                components, _, reasons = scored[base]
                if not any(r.startswith("exactSymbol +40") for r in reasons):
                    components["exactSymbol"] += 40
                    reasons.append("exactSymbol +40: the declaration other declarations of the name import")

    def _unit_named(self, components: dict[str, float], index: int, terms: list[str], idf: dict[str, float],
                    idf_total: float, shape: _QueryShape, reasons: list[str]) -> None:
        """A routing question ("which package implements spies", "where do I change the module runner")
        names the unit it wants by its subject: a unit whose name holds most of the question's weight (IDF)
        is named by it, at up to UNIT_NAMED (a name is what a routing question is answered by, more than a
        unit's README prose that happens to hold another of its words). A unit under a test, fixture,
        example or playground directory earns half, as for every other identity."""
        name = self.unit_name(index)
        share = sum(idf[t] for t in terms if t in name) / idf_total
        if share >= 0.3:
            bonus = round(UNIT_NAMED * share, 6)
            why = f"its name carries {share:.0%} of the question's weight"
            if self.entries[index].surface == "peripheral" and not shape.peripheral:
                bonus = round(bonus / 2, 6)
                why += ", under a test, fixture, example or playground directory (×0.5)"
            components["exactId"] += bonus
            reasons.append(f"exactId +{bonus:g}: {why}")

    def _declaration(self, components: dict[str, float], entry: Entry, reasons: list[str],
                     weight: float = 1.0) -> None:
        """A declaration that a package exports, in a package others build on, is the one a name most
        likely means when several modules declare it."""
        if entry.surface == "public":
            components["exactSymbol"] += 30 * weight
            reasons.append(f"exactSymbol +{30 * weight:g}: declared on its package's public surface")
        dependents = self.dependents.get(entry.package_id or "", 0)
        if dependents:
            bonus = round(weight * min(24.0, 8 * math.log2(1 + dependents)), 6)
            components["exactSymbol"] += bonus
            reasons.append(f"exactSymbol +{bonus:g}: declared in a package {dependents} other packages depend on")

    def _proximity(self, candidates: dict[int, _Candidate], anchors: list[Any], best: float,
                   new_entries: bool = True, peripheral: bool = False) -> None:
        """Lift entries within two hops of the strongest lexical hits (first reach at the lowest hop wins).
        With `new_entries` false only entries that are already candidates are lifted."""
        if best <= 0:
            return
        anchor_ids = {hit.entry for hit in anchors}
        self._converging(candidates, anchors, best, peripheral)
        for hit in anchors:
            share = hit.bm25 / best
            anchor_id = self.entries[hit.entry].id
            for neighbour, kind, confidence in self.adjacency(hit.entry):
                if neighbour in anchor_ids:
                    continue
                candidate = candidates.get(neighbour)
                if candidate is None:
                    if not new_entries:
                        candidate = _Candidate(neighbour)  # a stepping stone only, not a result
                    else:
                        candidate = candidates.setdefault(neighbour, _Candidate(neighbour))
                if candidate.hops == 1:
                    continue
                candidate.hops, candidate.share, candidate.anchor = 1, share, hit.entry
                candidate.via = {"kind": kind, "id": anchor_id, "confidence": confidence, "hops": 1}
                for second, second_kind, second_confidence in self.adjacency(neighbour):
                    if second in anchor_ids or second == hit.entry:
                        continue
                    reached = candidates.get(second)
                    if reached is None:
                        if not new_entries:
                            continue
                        reached = candidates.setdefault(second, _Candidate(second))
                    if reached.hops:
                        continue
                    reached.hops, reached.share, reached.anchor = 2, share, hit.entry
                    reached.via = {"kind": second_kind, "id": self.entries[neighbour].id,
                                   "confidence": weaker_confidence(confidence, second_confidence), "hops": 2}


    def _converging(self, candidates: dict[int, _Candidate], anchors: list[Any], best: float,
                    peripheral: bool = False) -> None:
        """A strong hit that at least CONVERGING other strong hits link to or import is what they build on
        (the guide the pages about a topic point at, the module the modules that match import): it earns
        one hop of proximity, scaled by the weaker of the two strongest that reach it. A hit under a test,
        fixture, example or playground directory is no such source (a test imports what it tests), unless the
        query asks for those."""
        anchor_ids = {hit.entry for hit in anchors}
        shares = {hit.entry: hit.bm25 / best for hit in anchors}
        reached: dict[int, list[int]] = defaultdict(list)
        for hit in anchors:
            if self.entries[hit.entry].surface == "peripheral" and not peripheral:
                continue  # a test imports what it tests: that says nothing about what the code builds on
            for edge in self.edges_of(hit.entry):
                if edge.direction != "out" or edge.kind not in _CONVERGING_KINDS:
                    continue
                other = self.index_of.get(edge.other)
                if other is not None and other != hit.entry and other in anchor_ids and hit.entry not in reached[other]:
                    reached[other].append(hit.entry)
        for target, sources in reached.items():
            if len(sources) < CONVERGING:
                continue
            sources.sort(key=lambda s: -shares[s])
            candidate = candidates[target]
            candidate.hops, candidate.share = 1, shares[sources[CONVERGING - 1]]
            candidate.via = {"kind": "converging", "from": [self.entries[s].id for s in sources]}


def _collapse_variants(results: list[Result], held: dict[str, set[str]]) -> list[Result]:
    """Copies of one page (one per framework or version) fold into one result, which lists the others under
    `also_in`, so the next results stay diverse. The canonical copy stands for the group unless the
    better-ranked copy matched something of the query the canonical one did not (`vue` in its path, say)."""
    groups: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        entry = result.entry
        group = entry.variant_of or (entry.id if entry.variants else None)
        if group is not None:
            groups.setdefault(group, []).append(position)
    chosen: dict[int, Result] = {}
    folded: set[int] = set()
    for group, positions in groups.items():
        leader = results[positions[0]]
        pick = leader
        canonical = next((results[p] for p in positions if results[p].entry.id == group), None)
        if canonical is not None and canonical is not leader and held[leader.entry.id] <= held[canonical.entry.id]:
            pick = canonical
            pick.reasons.append(f"stands for {leader.entry.path}, a variant that matched nothing more of the query")
        pick.also_in = [results[p].entry.path for p in positions if results[p] is not pick]
        chosen[positions[0]] = pick
        folded.update(positions[1:])
    return [chosen.get(p, r) for p, r in enumerate(results) if p not in folded]


def _declared_lowering(result: Result) -> float:
    """What the prior for a page, for a query that is a declared name, took from a result's score."""
    if result.entry.kind != DOCUMENT or DECLARED_PAGE not in result.reasons:
        return 0.0
    c = result.components
    return c["lexical"] * c["prior"] * c["aboutness"] * (1 / DECLARED_PAGE_FACTOR - 1)


def _word_shares(words: list[str], corrected: dict[str, str]) -> dict[str, float]:
    """Per query token, the share of its word's weight it carries: 1 for a plain word or a path, 1/n for
    each of the n tokens a compound identifier expands to (the whole and its parts); a corrected word's
    replacement carries what the word did."""
    shares: dict[str, float] = {}
    for word in words:
        if "/" in word:
            continue  # a path says several names (its folders and its file), each weighing a word
        expanded = tokens(word, unique=True)
        for token in expanded:
            token = corrected.get(token, token)
            shares[token] = max(shares.get(token, 0.0), 1 / len(expanded))
    return shares


def _compounds(words: list[str]) -> frozenset[str]:
    """Each two adjacent words of the query, neither a stopword, written as one name (the second also
    singular): `random sequencer` -> randomsequencer, `fake timers` -> faketimers and faketimer."""
    folded = [fold(w) for w in words]
    found: set[str] = set()
    for first, second in pairwise(folded):
        if first in STOPWORDS or second in STOPWORDS or not first.isalnum() or not second.isalnum() \
                or len(first) < 2 or len(second) < 2:
            continue
        found.update((first + second, first + singularize(second)))
    return frozenset(found)


def _named_file(name: str, words: tuple[str, ...]) -> bool:
    """A file name (without - and _) is one of the words or holds it, with at most four letters more:
    `watcher` for `watch` (as `_partial` reads a name)."""
    return any(word in name and len(name) <= len(word) + 4 for word in words)


def _squash(name: str) -> str:
    return name.replace("-", "").replace("_", "")


def _total(components: dict[str, float]) -> float:
    return (components["lexical"] * components["prior"] * components["aboutness"] + components["exactId"]
            + components["exactPath"] + components["exactSymbol"] + components["graphProximity"]
            + components["canonicality"] + components["audienceFit"] + components["acceptedAgentSignals"])


def _base(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if "." in name else name


def _partial(identifier: str, token: str) -> bool:
    if identifier == token or len(token) < 3:
        return False
    return identifier.startswith(token + "-") or identifier.endswith("-" + token) or (
        token in identifier and len(identifier) <= len(token) + 4)


def retriever_key(mode: str = "combined") -> ViewKey[Retriever]:
    return ViewKey(f"retriever:{mode}")


COMBINED = retriever_key("combined")


def retriever_of(state: ModelState, mode: str = "combined") -> Retriever:
    """The ranked retrieval index over a state's projection, built once per state and mode."""
    from docbridge.engine.state.transitions import (
        resolved,  # the model's machinery: not loaded by a search of a stored index
    )
    state = resolved(state)
    return state.view(retriever_key(mode), built(lambda: Retriever(projection_of(state), mode)))
