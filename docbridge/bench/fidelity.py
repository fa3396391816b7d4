"""`docbridge bench fidelity`: is what `check` reports true, and do mentions in real documentation lead to the
declaration a reader expects?

A corpus (`bench/fidelity/corpus.json`) names public repositories pinned at a commit; their checkouts live
outside the tree (`REAL_REPOS`, one directory per repository). Per repository:

- `findings.json`: labels for a sample of `check`'s findings, each keyed by code and location. The sample is
  the bottom-k of each code's findings by a hash of the key, so it is a uniform random sample that stays put
  when other findings come or go; `--todo` adds stubs for sampled findings nobody labelled yet.
- `mentions.json`: spans of the documentation (1-based line and column of the span's first character) that a
  reader expects to jump to a declaration (`expect`: a path, optionally a 1-based line; a path ending in `/`
  accepts any file under it; a list accepts any of several), and spans that must lead nowhere
  (`expect: null`).

The report gives precision (true / labelled) by code and by the class of false finding, how many labelled true
findings are no longer reported, and mention results (correct, wrong, none, false-link) per repository and in
total. A sealed baseline fails the run when precision or correct mentions drop.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLE_PER_CODE = 8  # each code's share of the sample before the sample is topped up to SAMPLE_MINIMUM
SAMPLE_MINIMUM = 30
VERDICTS = ("true", "false")
FALSE_CLASSES = {
    "generated": "generated code or snapshots counted as declarations or source",
    "non-source": "examples, tests, playgrounds, fixtures, demos, templates or the docs site's code treated as "
                  "library source",
    "html-anchor": "an HTML `id`/`name` anchor not counted as a link target",
    "site-routing": "a documentation-site convention (MDX, slug/id, @site, versioned docs, srcDir, rewrites, "
                    "generated headings, navigation) not modelled",
    "external": "text that names something outside the repository (another repository, the reader's own app, "
                "a package that is not here) read as local",
    "history": "a changelog, release note or migration guide describing a past state",
    "same-name": "several real declarations of one name where context decides, or two packages that really "
                 "export the same API",
    "parse-error": "a declaration lost to a parse error",
    "type-only": "a cycle or relation made of type-only imports",
    "colocated": "documentation next to the code it documents not recognised",
    "not-actionable": "true to the letter but nothing a documentation change could or should fix",
    "other": "anything else (say what in the note)",
}
MENTION_OUTCOMES = ("correct", "wrong", "none", "false-link", "no-link")


class FidelityError(Exception):
    """A corpus, label or suite file that cannot be used, or a checkout that is missing or at another commit."""


# ------------------------------------------------------------------------------------------------ findings


def finding_key(finding: Any) -> str:
    """What a label is keyed by: the code and where the finding sits (1-based), or its entity when it has no
    file."""
    start = finding.range.start if finding.range is not None else None
    where = f"{finding.path}:{start.line + 1}:{start.character + 1}" if finding.path and start is not None \
        else (finding.path or finding.entity or "(repository)")
    return f"{finding.code} {where}"


def _rank(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def sample_keys(keys_by_code: dict[str, list[str]], per_code: int = SAMPLE_PER_CODE,
                minimum: int = SAMPLE_MINIMUM) -> list[str]:
    """Up to `per_code` keys of each code (the lowest hashes), then more of the larger codes, in turn, until the
    sample holds `minimum` keys or every key."""
    ordered = {code: sorted(keys, key=_rank) for code, keys in keys_by_code.items()}
    taken = {code: min(per_code, len(keys)) for code, keys in ordered.items()}
    while sum(taken.values()) < minimum:
        growable = [code for code, keys in ordered.items() if taken[code] < len(keys)]
        if not growable:
            break
        for code in sorted(growable, key=lambda c: (-len(ordered[c]), c)):
            if sum(taken.values()) >= minimum:
                break
            taken[code] += 1
    return sorted(key for code, keys in ordered.items() for key in keys[:taken[code]])


@dataclass(frozen=True, slots=True)
class Repository:
    name: str
    repository: str
    commit: str
    layout: str


def load_corpus(path: Path) -> list[Repository]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Repository(item["name"], item["repository"], item["commit"], item.get("layout", ""))
                for item in data["repositories"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FidelityError(f"{path}: not a fidelity corpus ({exc}).") from exc


def _read_json(path: Path, default: Any) -> Any:
    if not path.exists():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FidelityError(f"{path}: not valid JSON ({exc}).") from exc


def checkout_state(root: Path, commit: str) -> str | None:
    """None when `root` is a checkout of `commit`; otherwise why it cannot be used."""
    if not root.is_dir():
        return "missing"
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return None if head == commit else f"at {head[:12]}, pinned to {commit[:12]}"


def evaluate_findings(findings: list[Any], labels: list[dict[str, Any]]) -> dict[str, Any]:
    by_key = {finding_key(f): f for f in findings}
    by_code: dict[str, list[str]] = defaultdict(list)
    for key, finding in by_key.items():
        by_code[finding.code].append(key)
    sample = sample_keys(by_code)
    label_of = {label["key"]: label for label in labels}
    rows = []
    unlabelled = []
    false_reported: list[dict[str, str]] = []
    for key in sample:
        label = label_of.get(key)
        if label is None or label.get("verdict") not in VERDICTS:
            unlabelled.append(key)
            continue
        rows.append((by_key[key].code, by_key[key].severity, label))
        if label["verdict"] == "false":
            false_reported.append({"key": key, "class": label.get("class") or "other", "note": label.get("note", "")})
    lost = sorted(label["key"] for label in labels
                  if label.get("verdict") == "true" and label["key"] not in by_key)
    gone_false = sum(1 for label in labels if label.get("verdict") == "false" and label["key"] not in by_key)
    codes: dict[str, dict[str, int]] = {}
    classes: Counter[str] = Counter()
    for code, _, label in rows:
        entry = codes.setdefault(code, {"found": len(by_code[code]), "labelled": 0, "true": 0})
        entry["labelled"] += 1
        if label["verdict"] == "true":
            entry["true"] += 1
        else:
            classes[label.get("class") or "other"] += 1
    labelled = len(rows)
    true = sum(1 for _, _, label in rows if label["verdict"] == "true")
    serious = [(code, label) for code, severity, label in rows if severity in ("error", "warning")]
    actionable = sum(1 for _, label in serious if label["verdict"] == "true" and label.get("actionable", True))
    return {
        "found": len(by_key),
        "by_severity": dict(sorted(Counter(f.severity for f in findings).items())),
        "sample": len(sample), "labelled": labelled, "true": true,
        "precision": round(true / labelled, 4) if labelled else None,
        "serious_labelled": len(serious), "serious_actionable": actionable,
        "by_code": dict(sorted(codes.items())),
        "false_by_class": dict(sorted(classes.items())),
        "unlabelled": unlabelled,
        "false_reported": sorted(false_reported, key=lambda item: item["key"]),
        "lost_true": lost,
        "gone_false": gone_false,
    }


def todo_stubs(findings: list[Any], labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stubs for the sampled findings that have no label yet."""
    by_key = {finding_key(f): f for f in findings}
    by_code: dict[str, list[str]] = defaultdict(list)
    for key, finding in by_key.items():
        by_code[finding.code].append(key)
    known = {label["key"] for label in labels}
    stubs = []
    for key in sample_keys(by_code):
        if key in known:
            continue
        finding = by_key[key]
        stubs.append({"key": key, "code": finding.code, "severity": finding.severity, "message": finding.message,
                      "verdict": None, "actionable": None, "class": None, "note": ""})
    return stubs


