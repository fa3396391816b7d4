"""`docbridge study expectations SUITE`: what each task of an agent study expects search to surface, checked
deterministically before the study runs.

A study suite is `{"version": 1, "name": ..., "tasks": [{"id", "query", "expectedEntities": [ids],
"expectedDocuments": [paths], "limit"?}]}` (at least one expectation per task; `limit` defaults to 10). Each
expected entity id must be among the ids of the task's top `limit` search results, and each expected document
among their paths; anything not found is a miss (an id or path the repository does not have at all is reported
as `unknown`, which is a miss too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEFAULT_LIMIT = 10


class SuiteError(Exception):
    """A study suite that cannot be used (exit 2); the message names the file and the key."""


def load_suite(path: Path, shown: str) -> dict[str, Any]:
    try:
        suite = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SuiteError(f"{shown}: the study suite does not exist.") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{shown}: cannot read the study suite ({exc}).") from exc
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{shown}:{exc.lineno}:{exc.colno}: the study suite is not valid JSON: {exc.msg}.") from exc
    if not isinstance(suite, dict) or suite.get("version") != 1:
        raise SuiteError(f"{shown}: version: a study suite is {{\"version\": 1, \"name\": ..., \"tasks\": [...]}}.")
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
        if not isinstance(task.get("query"), str) or not task["query"].strip():
            raise SuiteError(f"{where}.query: a non-empty string is required.")
        for key in ("expectedEntities", "expectedDocuments"):
            value = task.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise SuiteError(f"{where}.{key}: a list of non-empty strings is required.")
        if not task.get("expectedEntities") and not task.get("expectedDocuments"):
            raise SuiteError(f"{where}: expectedEntities or expectedDocuments must name at least one target.")
        limit = task.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
            raise SuiteError(f"{where}.limit: an integer from 1 to 100 is required.")
    return suite


def verify(retriever: Any, suite: dict[str, Any]) -> dict[str, Any]:
    known_ids = set(retriever.projection.by_id)
    known_paths = {e.path for e in retriever.projection.entries if e.path}
    rows = []
    for task in suite["tasks"]:
        limit = task.get("limit", DEFAULT_LIMIT)
        results = retriever.search(task["query"], limit)
        ids = [r.entry.id for r in results]
        paths = [r.entry.path for r in results]
        checks = []
        for target in task.get("expectedEntities", []):
            rank = ids.index(target) + 1 if target in ids else None
            checks.append({"kind": "entity", "target": target, "rank": rank,
                           "status": "found" if rank else ("miss" if target in known_ids else "unknown")})
        for target in task.get("expectedDocuments", []):
            normalised = target.strip().removeprefix("./")
            rank = paths.index(normalised) + 1 if normalised in paths else None
            checks.append({"kind": "document", "target": normalised, "rank": rank,
                           "status": "found" if rank else ("miss" if normalised in known_paths else "unknown")})
        rows.append({"id": task["id"], "query": task["query"], "limit": limit,
                     "passed": all(c["status"] == "found" for c in checks), "expectations": checks,
                     "top": ids[:3]})
    failed = [r["id"] for r in rows if not r["passed"]]
    return {"suite": suite.get("name", ""), "ok": not failed, "tasks": rows,
            "summary": {"tasks": len(rows), "passed": len(rows) - len(failed), "failed": failed}}


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for task in report["tasks"]:
        lines.append(f"{'pass' if task['passed'] else 'MISS'}  {task['id']}  ({task['query']!r}, top {task['limit']})")
        for check in task["expectations"]:
            if check["status"] != "found":
                lines.append(f"      {check['status']}: {check['kind']} {check['target']}")
    summary = report["summary"]
    lines.append(f"{summary['passed']}/{summary['tasks']} tasks meet their expectations")
    return "\n".join(lines) + "\n"


__all__ = ["SuiteError", "load_suite", "render_text", "verify"]
