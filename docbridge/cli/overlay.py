"""The enrichment overlay as the deterministic commands read it: its findings (`check --enrich`) and how it moves a
retrieval suite (`enrich --retrieval-delta`, `bench retrieval --overlay`). Nothing here runs the agent command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docbridge.cli.common import UsageError, open_workspace


def overlay_findings(root: Path, entities: dict[str, Any]) -> list[dict[str, Any]]:
    """The overlay's findings, labelled as such: accepted gaps, and pending contradictions and redundancies."""
    from docbridge.engine.base.overlay import expired_reason, read_overlay
    overlay = read_overlay(root)
    if overlay is None:
        return []
    out = []
    for status, entries in (("accepted", overlay.accepted), ("pending", overlay.pending)):
        for entry in entries:
            if entry.get("kind") not in ("flag-gap", "flag-contradiction", "flag-redundancy"):
                continue
            if status == "accepted" and expired_reason(entry, entities) is not None:
                continue
            evidence = (entry.get("evidence") or [{}])[0]
            payload = entry.get("payload") or {}
            message = {"flag-gap": f"gap in {payload.get('area')}: {payload.get('missing')}",
                       "flag-contradiction": f"contradicts {payload.get('against')}: {payload.get('claim')}",
                       "flag-redundancy": f"duplicates {payload.get('with')}"}[entry["kind"]]
            out.append({"source": "enrichment-overlay", "code": entry["kind"], "status": status,
                        "proposalId": entry["proposalId"], "entity": entry.get("entity"),
                        "path": evidence.get("path"), "line": evidence.get("lineStart"), "message": message})
    return sorted(out, key=lambda f: (f["path"] or "", f["line"] or 0, f["code"], f["proposalId"]))


def retrieval_delta(root: Path, suite_path: Path) -> dict[str, Any]:
    """The suite ranked without and with the overlay's live entries: metrics of both, lost and gained cases."""
    from docbridge.engine.agent import suites
    from docbridge.engine.retrieval.project import project
    from docbridge.engine.retrieval.rank import Retriever
    try:
        suite = suites.load_suite(suite_path)
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc
    workspace = open_workspace(root)
    state = workspace.ensure_resolved()
    from docbridge.engine.views.snapshot import snapshot_of
    snapshot = snapshot_of(state)
    results = {}
    for name, flag in (("without", False), ("with", True)):
        result = suites.run_retrieval_suite(Retriever(project(state, snapshot, overlay=flag)), suite)
        result.pop("_cases")
        results[name] = result
    before = {c["id"]: c["rank"] for c in results["without"]["cases"]}
    after = {c["id"]: c["rank"] for c in results["with"]["cases"]}

    def hit(rank: int | None) -> bool:
        return rank is not None and rank <= 3
    gained = sorted(i for i in after if hit(after[i]) and not hit(before.get(i)))
    lost = sorted(i for i in after if hit(before.get(i)) and not hit(after[i]))
    m0, m1 = results["without"]["metrics"], results["with"]["metrics"]
    return {"suite": str(suite_path), "without": m0, "with": m1,
            "delta": {k: round(m1[k] - m0[k], 6) for k in ("hitAt1", "hitAt3", "meanReciprocalRank")},
            "gained": gained, "lost": lost, "hitAt3Dropped": m1["hitAt3"] < m0["hitAt3"],
            "ranks": {i: {"without": before.get(i), "with": after[i]} for i in sorted(after)
                      if before.get(i) != after[i]}}


def render_delta(delta: dict[str, Any]) -> str:
    d = delta["delta"]
    lines = [f"Retrieval delta with the overlay ({delta['suite']}): hit@1 {d['hitAt1']:+.3f}, "
             f"hit@3 {d['hitAt3']:+.3f}, MRR {d['meanReciprocalRank']:+.3f}",
             f"  hit@3 {delta['without']['hitAt3']:.3f} -> {delta['with']['hitAt3']:.3f}"]
    lines += [f"  gained: {case}" for case in delta["gained"]]
    lines += [f"  lost:   {case}" for case in delta["lost"]]
    if delta["hitAt3Dropped"]:
        lines.append("  hit@3 dropped: the overlay makes search worse")
    return "\n".join(lines) + "\n"
