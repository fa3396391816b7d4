"""`docbridge map --html`: one self-contained HTML page (inline SVG, CSS and a little JS; nothing fetched at
view time) drawing packages and areas as nodes, area-to-area imports and document coverage as edges.

Undocumented areas and import cycles are highlighted; relations the model only guesses (fuzzy or proposed
mentions) are dashed, and so are the relations an agent proposed and a person (or policy) accepted in the
enrichment overlay while enrichment is on (each names its proposal ids under `accepted`). Each area links to its
generated page (`docbridge render area`) and lists its documents. The layout is computed here, deterministically:
documents in the first column, then one column per package.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import networkx as nx
from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE, split_id
from docbridge.engine.render import DEFAULT_OUTPUT
from docbridge.engine.render.views import page_file_name, project_name
from docbridge.engine.state.model_state import ModelState

NODE_W, NODE_H, ROW, COLUMN, MARGIN = 240, 36, 52, 330, 40
COVERING = ("covers", "mentions", "mentions-symbol")


def map_data(state: ModelState) -> dict[str, Any]:
    """Nodes and edges, sorted; what the page draws."""
    from docbridge.engine.views.reconcile import area_documentation, area_imports
    layout = state.universe.layout
    assert layout is not None
    documented = area_documentation(state).documents
    imports = area_imports(state)
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(layout.areas))
    graph.add_edges_from(sorted(imports))
    cyclic = {frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1}

    def in_cycle(a: str, b: str) -> bool:
        return any(a in c and b in c for c in cyclic)

    nodes: list[dict[str, Any]] = []
    for directory, package in sorted(layout.packages.items()):
        nodes.append({"id": package.id, "kind": "package", "label": package.name, "path": directory,
                      "package": package.id})
    area_docs: dict[str, set[str]] = {}
    edges: list[dict[str, Any]] = []
    guessed: dict[tuple[str, str, str], bool] = {}  # (document, area, kind) -> only fuzzy or proposed relations
    overlay_docs: set[str] = set()  # documents drawn only for an accepted proposed relation
    for document in sorted(state.documents.keys()):
        for relation in state.documents[document].relations:
            if relation.kind not in COVERING:
                continue
            kind, value = split_id(relation.target)
            area_path = value if kind == AREA else layout.module_area.get(value) if kind == MODULE else None
            if area_path is None or area_path not in layout.areas:
                continue
            area_docs.setdefault(area_path, set()).add(document)
            edge_kind = "covers" if relation.kind == "covers" else "mentions"
            key = (f"document:{document}", layout.areas[area_path].id, edge_kind)
            guessed[key] = guessed.get(key, True) and relation.confidence in ("fuzzy", "proposed")
    for (source, target, edge_kind), proposed in sorted(guessed.items()):
        edges.append({"source": source, "target": target, "kind": edge_kind, "proposed": proposed})
    for edge in _overlay_edges(state, set(guessed)):  # accepted agent proposals: drawn dashed, as proposed
        edges.append(edge)
        overlay_docs.update(split_id(end)[1] for end in (edge["source"], edge["target"])
                            if split_id(end)[0] == DOCUMENT)
    for path, area in sorted(layout.areas.items()):
        docs = sorted(documented.get(path, set()) | area_docs.get(path, set()))
        nodes.append({"id": area.id, "kind": "area", "label": path, "path": path, "package": area.package_id,
                      "documents": docs, "undocumented": not documented.get(path), "modules": len(area.modules),
                      "page": f"{DEFAULT_OUTPUT['area']}/{page_file_name(path)}"})
        if area.package_id:
            edges.append({"source": area.package_id, "target": area.id, "kind": "contains", "proposed": False})
    for document in sorted({d for docs in area_docs.values() for d in docs} | overlay_docs):
        facts = state.universe.documents.get(document)
        nodes.append({"id": f"document:{document}", "kind": "document", "label": document, "path": document,
                      "title": facts.title if facts is not None and facts.title else document})
    for (source, target), evidence in sorted(imports.items()):
        edges.append({"source": layout.areas[source].id, "target": layout.areas[target].id, "kind": "imports",
                      "count": len(evidence), "cycle": in_cycle(source, target), "proposed": False})
    edges.sort(key=lambda e: (e["kind"], e["source"], e["target"]))
    return {"project": project_name(state), "nodes": nodes, "edges": edges}


def _overlay_edges(state: ModelState, observed: set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The enrichment overlay's live accepted `propose-relation` entries (while enrichment is on: what search reads
    too), each between the map's nodes for its endpoints: a document as itself, a module as its area, an area or a
    package as itself. A relation with an endpoint the map does not draw, within one node, or already observed
    between the same nodes with the same kind is left out. The observed model is not changed: an area documented
    only by a proposal stays undocumented."""
    from docbridge.engine.base.overlay import enabled, live_entries, read_overlay
    from docbridge.engine.views.snapshot import snapshot_of
    if not enabled(state.config):
        return []
    overlay = read_overlay(state.root)
    if overlay is None:
        return []
    live, _expired = live_entries(overlay, snapshot_of(state).entities)
    layout = state.universe.layout
    assert layout is not None

    def node(entity: Any) -> str | None:
        if not isinstance(entity, str) or ":" not in entity:
            return None
        kind, value = split_id(entity)
        if kind == DOCUMENT:
            return entity if value in state.universe.documents else None
        if kind == MODULE:
            area = layout.module_area.get(value)
            return layout.areas[area].id if area is not None and area in layout.areas else None
        if kind == AREA:
            return entity if value in layout.areas else None
        if kind == PACKAGE:
            package = layout.package_by_id(entity)
            return package.id if package is not None else None
        return None

    found: dict[tuple[str, str, str], list[str]] = {}
    for entry in live:
        payload = entry.get("payload")
        if entry.get("kind") != "propose-relation" or not isinstance(payload, dict):
            continue
        source, target, kind = node(payload.get("from")), node(payload.get("to")), payload.get("kind")
        if source is None or target is None or source == target or not isinstance(kind, str) or not kind:
            continue
        key = (source, target, kind)
        if key not in observed:
            found.setdefault(key, []).append(str(entry.get("proposalId")))
    return [{"source": source, "target": target, "kind": kind, "proposed": True, "accepted": sorted(ids)}
            for (source, target, kind), ids in sorted(found.items())]


