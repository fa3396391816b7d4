"""Reciprocal Rank Fusion of the lexical entity ranking and the dense (embedding) ranking.

    fused(e) = 1 / (k + lexicalRank(e)) + w / (k + denseRank(e))     (ranks from 1; k = index.rrfK, 60; w = 0.5)

The candidates are the lexical results and the dense ranking's best entities (chunk hits folded to their
entity, its best chunk standing for it, a copy of a page counting as its canonical copy); both rankings rank
every candidate, so a candidate is not lifted merely for appearing in both lists. Results the lexical ranking
holds because the query names them (a positive exactId, exactPath or exactSymbol: a symbol, a path, an
ownership id) and the lexical best result keep their lexical positions: fusion reorders the rest around them,
so a paraphrase never pushes the declaring module down. Ties break on the lexical rank, then on the id: the
fused order is a pure function of the two rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

IDENTITY = ("exactId", "exactPath", "exactSymbol")
# The dense ranking's weight in the fusion. Measured on the real-repository suites (bench/real) with the local
# static model: at 1.0 the model's noise reorders what lexical search ranks well; from 0.35 to 0.75 hybrid
# loses no case there and wins questions lexical search misses.
DENSE_WEIGHT = 0.5


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
    dense_rank: int  # 1-based, among all candidates
    pinned: bool


def fuse(lexical: Sequence[str], cosine: dict[str, float], pinned: Sequence[str], k: int = 60,
         dense_weight: float = DENSE_WEIGHT) -> list[Fused]:
    """The fused ranking of the candidates (`cosine` holds every candidate: the lexical results and the dense
    ranking's best entities): both rankings cover every candidate (a candidate the lexical ranking did not
    return ranks after the ones it did; the dense rank is its cosine's place among all candidates), each
    weighed by RRF, the dense one by `dense_weight`. Pinned ids (a subset of `lexical`) keep their lexical
    positions; the others are ordered by fused score, ties by lexical rank, then id."""
    candidates = list(dict.fromkeys([*lexical, *sorted(cosine)]))
    lexical_rank = {item: i for i, item in enumerate(lexical, start=1)}
    after = len(lexical) + 1
    dense_order = sorted(candidates, key=lambda item: (-round(cosine.get(item, -1.0), 6), item))
    dense_rank = {item: i for i, item in enumerate(dense_order, start=1)}
    scores = {item: 1.0 / (k + lexical_rank.get(item, after)) + dense_weight / (k + dense_rank[item])
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
    return [Fused(item, round(scores[item], 8), lexical_rank.get(item), dense_rank[item], item in pinned_set)
            for item in order]


def is_identity_hit(result: Any) -> bool:
    return any(result.components.get(key, 0) > 0 for key in IDENTITY)
