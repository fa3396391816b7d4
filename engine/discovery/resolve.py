"""Cross-file resolution: each document and module resolved against the universe of what exists.

`engine.discovery.universe` indexes what exists; `engine.discovery.references` resolves a document's links,
mentions and declarations; `docbridge.engine.discovery.imports` resolves a module's imports. Both are pure functions of
one file's facts and the universe, and record the dependency keys of every lookup they make.
"""

from __future__ import annotations

from typing import Any

from docbridge.engine.base.model import MarkdownFacts, ModuleFacts
from docbridge.engine.discovery import versions
from docbridge.engine.discovery.analyze import ANALYZER_VERSIONS
from docbridge.engine.discovery.imports import ImportOutcome, ModuleResolution, resolve_module
from docbridge.engine.discovery.references import (
    DocumentResolution,
    Reference,
    ReferenceStatus,
    find_heading,
    resolve_document,
    site_slug,
)
from docbridge.engine.discovery.universe import Key, Universe

RESOLVER_VERSION = versions.RESOLVER

Resolution = DocumentResolution | ModuleResolution


def analyzer_versions() -> dict[str, str]:
    """Every analyzer's version and the resolver's: what snapshots and input fingerprints record."""
    return {**ANALYZER_VERSIONS, "resolve": RESOLVER_VERSION}


def resolve(universe: Universe, facts: Any) -> Resolution | None:
    """The resolution of a document or a module (None for other files)."""
    if isinstance(facts, MarkdownFacts):
        return resolve_document(universe, facts)
    if isinstance(facts, ModuleFacts):
        return resolve_module(universe, facts)
    return None


__all__ = ["DocumentResolution", "ImportOutcome", "Key", "ModuleResolution", "Reference", "ReferenceStatus",
           "Resolution", "Universe", "analyzer_versions", "find_heading", "resolve", "resolve_document",
           "resolve_module", "site_slug"]
