"""Answers for an open document before the first scan of its repository has finished.

A provisional state resolves the document against the file system itself instead of a scanned universe:
whether a linked file or a mentioned path exists is one `stat` (inside the root, ignore rules applied),
and a linked document's headings come from analyzing that one document. What only a full scan can know
(which module declares a symbol, packages and areas, near matches of a misspelt path) is unknown here, so
the findings it gives are the ones the file system decides completely, and an editor feature that finds
nothing in it waits for the scan instead of answering "nothing".

Analyzing the linked documents for their headings is most of the work (two thirds of it for a guide that
links to a dozen pages). A state built with `linked=False` skips them: its findings leave out what needs them
(an anchor in another document), so the first diagnostics of a document opened during the scan arrive sooner;
the complete state follows.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from docbridge.engine.base.config import Config
from docbridge.engine.base.model import MarkdownFacts
from docbridge.engine.discovery.analyze import analyze_file
from docbridge.engine.discovery.files import DEFAULT_EXCLUDED_DIRS, IgnoreRules, file_kind, normalise, read_text
from docbridge.engine.discovery.layout import Layout
from docbridge.engine.discovery.references import resolve_document
from docbridge.engine.discovery.universe import Key, Universe
from docbridge.engine.state.model_state import ModelState
from immutables import Map

# the findings a provisional resolution decides exactly as a full scan would
PROVISIONAL_CODES = frozenset({"LINK_BROKEN", "LINK_ANCHOR_MISSING", "DOCBRIDGE_BLOCK_INVALID",
                               "GENERATED_REGION_EDITED"})


class _LazyIgnoreRules(IgnoreRules):
    """Ignore rules that read each directory's `.gitignore` the first time a path below it is asked about."""

    def __init__(self, root: Path, config: Config) -> None:
        super().__init__(config)
        self._root = root
        self._loaded: set[str] = set()

    def _load(self, path: str, is_dir: bool) -> None:
        parts = path.split("/")
        for depth in range(len(parts) if is_dir else len(parts) - 1, -1, -1):
            directory = "/".join(parts[:depth])
            if directory in self._loaded:
                continue
            self._loaded.add(directory)
            candidate = self._root / directory / ".gitignore"
            try:
                if candidate.is_file() and os.path.realpath(candidate).startswith(os.path.realpath(self._root)):
                    self.add_gitignore(directory, candidate.read_text(encoding="utf-8", errors="replace"))
            except (OSError, ValueError):
                continue

    def is_ignored(self, path: str, is_dir: bool = False) -> bool:
        self._load(path, is_dir)
        return super().is_ignored(path, is_dir)


class _Disk:
    """What exists under the root, asked one path at a time (memoised)."""

    def __init__(self, root: Path, config: Config, rules: IgnoreRules, buffers: Mapping[str, str],
                 linked: bool = True) -> None:
        self.root = root
        self.linked = linked  # whether documents other than the open buffers are analyzed when asked about
        self.unread: set[str] = set()  # documents asked about and not analyzed (`linked` False)
        self.real_root = os.path.realpath(root)
        self.config = config
        self.rules = rules
        self.buffers = buffers
        self.kinds: dict[str, str | None] = {}
        self.documents: dict[str, Any] = {}

    def kind(self, path: str) -> str | None:
        """document | module | other | directory | None (missing, ignored or outside the root)."""
        found = self.kinds.get(path, "?")
        if found != "?":
            return found
        result: str | None = None
        if path and not any(p in DEFAULT_EXCLUDED_DIRS for p in path.split("/")):
            full = self.root / path
            if path in self.buffers:
                result = file_kind(path) if file_kind(path) in ("document", "module") else "other"
            else:
                try:
                    info = os.stat(full)
                    real = os.path.realpath(full)
                    inside = real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)
                except OSError:
                    info, inside = None, False
                if info is not None and inside:
                    if stat.S_ISDIR(info.st_mode):
                        result = None if self.rules.is_ignored(path, is_dir=True) else "directory"
                    elif stat.S_ISREG(info.st_mode) and not self.rules.is_ignored_anywhere(path):
                        kind = file_kind(path)
                        too_large = info.st_size > self.config.limits.max_file_bytes
                        result = kind if kind in ("document", "module") and not too_large else "other"
        self.kinds[path] = result
        return result

    def document(self, path: str) -> Any | None:
        if path in self.documents:
            return self.documents[path]
        facts = None
        if self.kind(path) == "document":
            text = self.buffers.get(path)
            if text is None and not self.linked:
                self.unread.add(path)
                return None
            if text is None:
                read = read_text(self.root, path, self.config.limits.max_file_bytes)
                text = read.text if read.reason is None else None
            if text is not None:
                facts = analyze_file("document", path, text)
        self.documents[path] = facts
        return facts


