"""`docbridge index` (DocBridgeIndexV1), `bench retrieval --index`, `list`, `query KIND ID` and `ask`, through the
CLI; expectations from fixtures/acme and its configuration."""

from __future__ import annotations

import json
from pathlib import Path

from docbridge.engine.base.hashing import canonical_hash

from tests.conftest import docbridge, docbridge_json


def test_index_writes_a_sealed_docbridge_index(acme: Path) -> None:
    summary = docbridge_json("index", "--root", str(acme), "--json")
    path = acme / ".docbridge" / "index.json"
    assert Path(summary["index"]) == path
    index = json.loads(path.read_text(encoding="utf-8"))
    assert index["type"] == "docbridge-index" and index["schemaVersion"] == 1
    assert index["contentHash"] == canonical_hash({k: v for k, v in index.items() if k != "contentHash"})
    documents = sorted(p.relative_to(acme).as_posix() for p in acme.rglob("*.md"))
    knowledge = {k["path"]: k for k in index["knowledge"]}
    assert sorted(p for p, k in knowledge.items() if k["type"] == "document") == documents
    assert knowledge["src/billing/tax.ts"]["tags"][0] == "module" and len(knowledge["docs/api.md"]["contentHash"]) == 64
    projection = index["projection"]
    assert projection["type"] == "retrieval-index" and projection["params"] == {"k1": 1.2, "b": 0.75}
    assert projection["lexical"]["documentCount"] == len(projection["entries"])
    assert projection["lexical"]["fieldNames"] == sorted(projection["weights"])
    assert "paramsNote" not in projection
    assert docbridge_json("index", "--root", str(acme), "--json")["contentHash"] == summary["contentHash"]


def test_index_records_the_configured_bm25_params(acme: Path) -> None:
    config_path = acme / "doc-bridge.config.json"
    config = json.loads(config_path.read_text())
    config["retrieval"] = {"params": {"k1": 0.9, "b": 0.4}}
    config_path.write_text(json.dumps(config))
    result = docbridge("index", "--root", str(acme))
    assert result.returncode == 0 and "BM25 k1=0.9 b=0.4" in result.stdout and "Note:" not in result.stdout
    index = json.loads((acme / ".docbridge" / "index.json").read_text())
    assert index["projection"]["params"] == {"k1": 0.9, "b": 0.4} and "paramsNote" not in index["projection"]
    config["retrieval"] = {"params": {"k1": 2.0}}  # b keeps its default
    config_path.write_text(json.dumps(config))
    assert docbridge_json("index", "--root", str(acme), "--json")["params"] == {"k1": 2.0, "b": 0.75}
    config["retrieval"] = {"params": {"b": 3}}
    config_path.write_text(json.dumps(config))
    bad = docbridge("index", "--root", str(acme))
    assert bad.returncode == 2 and "retrieval.params.b" in bad.stderr


def test_bench_retrieval_ranks_an_index_file_like_the_repository(acme: Path) -> None:
    docbridge_json("index", "--root", str(acme), "--json")
    suite = acme / "retrieval-suite.json"
    index = acme / ".docbridge" / "index.json"
    from_repo = docbridge_json("bench", "retrieval", str(suite), "--root", str(acme), "--json")
    from_index = docbridge_json("bench", "retrieval", str(suite), "--index", str(index), "--json")
    assert from_index["metrics"] == from_repo["metrics"] and from_index["cases"] == from_repo["cases"]
    tampered = json.loads(index.read_text())
    tampered["projection"]["entries"][0]["title"] = "edited by hand"
    index.write_text(json.dumps(tampered))
    result = docbridge("bench", "retrieval", str(suite), "--index", str(index))
    assert result.returncode == 2 and "contentHash does not match" in result.stderr
    assert docbridge("bench", "retrieval", str(suite), "--index", str(acme / "missing.json")).returncode == 2


def test_list_packages_and_knowledge(acme: Path) -> None:
    config = json.loads((acme / "doc-bridge.config.json").read_text())
    packages = docbridge_json("list", "packages", "--root", str(acme))
    owned = [p["id"] for p in packages["packages"] if p["kind"] == "ownership"]
    assert owned == sorted(config["routing"]["options"]["ownership"])
    manifest = json.loads((acme / "package.json").read_text())
    assert f"package:{manifest['name']}" in {p["id"] for p in packages["packages"]}
    text = docbridge("list", "packages", "--root", str(acme), "--text")
    assert text.returncode == 0 and text.stdout.startswith("acme-api  [ownership] src/api")
    knowledge = docbridge_json("list", "knowledge", "--root", str(acme))
    assert knowledge["count"] == len(knowledge["knowledge"]) and "src/billing/tax.ts" in {
        k["path"] for k in knowledge["knowledge"]}


def test_query_kind_and_id_forms(acme: Path) -> None:
    owned = docbridge_json("query", "ownership", "acme-billing", "--root", str(acme))
    assert owned["target"]["id"] == "acme-billing" and owned["target"]["entityId"] == "area:src/billing"
    assert docbridge_json("query", "package", "acme-billing", "--root", str(acme))["target"] == owned["target"]
    manifest = json.loads((acme / "package.json").read_text())
    package = docbridge_json("query", "package", manifest["name"], "--root", str(acme))
    assert package["target"]["entityId"] == f"package:{manifest['name']}"
    intent = docbridge_json("query", "intent", "find-endpoint", "--root", str(acme))
    assert intent["startHere"] == "docs/api.md"
    assert docbridge_json("query", "change", "tax-rules", "--root", str(acme))["startHere"] == "src/billing/tax.ts"
    wrong = docbridge("query", "package", "src/billing/tax.ts", "--root", str(acme))
    assert wrong.returncode == 2 and "is a module" in wrong.stderr
    missing = docbridge("query", "ownership", "nobody", "--root", str(acme))
    assert missing.returncode == 2 and "acme-billing" in missing.stderr
    assert docbridge("query", "widget", "x", "--root", str(acme)).returncode == 2


def test_ask_answers_with_the_best_match_and_its_handoff(acme: Path) -> None:
    answer = docbridge_json("ask", "where do I change how sales tax is calculated", "--root", str(acme), "--json")
    assert answer["best"]["id"] == "change:tax-rules" and answer["handoff"]["startHere"] == "src/billing/tax.ts"
    text = docbridge("ask", "who owns invoices and VAT", "--root", str(acme))
    assert text.returncode == 0 and "Best match:" in text.stdout and "Start here:" in text.stdout
    nothing = docbridge("ask", "zzqqxx", "--root", str(acme))
    assert nothing.returncode == 1 and "Nothing" in nothing.stdout
    assert docbridge("ask", "   ", "--root", str(acme)).returncode == 2
