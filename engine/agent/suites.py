"""Retrieval suites: load one, run it against a retriever, score it (hit@1, hit@3, MRR, context cost, tokens to the
first evidence), seal a baseline and compare with it. `docbridge bench retrieval`, `doctor` and `enrich`'s
overlay check run suites through this module."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from docbridge.engine.base.budget import APPROXIMATE, TokenCounter


def _percentile(values: list[Any], q: float) -> Any:
    """Nearest-rank percentile; None sorts above every number (a case never satisfied)."""
    if not values:
        return 0.0
    ordered = sorted(values, key=lambda v: (v is None, v if v is not None else 0))
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


BASELINE_TYPE = "retrieval-benchmark-baseline"
METRIC_KEYS = ("caseCount", "hitAt1", "hitAt3", "meanReciprocalRank", "zeroResultRate", "meanContextBytes",
               "meanApproxTokens", "neverSatisfiedRate")
LOWER_IS_BETTER = ("zeroResultRate", "meanContextBytes", "meanApproxTokens", "neverSatisfiedRate")
AGENT_BUDGET = 300  # the agent's search call: `search --agent --context-budget 300`
AGENT_MAX_FILES = 10  # results an agent reads before giving up


class BenchError(Exception):
    """A suite or baseline that cannot be used (exit 2)."""


def configured_suite(root: Path, configured: str) -> Path:
    """The golden suite `doctor.suite` names: a file inside the repository, which decides only what lies inside
    it (a link leading out is refused too); a BenchError naming the key otherwise."""
    from docbridge.engine.base.safe_io import resolved_inside
    where = f"doc-bridge.config.json: doctor.suite names {configured!r}"
    try:
        resolved = resolved_inside(root, configured)
        exists = resolved is not None and resolved.is_file()
    except (OSError, ValueError, RuntimeError):  # a NUL character, a link loop
        raise BenchError(f"{where}, which is not a usable path.") from None
    if resolved is None:
        raise BenchError(f"{where}, which is outside the repository; the configuration names only the "
                         "repository's own files (pass another suite with --suite).")
    if not exists:
        raise BenchError(f"{where}, which does not exist.")
    return resolved


def load_suite(path: Path) -> dict[str, Any]:
    from docbridge.engine.base.safe_io import read_named_file
    try:
        suite = json.loads(read_named_file(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:  # missing, unreadable, a FIFO or a device, not UTF-8
        raise BenchError(f"cannot read suite {path}: {exc.strerror if isinstance(exc, OSError) else exc}.") from exc
    except RecursionError:
        raise BenchError(f"{path}: the suite is nested too deeply to read.") from None
    except json.JSONDecodeError as exc:
        raise BenchError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from exc
    if not isinstance(suite, dict) or suite.get("version") != 1 or not isinstance(suite.get("cases"), list):
        raise BenchError(f"{path}: a suite is {{\"version\": 1, \"name\": ..., \"cases\": [...]}}.")
    seen: set[str] = set()
    for index, case in enumerate(suite["cases"]):
        where = f"{path}: cases[{index}]"
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not isinstance(case.get("input"), str):
            raise BenchError(f"{where} needs a string `id` and a string `input`.")
        targets = (case.get("expected") or {}).get("anyOf")
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise BenchError(f"{where} ({case['id']}): `expected.anyOf` must be a non-empty list of ids or paths.")
        if case["id"] in seen:
            raise BenchError(f"{where}: duplicate case id {case['id']!r}.")
        seen.add(case["id"])
    return suite


def _suite_hash(suite: dict[str, Any]) -> str:
    from docbridge.engine.base.hashing import canonical_hash
    return canonical_hash(suite)


HELD_OUT = "heldout"  # metadata.split of the cases a suite keeps back: reported, never tuned on


def run_retrieval_suite(retriever: Any, suite: dict[str, Any], root: Path | None = None,
                        counter: TokenCounter = APPROXIMATE) -> dict[str, Any]:
    """Rank every case; rank = 1-based position of the first result whose id or path is a target (top 10).
    With `root`, also the tokens an agent spends until its first correct evidence (`_first_evidence`), counted
    with `counter` (the characters / 4 estimate unless the exact counter is asked for)."""
    cases = []
    reader = _Reader(root, counter) if root is not None else None
    known = {e.id for e in retriever.entries} | {e.path for e in retriever.entries}
    unreachable: dict[str, list[str]] = {}
    overlapping: dict[str, list[str]] = {}  # paraphrase cases that share a word with their answer's name
    for case in suite["cases"]:
        targets = {t.strip().removeprefix("./").rstrip("/") for t in case["expected"]["anyOf"]}
        if not targets & known:  # no expected answer is an entry of the index: no ranking can find it
            unreachable[case["id"]] = sorted(targets)
        if (case.get("metadata") or {}).get("class") == "paraphrase":
            answers = [e for e in retriever.entries if e.id in targets or e.path in targets]
            shared = _shared_words(case["input"], answers)
            if shared:
                overlapping[case["id"]] = shared
        results = retriever.search(case["input"], 20)
        rank = next((i for i, r in enumerate(results[:10], start=1)
                     if r.entry.id in targets or r.entry.path in targets), None)
        top = [{"kind": r.entry.kind, "id": r.entry.id, "path": r.entry.path,
                **({"summary": r.entry.summary} if r.entry.summary else {})} for r in results[:3]]
        context = len(json.dumps(top, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        metadata = case.get("metadata") or {}
        row = {"id": case["id"], "input": case["input"], "kind": metadata.get("kind", "unknown"),
               "lang": metadata.get("lang", "unknown"), "split": metadata.get("split", "tune"), "rank": rank,
               "results": len(results),
               "top": [r.entry.id for r in results[:3]], "contextBytes": context}
        if counter is not APPROXIMATE:
            row["contextTokens"] = counter.count(json.dumps(top, separators=(",", ":"), ensure_ascii=False))
        if reader is not None:
            row["tokensToFirstEvidence"] = _first_evidence(retriever, reader, case["input"], targets)
        cases.append(row)
    keys = ("id", "split", "rank", "top") + (("tokensToFirstEvidence",) if reader is not None else ())
    return {"suite": {"name": suite.get("name", ""), "caseCount": len(cases), "contentHash": _suite_hash(suite)},
            "metrics": _metrics(cases, counter), "byKind": _grouped(cases, "kind", counter),
            "byLang": _grouped(cases, "lang", counter), "bySplit": _grouped(cases, "split", counter),
            "cases": [{k: c[k] for k in keys} for c in cases],
            **({"unreachable": unreachable} if unreachable else {}),
            **({"paraphraseOverlap": overlapping} if overlapping else {}),
            "_cases": cases}


def _listed(found: dict[str, str], held: set[str]) -> list[str]:
    """`case: detail` lines for the tuning cases; the held-out ones counted (their answers are not shown)."""
    lines = [f"  {case}: {detail}" for case, detail in found.items() if case not in held]
    hidden = sum(1 for case in found if case in held)
    if hidden:
        lines.append(f"  and {hidden} held-out case{'s' if hidden != 1 else ''} (--json has them)")
    return lines


def _shared_words(question: str, answers: list[Any]) -> list[str]:
    """The tokens a paraphrase case's question shares with its answers' paths and titles: a paraphrase shares
    none (it describes the behaviour; the answer names the concept)."""
    from docbridge.engine.base.lexicon import tokens
    said = set(tokens(question))
    named = {t for entry in answers for t in tokens(f"{entry.path} {entry.title}")}
    return sorted(said & named)


class _Reader:
    """What an agent reads to check a result, in characters: a file's text; for a directory-shaped result
    (area, package, directory) the README or index in it, else the listing of its entries."""

    def __init__(self, root: Path, counter: TokenCounter = APPROXIMATE) -> None:
        self.root = root
        self.counter = counter
        self.cache: dict[str, int] = {}

    def cost(self, path: str) -> int:
        cached = self.cache.get(path)
        if cached is None:
            cached = self.cache[path] = self._measure(path)
        return cached

    def _measure(self, path: str) -> int:
        """The counter's units for what is read at `path` (characters for the estimate)."""
        target = self.root / path
        try:
            if target.is_file():
                return self.counter.measure(target.read_text(encoding="utf-8", errors="replace"))
            if target.is_dir():
                for name in ("README.md", "readme.md", "index.md"):
                    if (target / name).is_file():
                        return self.counter.measure((target / name).read_text(encoding="utf-8", errors="replace"))
                return self.counter.measure("".join(child.name + "\n" for child in sorted(target.iterdir())))
        except OSError:
            pass
        return 0