class _Index(Mapping[str, Any]):
    """A read-only view of one kind of path on disk, for the resolver's `in` and `get` lookups."""

    def __init__(self, disk: _Disk, kind: str) -> None:
        self.disk = disk
        self.kind = kind

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.disk.kind(path) == self.kind

    def __getitem__(self, path: str) -> Any:
        if path not in self:
            raise KeyError(path)
        if self.kind == "document":
            return self.disk.document(path)
        return 1 if self.kind == "directory" else True

    def __iter__(self) -> Iterator[str]:  # only what was asked about: a provisional universe is never listed
        return iter(sorted(p for p, k in self.disk.kinds.items() if k == self.kind))

    def __len__(self) -> int:
        return sum(1 for k in self.disk.kinds.values() if k == self.kind)


class ProvisionalUniverse(Universe):
    """A universe read from the file system on demand: no symbols, packages, areas, site routes or near matches."""

    __slots__ = ()
    partial = True

    def fuzzy(self, token: str, deps: set[Key], limit: int = 3, cutoff: float = 0.92) -> list[tuple[str, float]]:
        return []

    def suggest(self, target: str, limit: int = 3, cutoff: float = 0.9) -> list[str]:
        return []

    def symbol_owners(self, name: str, deps: set[Key]) -> list[str]:
        return []

    def renamed_symbol(self, name: str, deps: set[Key]) -> tuple[str, str] | None:
        return None

    def package_for_name(self, token: str, deps: set[Key]) -> str | None:
        return None

    @property
    def unread(self) -> frozenset[str]:
        """Linked documents whose headings were not read (a state built with `linked=False`)."""
        disk = getattr(self.documents, "disk", None)
        return frozenset(disk.unread) if disk is not None else frozenset()

    @property
    def complete(self) -> bool:
        disk = getattr(self.documents, "disk", None)
        return disk is None or disk.linked or not disk.unread


def provisional_state(root: Path, config: Config, path: str, text: str,
                      buffers: Mapping[str, str] | None = None, linked: bool = True) -> ModelState | None:
    """A state holding one open Markdown document resolved against the file system (None for other files);
    without the headings of the documents it links to when not `linked`."""
    clean = normalise(path)
    limit = config.limits.max_file_bytes
    if not clean or file_kind(clean) != "document" or len(text) > limit or len(text.encode("utf-8")) > limit:
        return None  # over the cap in characters, or in UTF-8 bytes as files on disk are measured
    open_buffers = dict(buffers or {})
    open_buffers[clean] = text
    rules = _LazyIgnoreRules(root, config)
    disk = _Disk(root, config, rules, open_buffers, linked)
    facts = analyze_file("document", clean, text)
    assert isinstance(facts, MarkdownFacts)  # a document's analysis
    disk.documents[clean] = facts
    empty = Layout({}, {}, {})
    universe = ProvisionalUniverse(
        config=config, rules=rules, documents=_Index(disk, "document"),  # type: ignore[arg-type]  # lazy disk indexes stand in for the universe's maps
        modules=_Index(disk, "module"), other=_Index(disk, "other"),  # type: ignore[arg-type]  # lazy disk indexes stand in for the maps
        dir_counts=_Index(disk, "directory"), layout=empty)  # type: ignore[arg-type]  # lazy disk indexes stand in for the maps
    resolution = resolve_document(universe, facts)
    return ModelState(revision=-1, root=root, config=config, universe=universe, documents=Map({clean: resolution}),
                      buffers=Map(open_buffers), resolved=True, use_cache=False)


def provisional_findings(state: ModelState, path: str) -> list[Any]:
    """The findings of the open document that the file system decides (configured severities applied)."""
    from docbridge.engine.views.reconcile import apply_config, document_findings
    resolution = state.documents.get(path)
    facts = state.universe.documents.get(path)
    if resolution is None or facts is None:
        return []
    unread = state.universe.unread if isinstance(state.universe, ProvisionalUniverse) else frozenset()
    found = [f for f in document_findings(state, resolution, facts) if f.code in PROVISIONAL_CODES
             and not (f.code == "LINK_ANCHOR_MISSING" and f.data.get("target_path") in unread)]
    return apply_config(state, found)


def is_complete(state: ModelState) -> bool:
    """Whether a provisional state read every document its findings and answers need."""
    return not isinstance(state.universe, ProvisionalUniverse) or state.universe.complete


__all__ = ["PROVISIONAL_CODES", "ProvisionalUniverse", "is_complete", "provisional_findings", "provisional_state"]
