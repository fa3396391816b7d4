"""Explainable ranking over the projection: `Retriever.search` is the pipeline, each stage a function.

    score = lexical × prior × aboutness + exactId + exactPath + exactSymbol
          + graphProximity + memberEvidence + canonicality + audienceFit + acceptedAgentSignals

1. Read the query (docbridge.engine.retrieval.query_shape): its shape (a name, a path, a routing question, a question
   about how code works, a task, a sentence…; the patterns and words are data, engine/data/query-shape.toml), the
   words matched as text, and the glossary's readings (`docbridge.engine.base.lexicon.translations`: Portuguese
   terms and abbreviations add their English words); a word that matches nothing is replaced by the closest
   indexed word.
2. Candidates: the lexical hits and the entries the query names; for a question that asks for a unit, the best
   lexical hits among the units too.
3. Score each candidate:
   - lexical: BM25 (docbridge.engine.retrieval.lexical) on the 0–50-per-term scale of the original ranking; for a
     question about how something works or where the code does it, a module's code words count too;
   - prior: the multiplicative priors (docbridge.engine.retrieval.priors, one row per prior: the shape of the query
     against the kind and place of the entry), which can only scale evidence that exists;
   - aboutness: 1 + ABOUTNESS × the share of the query's weight (IDF, scaled as BM25 scales it: a word the glossary
     or a typo correction added counts with its reduced weight; a compound identifier's whole token and its parts
     share one word's weight) found in the title, headings or path (in a heading alone: HEADED of it), + TITLED ×
     the share found in the title or path alone when that is at least TITLED_SHARE, for a sentence;
   - exactId / exactPath / exactSymbol: identity, the query names the thing (docbridge.engine.retrieval.identity);
   - canonicality, audienceFit, acceptedAgentSignals: the additive priors (docbridge.engine.retrieval.priors).
4. graphProximity (docbridge.engine.retrieval.proximity): relevance lent by the strongest lexical hits to what is
   within two hops of them, never past the lender. A result that only a relation surfaced earns that alone.
5. memberEvidence (docbridge.engine.retrieval.units): for a question that asks for a unit, each unit adds the
   scores of its strongest matching modules, so the unit whose code holds the matches answers.
6. Order (ties break on an exact id, then on an ownership record, then on the id); drop results below FLOOR of the
   best score (`floor=0` keeps the neighbourhood); fold variants of one page into the best-ranked copy, which lists
   the others as `alsoIn`; keep the kinds asked for.

Every component and every factor other than 1 is shown by `--explain` (`reasons`); explaining never changes the
order.
"""

from __future__ import annotations

import bisect
import copy
import logging
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.heap import built, remember
from docbridge.engine.base.lexicon import fold, is_cjk, tokens
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE, weaker_confidence
from docbridge.engine.retrieval import identity, proximity, units
from docbridge.engine.retrieval.identity import COMPOUND, file_base, squash
from docbridge.engine.retrieval.lexical import Hit, LexicalIndex
from docbridge.engine.retrieval.postings import Postings
from docbridge.engine.retrieval.priors import (
    DECLARED_PAGE,
    DECLARED_PAGE_FACTOR,
    UNITS,
    Subject,
    additive_priors,
    prior,
)
from docbridge.engine.retrieval.project import Entry, Projection, projection_of
from docbridge.engine.retrieval.proximity import LENT_MARGIN, Candidate
from docbridge.engine.retrieval.query_shape import (
    READING_BOOST,
    TYPO_BOOST,
    QueryReading,
    QueryShape,
    read_query,
    word_shares,
)

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

log = logging.getLogger("docbridge.search")

COMPONENTS = ("lexical", "prior", "aboutness", "exactId", "exactPath", "exactSymbol", "graphProximity",
              "memberEvidence", "canonicality", "audienceFit", "acceptedAgentSignals")