def _first_evidence(retriever: Any, reader: _Reader, query: str, targets: set[str]) -> int | None:
    """Tokens (characters / 4, or the exact counter's) an agent spends before it holds a correct answer: the
    printed `search --agent --context-budget 300` payload, then every wrong result it reads, in ranked order,
    before the first right one; None when none of the first ten results is right."""
    from docbridge.engine.agent.payloads import agent_search, render_agent
    from docbridge.engine.base.budget import BudgetError
    try:
        spent = reader.counter.measure(render_agent(agent_search(retriever, query, "discovery", AGENT_BUDGET)))
    except BudgetError:
        return None
    for result in retriever.search(query, 20, agent=True)[:AGENT_MAX_FILES]:
        if result.entry.id in targets or result.entry.path in targets:
            return reader.counter.finish(spent)
        spent += reader.cost(result.entry.path)
    return None


def first_evidence_cost(retriever: Any, root: Path, query: str, targets: set[str],
                        counter: TokenCounter = APPROXIMATE) -> int | None:
    """`_first_evidence` for one query (the study's per-case figure)."""
    return _first_evidence(retriever, _Reader(root, counter), query, targets)


def first_evidence_summary(spent: list[int | None]) -> dict[str, Any]:
    """Percentiles of tokens to first evidence (nearest rank; a case never satisfied sorts above every number, so
    a percentile that lands on one is None)."""
    return {"median": _percentile(spent, 0.5), "p75": _percentile(spent, 0.75), "p95": _percentile(spent, 0.95)}


