"""`docbridge doctor`: how ready a repository's documentation is for agents, in three measured dimensions.

* **reachability** (15 points): the share of documents that are in the retrieval projection *and* can be
  reached by following links from an entry document (every Markdown file at the repository root,
  `docs/README.md`, `docs/index.md`, and the agent corpus index when configured). A document nothing links to
  is found only by a lucky search.
* **connectivity** (15 points): the share of areas with at least one covering or mentioning document, together
  with the share of documents with at least one edge to code (a mention of, or coverage of, a module, area or
  package) — one figure over both populations.
* **hit@3** (10 points): the retrieval benchmark on the golden suite (`--suite`, else `doctor.suite`);
  `not-analyzed` without one, and its points leave the total.

Score = points earned / points measured × 100 (one decimal). Grade A needs reachability 100 %, connectivity
≥ 80 % and hit@3 ≥ 80 % (so not without a suite) and a score ≥ 90; otherwise B ≥ 80, C ≥ 65, D ≥ 50, else F.
The top actions are the changes that would earn the most points, each naming the files to change.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.model import AREA, DOCUMENT, MODULE, PACKAGE, entity_id, split_id

if TYPE_CHECKING:
    from engine.workspace import Workspace

WEIGHTS = {"reachability": 15, "connectivity": 15, "hitAt3": 10}
GRADE_A = {"reachability": 1.0, "connectivity": 0.8, "hitAt3": 0.8}
MAX_ACTION_FILES = 5
CODE_KINDS = (MODULE, AREA, PACKAGE)


def entry_documents(ws: Workspace) -> list[str]:
    documents = ws.universe.documents
    entries = {p for p in documents if "/" not in p}
    entries |= {p for p in ("docs/README.md", "docs/index.md") if p in documents}
    index = ws.config.corpus.agent.index
    if index and index.removeprefix("./") in documents:
        entries.add(index.removeprefix("./"))
    return sorted(entries)


def reachability(ws: Workspace, projection: Any) -> dict[str, Any]:
    documents = sorted(ws.universe.documents.keys())
    links: dict[str, set[str]] = {}
    for path, resolution in ws.documents.items():
        links[path] = {split_id(r.target)[1] for r in resolution.relations
                       if r.kind == "links-to" and split_id(r.target)[0] == DOCUMENT}
    entries = entry_documents(ws)
    seen = set(entries)
    queue = deque(entries)
    while queue:
        for target in sorted(links.get(queue.popleft(), ())):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    in_projection = {e.path for e in projection.entries if e.kind == DOCUMENT}
    reachable = [d for d in documents if d in seen and d in in_projection] if entries else \
        [d for d in documents if d in in_projection]
    unreachable = [d for d in documents if d not in set(reachable)]
    return {"value": _share(len(reachable), len(documents)), "reachable": len(reachable), "total": len(documents),
            "entryDocuments": entries, "unreachable": unreachable}


def connectivity(ws: Workspace) -> dict[str, Any]:
    layout = ws.universe.layout
    assert layout is not None
    documented = ws.documented_by()
    areas = sorted(layout.areas)
    undocumented_areas = [a for a in areas if not documented.get(entity_id(AREA, a))
                          and not any(documented.get(entity_id(MODULE, m)) for m in layout.areas[a].modules)]
    isolated = []
    for path in sorted(ws.documents.keys()):
        resolution = ws.documents[path]
        if not any(split_id(r.target)[0] in CODE_KINDS for r in resolution.relations):
            isolated.append(path)
    total = len(areas) + len(ws.documents)
    linked = total - len(undocumented_areas) - len(isolated)
    return {"value": _share(linked, total), "areas": len(areas), "documentedAreas": len(areas) - len(
        undocumented_areas), "documents": len(ws.documents), "linkedDocuments": len(ws.documents) - len(isolated),
        "undocumentedAreas": undocumented_areas, "documentsWithoutCode": isolated}


def hit_at_3(retriever: Any, suite_path: Path | None, root: Path) -> dict[str, Any]:
    from engine import bench
    if suite_path is None:
        return {"value": None, "status": "not-analyzed", "reason": "no golden suite (--suite or doctor.suite)"}
    suite = bench.load_suite(suite_path)
    result = bench.run_retrieval_suite(retriever, suite)
    misses = [c for c in result["_cases"] if c["rank"] is None or c["rank"] > 3]
    expected = {c["id"]: c["expected"]["anyOf"] for c in suite["cases"]}
    return {"value": result["metrics"]["hitAt3"], "status": "analyzed", "suite": _relative(suite_path, root),
            "caseCount": result["suite"]["caseCount"],
            "misses": [{"id": c["id"], "input": c["input"], "rank": c["rank"], "expected": expected[c["id"]]}
                       for c in misses]}


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 1.0


def grade(dimensions: dict[str, dict[str, Any]]) -> tuple[float, str]:
    earned = measured = 0.0
    for name, weight in WEIGHTS.items():
        value = dimensions[name]["value"]
        if value is None:
            continue
        earned += weight * value
        measured += weight
    score = round(100 * earned / measured, 1) if measured else 0.0
    meets_a = all(dimensions[n]["value"] is not None and dimensions[n]["value"] >= bar for n, bar in GRADE_A.items())
    if meets_a and score >= 90:
        return score, "A"
    for bar, letter in ((80, "B"), (65, "C"), (50, "D")):
        if score >= bar:
            return score, letter
    return score, "F"


def actions(dimensions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    reach, conn, hit = dimensions["reachability"], dimensions["connectivity"], dimensions["hitAt3"]
    if reach["unreachable"]:
        entry = reach["entryDocuments"][0] if reach["entryDocuments"] else "README.md"
        gain = WEIGHTS["reachability"] * len(reach["unreachable"]) / max(reach["total"], 1)
        out.append({"dimension": "reachability", "points": round(gain, 1),
                    "action": f"Link {len(reach['unreachable'])} unreachable document(s) from `{entry}` or a document "
                              f"it links to.", "files": reach["unreachable"][:MAX_ACTION_FILES]})
    total = max(conn["areas"] + conn["documents"], 1)
    if conn["undocumentedAreas"]:
        out.append({"dimension": "connectivity",
                    "points": round(WEIGHTS["connectivity"] * len(conn["undocumentedAreas"]) / total, 1),
                    "action": "Mention these areas (or their modules) in the document that describes them.",
                    "files": conn["undocumentedAreas"][:MAX_ACTION_FILES]})
    if conn["documentsWithoutCode"]:
        out.append({"dimension": "connectivity",
                    "points": round(WEIGHTS["connectivity"] * len(conn["documentsWithoutCode"]) / total, 1),
                    "action": "Name the code these documents describe (a path in backticks, or `covers:`).",
                    "files": conn["documentsWithoutCode"][:MAX_ACTION_FILES]})
    if hit["status"] == "not-analyzed":
        out.append({"dimension": "hitAt3", "points": float(WEIGHTS["hitAt3"]),
                    "action": "Add a golden retrieval suite and name it in `doctor.suite` (grade A needs hit@3).",
                    "files": ["doc-bridge.config.json"]})
    elif hit["misses"]:
        files = sorted({t for miss in hit["misses"] for t in miss["expected"]})
        out.append({"dimension": "hitAt3",
                    "points": round(WEIGHTS["hitAt3"] * len(hit["misses"]) / max(hit["caseCount"], 1), 1),
                    "action": f"{len(hit['misses'])} case(s) of {hit['suite']} miss the top 3 "
                              f"({', '.join(m['id'] for m in hit['misses'][:5])}): describe the expected targets in "
                              f"words people search for.", "files": files[:MAX_ACTION_FILES]})
    out.sort(key=lambda a: (-a["points"], a["dimension"], a["action"]))
    return out


def run_doctor(ws: Workspace, projection: Any, retriever: Any, suite_path: Path | None, root: Path) -> dict[str, Any]:
    dimensions = {"reachability": reachability(ws, projection), "connectivity": connectivity(ws),
                  "hitAt3": hit_at_3(retriever, suite_path, root)}
    score, letter = grade(dimensions)
    return {"grade": letter, "score": score, "weights": WEIGHTS, "dimensions": dimensions,
            "actions": actions(dimensions)}


def render_text(report: dict[str, Any]) -> str:
    dims = report["dimensions"]
    reach, conn, hit = dims["reachability"], dims["connectivity"], dims["hitAt3"]
    lines = [f"grade {report['grade']}  (score {report['score']}/100)",
             f"  reachability  {reach['value'] * 100:.1f}%  ({reach['reachable']}/{reach['total']} documents reachable "
             f"from {', '.join(reach['entryDocuments']) or 'no entry document'})",
             f"  connectivity  {conn['value'] * 100:.1f}%  ({conn['documentedAreas']}/{conn['areas']} areas "
             f"documented, {conn['linkedDocuments']}/{conn['documents']} documents linked to code)"]
    if hit["status"] == "not-analyzed":
        lines.append(f"  hit@3         not-analyzed ({hit['reason']})")
    else:
        lines.append(f"  hit@3         {hit['value'] * 100:.1f}%  ({hit['caseCount']} cases in {hit['suite']})")
    if report["actions"]:
        lines.append("top actions:")
        for action in report["actions"][:5]:
            lines.append(f"  +{action['points']:<5} {action['action']}")
            for file in action["files"]:
                lines.append(f"          {file}")
    return "\n".join(lines) + "\n"


__all__ = ["GRADE_A", "WEIGHTS", "grade", "render_text", "run_doctor"]
