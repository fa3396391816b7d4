"""Retrievers for Python RAG frameworks, each behind its own extra: `langchain` (langchain-core) and `llamaindex`
(llama-index-core). Import the module of the framework you use; neither is imported by `docbridge` itself."""
