"""`docbridge study expectations SUITE`: what each task of an agent study expects search to surface, checked
deterministically before the study runs.

Two suite shapes are read. Ours: `{"version": 1, "name": ..., "tasks": [{"id", "query", "expectedEntities": [ids],
"expectedDocuments": [paths], "retrievalQueries"?: [queries], "limit"?, "repositoryId"?}]}`. The reference's
study task suite (`{"type": "study-task-suite", "schemaVersion": 1, "tasks": [{"id", "repositoryId", "objective",
...}], "contentHash"?}`): only the fields checked here are read, and a `contentHash` must match the suite.

A task is checked with its `retrievalQueries`, else its `query`, else its `objective`. Each expected target must
be among the ids or paths of the top `limit` results (default 10) of every query; a target the repository does
not have at all is `unknown` (a miss too). A task that declares no expectations is listed in `withoutExpectations`
and never counted as a pass; a query with nothing expected is refused (it would check nothing).

With an expectations file (`--expectations`), the suite's `expectedEntities` and `expectedDocuments` are opaque
references (`primary-entrypoint`, not `docs/alpha.md`: a suite meant for publication carries no path), resolved
by the file (`StudyExpectationsV1`: `{"type": "controlled-study-expectations", "schemaVersion": 1, "scope":
"local", "taskSuiteHash", "repositories": [{"id", "targets": {reference: [ids or paths]}}]}`), which is bound to
the suite by `taskSuiteHash` (the suite's `contentHash`, else the hash of its JSON) and is never published. A
reference the file does not resolve fails its task (`unresolved`): an expectation nobody resolved was not tested.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docbridge.engine.base.hashing import canonical_hash

DEFAULT_LIMIT = 10
MAX_QUERIES = 8
REFERENCE = re.compile(r"[a-z0-9][a-z0-9._:-]{0,255}")
EXPECTATIONS_TYPE = "controlled-study-expectations"
SUITE_TYPE = "study-task-suite"


class SuiteError(Exception):
    """A study suite or expectations file that cannot be used (exit 2); the message names the file and the key."""


def _read_json(path: Path, shown: str, what: str) -> Any:
    from docbridge.engine.base.safe_io import read_named_file
    try:
        return json.loads(read_named_file(path).decode("utf-8"))
    except FileNotFoundError as exc:
        raise SuiteError(f"{shown}: the {what} does not exist.") from exc
    except (OSError, UnicodeDecodeError) as exc:  # unreadable, a FIFO or a device (never waited on), not UTF-8
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SuiteError(f"{shown}: cannot read the {what} ({reason}).") from exc
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{shown}:{exc.lineno}:{exc.colno}: the {what} is not valid JSON: {exc.msg}.") from exc
    except RecursionError:
        raise SuiteError(f"{shown}: the {what} is nested too deeply to read.") from None


def _check_sealed(document: dict[str, Any], shown: str, what: str) -> None:
    """A `contentHash` the document carries must be the hash of the rest of it (the reference's sealing)."""
    if "contentHash" in document:
        body = {k: v for k, v in document.items() if k != "contentHash"}
        if document["contentHash"] != canonical_hash(body):
            raise SuiteError(f"{shown}: contentHash: the {what} does not match its contentHash (edited after it was "
                             f"sealed); reseal it or remove the field.")


def _strings(value: Any, where: str, key: str, most: int) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise SuiteError(f"{where}.{key}: a non-empty list of non-empty strings is required (declare at least one, "
                         f"or omit the field).")
    if len(value) > most:
        raise SuiteError(f"{where}.{key}: at most {most} are allowed.")
    return value


def load_suite(path: Path, shown: str) -> dict[str, Any]:
    """The suite, checked; `taskSuiteHash` is added (what an expectations file binds to)."""
    suite = _read_json(path, shown, "study suite")
    if not isinstance(suite, dict):
        raise SuiteError(f"{shown}: a study suite is {{\"version\": 1, \"name\": ..., \"tasks\": [...]}}.")
    reference = suite.get("type") == SUITE_TYPE
    if reference and suite.get("schemaVersion") != 1:
        raise SuiteError(f"{shown}: schemaVersion: a {SUITE_TYPE} of schemaVersion 1 is required.")
    if not reference and suite.get("version") != 1:
        raise SuiteError(f"{shown}: version: a study suite is {{\"version\": 1, \"name\": ..., \"tasks\": [...]}}.")
    _check_sealed(suite, shown, "study suite")
    tasks = suite.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise SuiteError(f"{shown}: tasks: a non-empty list of tasks is required.")
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        where = f"{shown}: tasks[{index}]"
        if not isinstance(task, dict) or not isinstance(task.get("id"), str) or not task["id"].strip():
            raise SuiteError(f"{where}.id: a non-empty string is required.")
        if task["id"] in seen:
            raise SuiteError(f"{where}.id: duplicate task id {task['id']!r}.")
        seen.add(task["id"])
        _check_task(task, where)
    checked = dict(suite)
    checked["taskSuiteHash"] = suite["contentHash"] if isinstance(suite.get("contentHash"), str) \
        else canonical_hash(suite)
    return checked


def _check_task(task: dict[str, Any], where: str) -> None:
    if "retrievalQueries" in task:
        _strings(task["retrievalQueries"], where, "retrievalQueries", MAX_QUERIES)
    elif not any(isinstance(task.get(k), str) and task[k].strip() for k in ("query", "objective")):
        raise SuiteError(f"{where}.query: a non-empty string is required (or `retrievalQueries`, or an "
                         f"`objective`).")
    for key in ("expectedEntities", "expectedDocuments"):
        if key in task:
            _strings(task[key], where, key, 32)
    if "retrievalQueries" in task and not expects(task):
        raise SuiteError(f"{where}.retrievalQueries: a retrieval query needs expectedEntities or expectedDocuments; "
                         f"a query with nothing expected checks nothing.")
    if "repositoryId" in task and not (isinstance(task["repositoryId"], str) and task["repositoryId"].strip()):
        raise SuiteError(f"{where}.repositoryId: a non-empty string is required.")
    limit = task.get("limit", DEFAULT_LIMIT)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise SuiteError(f"{where}.limit: an integer from 1 to 100 is required.")


def expects(task: dict[str, Any]) -> bool:
    return bool(task.get("expectedEntities") or task.get("expectedDocuments"))


def queries(task: dict[str, Any]) -> list[str]:
    """What a task is checked with: its retrieval queries, else its query, else its objective."""
    if task.get("retrievalQueries"):
        return list(task["retrievalQueries"])
    return [task["query"] if isinstance(task.get("query"), str) and task["query"].strip() else task["objective"]]


def load_expectations(path: Path, shown: str, suite: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """The expectations file's targets by repository id; SuiteError when it is malformed, edited after sealing, or
    bound to another suite."""
    document = _read_json(path, shown, "expectations file")
    if not isinstance(document, dict) or document.get("type") != EXPECTATIONS_TYPE \
            or document.get("schemaVersion") != 1:
        raise SuiteError(f"{shown}: type: an expectations file is {{\"type\": \"{EXPECTATIONS_TYPE}\", "
                         f"\"schemaVersion\": 1, \"scope\": \"local\", \"taskSuiteHash\": ..., \"repositories\": "
                         f"[...]}}.")
    if document.get("scope") != "local":
        raise SuiteError(f"{shown}: scope: an expectations file declares \"scope\": \"local\" (it maps references to "
                         f"paths on this disk and is never published).")
    _check_sealed(document, shown, "expectations file")
    if document.get("taskSuiteHash") != suite["taskSuiteHash"]:
        raise SuiteError(f"{shown}: taskSuiteHash: the expectations were written for another task suite (the "
                         f"suite's hash is {suite['taskSuiteHash']}); re-resolve the references against this one.")
    repositories = document.get("repositories")
    if not isinstance(repositories, list) or not repositories:
        raise SuiteError(f"{shown}: repositories: a non-empty list of {{\"id\", \"targets\"}} is required.")
    out: dict[str, dict[str, list[str]]] = {}
    for index, repository in enumerate(repositories):
        where = f"{shown}: repositories[{index}]"
        if not isinstance(repository, dict) or not isinstance(repository.get("id"), str) \
                or not repository["id"].strip():
            raise SuiteError(f"{where}.id: a non-empty string is required.")
        if repository["id"] in out:
            raise SuiteError(f"{where}.id: duplicate repository id {repository['id']!r}.")
        targets = repository.get("targets")
        if not isinstance(targets, dict):
            raise SuiteError(f"{where}.targets: an object from references to lists of ids or paths is required.")
        for reference, resolved in targets.items():
            _strings(resolved, f"{where}.targets", reference, 32)
        out[repository["id"]] = {k: [t.strip().removeprefix("./") for t in v] for k, v in targets.items()}
    return out


def check_references(suite: dict[str, Any], shown: str) -> None:
    """With an expectations file, the suite's expectations must be opaque references: a path or a URL in a suite
    meant for publication is a privacy failure."""
    for index, task in enumerate(suite["tasks"]):
        for key in ("expectedEntities", "expectedDocuments"):
            for position, value in enumerate(task.get(key, [])):
                if not REFERENCE.fullmatch(value):
                    raise SuiteError(f"{shown}: tasks[{index}].{key}[{position}]: {value!r} is not an opaque reference "
                                     f"(lowercase letters, digits, '.', '_', ':', '-'): name the target in the "
                                     f"expectations file, not in the suite.")


def select_repository(suite: dict[str, Any], resolved: dict[str, dict[str, list[str]]] | None,
                      repository: str | None) -> str | None:
    """The repository whose tasks are checked against this root: `--repository`, else the expectations file's
    only one; None checks every task (a suite without repositories, or without an expectations file)."""
    if repository is not None:
        if resolved is not None and repository not in resolved:
            raise SuiteError(f"--repository {repository!r}: the expectations file resolves no such repository "
                             f"({', '.join(sorted(resolved))}).")
        return repository
    if resolved is None:
        return None
    if len(resolved) == 1:
        return next(iter(resolved))
    raise SuiteError(f"the expectations file resolves {len(resolved)} repositories ({', '.join(sorted(resolved))}): "
                     f"pass --repository ID to name the one at --root.")


def verify(retriever: Any, suite: dict[str, Any], resolved: dict[str, dict[str, list[str]]] | None = None,
           repository: str | None = None) -> dict[str, Any]:
    """Run every checked task's queries; the report (our names and the reference's: `checkedTasks`,
    `withoutExpectations`, `unresolved`, `outcomes`, `metrics`)."""
    known_ids = set(retriever.projection.by_id)
    known_paths = {e.path for e in retriever.projection.entries if e.path}
    rows, outcomes, unresolved, without, elsewhere = [], [], [], [], []
    for task in suite["tasks"]:
        repo = task.get("repositoryId")
        if repository is not None and repo is not None and repo != repository:
            elsewhere.append(task["id"])
            continue
        if not expects(task):
            without.append(task["id"])
            continue
        expected: list[tuple[str, str, str | None]] = []  # kind, target, reference (None when concrete)
        for key, kind in (("expectedEntities", "entity"), ("expectedDocuments", "document")):
            for value in task.get(key, []):
                if resolved is None:
                    expected.append((kind, value.strip().removeprefix("./"), None))
                    continue
                targets = resolved.get(repository or "", {}).get(value)
                if not targets:
                    unresolved.append({"taskId": task["id"], "repositoryId": repository, "reference": value,
                                       "kind": kind})
                    expected.append((kind, "", value))
                else:
                    expected.extend((kind, target, value) for target in targets)
        row, cases = _check(retriever, task, expected, known_ids, known_paths, repository)
        rows.append(row)
        outcomes.extend(cases)
    failed = [r["id"] for r in rows if not r["passed"]]
    return {"suite": suite.get("name") or suite.get("suiteVersion") or "", "taskSuiteHash": suite["taskSuiteHash"],
            "repositoryId": repository, "ok": bool(rows) and not failed and not unresolved, "tasks": rows,
            "summary": {"tasks": len(rows), "passed": len(rows) - len(failed), "failed": failed},
            "checkedTasks": len(rows), "withoutExpectations": without, "otherRepositories": elsewhere,
            "unresolved": sorted(unresolved, key=lambda u: (u["taskId"], u["reference"])),
            "outcomes": outcomes, "metrics": _metrics(outcomes)}


def _check(retriever: Any, task: dict[str, Any], expected: list[tuple[str, str, str | None]], known_ids: set[str],
           known_paths: set[str], repository: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One task: a check per expected target and query, and an outcome per query."""
    limit = task.get("limit", DEFAULT_LIMIT)
    asked = queries(task)
    targets = sorted({target for _, target, _ in expected if target})
    checks, cases, top = [], [], []
    for number, query in enumerate(asked, start=1):
        results = retriever.search(query, max(limit, 10))
        if number == 1:
            top = [r.entry.id for r in results[:3]]
        ids = [r.entry.id for r in results]
        paths = [r.entry.path for r in results]
        for kind, target, reference in expected:
            check: dict[str, Any] = {"kind": kind, "target": target, "query": query}
            if reference is not None:
                check["reference"] = reference
            if not target:
                checks.append(check | {"rank": None, "status": "unresolved"})
                continue
            rank = next((i for i, (eid, path) in enumerate(zip(ids, paths, strict=True), start=1)
                         if target in (eid, path)), None)
            found = rank is not None and rank <= limit
            status = "found" if found else "miss" if target in known_ids or target in known_paths else "unknown"
            checks.append(check | {"rank": rank if found else None, "status": status})
        first = next((i for i, (eid, path) in enumerate(zip(ids, paths, strict=True), start=1)
                      if eid in targets or path in targets), None)
        mine = [c for c in checks if c["query"] == query]
        cases.append({"caseId": task["id"] if len(asked) == 1 else f"{task['id']}-q{number}", "taskId": task["id"],
                      "repositoryId": task.get("repositoryId", repository), "query": query,
                      "hit": all(c["status"] == "found" for c in mine), "hitAt3": first is not None and first <= 3,
                      "rank": first, "expectedTargets": targets,
                      "rankedTargets": [f"{r.entry.id} {r.entry.path}" for r in results[:3]]})
    row = {"id": task["id"], "query": asked[0], "queries": asked, "limit": limit,
           "passed": all(c["status"] == "found" for c in checks), "expectations": checks,
           "top": top}
    return row, cases


def _metrics(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The study's cases scored as a retrieval suite is (rank = the first result that is any expected target)."""
    n = len(outcomes) or 1
    return {"caseCount": len(outcomes),
            "hitAt1": round(sum(1 for o in outcomes if o["rank"] == 1) / n, 6),
            "hitAt3": round(sum(1 for o in outcomes if o["hitAt3"]) / n, 6),
            "meanReciprocalRank": round(sum(1 / o["rank"] for o in outcomes if o["rank"]) / n, 6)}


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for task in report["tasks"]:
        shown = repr(task["query"]) if len(task["queries"]) == 1 else f"{len(task['queries'])} queries"
        lines.append(f"{'pass' if task['passed'] else 'MISS'}  {task['id']}  ({shown}, top {task['limit']})")
        for check in task["expectations"]:
            if check["status"] == "unresolved":
                lines.append(f"      unresolved: {check['kind']} reference {check['reference']}")
            elif check["status"] != "found":
                query = f" for {check['query']!r}" if len(task["queries"]) > 1 else ""
                lines.append(f"      {check['status']}: {check['kind']} {check['target']}{query}")
    without = report["withoutExpectations"]
    if without:
        lines.append(f"{len(without)} task(s) without expectations, not checked: {', '.join(without)}")
    if report["otherRepositories"]:
        lines.append(f"{len(report['otherRepositories'])} task(s) of other repositories, not checked")
    summary, metrics = report["summary"], report["metrics"]
    if not report["tasks"]:
        lines.append("No task declares expectations: nothing was checked.")
    lines.append(f"{summary['passed']}/{summary['tasks']} tasks meet their expectations")
    if metrics["caseCount"]:
        line = f"hit@3 {metrics['hitAt3']:.3f} over {metrics['caseCount']} case(s)"
        if "tokensToFirstEvidenceP95" in metrics:
            p95 = metrics["tokensToFirstEvidenceP95"]
            line += f"; tokens to first evidence p95 {'-' if p95 is None else p95} ({metrics['tokenMethod']})"
        lines.append(line)
    return "\n".join(lines) + "\n"


__all__ = ["SuiteError", "check_references", "expects", "load_expectations", "load_suite", "queries",
           "render_text", "select_repository", "verify"]
