"""Graph metrics on small fixed graphs: expected values, and independence from insertion order."""

from __future__ import annotations

import math
import random

import pytest
from docbridge.engine.base.model import Evidence, Relation
from docbridge.engine.views.graph import (
    area_betweenness,
    area_suggestions,
    build_digraph,
    canonicality_boost,
    import_cycles,
    pagerank,
    proximity,
    runtime_import_graph,
    undirected_adjacency,
)


def rel(source: str, kind: str, target: str, line: int = 0, detection: tuple[str, ...] = ("static",)) -> Relation:
    path = source.split(":", 1)[1]
    metadata = (("detection", detection),) if kind in ("imports", "re-exports") else ()
    return Relation(source, target, kind, (Evidence(path, line, 0, line, 10),), metadata=metadata)


DOCS = [
    rel("document:index.md", "links-to", "document:a.md"),
    rel("document:index.md", "links-to", "document:b.md"),
    rel("document:a.md", "links-to", "document:hub.md"),
    rel("document:b.md", "links-to", "document:hub.md"),
    rel("document:c.md", "links-to", "document:hub.md"),
    rel("document:hub.md", "covers", "area:src/core"),
    rel("document:c.md", "mentions", "module:src/core/x.ts"),  # not a canonicality edge
]


def test_pagerank_orders_the_page_everything_points_at_first() -> None:
    scores = pagerank(build_digraph(DOCS, frozenset({"links-to", "covers"})))
    assert set(scores) == {"document:index.md", "document:a.md", "document:b.md", "document:c.md",
                           "document:hub.md", "area:src/core"}
    ranked = sorted(scores, key=lambda n: (-scores[n], n))
    assert ranked[:2] == ["area:src/core", "document:hub.md"]
    assert scores["document:a.md"] == scores["document:b.md"] > scores["document:index.md"]
    assert scores["document:index.md"] == scores["document:c.md"]  # nothing links to either
    assert math.isclose(sum(scores.values()), 1.0, abs_tol=1e-5)


def test_pagerank_of_a_two_node_chain_matches_the_closed_form() -> None:
    scores = pagerank(build_digraph([rel("document:a.md", "links-to", "document:b.md")], frozenset({"links-to"})))
    # a = (1-d)/2 + d*b/2 (b dangles), b = a*d + that; solving gives b/a = 1 + d
    assert math.isclose(scores["document:b.md"] / scores["document:a.md"], 1.85, rel_tol=1e-4)


def test_pagerank_is_independent_of_insertion_order() -> None:
    expected = pagerank(build_digraph(DOCS, frozenset({"links-to", "covers"})))
    for seed in range(5):
        shuffled = DOCS[:]
        random.Random(seed).shuffle(shuffled)
        assert pagerank(build_digraph(shuffled, frozenset({"links-to", "covers"}))) == expected


def test_empty_graph_has_no_canonicality() -> None:
    assert pagerank(build_digraph([rel("document:a.md", "mentions", "module:x.ts")], frozenset({"links-to"}))) == {}
    assert canonicality_boost(0.0, 100) == 0.0
    assert canonicality_boost(0.1, 100) == round(4 * math.log(11), 6)


def test_proximity_is_bounded_to_two_hops_in_either_direction() -> None:
    adjacency = undirected_adjacency(DOCS)
    assert proximity(adjacency, "document:c.md") == {
        "document:hub.md": 1, "module:src/core/x.ts": 1,
        "area:src/core": 2, "document:a.md": 2, "document:b.md": 2}
    assert proximity(adjacency, "area:src/core", max_hops=1) == {"document:hub.md": 1}


MODULES = [
    rel("module:src/b.ts", "imports", "module:src/c.ts", 3),
    rel("module:src/c.ts", "imports", "module:src/a.ts", 4),
    rel("module:src/a.ts", "imports", "module:src/b.ts", 5),
    rel("module:src/a.ts", "imports", "module:src/d.ts", 6),
    rel("module:src/d.ts", "imports", "module:src/e.ts", 1, ("type",)),
    rel("module:src/e.ts", "imports", "module:src/d.ts", 2),
    rel("module:src/a.ts", "imports", "external:zod", 1),
]


def test_import_cycle_members_rotation_and_evidence() -> None:
    (cycle,) = import_cycles(runtime_import_graph(MODULES))  # d <-> e is type-only one way: no runtime cycle
    assert cycle.nodes == ("module:src/a.ts", "module:src/b.ts", "module:src/c.ts")
    assert [(a, b, ev[0].line) for a, b, ev in cycle.evidence] == [
        ("module:src/a.ts", "module:src/b.ts", 5), ("module:src/b.ts", "module:src/c.ts", 3),
        ("module:src/c.ts", "module:src/a.ts", 4)]


def test_cycles_are_stable_under_shuffling_and_capped() -> None:
    many = []
    for i in range(30):  # 30 two-module cycles
        many += [rel(f"module:src/p{i:02d}.ts", "imports", f"module:src/q{i:02d}.ts"),
                 rel(f"module:src/q{i:02d}.ts", "imports", f"module:src/p{i:02d}.ts")]
    expected = [c.nodes for c in import_cycles(runtime_import_graph(many))]
    assert len(expected) == 16 and expected[0] == ("module:src/p00.ts", "module:src/q00.ts")
    shuffled = many[:]
    random.Random(3).shuffle(shuffled)
    assert [c.nodes for c in import_cycles(runtime_import_graph(shuffled))] == expected


def test_area_betweenness_on_a_chain() -> None:
    scores = area_betweenness([("area:a", "area:b"), ("area:b", "area:c"), ("area:c", "area:d")])
    # directed chain a->b->c->d: b lies on a->c and a->d (2 of 6 ordered pairs), c on a->d and b->d
    assert scores == {"area:a": 0.0, "area:b": pytest.approx(2 / 6), "area:c": pytest.approx(2 / 6),
                      "area:d": 0.0}


def test_area_suggestions_are_seeded_and_structural() -> None:
    relations = []
    for group in ("src/billing", "src/orders"):
        names = [f"module:{group}/m{i}.ts" for i in range(4)]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                relations.append(rel(a, "imports", b))
    relations.append(rel("module:src/billing/m0.ts", "imports", "module:src/orders/m0.ts"))
    first = area_suggestions(relations)
    assert {s["label"] for s in first} == {"src/billing", "src/orders"}
    assert all(s["module_count"] == 4 for s in first)
    shuffled = relations[:]
    random.Random(1).shuffle(shuffled)
    assert area_suggestions(shuffled) == first


def test_communities_in_one_folder_are_one_suggestion_for_it() -> None:
    relations = []
    for group in ("a", "b"):  # two cliques that never import each other, in the same folder
        names = [f"module:src/ui/{group}{i}.ts" for i in range(3)]
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                relations.append(rel(first, "imports", second))
    suggestions = area_suggestions(relations)
    assert [(s["label"], s["module_count"]) for s in suggestions] == [("src/ui", 6)]
    assert suggestions[0]["reason"].startswith("6 modules cluster around src/ui;")
