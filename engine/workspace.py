"""The Workspace: one repository's current model state, for every surface.

The model is a value (`engine.state.model_state.ModelState`); the Workspace holds the current one and moves it forward.
The CLI builds one, scans, and exits; the language server and the MCP server keep one per folder and feed it
changes. `scan()` walks the tree and analyzes only files the facts cache does not already know; `update()`
re-analyzes one file (from an editor buffer's text or from disk) and re-resolves exactly the files whose
lookups its change can affect. Each change installs a new state with the next revision; whoever holds an
older state (a worker building a search index) keeps computing on it undisturbed.

Reads (`documents`, `universe`, `findings()`, `snapshot()`...) answer from the current state; the derived views
are imported when first asked for (a scan loads none of the findings, search or graph modules).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from docbridge.engine.base.config import Config, load_config
from docbridge.engine.discovery.files import IgnoreRules
from docbridge.engine.discovery.universe import Universe, build_universe
from docbridge.engine.state.model_state import ModelState, ScanReport, Structure
from docbridge.engine.state.scan import Progress, scan_state
from docbridge.engine.state.transitions import Change, UpdateReport, apply_change, apply_changes, resolved


class Workspace:
    def __init__(self, root: Path | str, config: Config | None = None, *, use_cache: bool = True,
                 jobs: int | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config if config is not None else load_config(self.root)
        self.use_cache = use_cache
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.scanned = False
        empty: Universe = build_universe(self.config, IgnoreRules(self.config), ())
        self._state = ModelState(revision=0, root=self.root, config=self.config, universe=empty,
                                 use_cache=use_cache)

    # ------------------------------------------------------------------ the current state

    @property
    def state(self) -> ModelState:
        return self._state

    def install(self, state: ModelState) -> ModelState:
        """Make `state` current (a scan finished elsewhere, or a transition computed by the caller)."""
        self._state = state
        self.scanned = True
        return state

    @property
    def revision(self) -> int:
        return self._state.revision

    generation = revision

    # ------------------------------------------------------------------ changes

    def scan(self, progress: Progress | None = None, *, resolve: bool = True) -> ScanReport:
        """Walk and analyze the tree; `resolve=False` defers resolution until something needs it."""
        state = scan_state(self.root, self.config, use_cache=self.use_cache, jobs=self.jobs, progress=progress,
                           resolve=resolve, revision=self._state.revision + 1)
        self.install(state)
        return state.scan

    def ensure_resolved(self) -> ModelState:
        self._state = resolved(self._state)
        return self._state

    def update(self, path: str, text: str | None = None) -> UpdateReport:
        """Re-analyze one file from `text` (an editor buffer) or from disk (`text=None`; gone = removed)."""
        state, report = apply_change(self._state, path, text)
        self._state = state
        return report

    def apply(self, changes: Iterable[Change]) -> list[str]:
        """Several file changes as one transition (a rename: one path goes, another comes); the files
        re-resolved."""
        state, resolved = apply_changes(self._state, changes)
        self._state = state
        return resolved

    # ------------------------------------------------------------------ reads of the current state

    @property
    def universe(self) -> Universe:
        return self._state.universe

    @property
    def documents(self) -> Mapping[str, Any]:
        return resolved(self._state).documents

    @property
    def modules(self) -> Mapping[str, Any]:
        return resolved(self._state).modules

    @property
    def facts(self) -> Mapping[str, Any]:
        return self._state.facts

    @property
    def skipped(self) -> Mapping[str, str]:
        return self._state.skipped

    @property
    def structure(self) -> Structure:
        return self._state.structure

    @property
    def last_scan(self) -> ScanReport:
        return self._state.scan

    def snapshot(self) -> Any:
        from docbridge.engine.views.snapshot import snapshot_of
        return snapshot_of(self._state)

    def findings_index(self) -> Any:
        from docbridge.engine.views.reconcile import findings_index_of
        return findings_index_of(self._state)

    def findings(self) -> list[Any]:
        from docbridge.engine.views.reconcile import findings_of
        return findings_of(self._state)

    def documented_by(self) -> Mapping[str, Any]:
        from docbridge.engine.views.reverse import documented_by_of
        return documented_by_of(self._state)

    def referenced_by(self) -> Mapping[str, Any]:
        from docbridge.engine.views.reverse import referenced_by_of
        return referenced_by_of(self._state)

    def projection(self) -> Any:
        from docbridge.engine.retrieval.project import projection_of
        return projection_of(self._state)

    def retriever(self, mode: str = "combined") -> Any:
        from docbridge.engine.retrieval.rank import retriever_of
        return retriever_of(self._state, mode)

    def area_suggestions(self) -> list[dict[str, Any]]:
        from docbridge.engine.views.graph import area_suggestions_of
        return area_suggestions_of(self._state)

    def reuse_report(self) -> dict[str, Any]:
        return self._state.reuse_report()

    def input_fingerprint(self) -> str:
        return self._state.input_fingerprint()

    def entity_for_path(self, path: str) -> str | None:
        return self._state.entity_for_path(path)

    def config_line(self, needle: str) -> int | None:
        return self._state.config_line(needle)


__all__ = ["Change", "Workspace"]
