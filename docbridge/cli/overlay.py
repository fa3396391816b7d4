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


DELTA_METRICS = ("hitAt1", "hitAt3", "meanReciprocalRank", "meanContextBytes", "meanApproxTokens", "zeroResultRate")
BLOCKING_METRIC = "hitAt3"  # the one metric an overlay must not lower


def retrieval_delta(root: Path, suite_path: Path, require_overlay: bool = True) -> dict[str, Any]:
    """The suite ranked over one snapshot without and with the overlay's live entries: both metric sets, a
    per-metric delta marked improved or worsened, the cases lost and gained at hit@3, and `regression` (status
    `regressed`) when hit@3 drops. The reference's names (`withoutOverlay`, `withOverlay`, `deltas`, `lostCases`,
    `gainedCases`, `regression`, `status`) and our earlier ones (`without`, `with`, `delta`, `lost`, `gained`,
    `hitAt3Dropped`) are both present. With `require_overlay`, no trusted overlay on disk is a usage error."""
    from docbridge.engine.agent import suites
    from docbridge.engine.base.overlay import overlay_path, read_overlay
    from docbridge.engine.retrieval.project import project
    from docbridge.engine.retrieval.rank import Retriever
    from docbridge.engine.views.snapshot import snapshot_of
    try:
        suite = suites.load_suite(suite_path)
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc
    overlay = read_overlay(root)
    if overlay is None and require_overlay:
        path = overlay_path(root)
        why = "does not exist" if not path.exists() else "cannot be used (see the warning above)"
        raise UsageError(f"{path}: no enrichment overlay to measure: the file {why}; run docbridge enrich first.")
    workspace = open_workspace(root)
    state = workspace.ensure_resolved()
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
    deltas = []
    for metric in DELTA_METRICS:
        change = round(m1[metric] - m0[metric], 6)
        lower_is_better = metric in suites.LOWER_IS_BETTER
        deltas.append({"metric": metric, "withoutOverlay": m0[metric], "withOverlay": m1[metric], "delta": change,
                       "improved": change < 0 if lower_is_better else change > 0,
                       "worsened": change > 0 if lower_is_better else change < 0})
    regression = any(d["worsened"] for d in deltas if d["metric"] == BLOCKING_METRIC)
    status = "regressed" if regression else "improved" if any(d["improved"] for d in deltas) else "unchanged"
    messages = []
    if regression:
        messages.append(f"The overlay lowered {BLOCKING_METRIC} from {m0[BLOCKING_METRIC]:.3f} to "
                        f"{m1[BLOCKING_METRIC]:.3f}. This is a finding about the agent, not a new baseline.")
    if lost:
        messages.append(f"Cases the overlay lost: {', '.join(lost)}.")
    if gained:
        messages.append(f"Cases the overlay gained: {', '.join(gained)}.")
    suite_info = {**results["with"]["suite"], "path": str(suite_path)}
    return {"suite": suite_info, "overlayHash": overlay.content_hash if overlay is not None else None,
            "status": status, "regression": regression, "withoutOverlay": m0, "withOverlay": m1, "deltas": deltas,
            "lostCases": lost, "gainedCases": gained, "messages": messages,
            "without": m0, "with": m1, "delta": {d["metric"]: d["delta"] for d in deltas},
            "gained": gained, "lost": lost, "hitAt3Dropped": regression,
            "ranks": {i: {"without": before.get(i), "with": after[i]} for i in sorted(after)
                      if before.get(i) != after[i]}}


def _shown(metric: str, value: float) -> str:
    return str(value) if metric in ("meanContextBytes", "meanApproxTokens") else f"{value:.3f}"


def render_delta(delta: dict[str, Any]) -> str:
    suite = delta["suite"]
    overlay = (delta["overlayHash"] or "none")[:12]
    lines = [f"Overlay retrieval delta: {delta['status']} (overlay {overlay}, suite {suite['name'] or suite['path']}, "
             f"{suite['caseCount']} case(s))"]
    for d in delta["deltas"]:
        mark = "improved" if d["improved"] else "worse" if d["worsened"] else "no change"
        sign = "+" if d["delta"] > 0 else ""
        lines.append(f"  {d['metric']}: {_shown(d['metric'], d['withoutOverlay'])} -> "
                     f"{_shown(d['metric'], d['withOverlay'])} ({sign}{_shown(d['metric'], d['delta'])}, {mark})")
    lines += [f"  {message}" for message in delta["messages"]]
    return "\n".join(lines) + "\n"
