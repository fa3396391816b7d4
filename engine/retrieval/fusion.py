"""Reciprocal Rank Fusion of the lexical entity ranking and the dense (embedding) ranking, when the two disagree.

    fused(e) = 1 / (k + lexicalRank(e)) + w / (k + denseRank(e))     (ranks from 1; k = index.rrfK, 60; w = 1)

The candidates are the lexical results and the dense ranking's best entities (chunk hits folded to their
entity, its best chunk standing for it, a copy of a page counting as its canonical copy; entries under a test,
fixture, example or playground directory left out of the dense ranking unless the query asks for them, as the
lexical ranking halves them). Fusion acts only when the rankings disagree about the best answer: when the
lexical best result is among the dense ranking's AGREEMENT best entities (or the query names it, or the dense
ranking cannot see it: a package, a directory), the lexical order stands. Two independent rankings that agree
on the answer have nothing to correct in each other; a paraphrase, whose words are not the answer's, is where
they part. When fusion acts, results the lexical ranking holds because the query names them (a positive
exactId, exactPath or exactSymbol) and the lexical ranking's first two (LEXICAL_KEPT) keep their positions: the
dense ranking adds to what follows them; a candidate the dense ranking
cannot see (it has no chunks) counts as if both rankings agreed on it (no opinion is not the worst opinion).
Ties break on the lexical rank, then on the id: the fused order is a pure function of the two rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

IDENTITY = ("exactId", "exactPath", "exactSymbol")
# Measured on the real-repository suites (bench/real, their tuning parts) with the three local models
# (docs/search.md, "Choosing the local model"): with the agreement gate at 30 and the dense weight 1, no suite
# lost a case at hit@3 with multilingual-e5-small; without the gate every model lowered at least one suite.
DENSE_WEIGHT = 1.0
# With the lexical best alone kept, fusion lowered TanStack Query's second tuning part (hit@3 0.938 -> 0.875: a
# mechanism the lexical ranking put second, moved fifth by entities only the dense ranking found); with the first
# two kept, no tuning part is lower than lexical and the paraphrases still gain (TanStack 0.267 -> 0.333, Vite
# 0.467 -> 0.533 at hit@3).
LEXICAL_KEPT = 2
AGREEMENT = 30  # the lexical best among the dense ranking's this many best entities: the rankings agree


def rrf(rankings: Sequence[Sequence[str]], k: int = 60) -> dict[str, float]:
    """Each id's fused score over `rankings` (each a list of ids, best first; an id counts once per list)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for position, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return scores


@dataclass(frozen=True, slots=True)
class Fused:
    id: str
    score: float
    lexical_rank: int | None  # 1-based, None when the lexical ranking did not return it
    dense_rank: int | None  # 1-based, among all candidates; None when the dense ranking cannot see it
    pinned: bool


def agree(lexical: Sequence[str], cosine: dict[str, float], named: Sequence[str], depth: int = AGREEMENT) -> bool:
    """Whether the two rankings agree on the best answer: the lexical best is named by the query, or the dense
    ranking cannot see it, or it is among the dense ranking's `depth` best (`cosine`: every entity the dense
    ranking sees)."""
    if not lexical:
        return False
    best = lexical[0]
    if best in named or best not in cosine:
        return True
    mine = round(cosine[best], 6)
    above = sum(1 for value in cosine.values() if round(value, 6) > mine)
    return above < depth


def fuse(lexical: Sequence[str], cosine: dict[str, float], pinned: Sequence[str], k: int = 60,
         dense_weight: float = DENSE_WEIGHT) -> list[Fused]:
    """The fused ranking of the candidates (the lexical results and the ids in `cosine`, which holds the cosine of
    every candidate the dense ranking sees): the dense rank is a candidate's cosine's place among them; a
    candidate without one counts as if both rankings agreed on it (weighed 1 + dense_weight at its lexical rank);
    one the lexical ranking did not return ranks after the ones it did. Pinned ids (a subset of `lexical`) keep
    their lexical positions; the others are ordered by fused score, ties by lexical rank, then id."""
    candidates = list(dict.fromkeys([*lexical, *sorted(cosine)]))
    lexical_rank = {item: i for i, item in enumerate(lexical, start=1)}
    after = len(lexical) + 1
    seen = sorted((item for item in candidates if item in cosine), key=lambda item: (-round(cosine[item], 6), item))
    dense_rank = {item: i for i, item in enumerate(seen, start=1)}
    scores = {item: (1.0 / (k + lexical_rank.get(item, after)) + dense_weight / (k + dense_rank[item]))
              if item in dense_rank else (1.0 + dense_weight) / (k + lexical_rank.get(item, after))
              for item in candidates}
    pinned_set = {item for item in pinned if item in lexical_rank}
    rest = sorted((item for item in candidates if item not in pinned_set),
                  key=lambda item: (-scores[item], lexical_rank.get(item, after), item))
    slots = {lexical_rank[item] - 1: item for item in pinned_set}
    order: list[str] = []
    fill = iter(rest)
    for position in range(len(candidates)):
        chosen = slots.get(position)
        if chosen is None:
            chosen = next(fill, None)
        if chosen is not None:
            order.append(chosen)
    order.extend(fill)
    return [Fused(item, round(scores[item], 8), lexical_rank.get(item), dense_rank.get(item), item in pinned_set)
            for item in order]


def is_identity_hit(result: Any) -> bool:
    return any(result.components.get(key, 0) > 0 for key in IDENTITY)
