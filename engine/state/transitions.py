"""How one model state becomes the next: file changes in, a new `ModelState` out.

`apply_changes(state, changes)` re-analyzes the changed files (from an editor buffer's text, or from disk),
derives the next universe, and re-resolves exactly the files whose lookups the change can affect: every
lookup during resolution recorded a dependency key, and a change invalidates the files that depend on the
keys it touched. Nothing of the old state is modified; the new one shares everything unchanged with it.
`resolve_everything` resolves every file of a freshly scanned state.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from docbridge.engine.base.heap import add_alone_or_listed, built, bulk
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import MarkdownFacts, ModuleFacts
from docbridge.engine.discovery.analyze import analyze_file, budget_reason
from docbridge.engine.discovery.files import ANALYZED_KINDS, file_kind, normalise, read_text
from docbridge.engine.discovery.imports import ModuleResolution, resolve_module
from docbridge.engine.discovery.references import DocumentResolution, resolve_document
from docbridge.engine.discovery.universe import Key, Universe, UniverseBuilder
from docbridge.engine.state.model_state import ModelState, Structure, with_dependent, without_dependent
from immutables import Map

FROM_DISK = None  # a change whose text is None is read from disk (gone from disk: the file was removed)


@dataclass(slots=True)
class UpdateReport:
    path: str
    changed: bool
    resolved: list[str] = field(default_factory=list)  # files whose resolution was recomputed
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    text: str | None = FROM_DISK  # an editor buffer's text, or None to read the file on disk


def _resolve(universe: Universe, facts: Any) -> DocumentResolution | ModuleResolution | None:
    if isinstance(facts, MarkdownFacts):
        return resolve_document(universe, facts)
    if isinstance(facts, ModuleFacts):
        return resolve_module(universe, facts)
    return None


def _document_keys(resolution: DocumentResolution) -> frozenset[Any]:
    return frozenset(r.key for r in resolution.relations) | frozenset(resolution.declared_relations)


def _add_dependent(dependents: dict[Key, Any], keys: tuple[Key, ...], path: str) -> None:
    """Record that `path` asked `keys` (`ModelState.dependents`: a path, or a list of them while built)."""
    for key in keys:
        add_alone_or_listed(dependents, key, path)


def resolve_everything(state: ModelState) -> ModelState:
    """Resolve every document and module of a state whose universe is complete (after a scan)."""
    universe = state.universe
    documents: dict[str, DocumentResolution] = {}
    modules: dict[str, ModuleResolution] = {}
    dependents: dict[Key, Any] = {}  # a path, or a list of them (`ModelState.dependents`)
    deps: dict[str, tuple[Key, ...]] = {}
    for path in sorted(universe.documents.keys()):
        resolution = resolve_document(universe, universe.documents[path])
        documents[path] = resolution
        deps[path] = resolution.deps
        _add_dependent(dependents, resolution.deps, path)
    for path in sorted(universe.modules.keys()):
        module_resolution = resolve_module(universe, universe.modules[path])
        modules[path] = module_resolution
        deps[path] = module_resolution.deps
        _add_dependent(dependents, module_resolution.deps, path)
    structure = state.structure
    # the anchor indexes of linked pages served the documents linking to them; an edit rebuilds the few it needs
    # (9 MB on 10,000 documents, kept for nothing)
    universe._anchors.clear()
    return state.successor(
        documents=Map(documents), modules=Map(modules),
        dependents=Map({key: paths if type(paths) is str else tuple(sorted(paths))
                        for key, paths in dependents.items()}),
        deps=Map(deps),
        resolved=True,
        structure=structure._replace(modules=structure.modules + 1, documentation=structure.documentation + 1),
        seeds=Map())


class _Builder:
    """The next state under construction: file changes first, then re-resolution."""

    def __init__(self, base: ModelState) -> None:
        self.base = base
        self.universe = UniverseBuilder(base.universe)
        self.skipped = base.skipped.mutate()
        self.buffers = base.buffers.mutate()
        self.keys: set[Key] = set()
        self.touched: set[str] = set()  # analyzed files whose facts changed, came or went
        self.paths_changed = False
        self.changed = False  # the facts of some file changed
        self.buffers_changed = False  # only which editor buffers the facts came from changed

    def _facts(self, path: str) -> Any | None:
        return self.universe.current(path)

    def _present(self, path: str) -> bool:
        return self._facts(path) is not None or path in self.universe.other

    def apply(self, change: Change) -> bool:
        """Apply one file change; whether the model changed."""
        clean = normalise(change.path)
        if not clean:
            return False
        base = self.base
        kind = file_kind(clean)
        if base.universe.rules.is_ignored_anywhere(clean) or kind == "config":
            return False  # configuration changes need a new scan
        text, data = change.text, None
        exists = True
        if text is None:
            if self.buffers.pop(clean, None) is not None:
                self.buffers_changed = True
            full = base.root / clean
            if not full.is_file():
                exists = False
            elif kind in ANALYZED_KINDS:
                read = read_text(base.root, clean, base.config.limits.max_file_bytes)
                if read.reason is not None or read.text is None:
                    return self._skip(clean, read.reason or "unreadable")
                text, data = read.text, read.data
        elif kind in ANALYZED_KINDS and len(text.encode("utf-8")) > base.config.limits.max_file_bytes:
            if self.buffers.pop(clean, None) is not None:
                self.buffers_changed = True
            return self._skip(clean, "too-large")
        was_present = self._present(clean)
        old = self._facts(clean)
        keys = self.keys
        if not exists:
            self.skipped.pop(clean, None)
            if old is not None:
                keys |= self.universe.set_facts(clean, None)
                self.touched.add(clean)
            elif was_present:
                keys |= self.universe.set_other(clean, False)
            else:
                return False
        elif kind not in ANALYZED_KINDS:
            if was_present:
                return False
            keys |= self.universe.set_other(clean, True)
        else:
            assert text is not None
            over_budget = budget_reason(kind, text)
            if over_budget is not None:
                if change.text is not None and self.buffers.pop(clean, None) is not None:
                    self.buffers_changed = True
                return self._skip(clean, over_budget)
            facts = analyze_file(kind, clean, text, data)
            if change.text is not None and self.buffers.get(clean) != change.text:
                self.buffers[clean] = change.text
                self.buffers_changed = True
            if old is not None and old == facts:
                return False
            self.skipped.pop(clean, None)
            keys |= self.universe.set_facts(clean, facts)
            self.touched.add(clean)
        if was_present != self._present(clean):
            self.paths_changed = True
        self.changed = True
        return True

    def _skip(self, path: str, reason: str) -> bool:
        old = self._facts(path)
        was_present = self._present(path)
        if old is None and was_present and self.skipped.get(path) == reason:
            return False
        if old is not None:
            self.keys |= self.universe.set_facts(path, None)
            self.touched.add(path)
        self.keys |= self.universe.set_other(path, True)
        self.skipped[path] = reason
        if not was_present:
            self.paths_changed = True
        self.changed = True
        return True

    def finish(self) -> tuple[ModelState, list[str]]:
        """The new state and the files re-resolved on the way (sorted)."""
        base = self.base
        universe, layout_keys, layout_rebuilt = self.universe.finish()
        keys = self.keys | layout_keys
        if ("all",) in keys:
            targets = {*universe.documents.keys(), *universe.modules.keys()}
        else:
            targets = set()
            for key in keys:
                targets.update(base.dependents_of(key))
            targets |= {p for p in self.touched if p in universe.documents or p in universe.modules}
        ordered = sorted(t for t in targets if t in universe.documents or t in universe.modules)
        documents = base.documents.mutate()
        modules = base.modules.mutate()
        dependents = base.dependents.mutate()
        deps = base.deps.mutate()
        structure = base.structure
        modules_moved = documentation_moved = False

        def forget_deps(path: str, new: tuple[Key, ...]) -> None:
            old = deps.get(path) or ()
            for key in set(old).difference(new):
                rest = without_dependent(dependents.get(key), path)
                if rest is None:
                    dependents.pop(key, None)
                else:
                    dependents[key] = rest
            for key in set(new).difference(old):
                dependents[key] = with_dependent(dependents.get(key), path)
            if new:
                deps[path] = new
            else:
                deps.pop(path, None)

        # files that are no longer documents or modules: drop what their resolution contributed
        for path in sorted(self.touched):
            if path in universe.documents or path in universe.modules:
                continue
            if modules.pop(path, None) is not None:
                modules_moved = True
            if documents.pop(path, None) is not None:
                documentation_moved = True
            forget_deps(path, ())
        for path in ordered:
            facts = universe.documents.get(path) or universe.modules.get(path)
            resolution = _resolve(universe, facts)
            if isinstance(resolution, DocumentResolution):
                before = base.documents.get(path)
                documents[path] = resolution
                modules.pop(path, None)
                if before is None or _document_keys(before) != _document_keys(resolution):
                    documentation_moved = True
            elif isinstance(resolution, ModuleResolution):
                before_module = base.modules.get(path)
                modules[path] = resolution
                if documents.pop(path, None) is not None:
                    documentation_moved = True
                if before_module is None or before_module.relations != resolution.relations:
                    modules_moved = True
            else:
                continue
            forget_deps(path, resolution.deps)
        structure = Structure(
            modules=structure.modules + (1 if modules_moved else 0),
            documentation=structure.documentation + (1 if documentation_moved else 0),
            layout=structure.layout + (1 if layout_rebuilt else 0),
            paths=structure.paths + (1 if self.paths_changed else 0))
        changed = frozenset(ordered) | frozenset(self.touched)
        state = base.successor(
            universe=universe, skipped=self.skipped.finish(), buffers=self.buffers.finish(),
            documents=documents.finish(), modules=modules.finish(), dependents=dependents.finish(),
            deps=deps.finish(),
            structure=structure, seeds=base.seeds_for_child(changed))
        return state, ordered


INLINE_CHARS = 64_000  # a buffer longer than this is worth analyzing off an editor's event loop


def costly(changes: Iterable[Change], state: ModelState | None = None) -> bool:
    """Whether applying these changes to `state` may take long: a very large buffer or file (its analysis,
    or dropping the facts a large buffer made), or a manifest or tsconfig (they re-resolve the whole
    repository)."""
    for change in changes:
        if file_kind(change.path) in ("package-manifest", "tsconfig"):
            return True
        if change.text is not None:
            if len(change.text) > INLINE_CHARS:
                return True
            continue
        if state is None:
            continue
        clean = normalise(change.path)
        held = state.buffers.get(clean) if clean else None
        if held is not None and len(held) > INLINE_CHARS:
            return True
        try:
            if clean and (state.root / clean).stat().st_size > INLINE_CHARS:
                return True
        except (OSError, ValueError):
            pass
    return False


def apply_changes(state: ModelState, changes: Iterable[Change]) -> tuple[ModelState, list[str]]:
    """The state after these file changes (the same state when nothing changed), and the files re-resolved."""
    changes = list(changes)
    # a costly change allocates as much as a small scan: collection paused and the survivors frozen (engine.base.heap)
    with bulk() if costly(changes, state) else nullcontext():
        state = resolved(state)
        builder = _Builder(state)
        for change in changes:
            builder.apply(change)
        if not builder.changed and not builder.buffers_changed:
            return state, []
        return builder.finish()


def apply_change(state: ModelState, path: str, text: str | None = FROM_DISK) -> tuple[ModelState, UpdateReport]:
    """One file changed: from an editor buffer's `text`, or on disk (`None`; gone from disk = removed)."""
    started = time.perf_counter()
    new, changed_paths = apply_changes(state, [Change(path, text)])
    clean = normalise(path) or path
    return new, UpdateReport(clean, new is not resolved(state), changed_paths, time.perf_counter() - started)


RESOLVED: ViewKey[ModelState] = ViewKey("resolved")


def resolved(state: ModelState) -> ModelState:
    """This state with every document and module resolved (itself when it already is)."""
    if state.resolved:
        return state
    return state.view(RESOLVED, built(lambda: resolve_everything(state)))


__all__ = ["FROM_DISK", "RESOLVED", "Change", "UpdateReport", "apply_change", "apply_changes", "costly",
           "resolve_everything", "resolved"]
