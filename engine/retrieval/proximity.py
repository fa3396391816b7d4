"""Graph proximity: relevance lent along the repository's relations by the strongest lexical hits.

An entry within two hops of one of the ANCHORS strongest lexical hits (links, mentions, coverage, imports) earns
ONE_HOP or TWO_HOPS points, scaled by that anchor's share of the best lexical score; a strong hit that at least
CONVERGING other strong hits link to or import is what they build on (the guide the pages about a topic point at,
the module the matching modules import) and earns one hop's, scaled by the weaker of the two strongest that reach
it. Proximity is relevance borrowed from a strong hit: it never lifts an entry past the anchor it comes from
(unless the query names the entry). A result that only a relation surfaced earns proximity and nothing else.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.model import weaker_confidence
from docbridge.engine.retrieval.lexical import Hit

if TYPE_CHECKING:
    from docbridge.engine.retrieval.rank import Retriever

ONE_HOP = 30  # graphProximity for a neighbour of the strongest hit (× the anchor's share of the best score)
TWO_HOPS = 12  # ...for a neighbour's neighbour
LENT_MARGIN = 0.01  # an entry lifted by a strong hit's proximity stays this far below it
CONVERGING = 2  # strong hits that link to or import another strong hit lend it proximity
_CONVERGING_KINDS = frozenset({"links-to", "imports", "re-exports"})


@dataclass(slots=True)
class Candidate:
    """An entry in the running for a query: found by the lexical index or by identity (`lexical_hit`), or
    reached through a relation of a strong hit."""

    index: int
    bm25: float = 0.0
    lexical_hit: bool = False
    code: float = 0.0  # the part of `bm25` its code words earned (a question about how code works)
    hops: int = 0
    via: dict[str, Any] | None = None
    share: float = 0.0
    anchor: int = -1  # the strong hit whose proximity it has (-1: none, or several)


def points(candidate: Candidate) -> float:
    """The proximity a candidate's place in the graph earns (before it is capped by its anchor)."""
    return round((ONE_HOP if candidate.hops == 1 else TWO_HOPS) * candidate.share, 6) if candidate.hops else 0.0


def lift(index: Retriever, candidates: dict[int, Candidate], anchors: list[Hit], best: float,
         new_entries: bool = True, peripheral: bool = False) -> None:
    """Lift entries within two hops of the strongest lexical hits (first reach at the lowest hop wins). With
    `new_entries` false only entries that are already candidates are lifted."""
    if best <= 0:
        return
    anchor_ids = {hit.entry for hit in anchors}
    converging(index, candidates, anchors, best, peripheral)
    for hit in anchors:
        share = hit.bm25 / best
        anchor_id = index.entries[hit.entry].id
        for neighbour, kind, confidence in index.adjacency(hit.entry):
            if neighbour in anchor_ids:
                continue
            candidate = candidates.get(neighbour)
            if candidate is None:
                if not new_entries:
                    candidate = Candidate(neighbour)  # a stepping stone only, not a result
                else:
                    candidate = candidates.setdefault(neighbour, Candidate(neighbour))
            if candidate.hops == 1:
                continue
            candidate.hops, candidate.share, candidate.anchor = 1, share, hit.entry
            candidate.via = {"kind": kind, "id": anchor_id, "confidence": confidence, "hops": 1}
            for second, second_kind, second_confidence in index.adjacency(neighbour):
                if second in anchor_ids or second == hit.entry:
                    continue
                reached = candidates.get(second)
                if reached is None:
                    if not new_entries:
                        continue
                    reached = candidates.setdefault(second, Candidate(second))
                if reached.hops:
                    continue
                reached.hops, reached.share, reached.anchor = 2, share, hit.entry
                reached.via = {"kind": second_kind, "id": index.entries[neighbour].id,
                               "confidence": weaker_confidence(confidence, second_confidence), "hops": 2}


def converging(index: Retriever, candidates: dict[int, Candidate], anchors: list[Hit], best: float,
               peripheral: bool = False) -> None:
    """A strong hit that at least CONVERGING other strong hits link to or import is what they build on: it earns
    one hop of proximity, scaled by the weaker of the two strongest that reach it. A hit under a test, fixture,
    example or playground directory is no such source (a test imports what it tests: that says nothing about
    what the code builds on), unless the query asks for those."""
    anchor_ids = {hit.entry for hit in anchors}
    shares = {hit.entry: hit.bm25 / best for hit in anchors}
    reached: dict[int, list[int]] = defaultdict(list)
    for hit in anchors:
        if index.entries[hit.entry].surface == "peripheral" and not peripheral:
            continue
        for edge in index.edges_of(hit.entry):
            if edge.direction != "out" or edge.kind not in _CONVERGING_KINDS:
                continue
            other = index.index_of.get(edge.other)
            if other is not None and other != hit.entry and other in anchor_ids and hit.entry not in reached[other]:
                reached[other].append(hit.entry)
    for target, sources in reached.items():
        if len(sources) < CONVERGING:
            continue
        sources.sort(key=lambda s: -shares[s])
        candidate = candidates[target]
        candidate.hops, candidate.share = 1, shares[sources[CONVERGING - 1]]
        candidate.via = {"kind": "converging", "from": [index.entries[s].id for s in sources]}


def lenders(candidates: dict[int, Candidate], anchors: list[Hit], own: dict[int, float]) -> dict[int, float]:
    """The strong hits' own scores, with what they earn from each other: what they lend to their neighbours never
    lifts a neighbour past them."""
    return {hit.entry: own[hit.entry] + points(candidates[hit.entry]) for hit in anchors}


def lent(index: Retriever, candidate: Candidate, own: dict[int, float], lenders: dict[int, float], named: bool,
         reasons: list[str]) -> float:
    """A candidate's graphProximity: its points, capped LENT_MARGIN below the strong hit they come from (an entry
    the query names, `named`, stands on that and is not capped)."""
    proximity = points(candidate)
    lender = lenders.get(candidate.anchor)
    base = own.get(candidate.index, 0.0)
    if lender is not None and base + proximity > lender - LENT_MARGIN and not named:
        room = max(0.0, round(lender - base - LENT_MARGIN, 6))
        if room < proximity:
            proximity = room
            reasons.append(f"graphProximity {room:g}: not past {index.entries[candidate.anchor].id}, "
                           "the strong match it comes from")
    if candidate.via is not None and candidate.via["kind"] == "converging":
        reasons.append(f"graphProximity {proximity:g}: {len(candidate.via['from'])} strong matches link to or "
                       "import it")
    return proximity