LEXICAL_DEPTH = 200
UNIT_DEPTH = 50  # for a question that asks for a unit, the best lexical hits among the units alone, also candidates
TYPO_SIMILARITY = 0.9
TYPO_SPREAD = 0.03
ANCHORS = 10  # the strongest lexical hits, which lend proximity
FLOOR = 1 / 3
ABOUTNESS = 0.2  # aboutness added for the share of the query's weight in the title, headings or path
# ...a word only a heading holds counts this much of it: what a page is called says what it is about, a heading
# names one of its sections (a guide with a section on custom matchers is not the page about extending them)
HEADED = 0.5
TITLED = 0.3  # aboutness added for a title or path that holds the query's weight, for a sentence
TITLED_SHARE = 0.5  # ...when it holds at least this share of it
# COMPOUND, LENT_MARGIN and READING_BOOST are the other stages' (identity, proximity, query_shape), named here too
__all__ = ["ANCHORS", "COMBINED", "COMPONENTS", "COMPOUND", "FLOOR", "LENT_MARGIN", "READING_BOOST", "TITLED",
           "Result", "Retriever", "combined_retriever", "retriever_key", "retriever_of"]

Scored = tuple[dict[str, float], list[str]]  # a candidate's components and the reasons for them, before proximity


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
    shape: QueryShape | None = None  # the query's shape, shared by every result of one search
    from_code: float = 0.0  # the part of `score` its code words earned (lexical's share, scaled as lexical is)

    @property
    def reading(self) -> list[str]:
        """What kind of answer the query was read as asking for (worked out when shown)."""
        return self.shape.intents() if self.shape is not None else []

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
            out["explain"] = {"terms": self.terms, "reading": self.reading, "matched": self.matches(),
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


def _lowered(text: str) -> str:
    """`text` in lower case: itself when it is (a path mostly is; `lower` makes a copy either way)."""
    lowered = text.lower()
    return text if lowered == text else lowered


@dataclass(slots=True)
class Retriever:
    projection: Projection
    mode: str = "combined"
    lexical: LexicalIndex = None  # type: ignore[assignment]  # built from the projection unless given (on disk)
    entries: list[Entry] = field(init=False)
    index_of: dict[str, int] = field(init=False)
    identifiers: list[tuple[str, ...]] = field(init=False)  # few per entry: a tuple is a quarter of a set
    paths: list[str] = field(init=False)
    path_order: array[int] = field(init=False)  # entry numbers by path (a tuple per entry was 10 MB on 100,000)
    by_identifier: Postings = field(init=False)
    by_path: Postings = field(init=False)
    by_base: Postings = field(init=False)
    by_symbol: Postings = field(init=False)
    dependents: dict[str, int] = field(init=False)
    _symbols: dict[int, tuple[frozenset[str], frozenset[str]]] = field(init=False)
    _adjacency: dict[int, list[tuple[int, str, str]]] = field(init=False)
    _unit_names: dict[int, frozenset[str]] = field(init=False)
    _file_names: dict[int, str] = field(init=False)
    _package_paths: list[str] = field(init=False)  # the folders of the packages, examples and the like aside
    _modules: list[str] | None = field(init=False)  # the modules' paths, sorted, examples and the like aside
    spaced_paths: bool = field(init=False)  # a path holds a space (else a query with one cannot end a path)
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
        if self.projection.params:  # BM25's k1 and b as configured (`retrieval.params`)
            self.lexical.tune(self.projection.params)
        self.index_of = self.projection.by_id.positions  # the projection's table, not a copy
        self.paths = [_lowered(e.path) for e in self.entries]
        self.path_order = array("I", sorted(range(len(self.paths)), key=self.paths.__getitem__))
        self.spaced_paths = any(" " in path for path in self.paths)
        self.identifiers = []
        self._symbols, self._adjacency, self._unit_names, self._file_names = {}, {}, {}, {}
        self._modules = None
        self._package_paths = sorted(self.paths[i] for i, e in enumerate(self.entries)
                                     if e.kind == PACKAGE and e.surface != "peripheral")
        self.dependents = {e.id: e.dependents for e in self.entries if e.dependents}
        numbers = list(range(len(self.entries)))  # one int object per entry, shared by the lookups
        self.by_identifier = Postings(self._identifier_pairs(numbers))
        self.by_path = Postings(zip(self.paths, numbers))
        self.by_base = Postings((file_base(self.paths[i]), i) for i, e in zip(numbers, self.entries)
                                if e.kind in (DOCUMENT, MODULE))
        self.by_symbol = Postings((symbol.lower(), i) for i, e in zip(numbers, self.entries) for symbol in e.symbols)
        positive = [e.pagerank for e in self.entries if e.pagerank > 0]
        self.rank_floor = min(positive) if positive else 0.0

    def _identifier_pairs(self, numbers: list[int]) -> Iterator[tuple[str, int]]:
        """(identifier, entry number) for every entry, each entry's identifiers kept in `identifiers` on the way."""
        for i, entry in zip(numbers, self.entries):
            ids = {fold(a) for a in entry.aliases}
            if entry.ownership_id:
                ids.add(fold(entry.ownership_id))
            if entry.kind in (INTENT, CHANGE):
                ids.add(fold(entry.id.split(":", 1)[1]))
            self.identifiers.append(tuple(sorted(ids)))
            for identifier in ids:
                yield identifier, i
            yield _lowered(entry.id), i

    def patched(self, projection: Projection, changed: tuple[int, ...]) -> Retriever | None:
        """This retriever over `projection`, patched from this one's at the positions `changed` (same entries
        otherwise: `docbridge.engine.retrieval.incremental`), its lexical index updated in place; None when the
        lexical index cannot be patched."""
        if projection.params != self.projection.params:
            return None
        # no entry changed (the edit changed nothing the projection holds): the index is this one's
        lexical = self.lexical.patched(projection.entries, changed) if changed else self.lexical
        if lexical is None:
            return None
        before = [self.entries[i] for i in changed]
        after = [projection.entries[i] for i in changed]
        if any((a.id, a.aliases, a.ownership_id, a.path, a.kind, a.title, a.pagerank) !=
               (b.id, b.aliases, b.ownership_id, b.path, b.kind, b.title, b.pagerank) for a, b in zip(after, before)):
            return Retriever(projection, self.mode, lexical)  # what the lookups read changed: made again
        new = copy.copy(self)
        new.projection, new.entries, new.lexical = projection, projection.entries, lexical
        new.source, new.reused = "memory", False
        gone = set(changed)
        new._symbols = {k: v for k, v in self._symbols.items() if k not in gone}
        if any(a.symbols != b.symbols for a, b in zip(after, before)):
            numbers = set(changed)
            now = {number: {s.lower() for s in e.symbols} for number, e in zip(changed, after)}
            changes = {key: tuple(sorted({*(i for i in self.by_symbol.get(key) if i not in numbers),
                                          *(number for number, keys in now.items() if key in keys)}))
                       for key in {s.lower() for e in (*before, *after) for s in e.symbols}}
            new.by_symbol = self.by_symbol.replaced(changes)
        return new

    def rebuilt(self) -> Retriever:
        """This retriever with its lexical index built whole from the same entries: a patched index's exact
        statistics again. The lookups, which read only the entries, are shared, not made again (a second set of
        them was about 50 MB of the language server's peak on a 100,000-file tree while the old index served)."""
        combined = self.mode == "combined"  # the same entries' masks and words: shared
        lexical = LexicalIndex(self.entries, self.projection.weights, self.mode,
                               packed=self.lexical.packed_masks() if combined else None,
                               vocabulary=self.lexical.joined_vocabulary() if combined else None)
        if self.projection.params:
            lexical.tune(self.projection.params)
        new = copy.copy(self)
        new.lexical, new.source, new.reused = lexical, "memory", False
        return new

    def symbol_sets(self, index: int) -> tuple[frozenset[str], frozenset[str]]:
        """The lower-cased exported and declared names of an entry."""
        found = self._symbols.get(index)
        if found is None:
            entry = self.entries[index]
            found = remember(self._symbols, index, (frozenset(n.lower() for n in entry.symbols),
                                                    frozenset(n.lower() for n in entry.declared_symbols)))
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
            found = remember(self._adjacency, index, [(self.index_of[e.other], e.kind, e.confidence)
                                                      for e in self.edges_of(index) if e.other in self.index_of])
        return found

    def files_named(self, name: str) -> list[int]:
        """The documents and modules of this file name (extension and all, lower-cased)."""
        return [i for i in self.by_base.get(file_base(name), ()) if self.paths[i].rsplit("/", 1)[-1] == name]

    def has_file_named(self, name: str) -> bool:
        return bool(self.files_named(name))

    def has_word(self, token: str) -> bool:
        """Some entry's text or code holds this token."""
        return self.lexical.doc_freq(token) > 0 or self.lexical.code_doc_freq(token) > 0

    def file_name(self, index: int) -> str:
        """A document's or module's file name, lower-cased, without its extensions, - and _ (user-profile.ts:
        userprofile)."""
        found = self._file_names.get(index)
        if found is None:
            found = remember(self._file_names, index, squash(file_base(self.paths[index])))
        return found

    def holds_packages(self, index: int) -> bool:
        """Whether an entry's folder holds a package other than itself, examples and the like aside (a workspace
        folder, the repository's root)."""
        inner = self.paths[index] + "/"
        at = bisect.bisect_left(self._package_paths, inner)
        return at < len(self._package_paths) and self._package_paths[at].startswith(inner)

    def module_count(self, folder: str) -> int:
        """How many modules, examples and the like aside, lie in a folder ('' for the whole repository)."""
        if self._modules is None:
            self._modules = sorted(self.paths[i] for i, e in enumerate(self.entries)
                                   if e.kind == MODULE and e.surface != "peripheral")
        if not folder:
            return len(self._modules)
        prefix = folder + "/"
        return bisect.bisect_left(self._modules, prefix + "\uffff") - bisect.bisect_left(self._modules, prefix)

    def unit_name(self, index: int) -> frozenset[str]:
        """The words a unit (package, area, directory) is called by: a routing question names it by them."""
        found = self._unit_names.get(index)
        if found is None:
            entry = self.entries[index]
            found = remember(self._unit_names, index, frozenset(tokens(
                entry.title.rsplit("/", 1)[-1] if entry.kind == PACKAGE else entry.path.rsplit("/", 1)[-1])))
        return found

    # ------------------------------------------------------------------ search: the pipeline

    def search(self, query: str, limit: int = 20, *, kinds: list[str] | None = None, agent: bool = False,
               floor: float = FLOOR) -> list[Result]:
        """The entries that answer a query, best first: read the query, gather candidates, score each (lexical ×
        prior × aboutness + identity + the additive priors), lend graph proximity, then order, cut and fold."""
        query_tokens = tokens(query, unique=True)
        if not query_tokens or not self.entries:
            return []
        reading = read_query(query, query_tokens, self.has_file_named, self.has_word)
        terms, boosts, corrected = self._matched_terms(reading)
        hits = self.lexical.search(terms, LEXICAL_DEPTH, boosts, code=reading.shape.reads_code)
        candidates = self._candidates(hits, reading.shape)
        if reading.shape.asks_unit or reading.shape.kinds_named:
            # the unit asked for, though pages and modules that say its words more fill the first hits
            for hit in self.lexical.search(terms, UNIT_DEPTH, boosts, kinds=UNITS):
                candidates.setdefault(hit.entry, Candidate(hit.entry, hit.bm25, True))
        shape = replace(reading.shape, declared=identity.declared(self, reading.shape))
        weight, total = self._query_weight(reading, terms, boosts, corrected)
        scored = {c.index: self._score(c, shape, terms, weight, total, agent) for c in candidates.values()}
        identity.base_declarations(self, scored, shape.whole)
        own = {index: _total(components) for index, (components, _) in scored.items()}  # all but proximity
        anchors = hits[:ANCHORS]
        # an entry only a relation surfaces can earn at most ONE_HOP: when that cannot reach the floor, it is not
        # even considered
        new_entries = floor <= 0 or max(own.values(), default=0.0) * floor <= proximity.ONE_HOP
        proximity.lift(self, candidates, anchors, max((h.bm25 for h in hits), default=0.0), new_entries,
                       shape.asks_peripheral)
        lenders = proximity.lenders(candidates, anchors, own)
        results = [result for candidate in candidates.values()
                   if (result := self._result(candidate, scored, own, lenders, reading, terms, corrected)) is not None]
        if shape.asks_unit:
            results = units.gather(self, results, shape, partial(self._gathered, reading, terms, corrected))
        return self._finish(results, terms, limit, kinds, floor, reading.shape.reads_code)

    # ------------------------------------------------------------------ the stages

    def _matched_terms(self, reading: QueryReading) -> tuple[list[str], dict[str, float], dict[str, str]]:
        """The tokens matched as text, with their weights (1 unless given) and the typos corrected: the query's,
        then the glossary's readings of it."""
        terms, boosts, corrected = self._tolerate_typos(reading.terms, reading.protected, reading.shape.reads_code)
        for token, weight in reading.shared.items():
            if token in terms and token not in boosts:
                boosts[token] = weight
        for token, weight in reading.added.items():
            if token not in terms:
                terms.append(token)
                boosts[token] = weight
        return terms, boosts, corrected

    def _tolerate_typos(self, terms: list[str], protected: set[str] | frozenset[str] = frozenset(),
                        code: bool = False) -> tuple[list[str], dict[str, float], dict[str, str]]:
        """A term that matches nothing is replaced by an indexed word very close to it (Jaro-Winkler ≥ 0.9,
        same first letter; the most used of the nearly closest), at a reduced weight: `erros` finds `error`. When
        the search reads code words (`code`), a term they hold matches something."""
        boosts: dict[str, float] = {}
        corrected: dict[str, str] = {}
        out = []
        for term in terms:
            if len(term) < 4 or is_cjk(term) or not term.isalpha() or term in protected or \
                    self.lexical.doc_freq(term) > 0 or (code and self.lexical.code_doc_freq(term) > 0):
                out.append(term)
                continue
            from rapidfuzz import process  # deferred: only a query with an unknown word needs it
            from rapidfuzz.distance import JaroWinkler
            found = process.extract(term, self._same_initial(term[0]), scorer=JaroWinkler.normalized_similarity,
                                    limit=12, score_cutoff=TYPO_SIMILARITY)
            close = [(choice, score) for choice, score, _ in found if choice[0] == term[0] and choice.isalpha()]
            if close:
                # among the nearly closest words, the most used one: a misspelt word is more likely a common
                # word than one rare identifier
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

    def _same_initial(self, initial: str) -> list[str]:
        """The indexed words that begin with `initial`: a correction keeps a word's first letter, and the sorted
        vocabulary holds them in one run, so a typo is compared with them only (on babel's 23,622 entries a
        Portuguese question compared each of its unknown words with every word, about 4 ms)."""
        return self.lexical.words_starting(initial)

    def _candidates(self, hits: list[Hit], shape: QueryShape) -> dict[int, Candidate]:
        """The lexical hits, and the entries the query names (identity), which count as hits."""
        candidates = {hit.entry: Candidate(hit.entry, hit.bm25, True, code=hit.code) for hit in hits}
        for index in identity.candidates(self, shape):
            candidates.setdefault(index, Candidate(index, 0.0, True))
        return candidates

    def _query_weight(self, reading: QueryReading, terms: list[str], boosts: dict[str, float],
                      corrected: dict[str, str]) -> tuple[dict[str, float], float]:
        """The query's weight (for aboutness and a unit named by a routing question): each term's IDF, scaled as
        BM25 scales it, so a word the glossary or a typo correction added weighs what it weighs in BM25 (a rare word
        a translation adds does not outweigh the words the query said), and a word the query said weighs once (a
        compound identifier's whole token and its parts share it); and the total."""
        shares = word_shares(reading.said, corrected)
        weight = {t: self.lexical.idf(t) * boosts.get(t, 1.0) * shares.get(t, 1.0) for t in terms}
        return weight, sum(weight.values()) or 1.0

    def _score(self, candidate: Candidate, shape: QueryShape, terms: list[str], weight: dict[str, float],
               total: float, agent: bool) -> Scored:
        """Every component of a candidate but proximity, and the reasons for them."""
        index = candidate.index
        entry = self.entries[index]
        components = dict.fromkeys(COMPONENTS, 0.0)
        reasons: list[str] = []
        subject = Subject(self, index, entry, shape, terms, agent)
        components["lexical"] = candidate.bm25
        components["prior"] = prior(subject, reasons)
        components["aboutness"] = self._aboutness(index, shape, terms, weight, total, reasons)
        identity.score(self, components, index, shape, reasons)
        if shape.routing and entry.kind in UNITS:
            identity.unit_named(self, components, index, terms, weight, total, shape, reasons)
        additive_priors(subject, components)
        return components, reasons

    def _aboutness(self, index: int, shape: QueryShape, terms: list[str], weight: dict[str, float], total: float,
                   reasons: list[str]) -> float:
        """How much of the query's weight is in what the entry is called (title, headings, path); for a sentence,
        more when most of it is in its title or path alone: such an entry is about the sentence, more than a long
        page whose sections happen to mention each word."""
        named, titled = self.lexical.naming_weight(index, terms, weight)
        aboutness = 1 + ABOUTNESS * (titled + HEADED * (named - titled)) / total
        if shape.sentence:
            titled /= total
            if titled >= TITLED_SHARE:
                aboutness += TITLED * titled
                reasons.append(f"aboutness +{TITLED * titled:.3g}: its title or path holds {titled:.0%} of "
                               "the sentence's weight")
        return aboutness

    def _result(self, candidate: Candidate, scored: dict[int, Scored], own: dict[int, float],
                lenders: dict[int, float], reading: QueryReading, terms: list[str],
                corrected: dict[str, str]) -> Result | None:
        """A candidate's result, its proximity added (None when it scores nothing)."""
        entry = self.entries[candidate.index]
        if candidate.lexical_hit:
            components, reasons = scored[candidate.index]
        else:  # surfaced by a relation alone
            components, reasons = dict.fromkeys(COMPONENTS, 0.0), []
            components["prior"] = components["aboutness"] = 1.0
        if candidate.hops:
            named = bool(components["exactId"] or components["exactPath"] or components["exactSymbol"])
            components["graphProximity"] = proximity.lent(self, candidate, own, lenders, named, reasons)
        via: dict[str, Any] | None = None
        from_code = 0.0
        if candidate.lexical_hit:
            score, confidence = _total(components), entry.confidence
            if candidate.code > 0:
                from_code = candidate.code * components["prior"] * components["aboutness"]
                reasons.append(f"lexical {candidate.code:.6g} of it from its code words, for a question about how "
                               "code works")
        else:
            score, via = components["graphProximity"], candidate.via
            confidence = weaker_confidence(entry.confidence, via["confidence"]) if via else entry.confidence
        score = round(score, 6)
        if score <= 0:
            return None
        return Result(entry, score, components, {}, confidence, via, terms, corrected, reasons,
                      translated=reading.translated, shape=reading.shape, from_code=from_code)

    def _held(self, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
        """Which of the terms each entry (by id) holds in any field."""
        held = self.lexical.containing([self.index_of[i] for i in ids], terms)
        return {self.entries[i].id: found for i, found in held.items()}

    def _gathered(self, reading: QueryReading, terms: list[str], corrected: dict[str, str], index: int,
                  score: float, reason: str) -> Result:
        """A unit that only its members' evidence brought in (`docbridge.engine.retrieval.units`)."""
        components = dict.fromkeys(COMPONENTS, 0.0)
        components["prior"] = components["aboutness"] = 1.0
        components["memberEvidence"] = score
        entry = self.entries[index]
        return Result(entry, score, components, {}, entry.confidence, None, terms, corrected, [reason],
                      translated=reading.translated, shape=reading.shape)

    def _finish(self, results: list[Result], terms: list[str], limit: int, kinds: list[str] | None,
                floor: float, code: bool = False) -> list[Result]:
        """Order; drop what falls below the floor; fold the copies of a page; keep the kinds asked for."""
        results.sort(key=lambda r: (-r.score, -(r.components["exactId"] > 0), not r.entry.ownership_id, r.entry.id))
        if results and floor > 0:
            # the floor is a share of the best score the entries' own words earned: a unit's gathered evidence
            # (`memberEvidence`) does not push its own members below it, nor do a module's code words push the
            # pages that explain the same thing
            threshold = max(r.score - r.components["memberEvidence"] - r.from_code for r in results) * floor
            # a page lowered for a declared name is kept when its score before that lowering passes: it comes
            # after the declaration, it is not dropped for it
            results = [r for r in results if r.score + _declared_lowering(r) >= threshold]
            results = _collapse_variants(results, partial(self._held, terms))
        if kinds:
            results = [r for r in results[:max(4 * limit, 40)] if r.entry.kind in kinds]
        results = results[:limit]
        for result in results:  # which fields hold which terms, for an explanation
            if result.complete is None and result.surfaced_by is None:
                result.complete = partial(self.lexical.matched, self.index_of[result.entry.id], terms, code=code)
        return results


def _collapse_variants(results: list[Result], held_by: Callable[[list[str]], dict[str, set[str]]]) -> list[Result]:
    """Copies of one page (one per framework or version) fold into one result, which lists the others under
    `also_in`, so the next results stay diverse. The canonical copy stands for the group unless the
    better-ranked copy matched something of the query the canonical one did not (a framework's name in its
    path, say): `held_by` tells which query terms each of the copies compared holds."""
    groups: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        entry = result.entry
        group = entry.variant_of or (entry.id if entry.variants else None)
        if group is not None:
            groups.setdefault(group, []).append(position)
    canonicals = {group: next((results[p] for p in positions if results[p].entry.id == group), None)
                  for group, positions in groups.items()}
    # only a group led by another copy than its canonical one compares them (a term asked of the index each)
    compared = [result.entry.id for group, positions in groups.items()
                if (canonical := canonicals[group]) is not None and canonical is not results[positions[0]]
                for result in (results[positions[0]], canonical)]
    held = held_by(compared) if compared else {}
    chosen: dict[int, Result] = {}
    folded: set[int] = set()
    for group, positions in groups.items():
        leader = results[positions[0]]
        pick = leader
        canonical = canonicals[group]
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


def _total(components: dict[str, float]) -> float:
    return (components["lexical"] * components["prior"] * components["aboutness"] + components["exactId"]
            + components["exactPath"] + components["exactSymbol"] + components["graphProximity"]
            + components["memberEvidence"] + components["canonicality"] + components["audienceFit"]
            + components["acceptedAgentSignals"])


def retriever_key(mode: str = "combined") -> ViewKey[Retriever]:
    return ViewKey(f"retriever:{mode}")


COMBINED = retriever_key("combined")


def retriever_of(state: ModelState, mode: str = "combined") -> Retriever:
    """The ranked retrieval index over a state's projection, built once per state and mode."""
    from docbridge.engine.state.transitions import (
        resolved,  # the model's machinery: not loaded by a search of a stored index
    )
    state = resolved(state)
    if mode == "combined":
        return state.view(COMBINED, lambda: combined_retriever(state, projection_of(state)))
    return state.view(retriever_key(mode), built(lambda: Retriever(projection_of(state), mode)))


def combined_retriever(state: ModelState, projection: Projection) -> Retriever:
    """The combined retriever of a state over its projection: patched from an ancestor's when the projection was
    patched from that one's (`docbridge.engine.retrieval.incremental`), else built."""
    origin = projection.origin
    seed = state.seed(COMBINED.name)
    ancestor: Retriever | None = seed.value if seed is not None else None
    if ancestor is not None and ancestor.projection is projection:
        return ancestor  # nothing it ranks changed since
    if ancestor is not None and origin is not None and ancestor.projection is origin[0]():
        try:
            found = ancestor.patched(projection, origin[1])
        except Exception:  # a patch that fails is a build whole, never a failed search
            log.warning("patching the search index failed; building it whole", exc_info=True)
            found = None
        if found is not None:
            return found
    return built(lambda: Retriever(projection, "combined"))()
