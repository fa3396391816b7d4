"""A llama-index-core `BaseRetriever` over a Doc Bridge workspace (`pip install 'docbridge[llamaindex]'`).

    from docbridge import open_workspace
    from docbridge.adapters.llamaindex import DocBridgeRetriever
    retriever = DocBridgeRetriever(open_workspace("."), similarity_top_k=5)
    retriever.retrieve("how is sales tax calculated")   # -> list[NodeWithScore]

Each node is a `TextNode` whose id is the entry id, whose text is the title, summary and body, and whose metadata
carries kind, path, title, evidence, explain, confidence and provenance; the score is Doc Bridge's.
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from docbridge.api import Workspace


class DocBridgeRetriever(BaseRetriever):
    def __init__(self, workspace: Workspace, *, similarity_top_k: int = 8, kinds: list[str] | None = None) -> None:
        super().__init__()
        self.workspace = workspace
        self.similarity_top_k = similarity_top_k
        self.kinds = kinds

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = self.workspace.retriever(kinds=self.kinds, limit=self.similarity_top_k).retrieve(
            query_bundle.query_str)
        nodes = []
        for item in found:
            node = TextNode(id_=item.id, text=item.content, metadata={**item.metadata, "source": item.source},
                            excluded_embed_metadata_keys=["evidence", "explain"],
                            excluded_llm_metadata_keys=["evidence", "explain"])
            nodes.append(NodeWithScore(node=node, score=item.score))
        return nodes


__all__ = ["DocBridgeRetriever"]