# ------------------------------------------------------------------------------------------------ mentions


def _expectations(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    expect = case.get("expect")
    if expect is None:
        return None
    return expect if isinstance(expect, list) else [expect]


def _matches(location: Any, expected: dict[str, Any]) -> bool:
    path = expected["path"]
    if path.endswith("/"):
        return bool(location.path.startswith(path))
    if location.path != path:
        return False
    line = expected.get("line")
    return line is None or location.span.line + 1 == line


def evaluate_mentions(state: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Each case's go-to-definition: correct when it leads somewhere and every place it offers is expected
    (a reader shown two declarations where one is meant has to guess)."""
    from docbridge.engine.ide.navigation import definitions
    outcomes: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    failures = []
    for case in cases:
        locations = definitions(state, case["document"], case["line"] - 1, case["column"] - 1)
        expected = _expectations(case)
        if expected is None:
            outcome = "no-link" if not locations else "false-link"
        elif not locations:
            outcome = "none"
        else:
            outcome = "correct" if all(any(_matches(location, item) for item in expected)
                                       for location in locations) else "wrong"
        outcomes[outcome] += 1
        by_kind[case.get("kind", "other")][outcome] += 1
        if outcome not in ("correct", "no-link"):
            got = ", ".join(f"{location.path}:{location.span.line + 1}" for location in locations) or None
            failures.append({"case": f"{case['document']}:{case['line']}:{case['column']}",
                             "text": case.get("text", ""), "outcome": outcome, "got": got,
                             "expected": [f"{e['path']}{':' + str(e['line']) if e.get('line') else ''}"
                                          for e in expected or []]})
    positive = sum(1 for case in cases if case.get("expect") is not None)
    return {"cases": len(cases), "positive": positive, "negative": len(cases) - positive,
            "outcomes": {name: outcomes[name] for name in MENTION_OUTCOMES},
            "correct_rate": round(outcomes["correct"] / positive, 4) if positive else None,
            "by_kind": {kind: dict(sorted(counts.items())) for kind, counts in sorted(by_kind.items())},
            "failures": failures}


# ------------------------------------------------------------------------------------------------ the run


def run_repository(repo: Repository, root: Path, data_dir: Path) -> dict[str, Any]:
    from docbridge.engine.workspace import Workspace
    workspace = Workspace(root)
    workspace.scan()
    state = workspace.ensure_resolved()
    findings = workspace.findings()
    labels = _read_json(data_dir / "findings.json", {"labels": []}).get("labels", [])
    mentions = _read_json(data_dir / "mentions.json", {"cases": []}).get("cases", [])
    return {"name": repo.name, "repository": repo.repository, "commit": repo.commit,
            "findings": evaluate_findings(findings, labels),
            "mentions": evaluate_mentions(state, mentions),
            "doctor": _doctor(workspace, root)}


def _doctor(workspace: Any, root: Path) -> dict[str, Any]:
    from docbridge.engine.agent.doctor import run_doctor
    from docbridge.engine.retrieval import store
    retriever = store.retriever_for(workspace, store.now_ns())
    report = run_doctor(workspace.ensure_resolved(), retriever.projection, retriever, None, root)
    return {"grade": report["grade"], "score": report["score"],
            "dimensions": {name: dimension.get("value") for name, dimension in report["dimensions"].items()}}


def write_todo(repo: Repository, root: Path, data_dir: Path) -> int:
    """Add stubs for unlabelled sampled findings to `findings.json`; the number added."""
    from docbridge.engine.workspace import Workspace
    workspace = Workspace(root)
    workspace.scan()
    path = data_dir / "findings.json"
    document = _read_json(path, {"repository": repo.repository, "commit": repo.commit, "labels": []})
    stubs = todo_stubs(workspace.findings(), document.get("labels", []))
    if stubs:
        document["labels"] = sorted([*document.get("labels", []), *stubs], key=lambda label: label["key"])
        data_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(stubs)


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = sum(r["findings"]["labelled"] for r in results)
    true = sum(r["findings"]["true"] for r in results)
    serious = sum(r["findings"]["serious_labelled"] for r in results)
    actionable = sum(r["findings"]["serious_actionable"] for r in results)
    outcomes: Counter[str] = Counter()
    for r in results:
        outcomes.update(r["mentions"]["outcomes"])
    positive = sum(r["mentions"]["positive"] for r in results)
    classes: Counter[str] = Counter()
    codes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        classes.update(r["findings"]["false_by_class"])
        for code, entry in r["findings"]["by_code"].items():
            codes[code][0] += entry["labelled"]
            codes[code][1] += entry["true"]
    return {"labelled": labelled, "true": true, "precision": round(true / labelled, 4) if labelled else None,
            "serious_labelled": serious, "serious_actionable": actionable,
            "by_code": {code: {"labelled": n, "true": t} for code, (n, t) in sorted(codes.items())},
            "false_by_class": dict(sorted(classes.items())),
            "mentions": {name: outcomes[name] for name in MENTION_OUTCOMES},
            "mention_correct_rate": round(outcomes["correct"] / positive, 4) if positive else None,
            "unlabelled": sum(len(r["findings"]["unlabelled"]) for r in results),
            "lost_true": sum(len(r["findings"]["lost_true"]) for r in results)}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for r in report["repositories"]:
        f, m = r["findings"], r["mentions"]
        lines.append(f"{r['name']} ({r['repository']} @ {r['commit'][:12]})")
        lines.append(f"  check: {f['found']} findings {f['by_severity']}; sample {f['sample']}, labelled "
                     f"{f['labelled']}, true {f['true']} — precision {_percent(f['precision'])}; warnings and "
                     f"errors actionable {f['serious_actionable']}/{f['serious_labelled']}")
        for code, entry in f["by_code"].items():
            lines.append(f"    {code:<24} found {entry['found']:>5}  true {entry['true']}/{entry['labelled']}")
        if f["false_by_class"]:
            lines.append("    false by class: " + ", ".join(f"{k} {v}" for k, v in f["false_by_class"].items()))
            lines.extend(f"      false ({item['class']}) {item['key']}" for item in f["false_reported"])
        if f["unlabelled"]:
            lines.append(f"    unlabelled in the sample: {len(f['unlabelled'])} (run with --todo to add stubs)")
        if f["lost_true"]:
            lines.append(f"    labelled true but no longer reported: {len(f['lost_true'])}")
            lines.extend(f"      {key}" for key in f["lost_true"][:10])
        outcomes = m["outcomes"]
        lines.append(f"  mentions: {m['positive']} to follow — correct {outcomes['correct']}, "
                     f"wrong {outcomes['wrong']}, none {outcomes['none']} ({_percent(m['correct_rate'])}); "
                     f"{m['negative']} to leave — false links {outcomes['false-link']}")
        for failure in m["failures"]:
            lines.append(f"    {failure['outcome']:<10} {failure['case']} `{failure['text']}` → {failure['got']} "
                         f"(expected {', '.join(failure['expected']) or 'nothing'})")
        lines.append(f"  doctor: {r['doctor']['grade']} ({r['doctor']['score']})")
        lines.append("")
    t = report["total"]
    lines.append(f"total: check precision {_percent(t['precision'])} ({t['true']}/{t['labelled']}), warnings and "
                 f"errors actionable {t['serious_actionable']}/{t['serious_labelled']}; mentions correct "
                 f"{_percent(t['mention_correct_rate'])}, false links {t['mentions']['false-link']}; "
                 f"unlabelled {t['unlabelled']}, true findings lost {t['lost_true']}")
    for missing in report.get("missing", []):
        lines.append(f"skipped {missing['name']}: {missing['reason']}")
    comparison = report.get("comparison")
    if comparison is not None:
        lines.append(f"baseline: {comparison['status']}")
        lines.extend(f"  regression: {line}" for line in comparison["regressions"])
        lines.extend(f"  improvement: {line}" for line in comparison["improvements"])
    if "baseline" in report:
        lines.append(f"baseline written to {report['baseline']['written']}")
    return "\n".join(lines) + "\n"


def default_checkouts() -> Path:
    return Path(os.environ.get("REAL_REPOS", "bench/real/checkouts"))


BASELINE_TYPE = "docbridge-fidelity-baseline"
MEASURES = ("precision", "mention_correct_rate")  # higher is better: a drop of either is a regression


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    f, m = result["findings"], result["mentions"]
    return {"precision": f["precision"], "labelled": f["labelled"], "true": f["true"],
            "mention_correct_rate": m["correct_rate"], "false_links": m["outcomes"]["false-link"]}


def seal_baseline(report: dict[str, Any], by: str, reason: str | None) -> dict[str, Any]:
    """The figures of a run, approved by someone for a reason, sealed by their content hash."""
    from docbridge.engine.base.hashing import canonical_hash
    if not by.strip():
        raise FidelityError("A fidelity baseline needs an approver: pass --by NAME.")
    baseline = {"type": BASELINE_TYPE, "version": 1,
                "repositories": {r["name"]: {"commit": r["commit"], **_figures(r)} for r in report["repositories"]},
                "approval": {"by": by.strip(), "reason": (reason or "").strip()}}
    baseline["contentHash"] = canonical_hash(baseline)
    return baseline


def read_baseline(path: Path) -> dict[str, Any]:
    from docbridge.engine.base.hashing import canonical_hash
    baseline = _read_json(path, None)
    if baseline is None:
        raise FidelityError(f"baseline {path} does not exist; create it with --update-baseline --by NAME.")
    if not isinstance(baseline, dict) or baseline.get("type") != BASELINE_TYPE:
        raise FidelityError(f"{path} is not a fidelity baseline.")
    if canonical_hash({k: v for k, v in baseline.items() if k != "contentHash"}) != baseline.get("contentHash"):
        raise FidelityError(f"baseline {path} does not match its content hash: it was edited by hand. Regenerate it "
                            f"with --update-baseline --by NAME --reason TEXT.")
    return baseline


def compare(report: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """Regressions (a measure fell, a false link appeared) and improvements, per repository run."""
    regressions, improvements = [], []
    for result in report["repositories"]:
        before = baseline["repositories"].get(result["name"])
        if before is None:
            continue
        if before["commit"] != result["commit"]:
            regressions.append(f"{result['name']}: the baseline was taken at {before['commit'][:12]}, this run is at "
                               f"{result['commit'][:12]}.")
            continue
        now = _figures(result)
        for key in MEASURES:
            if now[key] is None or before[key] is None:
                continue
            if now[key] < before[key]:
                regressions.append(f"{result['name']}: {key} fell from {before[key]} to {now[key]}.")
            elif now[key] > before[key]:
                improvements.append(f"{result['name']}: {key} rose from {before[key]} to {now[key]}.")
        if now["false_links"] > before["false_links"]:
            regressions.append(f"{result['name']}: false links rose from {before['false_links']} to "
                               f"{now['false_links']}.")
    return {"status": "regressed" if regressions else "pass", "regressions": regressions,
            "improvements": improvements}


def bench_fidelity(corpus_path: Path, checkouts: Path, only: list[str] | None, as_json: bool,
                   todo: bool = False, baseline_path: Path | None = None, update_baseline: bool = False,
                   by: str | None = None, reason: str | None = None) -> int:
    corpus = load_corpus(corpus_path)
    base = corpus_path.parent
    names = {repo.name for repo in corpus}
    unknown = sorted(set(only or ()) - names)
    if unknown:
        raise FidelityError(f"{unknown[0]!r} is not in {corpus_path} (it names {', '.join(sorted(names))}).")
    results, missing = [], []
    for repo in corpus:
        if only and repo.name not in only:
            continue
        root = checkouts / repo.name
        problem = checkout_state(root, repo.commit)
        if problem is not None:
            missing.append({"name": repo.name, "reason": f"{root}: {problem}"})
            continue
        if todo:
            added = write_todo(repo, root, base / repo.name)
            print(f"{repo.name}: {added} unlabelled sampled findings added to {base / repo.name / 'findings.json'}",
                  file=sys.stderr)
            continue
        print(f"{repo.name}: scanning {root}", file=sys.stderr)
        results.append(run_repository(repo, root, base / repo.name))
    if todo:
        return 0
    report: dict[str, Any] = {"repositories": results, "total": totals(results), "missing": missing}
    status = 0
    if baseline_path is not None and update_baseline:
        if missing:
            raise FidelityError(f"a baseline records every repository of the corpus; {missing[0]['name']} is "
                                f"missing ({missing[0]['reason']}).")
        from docbridge.engine.base.cache import write_atomic
        sealed = seal_baseline(report, by or "", reason)
        write_atomic(baseline_path, (json.dumps(sealed, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        report["baseline"] = {"written": str(baseline_path)}
    elif baseline_path is not None:
        report["comparison"] = compare(report, read_baseline(baseline_path))
        status = 1 if report["comparison"]["regressions"] else 0
    sys.stdout.write(json.dumps(report, indent=2) + "\n" if as_json else render_text(report))
    return status
