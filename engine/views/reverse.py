"""Reverse indexes of what documents say: which documents document or reference an entity.

Built once from a state's resolutions, then derived incrementally: a state seeded with the index of an
ancestor only revisits the documents re-resolved since (see `ModelState.seeds_for_child`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from docbridge.engine.base.memo import ViewKey
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.transitions import resolved
from immutables import Map

if TYPE_CHECKING:
    from docbridge.engine.discovery.references import DocumentResolution
    from docbridge.engine.state.model_state import Seed

Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class _Reverse:
    """target -> sorted entries; per document, the (target, entry) pairs it contributed."""

    targets: Map[str, tuple[Any, ...]]
    contributions: Map[str, tuple[tuple[str, Any], ...]]


def _derive(state: ModelState, seed: Seed | None, contribute: Callable[[str, DocumentResolution], Iterable[
        tuple[str, Any]]], sort_key: Callable[[Any], Any]) -> _Reverse:
    documents = state.documents
    if seed is None:
        by_target: dict[str, list[Any]] = defaultdict(list)
        contributions: dict[str, tuple[tuple[str, Any], ...]] = {}
        for path in sorted(documents.keys()):
            pairs = tuple(dict.fromkeys(contribute(path, documents[path])))
            contributions[path] = pairs
            for target, entry in pairs:
                by_target[target].append(entry)
        return _Reverse(Map({t: tuple(sorted(set(e), key=sort_key)) for t, e in by_target.items()}),
                        Map(contributions))
    previous: _Reverse = seed.value
    targets = previous.targets.mutate()
    contributed = previous.contributions.mutate()
    for path in sorted(seed.changed):
        old = contributed.get(path, ())
        resolution = documents.get(path)
        new = tuple(dict.fromkeys(contribute(path, resolution))) if resolution is not None else ()
        if old == new:
            continue
        if new:
            contributed[path] = new
        else:
            contributed.pop(path, None)
        touched = {t for t, _ in old} | {t for t, _ in new}
        for target in touched:
            kept = [e for e in targets.get(target, ()) if _owner(e) != path]
            kept.extend(e for t, e in new if t == target)
            if kept:
                targets[target] = tuple(sorted(set(kept), key=sort_key))
            else:
                targets.pop(target, None)
    return _Reverse(targets.finish(), contributed.finish())


def _owner(entry: Any) -> str:
    return entry if isinstance(entry, str) else entry[0]


class DocumentedBy:
    """Entity id -> (document, relation kind, symbol) for every document relation pointing at it."""

    @staticmethod
    def derive(state: ModelState, seed: Seed | None) -> _Reverse:
        def contribute(path: str, resolution: DocumentResolution) -> Iterable[tuple[str, Any]]:
            for kind, target, symbol in resolution.relation_keys:
                yield target, (path, kind, symbol or None)
        return _derive(state, seed, contribute, lambda e: (e[0], e[1], e[2] or ""))


class ReferencedBy:
    """Entity id -> the documents with a reference resolving to it."""

    @staticmethod
    def derive(state: ModelState, seed: Seed | None) -> _Reverse:
        def contribute(path: str, resolution: DocumentResolution) -> Iterable[tuple[str, Any]]:
            for reference in resolution.references:
                if reference.target is not None:
                    yield reference.target, path
        return _derive(state, seed, contribute, lambda e: e)


DOCUMENTED_BY: ViewKey[_Reverse] = ViewKey("documented-by")
REFERENCED_BY: ViewKey[_Reverse] = ViewKey("referenced-by")


def documented_by_of(state: ModelState) -> Mapping[str, tuple[tuple[str, str, str | None], ...]]:
    """Entity id -> (document, relation kind, symbol) for every document relation pointing at it, sorted:
    the reverse index behind hovers, code lenses and go-to-definition."""
    state = resolved(state)
    return state.view(DOCUMENTED_BY, lambda: DocumentedBy.derive(state, state.seed(DOCUMENTED_BY.name))).targets


def referenced_by_of(state: ModelState) -> Mapping[str, tuple[str, ...]]:
    """Entity id -> the documents with a reference resolving to it (sorted): where find-references looks.
    Unlike `documented_by_of` it ignores per-document relation limits."""
    state = resolved(state)
    return state.view(REFERENCED_BY, lambda: ReferencedBy.derive(state, state.seed(REFERENCED_BY.name))).targets


__all__ = ["DOCUMENTED_BY", "REFERENCED_BY", "DocumentedBy", "ReferencedBy", "documented_by_of", "referenced_by_of"]
