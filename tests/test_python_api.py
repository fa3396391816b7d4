"""The Python API (`docbridge.open_workspace`, `Retriever`, `GraphMemory`) and the optional RAG adapters, each
against the real framework base class (skipped with a reason when its extra is not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import docbridge
from docbridge import ArgumentError, GraphMemory, RetrievedDocument, UnknownReference


@pytest.fixture
def repo(acme: Path) -> docbridge.Workspace:
    return docbridge.open_workspace(acme)


def test_search_lookup_handoff_and_findings(repo: docbridge.Workspace, acme: Path) -> None:
    config = json.loads((acme / "doc-bridge.config.json").read_text())
    found = repo.search("createInvoice", limit=2)
    assert found["results"][0]["path"] == "src/billing/invoice.ts"
    assert repo.lookup("acme-billing")["entity"]["id"] == "area:src/billing"
    assert repo.lookup(path="src/billing/tax.ts")["entity"]["kind"] == "module"
    handoff = repo.handoff("acme-billing")
    assert handoff["checks"] == config["routing"]["options"]["ownership"]["acme-billing"]["checks"]
    assert [f["path"] for f in repo.findings(code="DOCBRIDGE_BLOCK_INVALID")] == ["docs/deployment.md"]
    assert repo.findings(path="docs/deployment.md", format="finding")[0]["severity"] == "high"
    assert repo.document("docs/api.md")["text"] == (acme / "docs/api.md").read_text(encoding="utf-8")
    with pytest.raises(UnknownReference):
        repo.handoff("no-such-thing")
    with pytest.raises(ArgumentError, match="leaves the repository"):
        repo.document("../../etc/passwd")
    with pytest.raises(docbridge.BudgetError):
        repo.lookup("acme-billing", budget_tokens=10)


def test_update_moves_the_model_to_the_next_state(repo: docbridge.Workspace, acme: Path) -> None:
    before = repo.revision
    assert repo.search("zanzibarquux")["count"] == 0
    (acme / "docs" / "zanzibar.md").write_text("# Zanzibarquux\n\nMentions `calculateTax`.\n", encoding="utf-8")
    repo.update("docs/zanzibar.md")
    assert repo.revision > before
    assert repo.search("zanzibarquux")["results"][0]["path"] == "docs/zanzibar.md"
    (acme / "docs" / "zanzibar.md").unlink()
    repo.update("docs/zanzibar.md")
    assert repo.search("zanzibarquux")["count"] == 0


def test_the_retriever_returns_retrieved_documents(repo: docbridge.Workspace) -> None:
    documents = repo.retriever(limit=3).retrieve("how is sales tax calculated")
    assert 0 < len(documents) <= 3 and all(isinstance(d, RetrievedDocument) for d in documents)
    first = documents[0]
    entry = repo.search("how is sales tax calculated", limit=1)["results"][0]
    assert first.id == entry["entityId"] and first.content.startswith(entry["title"])
    assert set(first.metadata) >= {"kind", "path", "evidence", "explain", "confidence"}
    assert first.metadata["evidence"][0]["contentHash"] == entry["evidence"][0]["contentHash"]
    assert [d.id for d in repo.retriever(kinds=["module"]).retrieve("tax")] and all(
        d.metadata["kind"] == "module" for d in repo.retriever(kinds=["module"]).retrieve("tax"))


def test_graph_memory_nodes_edges_and_traversal(repo: docbridge.Workspace, acme: Path) -> None:
    graph = repo.graph()
    assert isinstance(graph, GraphMemory)
    node = graph.get_node("module:src/billing/invoice.ts")
    assert node is not None and node.path == "src/billing/invoice.ts"
    assert graph.get_node("module:nowhere.ts") is None
    # src/billing/invoice.ts imports ../util/money (read from the fixture)
    assert "../util/money" in (acme / "src/billing/invoice.ts").read_text()
    imports = graph.find_edges(source="module:src/billing/invoice.ts", kind="imports")
    assert "module:src/util/money.ts" in {e.target for e in imports}
    money = next(e for e in imports if e.target == "module:src/util/money.ts")
    assert money.evidence and money.evidence[0]["path"] == "src/billing/invoice.ts"
    reached = graph.traverse("area:src/billing", depth=1, kinds=["contains"], direction="out")
    modules = sorted(p.relative_to(acme).as_posix() for p in (acme / "src/billing").glob("*.ts"))
    assert [r.node.path for r in reached[1:]] == modules and reached[0].distance == 0
    two = graph.traverse("area:src/billing", depth=2)
    assert max(r.distance for r in two) == 2 and len(two) > len(reached)
    with pytest.raises(UnknownReference):
        graph.traverse("area:nowhere")


def test_open_workspace_refuses_a_missing_root(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="not a directory"):
        docbridge.open_workspace(tmp_path / "missing")


def test_langchain_retriever_is_a_real_base_retriever(repo: docbridge.Workspace) -> None:
    pytest.importorskip("langchain_core", reason="the `langchain` extra is not installed (make test installs it)")
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda

    from docbridge.adapters.langchain import DocBridgeRetriever
    retriever = DocBridgeRetriever(workspace=repo, k=3)
    assert isinstance(retriever, BaseRetriever)
    documents = retriever.invoke("how is sales tax calculated")
    assert documents and all(isinstance(d, Document) for d in documents)
    expected = repo.retriever(limit=3).retrieve("how is sales tax calculated")
    assert [d.id for d in documents] == [e.id for e in expected]
    assert documents[0].page_content == expected[0].content and documents[0].metadata["path"] == expected[0].source
    chain = retriever | RunnableLambda(lambda docs: [d.metadata["path"] for d in docs])  # composes like any runnable
    assert chain.invoke("createInvoice")[0] == "src/billing/invoice.ts"
    batch = retriever.batch(["createInvoice", "calculateTax"])
    assert [b[0].metadata["path"] for b in batch] == ["src/billing/invoice.ts", "src/billing/tax.ts"]


async def test_llamaindex_retriever_is_a_real_base_retriever(repo: docbridge.Workspace) -> None:
    pytest.importorskip("llama_index.core", reason="the `llamaindex` extra is not installed (make test installs it)")
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from docbridge.adapters.llamaindex import DocBridgeRetriever
    retriever = DocBridgeRetriever(repo, similarity_top_k=3)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve("how is sales tax calculated")
    assert nodes and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    expected = repo.retriever(limit=3).retrieve("how is sales tax calculated")
    assert [n.node.node_id for n in nodes] == [e.id for e in expected]
    assert nodes[0].score == expected[0].score and nodes[0].node.metadata["path"] == expected[0].source
    assert "evidence" not in nodes[0].node.get_content(metadata_mode="llm")  # bulky metadata stays out of prompts
    assert next(n.node.node_id for n in await retriever.aretrieve("createInvoice")) == "module:src/billing/invoice.ts"
