"""Doc Bridge for Python programs: the repository's documentation and code as one queryable model.

    import docbridge
    repo = docbridge.open_workspace("path/to/repo")
    repo.search("createInvoice")                 # ranked entries with evidence (the knowledge.search payload)
    repo.lookup("src/billing")                   # everything to read before editing (knowledge.lookup)
    repo.handoff("acme-billing")                 # where to start, what to edit and run (handoff.resolve)
    repo.findings(code="LINK_BROKEN")            # open findings
    repo.retriever().retrieve("sales tax")       # RetrievedDocument list for RAG
    repo.graph().traverse("area:src/billing")    # the graph through the GraphMemory contract

Optional adapters: `docbridge.adapters.langchain` (langchain-core `BaseRetriever`) and
`docbridge.adapters.llamaindex` (llama-index-core `BaseRetriever`), installed with the `langchain` and
`llamaindex` extras. The MCP server (`docbridge mcp`) lives in `docbridge.mcp_server` (the `mcp` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docbridge.engine import __version__

if TYPE_CHECKING:
    from docbridge.api import (
        ArgumentError,
        BudgetError,
        GraphEdge,
        GraphMemory,
        GraphNode,
        RetrievedDocument,
        Retriever,
        UnknownReference,
        Workspace,
        open_workspace,
    )

__all__ = ["ArgumentError", "BudgetError", "GraphEdge", "GraphMemory", "GraphNode", "RetrievedDocument", "Retriever",
           "UnknownReference", "Workspace", "__version__", "open_workspace"]


def __getattr__(name: str) -> Any:
    # The API loads the engine; the language server's start-up and the CLI import `docbridge.*` too and must not
    # pay for it, so the API's names are loaded on first use.
    if name in __all__:
        from docbridge import api

        return getattr(api, name)
    raise AttributeError(f"module 'docbridge' has no attribute {name!r}")
