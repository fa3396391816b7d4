"""A langchain-core `BaseRetriever` over a Doc Bridge workspace (`pip install 'docbridge[langchain]'`).

    from docbridge import open_workspace
    from docbridge.adapters.langchain import DocBridgeRetriever
    retriever = DocBridgeRetriever(workspace=open_workspace("."), k=5)
    retriever.invoke("how is sales tax calculated")   # -> list[Document]

Each `Document` has the entry's title, summary and body as `page_content`, its id as `id`, and `metadata` with
kind, path, title, evidence, explain, confidence, provenance and score.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from docbridge.api import Workspace


class DocBridgeRetriever(BaseRetriever):
    workspace: Workspace
    k: int = 8
    kinds: list[str] | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        found = self.workspace.retriever(kinds=self.kinds, limit=self.k).retrieve(query)
        return [Document(id=item.id, page_content=item.content,
                         metadata={**item.metadata, "id": item.id, "score": item.score, "source": item.source})
                for item in found]


__all__ = ["DocBridgeRetriever"]
