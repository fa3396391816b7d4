"""The knowledge graph and its metrics.

Built from the snapshot's relations in memory, never serialized. Nodes and edges are kept in sorted order
before every metric, so results do not depend on the order facts arrived in. The metrics every scan and
search need (PageRank, import cycles, proximity) run on a plain `Digraph`; networkx (about 20 MB resident
and 90 ms to import) is loaded only for betweenness centrality and Louvain communities.

- canonicality: PageRank over `links-to` and `covers` (damping 0.85). Computed by a short power iteration
  here because `networkx.pagerank` needs scipy (143 MB) for a computation that takes a few lines.
- proximity: bounded breadth-first search (≤ 2 hops) over covers, mentions, mentions-symbol, links-to and
  imports, in either direction.
- centrality risk: betweenness centrality on the area-level import graph (sampled with a fixed seed when
  the graph is large).
- import cycles: capped, each edge with the import evidence that proves it; type-only imports are skipped
  (TypeScript erases them, so they cannot form a runtime cycle).
- communities: seeded Louvain over the module import graph, offered only as area suggestions when the
  layout has no areas to speak of.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import Evidence, Relation, sorted_by_key

if TYPE_CHECKING:
    import networkx as nx
    from docbridge.engine.state.model_state import ModelState

GRAPH_VERSION = "1.0.0"
DAMPING = 0.85
MAX_CYCLES = 16
CANONICALITY_KINDS = frozenset({"links-to", "covers"})
PROXIMITY_KINDS = frozenset({"covers", "mentions", "mentions-symbol", "links-to", "imports", "re-exports"})
IMPORT_KINDS = frozenset({"imports", "re-exports"})
BETWEENNESS_SAMPLE_ABOVE = 400
BETWEENNESS_SAMPLES = 200
SEED = 20260401


def _nx() -> Any:
    import networkx  # deferred: importing networkx costs ~90 ms that most commands never need
    return networkx


def _internal(node: str) -> bool:
    return not node.startswith(("external:", "unresolved:"))


@dataclass(frozen=True, slots=True)
class Digraph:
    """A simple directed graph: its nodes sorted, each node's successors sorted, and the relation behind
    each edge (the first by relation key when several relate the same pair)."""

    nodes: tuple[str, ...]
    edges: dict[tuple[str, str], Relation]
    _successors: dict[str, tuple[str, ...]]

    def successors(self, node: str) -> tuple[str, ...]:
        return self._successors.get(node, ())

    def to_undirected_networkx(self) -> nx.Graph:
        """The same graph as networkx's undirected `Graph`, nodes and edges inserted in sorted order."""
        graph = _nx().Graph()
        graph.add_nodes_from(self.nodes)
        graph.add_edges_from((source, target) for source in self.nodes for target in self.successors(source))
        return graph


def build_digraph(relations: Iterable[Relation], kinds: frozenset[str]) -> Digraph:
    """A simple directed graph of the chosen relation kinds between internal entities, in sorted order."""
    edges: dict[tuple[str, str], Relation] = {}
    for relation in sorted_by_key(r for r in relations if r.kind in kinds):
        if relation.source == relation.target or not (_internal(relation.source) and _internal(relation.target)):
            continue
        edges.setdefault((relation.source, relation.target), relation)
    successors: dict[str, list[str]] = defaultdict(list)
    for source, target in sorted(edges):
        successors[source].append(target)
    return Digraph(tuple(sorted({n for pair in edges for n in pair})), dict(sorted(edges.items())),
                   {node: tuple(targets) for node, targets in successors.items()})


