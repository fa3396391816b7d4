"""Explainable ranking over the projection.

    score = lexical × prior × aboutness + exactId + exactPath + exactSymbol
          + graphProximity + canonicality + audienceFit + acceptedAgentSignals

- lexical: BM25 (engine.retrieval.lexical) on the 0–50-per-term scale of the original ranking.
- prior: query-shape multipliers that can only amplify evidence that exists (an agent-audience document,
  an ownership record for a routing question, a route whose title covers the query, a module for a symbol-
  or path-shaped query, a document for a sentence).
- aboutness: 1 + 0.2 × the share of the query's IDF mass found in the title, headings or path.
- exactId / exactPath / exactSymbol: the query names the thing. Per-word identity applies to queries of at
  most two words: a sentence does not name a thing by containing one of its words. A re-exporting barrel
  earns less for a symbol than the module that declares it.
- graphProximity: entries within two hops of one of the ten strongest lexical hits, scaled by that anchor's
  share of the best lexical score. A result that only a relation surfaced earns proximity and nothing else.
- canonicality: 4 × ln(1 + (PageRank − floor) × entries), for lexical hits only (a tie-breaker).
- audienceFit: +25 for documentation written for agents when the caller is an agent.
- acceptedAgentSignals: the enrichment overlay hook, at weight 0 until the overlay exists.

Results below a third of the best score are dropped (`floor=0` keeps the neighbourhood); ties break on an
exact id, then on an ownership record, then on the id. Explaining never changes the order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from engine.graph import canonicality_boost
from engine.lexicon import STOPWORDS, fold, has_token, is_cjk, raw_tokens, singularize, tokens
from engine.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE, weaker_confidence
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.project import Entry, Projection

COMPONENTS = ("lexical", "prior", "aboutness", "exactId", "exactPath", "exactSymbol", "graphProximity",
              "canonicality", "audienceFit", "acceptedAgentSignals")
ACCEPTED_SIGNALS_WEIGHT = 0.0  # the overlay hook: no accepted enrichment exists yet
LEXICAL_DEPTH = 200
TYPO_SIMILARITY = 0.9
TYPO_BOOST = 0.7
ANCHORS = 10
FLOOR = 1 / 3

_PACKAGE_INTENT = re.compile(
    r"\b(package|module|pkg|edit|change|where|owns?|ownership|owners?|handoff|start|responsible|maintainers?)\b"
    r"|\b(pacotes?|modulos?|onde|quem|donos?|responsave(l|is)|comec\w*|inici\w*|edit\w*|mud\w*|alter\w*)", re.I)
_CHANGE_INTENT = re.compile(
    r"\b(change|edit|modify|update|fix|migrate|replace)\b"
    r"|\b(alter\w*|mud\w*|modific\w*|edit\w*|atualiz\w*|corrig\w*|migr\w*|substitu\w*|troc\w*)", re.I)
_ROUTING_QUESTION = re.compile(r"^(where|how)\b.*\b(edit|change|package|module)", re.I)
# In a routing question these words say what kind of answer is wanted, not what it is about: they set the
# priors and are not matched as text (unless nothing else is left).
_ROUTING_WORDS = frozenset(
    "own owns owner owners ownership owned responsible maintain maintains maintainer maintainers team teams area "
    "areas where change changes changing edit edits editing modify update handoff start package packages module "
    "modules dono donos responsavel responsaveis onde mudar alterar editar modificar pacote pacotes modulo "
    "modulos equipe time".split())
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

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        entry = self.entry
        out: dict[str, Any] = {
            "id": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title,
            "score": round(self.score, 2), "confidence": self.confidence, "provenance": entry.provenance,
            "evidence": [{"path": entry.path, "content_hash": entry.content_hash}],
        }
        if entry.summary:
            out["summary"] = entry.summary
        if entry.ownership_id:
            out["ownership_id"] = entry.ownership_id
        if explain:
            out["explain"] = {"terms": self.terms, "matched": self.matched,
                              "components": {k: round(v, 6) for k, v in self.components.items()},
                              **({"corrected": self.corrected} if self.corrected else {}),
                              **({"surfaced_by": self.surfaced_by} if self.surfaced_by else {})}
        return out


@dataclass(slots=True)
class _Candidate:
    index: int
    bm25: float = 0.0
    lexical_hit: bool = False
    hops: int = 0
    via: dict[str, Any] | None = None
    share: float = 0.0


@dataclass(slots=True)
class Retriever:
    projection: Projection
    mode: str = "combined"
    lexical: LexicalIndex = field(init=False)
    entries: list[Entry] = field(init=False)
    identifiers: list[frozenset[str]] = field(init=False)
    symbols: list[frozenset[str]] = field(init=False)
    declared: list[frozenset[str]] = field(init=False)
    by_identifier: dict[str, list[int]] = field(init=False)
    by_path: dict[str, list[int]] = field(init=False)
    by_base: dict[str, list[int]] = field(init=False)
    by_symbol: dict[str, list[int]] = field(init=False)
    by_directory: dict[str, list[int]] = field(init=False)
    adjacency: list[list[tuple[int, str, str]]] = field(init=False)
    rank_floor: float = field(init=False)
    reused: bool = False  # the projection came from the on-disk index (set by the caller)

    def __post_init__(self) -> None:
        self.entries = self.projection.entries
        self.lexical = LexicalIndex(self.entries, self.projection.weights, self.mode)
        index_of = {e.id: i for i, e in enumerate(self.entries)}
        self.identifiers = []
        # lower-cased exported and declared names per entry, read by every query's identity pass
        self.symbols = [frozenset(n.lower() for n in e.symbols) for e in self.entries]
        self.declared = [frozenset(n.lower() for n in e.declared_symbols) for e in self.entries]
        self.by_identifier, self.by_path = defaultdict(list), defaultdict(list)
        self.by_base, self.by_symbol, self.by_directory = defaultdict(list), defaultdict(list), defaultdict(list)
        self.adjacency = []
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
            path = entry.path.lower()
            self.by_path[path].append(i)
            if entry.kind in (DOCUMENT, MODULE):
                self.by_base[_base(path)].append(i)
            parts = path.split("/")
            for depth in range(1, len(parts)):
                self.by_directory["/".join(parts[:depth])].append(i)
            for symbol in entry.symbols:
                self.by_symbol[symbol.lower()].append(i)
            # projection edges are already unique per (kind, other) and sorted
            self.adjacency.append([(index_of[e.other], e.kind, e.confidence) for e in entry.edges
                                   if e.other in index_of])
        positive = [e.pagerank for e in self.entries if e.pagerank > 0]
        self.rank_floor = min(positive) if positive else 0.0

    # ------------------------------------------------------------------ search

    def search(self, query: str, limit: int = 20, *, kinds: list[str] | None = None, agent: bool = False,
               floor: float = FLOOR) -> list[Result]:
        terms = tokens(query, unique=True)
        if not terms or not self.entries:
            return []
        want_ownership = bool(_PACKAGE_INTENT.search(query) or _ROUTING_QUESTION.search(query.strip()))
        if want_ownership:
            routing = set(tokens(" ".join(w for w in raw_tokens(query) if fold(w) in _ROUTING_WORDS)))
            content = [t for t in terms if t not in routing]
            terms = content or terms
        words = raw_tokens(query)
        naming = len(words) <= 2
        term_lower = fold(query.strip())
        word_tokens = [singularize(fold(w)) for w in words]
        change_intent = bool(_CHANGE_INTENT.search(query))
        one_word = len(words) == 1
        shape_module = one_word and bool(_SYMBOL_SHAPED.search(query.strip()) or _PATH_SHAPED.search(query.strip()))

        terms, boosts, corrected = self._tolerate_typos(terms)
        candidates: dict[int, _Candidate] = {}
        hits = self.lexical.search(terms, LEXICAL_DEPTH, boosts)
        for hit in hits:
            candidates[hit.entry] = _Candidate(hit.entry, hit.bm25, True)
        for index in self._identity_candidates(term_lower, word_tokens, naming):
            candidates.setdefault(index, _Candidate(index, 0.0, True))

        # pass 1: every component of the lexical hits but proximity
        idf = {t: self.lexical.idf(t) for t in terms}
        idf_total = sum(idf.values()) or 1.0
        scored: dict[int, tuple[dict[str, float], dict[str, list[str]]]] = {}
        for candidate in candidates.values():
            entry = self.entries[candidate.index]
            components = dict.fromkeys(COMPONENTS, 0.0)
            matched = self.lexical.matched(candidate.index, terms)
            components["lexical"] = candidate.bm25
            components["prior"] = self._prior(entry, candidate.index, query, terms, word_tokens, want_ownership,
                                              change_intent, shape_module)
            named = {t for f in ("title", "headings", "path") for t in matched.get(f, [])}
            components["aboutness"] = 1 + 0.2 * sum(idf[t] for t in named) / idf_total
            self._identity(components, entry, candidate.index, term_lower, word_tokens, naming)
            components["canonicality"] = canonicality_boost(entry.pagerank - self.rank_floor, len(self.entries))
            if agent and entry.audience in ("agent", "human-and-agent"):
                components["audienceFit"] = 25.0
            components["acceptedAgentSignals"] = 0.0 * ACCEPTED_SIGNALS_WEIGHT
            scored[candidate.index] = (components, matched)
        best_base = max((_total(c) for c, _ in scored.values()), default=0.0)

        # pass 2: proximity to the strongest hits; an entry only a relation surfaces can earn at most 30, so
        # when that cannot reach the floor it is not even considered
        new_entries = floor <= 0 or best_base * floor <= 30
        self._proximity(candidates, hits[:ANCHORS], max((h.bm25 for h in hits), default=0.0), new_entries)

        results = []
        for candidate in candidates.values():
            entry = self.entries[candidate.index]
            if candidate.lexical_hit:
                components, matched = scored[candidate.index]
            else:
                components, matched = dict.fromkeys(COMPONENTS, 0.0), {}
                components["prior"] = components["aboutness"] = 1.0
            if candidate.hops:
                components["graphProximity"] = round((30 if candidate.hops == 1 else 12) * candidate.share, 6)
            if candidate.lexical_hit:
                score, confidence, via = _total(components), entry.confidence, None
            else:
                score, via = components["graphProximity"], candidate.via
                confidence = weaker_confidence(entry.confidence, via["confidence"]) if via else entry.confidence
            score = round(score, 6)
            if score <= 0:
                continue
            results.append(Result(entry, score, components, matched, confidence, via, terms, corrected))
        results.sort(key=lambda r: (-r.score, -(r.components["exactId"] > 0), not r.entry.ownership_id, r.entry.id))
        if results and floor > 0:
            threshold = results[0].score * floor
            results = [r for r in results if r.score >= threshold]
        if kinds:
            results = [r for r in results[:max(4 * limit, 40)] if r.entry.kind in kinds]
        return results[:limit]

    # ------------------------------------------------------------------ components

    def _tolerate_typos(self, terms: list[str]) -> tuple[list[str], dict[str, float], dict[str, str]]:
        """A term that matches nothing is replaced by the one indexed term that is very close to it
        (Jaro-Winkler ≥ 0.9, same first letter), at a reduced weight: `erros` finds `error`."""
        boosts: dict[str, float] = {}
        corrected: dict[str, str] = {}
        out = []
        for term in terms:
            if len(term) < 4 or is_cjk(term) or not term.isalpha() or self.lexical.doc_freq(term) > 0:
                out.append(term)
                continue
            found = process.extract(term, self.lexical.vocabulary(), scorer=JaroWinkler.normalized_similarity,
                                    limit=3, score_cutoff=TYPO_SIMILARITY)
            close = [choice for choice, _, _ in found if choice[0] == term[0] and choice.isalpha()]
            if close:
                corrected[term] = close[0]
                boosts[close[0]] = TYPO_BOOST
                if close[0] not in out:
                    out.append(close[0])
            else:
                out.append(term)
        return out, boosts, corrected

    def _identity_candidates(self, term_lower: str, word_tokens: list[str], naming: bool) -> set[int]:
        found: set[int] = set()
        whole = term_lower.removesuffix("()")
        for table in (self.by_identifier, self.by_path, self.by_base, self.by_symbol, self.by_directory):
            found.update(table.get(whole, ()))
        if naming:
            for token in word_tokens:
                found.update(self.by_identifier.get(token, ()))
                found.update(self.by_base.get(token, ()))
                found.update(self.by_symbol.get(token, ()))
        return found

    def _prior(self, entry: Entry, index: int, query: str, terms: list[str], word_tokens: list[str],
               want_ownership: bool, change_intent: bool, shape_module: bool) -> float:
        prior = 1.0
        if entry.audience in ("agent", "human-and-agent"):
            prior *= 1.15
        identifiers = self.identifiers[index]
        if any(_partial(identifier, token) for identifier in identifiers for token in word_tokens):
            prior *= 1.2
        if want_ownership:
            # "where do I change X" / "who owns X" asks for the unit one edits, not for prose about it
            if entry.ownership_id:
                prior *= 1.1
            if entry.kind in (AREA, PACKAGE):
                prior *= 1.4
            elif entry.kind == MODULE:
                prior *= 1.1
        if entry.kind == INTENT and len(terms) >= 2 and all(has_token(entry.title, t) for t in terms):
            prior *= 1.6  # the route's title covers the whole query
        if entry.kind == CHANGE:
            # a change route answers a request to change something; for an ordinary question it stays
            # reachable when nothing better matches, without crowding the answers
            if change_intent:
                prior *= 1.4 * (1.6 if len(terms) >= 2 and all(has_token(entry.title, t) for t in terms) else 1.0)
            else:
                prior *= 0.15
        if shape_module:
            if entry.kind == MODULE:
                prior *= 1.15
        elif not want_ownership and sum(1 for w in word_tokens if w not in STOPWORDS) >= 3 and entry.kind == DOCUMENT:
            prior *= 1.15
        return prior

    def _identity(self, components: dict[str, float], entry: Entry, index: int, term_lower: str,
                  word_tokens: list[str], naming: bool) -> None:
        identifiers = self.identifiers[index]
        path = entry.path.lower()
        base = _base(path) if entry.kind in (DOCUMENT, MODULE) else None
        whole = term_lower.removesuffix("()")
        symbols, declared = self.symbols[index], self.declared[index]
        if whole in identifiers or entry.id.lower() == whole:
            components["exactId"] += 200
        if (base is not None and base == whole) or path == whole:
            components["exactPath"] += 150
        elif path.startswith(whole + "/") or f"/{whole}/" in path:
            components["exactPath"] += 120
        if whole in declared:
            components["exactSymbol"] += 150
        elif whole in symbols:
            components["exactSymbol"] += 60  # a barrel that re-exports the name, not the declaration
        if not naming:
            return
        equal_ids = [t for t in word_tokens if t in identifiers]
        components["exactId"] += 120 * len(equal_ids)
        if equal_ids:
            components["exactId"] += max(0, 40 - min(len(t) for t in equal_ids))
        if base is not None and base in word_tokens and base != whole:
            components["exactPath"] += 100
        for token in word_tokens:
            if token == whole:
                continue
            if token in declared:
                components["exactSymbol"] += 90
            elif token in symbols:
                components["exactSymbol"] += 30

    def _proximity(self, candidates: dict[int, _Candidate], anchors: list[Any], best: float,
                   new_entries: bool = True) -> None:
        """Lift entries within two hops of the strongest lexical hits (first reach at the lowest hop wins).
        With `new_entries` false only entries that are already candidates are lifted."""
        if best <= 0:
            return
        anchor_ids = {hit.entry for hit in anchors}
        for hit in anchors:
            share = hit.bm25 / best
            anchor_id = self.entries[hit.entry].id
            for neighbour, kind, confidence in self.adjacency[hit.entry]:
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
                candidate.hops, candidate.share = 1, share
                candidate.via = {"kind": kind, "id": anchor_id, "confidence": confidence, "hops": 1}
                for second, second_kind, second_confidence in self.adjacency[neighbour]:
                    if second in anchor_ids or second == hit.entry:
                        continue
                    reached = candidates.get(second)
                    if reached is None:
                        if not new_entries:
                            continue
                        reached = candidates.setdefault(second, _Candidate(second))
                    if reached.hops:
                        continue
                    reached.hops, reached.share = 2, share
                    reached.via = {"kind": second_kind, "id": self.entries[neighbour].id,
                                   "confidence": weaker_confidence(confidence, second_confidence), "hops": 2}


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
