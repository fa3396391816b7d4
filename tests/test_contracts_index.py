"""DocBridgeIndexV1 (`.docbridge/index.json`) kept member for member with the original's, and `llms.txt`.

`docbridge index` on the fixtures writes an index that validates against the JSON Schema the package ships
(`engine/data/schemas/doc-bridge-index-v1.schema.json`), and a sample written from the reference's own examples
validates too (documents that break the contract do not). An old consumer, which reads only the members the
original documents (`i.knowledge.length, i.lookup.packages.length`, ownership records, handoffs, project,
`contentHashAlgo`), passes unchanged on our output. A reader refuses an identity it does not read (the legacy
`sha256-normalized-v1`, an unknown algorithm, none at all) with a sentence naming the file. `index` writes
`llms.txt` at the repository root: the agent reading list, the documents under `corpus.agent.root`, as `render
llms.txt` prints it. Expectations come from the fixtures' files (doc-bridge.config.json, package.json,
frontmatter), not from our output.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, docbridge, docbridge_json
from support.schemas import assert_invalid, assert_valid, package_schema

ALGO = "sha256-semantic-v1"
LEGACY = "sha256-normalized-v1"


INDEX_SCHEMA = package_schema("doc-bridge-index-v1.schema.json")


def valid(document: Any) -> None:
    assert_valid(document, INDEX_SCHEMA)


def invalid(document: Any) -> None:
    assert_invalid(document, INDEX_SCHEMA)


def seal(document: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of every member but contentHash (sorted keys, no whitespace, UTF-8)."""
    body = {k: v for k, v in document.items() if k != "contentHash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_of(root: Path) -> dict[str, Any]:
    return json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))


def manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def build(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    summary = docbridge_json("index", "--root", str(root), "--json")
    index = json.loads((root / ".docbridge" / "index.json").read_text(encoding="utf-8"))
    return summary, index


def expected_packages(root: Path) -> list[str]:
    """The original's `lookup.packages`: every ownership record, then every workspace package no record claims
    (by path), which we name by entity id `package:<manifest name>`."""
    records = config_of(root)["routing"]["options"]["ownership"]
    claimed = {record["path"].rstrip("/") for record in records.values()}
    workspaces = manifest(root / "package.json").get("workspaces", [])
    members = []
    for pattern in workspaces:
        for package in sorted(root.glob(f"{pattern}/package.json")):
            directory = package.parent.relative_to(root).as_posix()
            if directory not in claimed:
                members.append(f"package:{manifest(package)['name']}")
    return sorted([*records, *members])


def frontmatter_title(path: Path) -> str | None:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != "---":
        return None
    for line in lines[1:lines.index("---", 1)]:
        if line.startswith("title:"):
            return line.split(":", 1)[1].strip()
    return None


def agent_corpus(root: Path) -> list[Path]:
    """The agent reading list the original's `index` writes to llms.txt: the Markdown under corpus.agent.root."""
    agent_root = config_of(root).get("corpus", {}).get("agent", {}).get("root", "docs/for-agents")
    return sorted((root / agent_root).rglob("*.md")) if (root / agent_root).is_dir() else []


# ------------------------------------------------------------------------------------------ the fixtures


@pytest.mark.parametrize("fixture", ["acme", "monorepo"])
def test_index_on_the_fixtures_validates_and_carries_every_member(fixture: str, tmp_path: Path) -> None:
    root = copy_fixture(fixture, tmp_path)
    summary, index = build(root)
    valid(index)
    assert {"schemaVersion", "contentHash", "contentHashAlgo", "project", "knowledge", "lookup", "handoffs",
            "projection"} <= set(index)
    assert index["schemaVersion"] == 1 and index["contentHashAlgo"] == ALGO
    assert index["projection"]["schemaVersion"] == 1 and index["projection"]["contentHashAlgo"] == ALGO
    assert index["contentHash"] == seal(index) == summary["contentHash"]
    assert index["projection"]["contentHash"] == seal(index["projection"])
    assert index["project"] == {"name": manifest(root / "package.json")["name"], "root": "."}
    # knowledge[]: every document, with its hash
    documents = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".docbridge" not in p.parts)
    assert sorted(k["path"] for k in index["knowledge"] if k["type"] == "document") == documents
    assert all(len(k["contentHash"]) == 64 for k in index["knowledge"])

    config = config_of(root)
    records = config["routing"]["options"]["ownership"]
    lookup = index["lookup"]
    assert lookup["packages"] == expected_packages(root) and summary["packages"] == len(lookup["packages"])
    assert sorted(lookup["ownership"]) == lookup["packages"] == sorted(index["handoffs"])
    for record_id, record in records.items():
        written = lookup["ownership"][record_id]
        assert written["id"] == record_id and written["path"] == record["path"]
        for key in ("purpose", "agentDoc", "humanDoc"):
            assert written.get(key) == record.get(key)
        if "checks" in record:
            assert written["checks"] == record["checks"] and written["checksSource"] == "ownership"
        else:  # the package's verify scripts, as its handoff runs them
            scripts = manifest(root / "package.json")["scripts"]
            assert written["checks"] == [f"npm run {s}" if s != "test" else "npm test"
                                         for s in ("test", "lint", "typecheck") if s in scripts]
            assert written["checksSource"] == "package-scripts"
    routes = config["routing"]["options"]
    assert lookup["intents"] == {i["id"]: {"id": i["id"], "title": i["title"], "paths": i["paths"]}
                                 for i in routes.get("intents", [])}
    assert lookup["changes"] == {c["id"]: {"id": c["id"], "title": c["title"], "startHere": c["startHere"]}
                                 for c in routes.get("changes", [])}
    for package_id, handoff in index["handoffs"].items():
        assert handoff["type"] == "agent-handoff" and handoff["source"] == ".docbridge/index.json"
        assert handoff["target"]["id"] == package_id and handoff["checks"] == lookup["ownership"][package_id]["checks"]
        agent_doc = lookup["ownership"][package_id].get("agentDoc")
        if agent_doc:
            assert handoff["startHere"] == agent_doc
    # deterministic: a second run (llms.txt now in place) writes the same bytes
    first = (root / ".docbridge" / "index.json").read_bytes()
    again, _ = build(root)
    assert again["contentHash"] == index["contentHash"] and (root / ".docbridge" / "index.json").read_bytes() == first


def test_bench_retrieval_reads_the_new_index_like_the_repository(acme: Path) -> None:
    build(acme)
    suite = acme / "retrieval-suite.json"
    from_index = docbridge_json("bench", "retrieval", str(suite), "--index", str(acme / ".docbridge" / "index.json"),
                                "--json")
    from_repo = docbridge_json("bench", "retrieval", str(suite), "--root", str(acme), "--json")
    assert from_index["metrics"] == from_repo["metrics"] and from_index["cases"] == from_repo["cases"]


# ------------------------------------------------------------------------------------------ the reference's sample