def _positions(nodes: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    columns: dict[str, list[dict[str, Any]]] = {"": []}
    for node in nodes:
        if node["kind"] == "document":
            columns[""].append(node)
        else:
            columns.setdefault(node.get("package") or "~", []).append(node)
    out: dict[str, tuple[int, int]] = {}
    index = 0
    for name in sorted(columns):
        column = sorted(columns[name], key=lambda n: (n["kind"] != "package", n["path"]))
        if not column:
            continue
        for row, node in enumerate(column):
            out[node["id"]] = (MARGIN + index * COLUMN, MARGIN + 30 + row * ROW)
        index += 1
    return out


def map_html(state: ModelState, output: Path) -> str:
    data = map_data(state)
    positions = _positions(data["nodes"])
    width = max((x for x, _ in positions.values()), default=0) + NODE_W + 2 * MARGIN
    height = max((y for _, y in positions.values()), default=0) + NODE_H + 2 * MARGIN
    base = output.parent.resolve()
    parts: list[str] = []
    for edge in data["edges"]:
        if edge["source"] not in positions or edge["target"] not in positions:
            continue
        (x1, y1), (x2, y2) = positions[edge["source"]], positions[edge["target"]]
        if x1 == x2:  # same column: a curve on the right-hand side
            sx, sy, ex, ey = x1 + NODE_W, y1 + NODE_H // 2, x2 + NODE_W, y2 + NODE_H // 2
            bend = 60 + abs(y2 - y1) // 6
            d = f"M{sx},{sy} C{sx + bend},{sy} {ex + bend},{ey} {ex},{ey}"
        else:
            forward = x2 > x1
            sx, ex = (x1 + NODE_W, x2) if forward else (x1, x2 + NODE_W)
            sy, ey = y1 + NODE_H // 2, y2 + NODE_H // 2
            mid = (sx + ex) // 2
            d = f"M{sx},{sy} C{mid},{sy} {mid},{ey} {ex},{ey}"
        classes = ["edge", edge["kind"]] + (["cycle"] if edge.get("cycle") else []) + (
            ["proposed"] if edge.get("proposed") else [])
        title = f"{edge['source']} {edge['kind']} {edge['target']}" + (
            f" ({edge['count']} imports)" if "count" in edge else "") + (
            " (proposed by an agent, accepted: " + ", ".join(edge["accepted"]) + ")" if edge.get("accepted") else "")
        parts.append(f'<path class="{html.escape(" ".join(classes))}" d="{d}" '
                     f'data-source="{html.escape(edge["source"])}" data-target="{html.escape(edge["target"])}">'
                     f'<title>{html.escape(title)}</title></path>')
    for node in data["nodes"]:
        x, y = positions[node["id"]]
        classes = ["node", node["kind"]] + (["undocumented"] if node.get("undocumented") else [])
        label = node["label"] if len(node["label"]) <= 34 else "…" + node["label"][-33:]
        inner = (f'<rect width="{NODE_W}" height="{NODE_H}" rx="6"/><text x="10" y="23">{html.escape(label)}</text>'
                 f'<title>{html.escape(node.get("title") or node["label"])}</title>')
        group = (f'<g class="{" ".join(classes)}" transform="translate({x},{y})" data-id="{html.escape(node["id"])}" '
                 f'tabindex="0">{inner}</g>')
        if node["kind"] == "area":
            href = os.path.relpath(state.root / node["page"], base).replace(os.sep, "/")
            group = f'<a href="{html.escape(href)}">{group}</a>'
        parts.append(group)
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False).replace("</", "<\\/")
    title = html.escape(f"{data['project']}: areas, imports and documentation")
    return _PAGE.format(title=title, width=width, height=height, svg="\n".join(parts), data=payload)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 0; display: flex; color: #1f2328; }}