def _metrics(cases: list[dict[str, Any]], counter: TokenCounter = APPROXIMATE) -> dict[str, Any]:
    n = len(cases) or 1
    metrics: dict[str, Any] = {
        "caseCount": len(cases),
        "hitAt1": round(sum(1 for c in cases if c["rank"] == 1) / n, 6),
        "hitAt3": round(sum(1 for c in cases if c["rank"] and c["rank"] <= 3) / n, 6),
        "meanReciprocalRank": round(sum(1 / c["rank"] for c in cases if c["rank"]) / n, 6),
        "zeroResultRate": round(sum(1 for c in cases if c["results"] == 0) / n, 6),
        "meanContextBytes": round(sum(c["contextBytes"] for c in cases) / n),
        "meanApproxTokens": round(sum(math.ceil(c["contextBytes"] / 4) for c in cases) / n),
    }
    if counter is not APPROXIMATE:
        metrics["meanTokens"] = round(sum(c["contextTokens"] for c in cases) / n)
    metrics["tokenMethod"] = counter.method
    if cases and "tokensToFirstEvidence" in cases[0]:
        # a case never satisfied counts as more than any satisfied one: a percentile that lands on it is None
        spent = [c["tokensToFirstEvidence"] for c in cases]
        metrics["tokensToFirstEvidence"] = first_evidence_summary(spent)
        metrics["tokensToFirstEvidenceP95"] = metrics["tokensToFirstEvidence"]["p95"]  # the study's name
        metrics["neverSatisfiedRate"] = round(sum(1 for v in spent if v is None) / n, 6)
    return metrics


def _grouped(cases: list[dict[str, Any]], key: str, counter: TokenCounter = APPROXIMATE) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        groups.setdefault(case[key], []).append(case)
    return {name: _metrics(members, counter) for name, members in sorted(groups.items())}


def seal_baseline(result: dict[str, Any], by: str, reason: str | None) -> dict[str, Any]:
    from docbridge.engine.base.hashing import canonical_hash
    if not by.strip():
        raise BenchError("A retrieval baseline needs an approver: pass --by NAME.")
    baseline = {"type": BASELINE_TYPE, "version": 1, "suite": result["suite"], "metrics": result["metrics"],
                "byKind": result["byKind"], "byLang": result["byLang"],
                "approval": {"by": by.strip(), "reason": (reason or "").strip()}}
    baseline["contentHash"] = canonical_hash(baseline)
    return baseline


def read_baseline(path: Path) -> dict[str, Any]:
    from docbridge.engine.base.hashing import canonical_hash
    from docbridge.engine.base.safe_io import read_named_file
    try:
        baseline = json.loads(read_named_file(path).decode("utf-8"))
    except FileNotFoundError as exc:
        raise BenchError(f"baseline {path} does not exist; create it with --update-baseline --by NAME.") from exc
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise BenchError(f"baseline {path} cannot be read: {exc}") from exc
    if not isinstance(baseline, dict) or baseline.get("type") != BASELINE_TYPE:
        raise BenchError(f"{path} is not a retrieval benchmark baseline.")
    body = {k: v for k, v in baseline.items() if k != "contentHash"}
    if canonical_hash(body) != baseline.get("contentHash"):
        raise BenchError(f"baseline {path} does not match its content hash: it was edited by hand. Regenerate it "
                         f"with --update-baseline --by NAME --reason TEXT.")
    return baseline