def _hash(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def reference_sample() -> dict[str, Any]:
    """A DocBridgeIndexV1 written from the reference: the RetrievalIndexV1 example of *Retrieval index v1* as
    `projection` ("…" filled in), `knowledge[]` entries as the original writes them (an agent document with its
    body, a projected module with contentHash and tags), `lookup` and `handoffs` in the original's shape."""
    entry = {
        "id": "module:src/query/search.ts", "kind": "module", "path": "src/query/search.ts", "title": "search.ts",
        "aliases": [], "symbols": ["searchIndex"], "tags": ["module", "ts", "query"],
        "fields": {"title": "search.ts", "headings": "", "path": "src/query/search.ts", "symbols": "searchIndex",
                   "summary": "", "body": "", "aliases": "module ts query"},
        "graph": {"pagerank": 0, "inboundLinks": 3, "coveredBy": ["document:docs/agent-corpus/query.md"],
                  "mentionedBy": ["document:docs/ranking.md"], "areaId": "area:src/query",
                  "packageId": "package:@agentskit/doc-bridge", "inbound": [], "outbound": []},
        "contentHash": _hash("search.ts"), "provenance": "observed", "confidence": "observed",
        "ownershipId": "doc-bridge-query",
    }
    projection = {
        "type": "retrieval-index", "schemaVersion": 1, "contentHash": _hash("projection"), "contentHashAlgo": ALGO,
        "snapshotHash": _hash("snapshot"), "overlayHash": _hash("overlay"), "configurationHash": _hash("config"),
        "lexiconVersion": 1, "graphMetricsVersion": "1.0.0",
        "weights": {"title": 4, "headings": 3, "symbols": 3, "path": 2, "aliases": 2, "summary": 2, "body": 1},
        "params": {"k1": 1.2, "b": 0.75},
        "lexical": {"version": 1, "documentCount": 364, "fieldNames": ["aliases", "body", "headings", "path",
                                                                        "summary", "symbols", "title"],
                    "averageFieldLength": {"title": 1.5}},
        "entries": [entry],
    }
    handoff = {
        "type": "agent-handoff", "schemaVersion": 1, "source": ".doc-bridge/index.json",
        "target": {"type": "package", "id": "doc-bridge-query", "path": "src/query"},
        "startHere": "docs/agent-corpus/query.md", "readBeforeEditing": ["docs/agent-corpus/query.md", "AGENTS.md"],
        "editRoots": ["src/query"], "checks": ["pnpm test"], "bridge": {"humanDoc": "linked"},
        "humanDoc": "docs/query.md", "notes": ["Search, query and ask."],
    }
    document = {
        "schemaVersion": 1, "contentHashAlgo": ALGO, "generatedAt": "2026-01-01T00:00:00.000Z",
        "project": {"name": "@agentskit/doc-bridge", "root": "."},
        "knowledge": [
            {"id": "query", "type": "agent-doc", "title": "Query", "path": "docs/agent-corpus/query.md",
             "description": "How search ranks.", "body": "Search ranks the projection."},
            {"id": "module:src/query/search.ts", "type": "module", "title": "search.ts", "path": "src/query/search.ts",
             "description": "", "symbols": ["searchIndex"], "tags": ["module", "ts", "query"],
             "contentHash": entry["contentHash"]},
        ],
        "handoffs": {"doc-bridge-query": handoff},
        "lookup": {
            "packages": ["doc-bridge-query"],
            "ownership": {"doc-bridge-query": {"id": "doc-bridge-query", "path": "src/query", "checks": ["pnpm test"],
                                               "checksSource": "ownership", "agentDoc": "docs/agent-corpus/query.md",
                                               "humanDoc": "docs/query.md", "purpose": "Search, query and ask."}},
            "intents": {"find-ranking": {"id": "find-ranking", "title": "Find the ranking",
                                         "paths": ["src/retrieval/rank.ts"]}},
            "changes": {"ranking-weights": {"id": "ranking-weights", "title": "Change a ranking weight",
                                            "startHere": "src/retrieval/weights.ts",
                                            "relatedPackages": ["doc-bridge-query"]}},
        },
        "projection": projection,
    }
    document["contentHash"] = seal(document)
    return document


def test_a_sample_from_the_reference_validates_and_broken_ones_do_not() -> None:
    sample = reference_sample()
    valid(sample)
    minimal = {"schemaVersion": 1, "contentHash": _hash("x"), "contentHashAlgo": ALGO, "knowledge": []}
    valid(minimal)  # every other member is optional in the original's schema
    valid({**sample, "type": "docbridge-index", "snapshotHash": _hash("s"), "extra": {"anything": True}})

    def broken(change: Any) -> dict[str, Any]:
        document = copy.deepcopy(sample)
        change(document)
        return document

    invalid(broken(lambda d: d.update(contentHashAlgo=LEGACY)))
    invalid(broken(lambda d: d.pop("contentHashAlgo")))
    invalid(broken(lambda d: d.pop("knowledge")))
    invalid(broken(lambda d: d.update(schemaVersion=2)))
    invalid(broken(lambda d: d.update(contentHash="not-a-hash")))
    invalid(broken(lambda d: d["lookup"].pop("packages")))
    invalid(broken(lambda d: d["lookup"]["ownership"]["doc-bridge-query"].pop("checks")))
    invalid(broken(lambda d: d["lookup"]["ownership"]["doc-bridge-query"].update(checksSource="guessed")))
    invalid(broken(lambda d: d["lookup"]["changes"]["ranking-weights"].pop("startHere")))
    invalid(broken(lambda d: d["handoffs"]["doc-bridge-query"].pop("startHere")))
    invalid(broken(lambda d: d["handoffs"]["doc-bridge-query"].update(type="handoff")))
    invalid(broken(lambda d: d["knowledge"][0].pop("path")))
    invalid(broken(lambda d: d["knowledge"][1].update(contentHash="abc")))
    invalid(broken(lambda d: d["project"].update(name="")))
    invalid(broken(lambda d: d["projection"].update(contentHashAlgo=LEGACY)))
    invalid(broken(lambda d: d["projection"].update(schemaVersion=5)))
    invalid(broken(lambda d: d["projection"]["entries"][0].update(kind="widget")))
    invalid(broken(lambda d: d["projection"]["entries"][0]["graph"].update(areaId=None)))


# ------------------------------------------------------------------------------------------ an old consumer

OLD_CONSUMER = r'''
import json, sys
i = json.load(open(sys.argv[1], encoding="utf-8"))
assert i["schemaVersion"] == 1, i["schemaVersion"]
assert i["contentHashAlgo"] in ("sha256-normalized-v1", "sha256-semantic-v1"), i["contentHashAlgo"]
assert isinstance(i["contentHash"], str) and len(i["contentHash"]) == 64
name = i["project"]["name"]
for k in i["knowledge"]:
    assert k["id"] and k["type"] and k["title"] and k["path"], k
    assert len(k.get("contentHash", "0" * 64)) == 64
packages = i["lookup"]["packages"]
ownership = i["lookup"].get("ownership", {})
routes = {}
for package in packages:
    record = ownership[package]
    assert record["id"] == package and record["path"] and isinstance(record["checks"], list)
    handoff = i["handoffs"][package]
    assert handoff["type"] == "agent-handoff" and handoff["source"]
    assert handoff["target"]["id"] == package and handoff["startHere"]
    assert isinstance(handoff["readBeforeEditing"], list) and isinstance(handoff["editRoots"], list)
    assert isinstance(handoff["checks"], list) and isinstance(handoff["notes"], list)
    routes[package] = {"path": record["path"], "checks": record["checks"], "startHere": handoff["startHere"],
                       "editRoots": handoff["editRoots"]}
intents = {k: v["paths"] for k, v in i["lookup"].get("intents", {}).items()}
changes = {k: v["startHere"] for k, v in i["lookup"].get("changes", {}).items()}
projection = i.get("projection") or {}
print(json.dumps({"name": name, "knowledge": len(i["knowledge"]), "packages": len(packages), "routes": routes,
                  "intents": intents, "changes": changes, "entries": len(projection.get("entries", []))}))
'''


def old_consumer(path: Path) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", OLD_CONSUMER, str(path)], capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_an_old_consumer_reads_our_index(acme: Path, monorepo: Path) -> None:
    build(acme)
    read = old_consumer(acme / ".docbridge" / "index.json")
    config = config_of(acme)
    records = config["routing"]["options"]["ownership"]
    markdown = [p for p in acme.rglob("*.md") if ".docbridge" not in p.parts]
    assert read["name"] == manifest(acme / "package.json")["name"]
    assert read["packages"] == len(records) and read["knowledge"] >= len(markdown) and read["entries"] > 0
    for record_id, record in records.items():
        route = read["routes"][record_id]
        assert route["path"] == record["path"] and route["editRoots"] == [record["path"]]
        if "checks" in record:
            assert route["checks"] == record["checks"]
        if "agentDoc" in record:
            assert route["startHere"] == record["agentDoc"]
    assert read["intents"] == {i["id"]: i["paths"] for i in config["routing"]["options"]["intents"]}
    assert read["changes"] == {c["id"]: c["startHere"] for c in config["routing"]["options"]["changes"]}
    # the sample written from the reference reads alike
    sample = acme / "sample.json"
    sample.write_text(json.dumps(reference_sample()), encoding="utf-8")
    assert old_consumer(sample)["routes"]["doc-bridge-query"]["startHere"] == "docs/agent-corpus/query.md"
    build(monorepo)
    read = old_consumer(monorepo / ".docbridge" / "index.json")
    assert sorted(read["routes"]) == expected_packages(monorepo)
    core = config_of(monorepo)["routing"]["options"]["ownership"]["mono-core"]
    assert read["routes"]["mono-core"]["checks"] == core["checks"]


# ------------------------------------------------------------------------------------------ legacy refusal


def _resealed(document: dict[str, Any], **members: Any) -> dict[str, Any]:
    changed = {**document, **members}
    changed = {k: v for k, v in changed.items() if v is not None}
    changed["contentHash"] = seal(changed)
    return changed


@pytest.mark.parametrize(("algo", "says"), [
    (LEGACY, "legacy index identity"),
    ("sha512-magic-v9", "unsupported contentHashAlgo"),
    (None, "carries no contentHashAlgo"),
])
def test_a_reader_refuses_an_identity_it_does_not_read(acme: Path, algo: str | None, says: str) -> None:
    _, index = build(acme)
    suite = acme / "retrieval-suite.json"
    target = acme / "other-index.json"
    target.write_text(json.dumps(_resealed(index, contentHashAlgo=algo)), encoding="utf-8")
    result = docbridge("bench", "retrieval", str(suite), "--index", str(target))
    assert result.returncode == 2, result.stdout + result.stderr
    message = result.stderr
    assert str(target) in message and says in message and "docbridge index" in message
    if algo == "sha512-magic-v9":
        assert "compatible" in message
    assert "Traceback" not in message


def test_the_original_legacy_index_and_a_projection_of_another_identity_are_refused(acme: Path) -> None:
    _, index = build(acme)
    suite = acme / "retrieval-suite.json"
    # an index as the original 1.4.3 writes it: no `type`, the legacy identity, knowledge/handoffs/lookup
    legacy = acme / "legacy-index.json"
    original = {k: v for k, v in reference_sample().items() if k != "projection"}
    legacy.write_text(json.dumps(_resealed(original, contentHashAlgo=LEGACY)), encoding="utf-8")
    result = docbridge("bench", "retrieval", str(suite), "--index", str(legacy))
    assert result.returncode == 2 and str(legacy) in result.stderr and "legacy index identity" in result.stderr
    # the projection carries its own identity, refused alike
    projection = dict(index["projection"], contentHashAlgo=LEGACY)
    projection["contentHash"] = seal(projection)
    mixed = acme / "mixed-index.json"
    mixed.write_text(json.dumps(_resealed(index, projection=projection)), encoding="utf-8")
    result = docbridge("bench", "retrieval", str(suite), "--index", str(mixed))
    assert result.returncode == 2 and f"{mixed}: projection" in result.stderr and LEGACY in result.stderr
    # the index we write is read
    assert docbridge("bench", "retrieval", str(suite), "--index", str(acme / ".docbridge" / "index.json"),
                     "--json").returncode == 0


# ------------------------------------------------------------------------------------------ llms.txt


def test_index_writes_llms_txt_with_the_agent_reading_list(acme: Path) -> None:
    assert not (acme / "llms.txt").exists()
    summary, _ = build(acme)
    llms = acme / "llms.txt"  # at the repository root, as the original's index writes it
    assert Path(summary["llmsTxt"]) == llms and not (acme / ".docbridge" / "llms.txt").exists()
    text = llms.read_text(encoding="utf-8")
    assert text.startswith(f"# {manifest(acme / 'package.json')['name']}\n\n> ") and "\n## Knowledge\n" in text
    assert "doc-bridge:generated" not in text
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    corpus = agent_corpus(acme)
    assert [line.split("](", 1)[1].split(")", 1)[0] for line in lines] == [p.relative_to(acme).as_posix()
                                                                          for p in corpus]
    assert summary["llmsTxtEntries"] == len(corpus) == 1 < len(list(acme.rglob("*.md")))
    for line, path in zip(lines, corpus):
        assert line.startswith(f"- [{frontmatter_title(path)}](")
    # `render llms.txt` prints the same bytes, and its freshness check agrees
    assert docbridge("render", "llms.txt", "--root", str(acme)).stdout == text
    assert docbridge("render", "llms.txt", "--root", str(acme), "--check").returncode == 0
    # a new agent document joins the list at the next index, in path order
    (acme / "docs" / "for-agents" / "api.md").write_text("# API for agents\n\nRoutes live in src/api.\n",
                                                         encoding="utf-8")
    assert build(acme)[0]["llmsTxtEntries"] == 2
    lines = [line for line in llms.read_text(encoding="utf-8").splitlines() if line.startswith("- [")]
    assert lines[0] == "- [API for agents](docs/for-agents/api.md): Routes live in src/api."


def test_a_repository_without_an_agent_corpus_gets_no_llms_txt(monorepo: Path) -> None:
    # monorepo configures no corpus.agent.root and has no docs/for-agents: nothing to list, no file written
    assert not agent_corpus(monorepo)
    summary, index = build(monorepo)
    assert summary["llmsTxt"] is None and summary["llmsTxtEntries"] == 0 and not (monorepo / "llms.txt").exists()
    assert "not written: no agent corpus" in docbridge("index", "--root", str(monorepo)).stdout
    assert index["lookup"]["packages"]  # the index itself is complete
    # one that exists is kept fresh (here: the empty reading list)
    (monorepo / "llms.txt").write_text("stale\n", encoding="utf-8")
    summary, _ = build(monorepo)
    assert Path(summary["llmsTxt"]) == monorepo / "llms.txt"
    assert (monorepo / "llms.txt").read_text(encoding="utf-8") == docbridge(
        "render", "llms.txt", "--root", str(monorepo)).stdout


def test_acme_llms_txt_lists_its_one_agent_document(acme: Path) -> None:
    build(acme)
    lines = [line for line in (acme / "llms.txt").read_text(encoding="utf-8").splitlines() if line.startswith("- [")]
    billing = acme / "docs" / "for-agents" / "billing.md"
    assert lines == [f"- [{frontmatter_title(billing)}](docs/for-agents/billing.md): Read the human billing guide "
                     "first. These rules are stricter than the guide."]
    # the human documentation is in index.json's knowledge[], not in llms.txt
    assert not any("docs/billing.md)" in line or "AGENTS.md" in line for line in lines)


def test_index_writes_llms_txt_through_the_project_template(acme: Path) -> None:
    (acme / "templates").mkdir()
    (acme / "templates" / "llms.txt.j2").write_text(
        "{{ project }} for agents\n{% for doc in documents %}* {{ doc.path }}\n{% endfor %}", encoding="utf-8")
    config = config_of(acme)
    config["render"] = {"templates": {"llms.txt": "templates/llms.txt.j2"}}
    (acme / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
    build(acme)
    assert (acme / "llms.txt").read_text(encoding="utf-8") == \
        "@acme/orders-api for agents\n* docs/for-agents/billing.md\n"
    # a template that does not parse fails before anything is written
    (acme / "templates" / "llms.txt.j2").write_text("{% for doc in documents %}", encoding="utf-8")
    before = {p: p.read_bytes() for p in (acme / "llms.txt", acme / ".docbridge" / "index.json")}
    (acme / "docs" / "for-agents" / "billing.md").write_text("# Changed\n\nNew text.\n", encoding="utf-8")
    result = docbridge("index", "--root", str(acme))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in before} == before