def pagerank(graph: Digraph, damping: float = DAMPING, max_iter: int = 100, tol: float = 1e-6) -> dict[str, float]:
    """PageRank with uniform teleport and dangling mass spread uniformly; scores rounded to 6 places."""
    nodes = list(graph.nodes)  # sorted
    n = len(nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    out_links = [[index[t] for t in graph.successors(node)] for node in nodes]
    dangling = [i for i, targets in enumerate(out_links) if not targets]
    rank = [1.0 / n] * n
    for _ in range(max_iter):
        previous = rank
        dangling_mass = damping * sum(previous[i] for i in dangling) / n
        base = (1.0 - damping) / n + dangling_mass
        rank = [base] * n
        for i, targets in enumerate(out_links):
            if targets:
                share = damping * previous[i] / len(targets)
                for t in targets:
                    rank[t] += share
        if sum(abs(a - b) for a, b in zip(rank, previous)) < n * tol:
            break
    return {node: round(rank[index[node]], 6) for node in nodes}


def canonicality_boost(pagerank_value: float, entry_count: int) -> float:
    """Log-scaled PageRank as a ranking component: 4 × ln(1 + pagerank × entries), 0 when unranked."""
    if pagerank_value <= 0:
        return 0.0
    return round(4 * math.log(1 + pagerank_value * entry_count), 6)


def proximity(adjacency: dict[str, list[str]], start: str, max_hops: int = 2) -> dict[str, int]:
    """Nodes within `max_hops` of `start` (undirected), with their distance; `start` excluded."""
    seen = {start: 0}
    frontier = [start]
    for hops in range(1, max_hops + 1):
        following = []
        for node in frontier:
            for neighbour in adjacency.get(node, ()):
                if neighbour not in seen:
                    seen[neighbour] = hops
                    following.append(neighbour)
        frontier = sorted(following)
    del seen[start]
    return dict(sorted(seen.items(), key=lambda item: (item[1], item[0])))


def undirected_adjacency(relations: Iterable[Relation], kinds: frozenset[str] = PROXIMITY_KINDS) -> dict[
        str, list[str]]:
    adjacency: dict[str, set[str]] = defaultdict(set)
    for relation in relations:
        if relation.kind in kinds and relation.source != relation.target and _internal(relation.target):
            adjacency[relation.source].add(relation.target)
            adjacency[relation.target].add(relation.source)
    return {node: sorted(neighbours) for node, neighbours in sorted(adjacency.items())}


@dataclass(frozen=True, slots=True)
class Cycle:
    nodes: tuple[str, ...]  # rotated so the smallest id comes first
    evidence: tuple[tuple[str, str, tuple[Evidence, ...]], ...]  # (from, to, import evidence) per edge


TYPE_ONLY_DETECTIONS = frozenset({"type", "re-export-type"})


def type_only(relation: Relation) -> bool:
    """Whether every import behind a relation is erased at run time (`import type`, `export type ... from`)."""
    return set(relation.meta("detection", ()) or ("static",)) <= TYPE_ONLY_DETECTIONS


def runtime_import_graph(relations: Iterable[Relation]) -> Digraph:
    """Module imports that exist at run time (type-only imports are erased by TypeScript)."""
    kept = [r for r in relations if r.kind in IMPORT_KINDS and r.target.startswith("module:") and not type_only(r)]
    return build_digraph(kept, IMPORT_KINDS)


def import_cycles(graph: Digraph, limit: int = MAX_CYCLES) -> list[Cycle]:
    """Import cycles found by depth-first search from each module in sorted order (out-neighbours sorted):
    each edge back to a module still on the stack closes one cycle. Linear in the graph's size, so a large
    tangle of imports costs no more than a clean graph; at most `limit` cycles, smallest first."""
    successors = {node: graph.successors(node) for node in graph.nodes}
    found: dict[tuple[str, ...], Cycle] = {}
    visited: set[str] = set()
    for start in successors:
        if start in visited:
            continue
        visited.add(start)
        path = [start]
        position = {start: 0}
        stack = [iter(successors[start])]
        while stack:
            following = next(stack[-1], None)
            if following is None:
                stack.pop()
                del position[path.pop()]
                continue
            if following in position:
                cycle = path[position[following]:]
                smallest = cycle.index(min(cycle))
                nodes = tuple(cycle[smallest:] + cycle[:smallest])
                if nodes not in found:
                    edges = []
                    for i, source in enumerate(nodes):
                        target = nodes[(i + 1) % len(nodes)]
                        relation = graph.edges[source, target]
                        edges.append((source, target, relation.evidence))
                    found[nodes] = Cycle(nodes, tuple(edges))
                    if len(found) >= limit:
                        stack.clear()
                        break
            elif following not in visited:
                visited.add(following)
                position[following] = len(path)
                path.append(following)
                stack.append(iter(successors[following]))
        if len(found) >= limit:
            break
    return [found[k] for k in sorted(found, key=lambda nodes: (len(nodes), nodes))]


def area_betweenness(area_edges: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Normalised betweenness of each area in the area-level import graph (sampled above 400 areas)."""
    nx = _nx()
    graph = nx.DiGraph()
    edges = sorted(set(area_edges))
    graph.add_nodes_from(sorted({n for e in edges for n in e}))
    graph.add_edges_from(edges)
    if graph.number_of_nodes() == 0:
        return {}
    k = BETWEENNESS_SAMPLES if graph.number_of_nodes() > BETWEENNESS_SAMPLE_ABOVE else None
    scores = nx.betweenness_centrality(graph, k=k, seed=SEED if k else None, normalized=True)
    return {node: round(score, 6) for node, score in sorted(scores.items())}


def area_suggestions(relations: Iterable[Relation], limit: int = 8) -> list[dict[str, Any]]:
    """Seeded Louvain communities of the module import graph, as candidate areas (label = common directory)."""
    nx = _nx()
    graph = build_digraph([r for r in relations if r.target.startswith("module:")],
                          IMPORT_KINDS).to_undirected_networkx()
    if graph.number_of_nodes() < 2 or graph.number_of_edges() < 1:
        return []
    communities = nx.community.louvain_communities(graph, seed=SEED)
    by_label: dict[str, list[str]] = {}  # communities in one folder are one suggestion for that folder
    for members in communities:
        if len(members) < 3:
            continue
        paths = sorted(m.split(":", 1)[1] for m in members)
        common = paths[0].split("/")[:-1]
        for path in paths[1:]:
            parts = path.split("/")[:-1]
            while common and parts[:len(common)] != common:
                common = common[:-1]
        if not common:
            continue
        by_label.setdefault("/".join(common), []).extend(paths)
    suggestions: list[dict[str, Any]] = []
    for label, paths in by_label.items():
        paths = sorted(paths)
        suggestions.append({"label": label, "modules": paths[:8], "module_count": len(paths),
                            "reason": f"{len(paths)} modules cluster around {label}; promote it to an area in "
                                      f"configuration (analysis.areas) to make it part of the graph."})
    suggestions.sort(key=lambda s: (-s["module_count"], s["label"]))
    return suggestions[:limit]


SUGGESTIONS: ViewKey[list[dict[str, Any]]] = ViewKey("suggestions")


def area_suggestions_of(state: ModelState) -> list[dict[str, Any]]:
    """Seeded Louvain communities as candidate areas, only when the layout is flat (fewer than 2 areas)."""
    layout = state.universe.layout
    if layout is None or len(layout.areas) >= 2 or len(state.universe.modules) < 6:
        return []
    from docbridge.engine.state.transitions import resolved
    state = resolved(state)
    return state.view(SUGGESTIONS, lambda: [
        s for s in area_suggestions([r for path in sorted(state.modules.keys()) for r in state.modules[path].relations])
        if s["label"] not in layout.areas])