main {{ flex: 1; overflow: auto; }}
aside {{ width: 320px; border-left: 1px solid #d0d7de; padding: 12px 16px; background: #f6f8fa; }}
h1 {{ font-size: 16px; margin: 12px 16px 0; }}
.legend span {{ margin-right: 12px; }}
.node rect {{ fill: #fff; stroke: #57606a; stroke-width: 1.5; }}
.node.package rect {{ fill: #ddf4ff; stroke: #0969da; }}
.node.document rect {{ fill: #f6f8fa; stroke: #8c959f; }}
.node.undocumented rect {{ fill: #ffebe9; stroke: #cf222e; stroke-width: 2.5; }}
.node.selected rect {{ stroke: #8250df; stroke-width: 3; }}
.node text {{ font-size: 12px; fill: #1f2328; }}
.edge {{ fill: none; stroke: #8c959f; stroke-width: 1.2; opacity: .75; }}
.edge.imports {{ stroke: #0969da; stroke-width: 2; }}
.edge.imports.cycle {{ stroke: #cf222e; stroke-width: 3; }}
.edge.covers {{ stroke: #1a7f37; }}
.edge.contains {{ stroke: #d0d7de; }}
.edge.proposed {{ stroke-dasharray: 6 4; }}
.edge.dim {{ opacity: .12; }}
</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p class="legend" style="margin: 4px 16px">
<span style="color:#0969da">— imports</span><span style="color:#cf222e">— import cycle</span>
<span style="color:#1a7f37">— covers</span><span>- - proposed or fuzzy</span>
<span style="color:#cf222e">▭ undocumented area</span></p>
<svg id="map" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
{svg}
</svg>
</main>
<aside id="details"><p>Select a node to see its documents.</p></aside>
<script id="map-data" type="application/json">{data}</script>
<script>
(function () {{
  "use strict";
  var data = JSON.parse(document.getElementById("map-data").textContent);
  var byId = {{}};
  data.nodes.forEach(function (n) {{ byId[n.id] = n; }});
  var details = document.getElementById("details");
  function text(tag, value) {{ var e = document.createElement(tag); e.textContent = value; return e; }}
  function select(id) {{
    var node = byId[id];
    document.querySelectorAll(".node").forEach(function (g) {{
      g.classList.toggle("selected", g.getAttribute("data-id") === id);
    }});
    document.querySelectorAll(".edge").forEach(function (p) {{
      var touches = p.getAttribute("data-source") === id || p.getAttribute("data-target") === id;
      p.classList.toggle("dim", !touches);
    }});
    details.replaceChildren(text("h2", node.label), text("p", node.kind + (node.undocumented ?
      ": no document covers or mentions it" : "")));
    if (node.documents) {{
      var list = document.createElement("ul");
      node.documents.forEach(function (d) {{ list.appendChild(text("li", d)); }});
      details.appendChild(text("h3", node.documents.length + " document(s)"));
      details.appendChild(list);
    }}
  }}
  document.querySelectorAll(".node").forEach(function (g) {{
    g.addEventListener("mouseenter", function () {{ select(g.getAttribute("data-id")); }});
    g.addEventListener("focus", function () {{ select(g.getAttribute("data-id")); }});
  }});
  document.body.setAttribute("data-ready", String(data.nodes.length));
}})();
</script>
</body>
</html>
"""
