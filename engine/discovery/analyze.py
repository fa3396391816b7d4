"""Dispatch one file to its analyzer, and the process-pool entry point for large scans."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.model import FileFacts, to_row
from docbridge.engine.discovery import manifests, markdown, typescript
from docbridge.engine.discovery.files import read_ahead, read_text

Analyzed = tuple[str, str, str, Any]  # kind, path, "facts" | "same" | "skip", row | content hash | skip reason

ANALYZER_VERSIONS = {
    "markdown": markdown.ANALYZER_VERSION,
    "typescript": typescript.ANALYZER_VERSION,
    "manifests": manifests.ANALYZER_VERSION,
}


def budget_reason(kind: str, text: str) -> str | None:
    """Why a file is beyond its analyzer's budgets (a counted skip reason), else None."""
    if kind == "document":
        return markdown.budget_reason(text)
    return None


def analyze_file(kind: str, path: str, text: str, data: bytes | None = None) -> FileFacts:
    if kind == "document":
        return markdown.analyze_markdown(path, text, data)
    if kind == "module":
        return typescript.analyze_typescript(path, text, data)
    if kind == "package-manifest":
        return manifests.analyze_package_json(path, text, data)
    if kind == "tsconfig":
        return manifests.analyze_tsconfig(path, text, data)
    if kind == "navigation":
        return manifests.analyze_navigation(path, text, data)
    raise ValueError(f"no analyzer for {kind!r} files ({path})")


def read_and_analyze(root: Path, max_bytes: int, kind: str, path: str, known_hash: str | None,
                     real_root: str | None = None, real_folders: dict[str, str] | None = None) -> Analyzed:
    """One file of a scan, read and analyzed where it runs (a pool worker, or the scan itself): its facts as a
    row; or `("same", hash)` when its content hash is `known_hash` (the cached facts still hold); or
    `("skip", reason)` when it cannot be read or is beyond its analyzer's budgets. `real_root`, `real_folders`:
    the root's real path and a memo of folders' real paths, kept by a caller that reads many files."""
    read = read_text(root, path, max_bytes, real_root, real_folders)
    if read.reason is not None or read.data is None or read.text is None:
        return kind, path, "skip", read.reason or "unreadable"
    content_hash = sha256_bytes(read.data)
    if content_hash == known_hash:
        return kind, path, "same", content_hash
    over_budget = budget_reason(kind, read.text)
    if over_budget is not None:
        return kind, path, "skip", over_budget
    return kind, path, "facts", to_row(analyze_file(kind, path, read.text, read.data))


def analyze_batch(job: tuple[str, int, list[tuple[str, str, str | None]]]) -> list[Analyzed]:
    """Worker entry point: (root, byte limit, [(kind, path, known hash)]) in, what `read_and_analyze` says of each
    out (rows pickle cheaply; the worker reads the files, so the scan hands out paths, not contents)."""
    root, max_bytes, batch = job
    base = Path(root)
    real_root = os.path.realpath(root)  # once a batch, not once a file
    real_folders: dict[str, str] = {}  # and each folder's once a batch (a batch is a run of sorted paths)
    read_ahead(base, (path for _, path, _ in batch), real_root, real_folders)
    return [read_and_analyze(base, max_bytes, kind, path, known, real_root, real_folders)
            for kind, path, known in batch]
