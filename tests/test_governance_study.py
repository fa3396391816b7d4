"""`docbridge study expectations SUITE` on fixtures/governance: expectations met, a miss (exit 1), an unknown
target, and invalid suites (exit 2 naming the file and key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import docbridge, docbridge_json


def write_suite(root: Path, tasks: list[dict[str, object]]) -> str:
    path = root / "study.json"
    path.write_text(json.dumps({"version": 1, "name": "ledger study", "tasks": tasks}), encoding="utf-8")
    return str(path)


def test_expectations_met_and_missed(governance: Path) -> None:
    met = [{"id": "post-entry", "query": "postEntry", "expectedEntities": ["module:src/ledger/entries.ts"]},
           {"id": "audit", "query": "audit an invoice before it is posted",
            "expectedDocuments": ["docs/ledger.md"]}]
    report = docbridge_json("study", "expectations", write_suite(governance, met), "--root", str(governance),
                            "--json")
    assert report["ok"] is True and report["summary"] == {"tasks": 2, "passed": 2, "failed": []}
    assert report["tasks"][0]["expectations"][0]["rank"] == 1
    # the mailer is a real module, but a query about posting entries does not surface it first
    missed = [*met, {"id": "mail", "query": "postEntry", "limit": 1,
                     "expectedEntities": ["module:src/notify/mailer.ts"]},
              {"id": "payments", "query": "payment gateway", "expectedEntities": ["module:src/payments/gateway.ts"]}]
    report = docbridge_json("study", "expectations", write_suite(governance, missed), "--root", str(governance),
                            "--json", expect=1)
    assert report["summary"]["failed"] == ["mail", "payments"]
    statuses = {t["id"]: [c["status"] for c in t["expectations"]] for t in report["tasks"]}
    assert statuses["mail"] == ["miss"] and statuses["payments"] == ["unknown"]
    text = docbridge("study", "expectations", str(governance / "study.json"), "--root", str(governance))
    assert text.returncode == 1 and "MISS  mail" in text.stdout and "2/4 tasks meet their expectations" in text.stdout


@pytest.mark.parametrize(("content", "message"), [
    (None, "does not exist"),
    ("{ nope", "study.json:1:3"),
    # a task without expectations is reported unchecked (tests/test_measurement.py); a query that expects nothing
    # and an empty list of expectations are refused
    (json.dumps({"version": 1, "tasks": [{"id": "a", "retrievalQueries": ["x"]}]}), "tasks[0].retrievalQueries"),
    (json.dumps({"version": 1, "tasks": [{"id": "a", "query": "x", "expectedEntities": []}]}),
     "tasks[0].expectedEntities"),
    (json.dumps({"version": 1, "tasks": [{"id": "a", "query": "x", "expectedEntities": [3]}]}),
     "tasks[0].expectedEntities"),
    (json.dumps({"version": 1, "tasks": [{"id": "a", "query": "x", "expectedDocuments": ["d.md"], "limit": 0}]}),
     "tasks[0].limit"),
])
def test_an_invalid_suite_is_an_input_error(governance: Path, content: str | None, message: str) -> None:
    path = governance / "study.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = docbridge("study", "expectations", str(path), "--root", str(governance))
    assert result.returncode == 2 and message in result.stderr and "study.json" in result.stderr
