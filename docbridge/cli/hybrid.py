"""Hybrid search on the command line (`search --hybrid`, `index --semantic`, `bench retrieval --hybrid`): whether
it is asked for, and the lexical retriever wrapped with the semantic index. Nothing here imports the embedding
model, numpy or the semantic index until hybrid search is asked for (by the option or by `retrieval.hybrid` in
the configuration)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docbridge.cli.common import console

CONFIG_FILE = "doc-bridge.config.json"


def hybrid_configured(root: Path) -> bool:
    """Whether the configuration asks for hybrid search (`retrieval.hybrid`), read without validating the rest
    (an invalid configuration is reported by the command that loads it)."""
    from docbridge.engine.base.safe_io import read_config_file
    try:
        data = read_config_file(root, CONFIG_FILE)
        raw = json.loads(data) if data is not None else None
    except (OSError, ValueError, RecursionError):
        return False
    retrieval = raw.get("retrieval") if isinstance(raw, dict) else None
    return isinstance(retrieval, dict) and retrieval.get("hybrid") is True


def warn(reason: str) -> None:
    """The one warning on stderr when hybrid search falls back to lexical results."""
    console(stderr=True).print(f"docbridge: semantic search skipped, lexical results only: {reason}", markup=False)


def hybrid_retriever(root: Path, lexical: Any, workspace: Any = None, warn_on_stderr: bool = True) -> Any:
    """`lexical` wrapped for hybrid search over `root` (the semantic index brought up to date, saved), or, when
    that cannot be, a wrapper that answers lexically and says why (one warning on stderr)."""
    from docbridge.engine.base.config import load_config
    from docbridge.engine.semantic.hybrid import HybridRetriever, open_semantic
    from docbridge.engine.semantic.index import disk_reader
    config = workspace.config if workspace is not None else load_config(root)
    read = disk_reader(root)
    reader: Callable[[str], str | None] = read
    if workspace is not None:
        state = workspace.state

        def read_buffered(path: str) -> str | None:
            buffered = state.text_of(path)
            return buffered if buffered is not None else read(path)
        reader = read_buffered
    index, embedder, status = open_semantic(root, config, lexical.entries, reader)
    if not status.used and warn_on_stderr:
        warn(status.reason or "unavailable")
    return HybridRetriever(lexical, index, embedder, config.index.rrf_k, status, warn if warn_on_stderr else None)
