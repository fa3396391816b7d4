"""Dispatch one file to its analyzer, and the process-pool entry point for large scans."""

from __future__ import annotations

from typing import Any

from docbridge.engine.base.model import FileFacts, to_row
from docbridge.engine.discovery import manifests, markdown, typescript

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


def analyze_batch(batch: list[tuple[str, str, bytes]]) -> list[tuple[str, str, Any]]:
    """Worker entry point: (kind, path, bytes) in, (kind, path, row) out (rows pickle cheaply)."""
    out = []
    for kind, path, data in batch:
        text = data.decode("utf-8").removeprefix("\ufeff")
        out.append((kind, path, to_row(analyze_file(kind, path, text, data))))
    return out
