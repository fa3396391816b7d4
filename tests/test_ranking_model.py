"""The ranking, pinned: every query of the fixtures' retrieval suites ranks as recorded in tests/golden/rankings.json
(the top ten ids, their scores to six decimals and what `--explain` shows of them: components, reasons, terms,
matches, readings, corrections, the relation that surfaced a result, the copies folded into it), as a caller
and as an agent (`search --agent`). A change to the ranking model that is meant to change no ranking must pass
this unchanged; one that is meant to change rankings regenerates the file and shows the difference:

    DOCBRIDGE_UPDATE_RANKINGS=1 .venv/bin/python -m pytest -q tests/test_ranking_model.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, copy_fixture
from docbridge.engine.retrieval.rank import Retriever
from docbridge.engine.workspace import Workspace

GOLDEN = Path(__file__).parent / "golden" / "rankings.json"
SUITES = ("acme", "monorepo")  # the fixtures with a retrieval suite (retrieval-suite.json)
TOP = 10
# queries beside the suites' that reach rules the suites do not (a route whose title covers the query, a change
# route, a path by its last segments, two words that spell a declared name or a file name, a word that names a
# test file, a question that names the kind of unit it wants), run on both fixtures
PROBES = ("find the http endpoint for a feature", "change how sales tax is calculated", "billing/tax.ts",
          "components/ErrorBanner.jsx", "billing", "create invoice", "app error", "error banner", "errors AppError",
          "invoice createInvoice", "which package holds the error codes", "which area owns the orders",
          "examples of billing", "how do I build the web app", "how to mock a module", "where is checkout implemented",
          "como configurar o pool de conexões", "temporizadores falsos", "tax", "orders")
UPDATE = os.environ.get("DOCBRIDGE_UPDATE_RANKINGS") == "1"


def ranked(retriever: Retriever, query: str, agent: bool) -> list[dict[str, Any]]:
    """The first TOP results of a search as the suites run it (20 asked), with their explanation."""
    rows = []
    for result in retriever.search(query, 20, agent=agent)[:TOP]:
        explain = result.to_json(explain=True)["explain"]
        rows.append({"id": result.entry.id, "score": round(result.score, 6), "confidence": result.confidence,
                     **({"alsoIn": result.also_in} if result.also_in else {}), **explain})
    return rows


def rankings(fixture: str, tmp_path: Path) -> dict[str, Any]:
    root = copy_fixture(fixture, tmp_path)
    workspace = Workspace(root, use_cache=False)
    workspace.scan()
    retriever = workspace.retriever()
    suite = json.loads((FIXTURES / fixture / "retrieval-suite.json").read_text(encoding="utf-8"))
    return {case["id"]: {"input": case["input"], "results": ranked(retriever, case["input"], False),
                         "agent": ranked(retriever, case["input"], True)}
            for case in [*suite["cases"], *({"id": f"probe: {q}", "input": q} for q in PROBES)]}


def written(golden: dict[str, Any]) -> str:
    """The golden file, one result a line (a changed ranking reads as a diff of the results that moved)."""
    def row(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    lines = ["{"]
    for f, fixture in enumerate(sorted(golden)):
        lines.append(f" {row(fixture)}: {{")
        cases = sorted(golden[fixture])
        for c, case in enumerate(cases):
            entry = golden[fixture][case]
            lines.append(f"  {row(case)}: {{\"input\": {row(entry['input'])},")
            for key in ("results", "agent"):
                results = entry[key]
                body = "".join(f"\n    {row(r)}{',' if i < len(results) - 1 else ''}" for i, r in enumerate(results))
                lines.append(f"   {row(key)}: [{body}]" + ("," if key == "results" else ""))
            lines.append("  }" + ("," if c < len(cases) - 1 else ""))
        lines.append(" }" + ("," if f < len(golden) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fixture", SUITES)
def test_every_suite_query_ranks_as_recorded(fixture: str, tmp_path: Path) -> None:
    current = json.loads(json.dumps(rankings(fixture, tmp_path)))  # as JSON reads it back (tuples, floats)
    if UPDATE:
        golden = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
        golden[fixture] = current
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(written(golden), encoding="utf-8")
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))[fixture]
    assert sorted(current) == sorted(recorded)
    changed = [case for case in recorded if current[case] != recorded[case]]
    assert not changed, f"{len(changed)} queries rank differently, first {changed[0]!r}: " + json.dumps(
        {"recorded": recorded[changed[0]], "now": current[changed[0]]}, indent=1, ensure_ascii=False)[:4000]


def test_every_prior_is_one_named_row_with_its_principle() -> None:
    from docbridge.engine.retrieval.priors import ADDITIVE_PRIORS, PRIORS
    from docbridge.engine.retrieval.rank import COMPONENTS
    names = [row.name for row in (*PRIORS, *ADDITIVE_PRIORS)]
    assert len(names) == len(set(names))
    assert all(row.why and row.shown for row in PRIORS)
    assert all(row.why and row.component in COMPONENTS for row in ADDITIVE_PRIORS)


def test_the_query_shape_data_reads_english_and_portuguese() -> None:
    from docbridge.engine.base.lexicon import tokens
    from docbridge.engine.retrieval.query_shape import read_query

    def shape(query: str) -> Any:
        return read_query(query, tokens(query, unique=True)).shape

    assert shape("where do I change the invoice").routing and shape("onde mudar a fatura").routing
    assert shape("how does the cache decide what to evict").form == "implementation"
    assert shape("como é calculado o imposto").form == "implementation"
    assert shape("how do I deploy").asks_task and shape("como configurar o deploy").asks_task
    assert shape("createInvoice").identifier and shape("src/billing").form == "name"
    assert shape("which package holds errors").kinds_named == {"package"}
    assert shape("qual pasta").kinds_named == {"area", "directory"}