def compare(result: dict[str, Any], baseline: dict[str, Any], tolerance: float = 0.0) -> dict[str, Any]:
    if result["suite"]["contentHash"] != baseline["suite"]["contentHash"]:
        return {"status": "suite-changed", "blocking": True,
                "regressions": ["The suite changed since the baseline was approved; review the results and record a "
                                "new baseline with --update-baseline --by NAME --reason TEXT."],
                "warnings": [], "improvements": [], "deltas": {}}
    deltas, regressions, warnings, improvements = {}, [], [], []
    for key in METRIC_KEYS[1:]:
        if key not in result["metrics"] or key not in baseline["metrics"]:
            continue  # a figure the baseline predates (or a run without a root to read files from)
        delta = round(result["metrics"][key] - baseline["metrics"][key], 6)
        deltas[key] = delta
        worse = delta > 0 if key in LOWER_IS_BETTER else delta < 0
        better = delta < 0 if key in LOWER_IS_BETTER else delta > 0
        if key == "hitAt3" and worse and -delta > tolerance:
            regressions.append(f"hitAt3 fell from {baseline['metrics'][key]} to {result['metrics'][key]}.")
        elif worse and delta != 0:
            warnings.append(f"{key} moved from {baseline['metrics'][key]} to {result['metrics'][key]}.")
        elif better:
            improvements.append(f"{key} improved from {baseline['metrics'][key]} to {result['metrics'][key]}.")
    status = "regressed" if regressions else "pass"
    return {"status": status, "blocking": bool(regressions), "regressions": regressions, "warnings": warnings,
            "improvements": improvements, "deltas": deltas}


def render_retrieval_text(result: dict[str, Any]) -> str:
    lines = [f"Suite {result['suite']['name']!r}: {result['suite']['caseCount']} cases"]
    agent = "tokensToFirstEvidence" in result["metrics"]
    header = (f"{'group':<15} {'cases':>5} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'zero':>5} {'ctx bytes':>9} "
              f"{'tokens':>6}" + (f" {'1st evidence p50/p75/p95':>25} {'never':>6}" if agent else ""))
    lines.append(header)

    def row(name: str, m: dict[str, Any]) -> str:
        line = (f"{name:<15} {m['caseCount']:>5} {m['hitAt1']:>6.3f} {m['hitAt3']:>6.3f} "
                f"{m['meanReciprocalRank']:>6.3f} {m['zeroResultRate']:>5.2f} {m['meanContextBytes']:>9} "
                f"{m.get('meanTokens', m['meanApproxTokens']):>6}")  # the exact count when there is one
        if agent:
            spent = m["tokensToFirstEvidence"]
            shown = "/".join("-" if v is None else str(v) for v in (spent["median"], spent["p75"], spent["p95"]))
            line += f" {shown:>25} {m['neverSatisfiedRate']:>6.2f}"
        return line

    lines.append(row("all", result["metrics"]))
    for group in ("byKind", "byLang", "bySplit"):
        for name, metrics in result.get(group, {}).items():
            lines.append(row(f"{group[2:].lower()}:{name}", metrics))
    held = {c["id"] for c in result["cases"] if c.get("split") == HELD_OUT}
    misses = [c for c in result["cases"] if c["rank"] != 1 and c["id"] not in held]
    held_misses = sum(1 for c in result["cases"] if c["rank"] != 1 and c["id"] in held)
    if misses or held_misses:
        lines.append("")
        lines.append("Cases not ranked first:")
        for case in misses:
            lines.append(f"  {case['id']}: rank {case['rank'] or '-'}; top: {', '.join(case['top']) or 'nothing'}")
    if held_misses:
        lines.append(f"  {'and ' if misses else ''}{held_misses} held-out case{'s' if held_misses != 1 else ''} (not "
                     "listed: a held-out part is read only to report; --json has them)")
    if agent:
        lines.append("")
        method = result["metrics"].get("tokenMethod", "approximate")
        how = "characters / 4" if method == "approximate" else method
        lines.append(f"1st evidence: tokens an agent spends on `search --agent --context-budget {AGENT_BUDGET}` and "
                     f"on the wrong results it reads before the right one ({how}); never: no right result "
                     f"among the first {AGENT_MAX_FILES}.")
    if result.get("unreachable"):
        lines.append("")
        lines.append("Expected answers that are not entries of the index (no ranking can find them; check the suite):")
        lines.extend(_listed({case: ", ".join(targets) for case, targets in result["unreachable"].items()}, held))
    if result.get("paraphraseOverlap"):
        lines.append("")
        lines.append("Paraphrase cases that share a word with their answer's path or title (not paraphrases):")
        lines.extend(_listed({case: ", ".join(words) for case, words in result["paraphraseOverlap"].items()}, held))
    comparison = result.get("comparison")
    if comparison:
        lines.append("")
        lines.append(f"Baseline: {comparison['status']}")
        for text in comparison["regressions"] + comparison["warnings"] + comparison["improvements"]:
            lines.append(f"  {text}")
    return "\n".join(lines) + "\n"


