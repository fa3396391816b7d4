"""The Workspace: one repository's current facts, resolutions and derived views, for every surface.

The CLI builds one, scans, and exits; the language server keeps one per workspace folder and feeds it
edits. `scan()` walks the tree and analyzes only files the facts cache does not already know;
`update(path, text)` re-analyzes one file and re-resolves exactly the files whose lookups its change can
affect (the dependency keys recorded by `engine.discovery.resolve`). Derived views (snapshot, graph,
findings, retrieval index) are built lazily and dropped on every change.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.cache import FactsCache, facts_from_row
from engine.config import CONFIG_FILE, Config, load_config
from engine.discovery.analyze import ANALYZER_VERSIONS, analyze_batch, analyze_file
from engine.discovery.files import ANALYZED_KINDS, IgnoreRules, file_kind, normalise, read_text, walk
from engine.discovery.resolve import (
    DocumentResolution,
    Key,
    ModuleResolution,
    Universe,
    analyzer_versions,
    resolve_document,
    resolve_module,
)
from engine.hashing import canonical_hash, sha256_bytes
from engine.model import DOCUMENT, MODULE, FileFacts, MarkdownFacts, ModuleFacts, entity_id, to_row

Progress = Callable[[str, int, int], None]
POOL_THRESHOLD = 400  # below this many files to parse, a process pool costs more than it saves
BATCH = 48


@dataclass(slots=True)
class ScanReport:
    parsed: list[str] = field(default_factory=list)
    reused: int = 0
    seconds: float = 0.0


@dataclass(slots=True)
class UpdateReport:
    path: str
    changed: bool
    resolved: list[str] = field(default_factory=list)  # files whose resolution was recomputed
    seconds: float = 0.0


class Workspace:
    def __init__(self, root: Path | str, config: Config | None = None, *, use_cache: bool = True,
                 jobs: int | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config if config is not None else load_config(self.root)
        self.use_cache = use_cache
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.facts: dict[str, FileFacts] = {}
        self.present: set[str] = set()
        self.skipped: dict[str, str] = {}
        self.documents: dict[str, DocumentResolution] = {}
        self.modules: dict[str, ModuleResolution] = {}
        self.dependents: dict[Key, set[str]] = defaultdict(set)
        self._deps: dict[str, frozenset[Key]] = {}
        self.generation = 0
        self.last_scan = ScanReport()
        self.scanned = False
        self.resolved = True  # nothing to resolve until a scan
        self._views: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._config_lines: list[str] | None = None
        self._findings_index: Any = None
        self._fingerprint: tuple[int, str] | None = None  # (generation, input fingerprint)
        # versions of what repository-level findings read (see _note_structure)
        self.structure = {"modules": 0, "documentation": 0, "layout": 0, "paths": 0}
        self._module_relations: dict[str, Any] = {}
        self._document_keys: dict[str, frozenset[Any]] = {}
        self.universe = Universe(self.config, IgnoreRules(self.config))

    # ------------------------------------------------------------------ full scan

    def scan(self, progress: Progress | None = None, *, resolve: bool = True,
             first: Callable[[], Collection[str]] | None = None,
             early: Callable[[dict[str, list[Any]]], None] | None = None) -> ScanReport:
        """Walk and analyze the tree; `resolve=False` defers resolution until something needs it. With
        `early`, the documents `first()` names when resolution starts are resolved before the rest and
        `early` gets their document-level findings (an editor shows the open files' diagnostics before a
        long scan ends)."""
        started = time.perf_counter()
        report = ScanReport()
        with self._lock:
            walked, rules = walk(self.root, self.config)
            if progress:
                progress("walk", len(walked.files), len(walked.files))
            cache = FactsCache(self.root, ANALYZER_VERSIONS) if self.use_cache else None
            self.facts, self.present, self.skipped = {}, set(), dict(walked.skipped)
            pending: list[tuple[str, str, bytes, int, int]] = []
            total_bytes = 0
            limits = self.config.limits
            for index, item in enumerate(walked.files):
                self.present.add(item.path)
                if item.kind not in ANALYZED_KINDS:
                    continue
                if item.size > limits.max_file_bytes:
                    self.skipped[item.path] = "too-large"
                    continue
                if total_bytes + item.size > limits.max_total_bytes:
                    self.skipped[item.path] = "total-cap"
                    continue
                total_bytes += item.size
                if cache is not None:
                    hit = cache.lookup_stat(item.path, item.kind, item.size, item.mtime_ns)
                    if hit is not None:
                        self.facts[item.path] = facts_from_row(item.kind, hit[1])
                        report.reused += 1
                        continue
                read = read_text(self.root, item.path, limits.max_file_bytes)
                if read.reason is not None or read.data is None or read.text is None:
                    self.skipped[item.path] = read.reason or "unreadable"
                    continue
                content_hash = sha256_bytes(read.data)
                if cache is not None:
                    row = cache.lookup_hash(item.path, item.kind, content_hash)
                    if row is not None:
                        self.facts[item.path] = facts_from_row(item.kind, row)
                        cache.store(item.path, item.kind, content_hash, item.size, item.mtime_ns, row)
                        report.reused += 1
                        continue
                pending.append((item.kind, item.path, read.data, item.size, item.mtime_ns))
                if progress and index % 500 == 0:
                    progress("read", index, len(walked.files))
            stats = {path: (size, mtime) for _, path, _, size, mtime in pending}
            for kind, path, row in self._analyze(pending, progress):
                self.facts[path] = facts_from_row(kind, row)
                report.parsed.append(path)
                if cache is not None:
                    size, mtime = stats[path]
                    cache.store(path, kind, self.facts[path].content_hash, size, mtime, row)
            if cache is not None:
                cache.prune(set(self.facts))
                with contextlib.suppress(OSError):  # a read-only checkout still scans, without a warm start
                    cache.save()
            self.universe = Universe(self.config, rules)
            for path in sorted(self.present):
                facts = self.facts.get(path)
                if facts is not None:
                    self.universe.set_facts(path, facts)
                else:
                    self.universe.set_other(path, True)
            self.universe.refresh_layout()
            self.documents, self.modules = {}, {}
            self.dependents = defaultdict(set)
            self._deps = {}
            self._module_relations, self._document_keys = {}, {}
            self.structure["layout"] += 1
            self.resolved = False
            report.parsed.sort()
            self.last_scan = report
            self.scanned = True
            self._changed()
            if resolve:
                self.ensure_resolved(progress, first=first, early=early)
            report.seconds = time.perf_counter() - started
        return report

    def ensure_resolved(self, progress: Progress | None = None, *,
                        first: Callable[[], Collection[str]] | None = None,
                        early: Callable[[dict[str, list[Any]]], None] | None = None) -> None:
        """Resolve every document and module (once after a scan; updates keep it current)."""
        with self._lock:
            if self.resolved:
                return
            done: set[str] = set()
            if early is not None and first is not None:
                from engine.reconcile import document_findings
                ahead = sorted(p for p in first() if isinstance(self.facts.get(p), MarkdownFacts))
                for path in ahead:
                    self._resolve(path)
                    done.add(path)
                early({path: document_findings(self, self.documents[path], self.facts[path])  # type: ignore[arg-type]
                       for path in ahead})
            to_resolve = sorted(p for p, f in self.facts.items()
                                if isinstance(f, (MarkdownFacts, ModuleFacts)) and p not in done)
            for index, path in enumerate(to_resolve):
                self._resolve(path)
                if progress and index % 1000 == 0:
                    progress("resolve", index, len(to_resolve))
            if progress:
                progress("resolve", len(to_resolve), len(to_resolve))
            self.resolved = True
            self._changed()

    def input_fingerprint(self) -> str:
        """A hash of everything resolution reads: every path with its kind and content hash, skipped files
        and why, the configuration and the analyzer versions. Equal fingerprints give equal snapshots."""
        if self._fingerprint is not None and self._fingerprint[0] == self.generation:
            return self._fingerprint[1]  # every artifact load and store asks; inputs change with the generation
        rows = []
        for path in sorted(self.present | set(self.skipped)):
            facts = self.facts.get(path)
            rows.append((path, type(facts).kind if facts is not None else "other",
                         facts.content_hash if facts is not None else self.skipped.get(path, "")))
        fingerprint = canonical_hash({"files": rows, "config": self.config.content_hash(),
                                      "analyzers": analyzer_versions()})
        self._fingerprint = (self.generation, fingerprint)
        return fingerprint

    def _analyze(self, pending: list[tuple[str, str, bytes, int, int]],
                 progress: Progress | None) -> Iterable[tuple[str, str, Any]]:
        jobs = [(kind, path, data) for kind, path, data, _, _ in pending]
        total = len(jobs)
        if total >= POOL_THRESHOLD and self.jobs > 1:
            method = "fork" if threading.active_count() == 1 else "spawn"
            batches = [jobs[i:i + BATCH] for i in range(0, total, BATCH)]
            done = 0
            with ProcessPoolExecutor(max_workers=min(self.jobs, 8),
                                     mp_context=multiprocessing.get_context(method)) as pool:
                for result in pool.map(analyze_batch, batches):
                    done += len(result)
                    if progress:
                        progress("analyze", done, total)
                    yield from result
            return
        for index, (kind, path, data) in enumerate(jobs):
            text = data.decode("utf-8").removeprefix("\ufeff")
            yield kind, path, to_row(analyze_file(kind, path, text, data))
            if progress and index % 100 == 0:
                progress("analyze", index, total)
        if progress and total:
            progress("analyze", total, total)

    # ------------------------------------------------------------------ incremental update

    def update(self, path: str, text: str | None = None) -> UpdateReport:
        """Re-analyze one file from `text` (an editor buffer) or from disk (`text=None`; gone = removed)."""
        started = time.perf_counter()
        clean = normalise(path)
        if not clean:
            return UpdateReport(path, False)
        self.ensure_resolved()
        with self._lock:
            kind = file_kind(clean)
            if self.universe.rules.is_ignored_anywhere(clean):
                return UpdateReport(clean, False)
            if kind == "config":
                return UpdateReport(clean, False)  # configuration changes need a new Workspace
            data: bytes | None = None
            exists = True
            was_present = clean in self.present
            if text is None:
                full = self.root / clean
                if not full.is_file():
                    exists = False
                elif kind in ANALYZED_KINDS:
                    read = read_text(self.root, clean, self.config.limits.max_file_bytes)
                    if read.reason is not None or read.text is None:
                        return self._set_skipped(clean, read.reason or "unreadable", started)
                    text, data = read.text, read.data
            elif kind in ANALYZED_KINDS and len(text.encode("utf-8")) > self.config.limits.max_file_bytes:
                return self._set_skipped(clean, "too-large", started)
            keys: set[Key] = set()
            old = self.facts.get(clean)
            if not exists:
                self.present.discard(clean)
                self.skipped.pop(clean, None)
                if old is not None:
                    del self.facts[clean]
                    keys |= self.universe.set_facts(clean, None)
                else:
                    keys |= self.universe.set_other(clean, False)
                self._forget(clean)
            elif kind not in ANALYZED_KINDS:
                self.present.add(clean)
                keys |= self.universe.set_other(clean, True)
            else:
                assert text is not None
                facts = analyze_file(kind, clean, text, data)
                if old is not None and old == facts:
                    return UpdateReport(clean, False, [], time.perf_counter() - started)
                self.present.add(clean)
                self.skipped.pop(clean, None)
                self.facts[clean] = facts
                keys |= self.universe.set_facts(clean, facts)
            self._note_paths(clean, old, was_present, keys)
            resolved = self._reresolve(clean, keys)
            self._changed()
            return UpdateReport(clean, True, resolved, time.perf_counter() - started)

    def _set_skipped(self, path: str, reason: str, started: float) -> UpdateReport:
        keys: set[Key] = set()
        old = self.facts.get(path)
        was_present = path in self.present
        if old is not None:
            del self.facts[path]
            keys |= self.universe.set_facts(path, None)
            self._forget(path)
        keys |= self.universe.set_other(path, True)
        self.present.add(path)
        self.skipped[path] = reason
        self._note_paths(path, old, was_present, keys)
        resolved = self._reresolve(path, keys)
        self._changed()
        return UpdateReport(path, True, resolved, time.perf_counter() - started)

    def _note_paths(self, path: str, old: Any, was_present: bool, keys: set[Key]) -> None:
        """After one file changed: count a path coming or going (ownership findings read which paths
        exist), and rebuild the layout when a module or a manifest came, went or (a manifest) changed."""
        if was_present != (path in self.present):
            self.structure["paths"] += 1
        kind = file_kind(path)
        structural = (old is not None) != (path in self.facts) or kind == "package-manifest"
        if structural and (kind in ("module", "package-manifest") or isinstance(old, ModuleFacts)):
            keys |= self.universe.refresh_layout()
            self.structure["layout"] += 1

    def _reresolve(self, path: str, keys: set[Key]) -> list[str]:
        if ("all",) in keys:
            targets = {p for p, f in self.facts.items() if isinstance(f, (MarkdownFacts, ModuleFacts))}
        else:
            targets = set()
            for key in keys:
                targets |= self.dependents.get(key, set())
            if path in self.facts and isinstance(self.facts[path], (MarkdownFacts, ModuleFacts)):
                targets.add(path)
        ordered = sorted(p for p in targets if p in self.facts)
        for target in ordered:
            self._resolve(target)
        return ordered

    def _resolve(self, path: str) -> None:
        facts = self.facts[path]
        resolution: DocumentResolution | ModuleResolution
        if isinstance(facts, MarkdownFacts):
            resolution = resolve_document(self.universe, facts)
            self.documents[path] = resolution
        elif isinstance(facts, ModuleFacts):
            resolution = resolve_module(self.universe, facts)
            self.modules[path] = resolution
        else:
            return
        self._note_structure(path, resolution)
        old = self._deps.get(path, frozenset())
        new = resolution.deps
        for key in old - new:
            self.dependents[key].discard(path)
        for key in new - old:
            self.dependents[key].add(path)
        self._deps[path] = new

    def _note_structure(self, path: str, resolution: Any) -> None:
        """Count changes that repository-level findings depend on: module relations (imports and their
        lines: cycles, area imports) and which entities each document documents (undocumented areas)."""
        if isinstance(resolution, ModuleResolution):
            previous = self._module_relations.get(path)
            if previous != resolution.relations:
                self.structure["modules"] += 1
                self._module_relations[path] = resolution.relations
        else:
            keys = frozenset(r.key for r in resolution.relations) | frozenset(resolution.declared_relations)
            if self._document_keys.get(path) != keys:
                self.structure["documentation"] += 1
                self._document_keys[path] = keys

    def _forget(self, path: str) -> None:
        if self._module_relations.pop(path, None) is not None:
            self.structure["modules"] += 1
        if self._document_keys.pop(path, None) is not None:
            self.structure["documentation"] += 1
        self.documents.pop(path, None)
        self.modules.pop(path, None)
        for key in self._deps.pop(path, frozenset()):
            self.dependents[key].discard(path)

    def _changed(self) -> None:
        self.generation += 1
        self._views.clear()

    # ------------------------------------------------------------------ views

    def view(self, name: str, build: Callable[[], Any]) -> Any:
        """A derived view, built once per generation (snapshot, graph, findings, retrieval index).

        Built outside the lock, so that a long build in a worker thread (the retrieval index of a large
        repository) does not hold up cheap views on the server's thread; the model must not change while
        a view is built (the language server defers edits meanwhile), and a view is only kept for the
        generation it was built from."""
        self.ensure_resolved()  # every view reads resolutions; resolving first keeps the generation stable
        with self._lock:
            generation = self.generation
            if name in self._views:
                return self._views[name]
        value = build()
        with self._lock:
            if generation == self.generation:
                value = self._views.setdefault(name, value)
        return value

    def snapshot(self) -> Any:
        from engine.snapshot import build_snapshot
        self.ensure_resolved()
        return self.view("snapshot", lambda: build_snapshot(self))

    def findings_index(self) -> Any:
        """The findings of every file, by path (engine.reconcile.FindingsIndex), as of the last refresh."""
        from engine.reconcile import FindingsIndex
        with self._lock:
            if self._findings_index is None:
                self._findings_index = FindingsIndex()
            return self._findings_index

    def refresh_findings(self) -> set[str | None]:
        """Bring the findings index up to date; return the paths whose findings changed."""
        self.ensure_resolved()
        with self._lock:
            return self.findings_index().refresh(self)  # type: ignore[no-any-return]

    def findings(self) -> list[Any]:
        """Every finding, with configured severities and ignores applied, sorted."""
        from engine.reconcile import apply_config
        self.refresh_findings()
        return self.view("findings", lambda: apply_config(self, self.findings_index().all()))  # type: ignore[no-any-return]

    def documented_by(self) -> dict[str, list[tuple[str, str, str | None]]]:
        """Entity id -> (document, relation kind, symbol) for every document relation pointing at it, sorted:
        the reverse index behind hovers and go-to-definition, one pass per generation."""
        def build() -> dict[str, list[tuple[str, str, str | None]]]:
            index: dict[str, list[tuple[str, str, str | None]]] = {}
            for path, resolution in self.documents.items():
                for relation in resolution.relations:
                    index.setdefault(relation.target, []).append((path, relation.kind, relation.symbol))
            for entries in index.values():
                entries.sort(key=lambda e: (e[0], e[1], e[2] or ""))
            return index
        return self.view("documented-by", build)  # type: ignore[no-any-return]

    def referenced_by(self) -> dict[str, list[str]]:
        """Entity id -> the documents with a reference resolving to it (sorted): where find-references
        looks, instead of every document. Unlike `documented_by` it ignores per-document relation limits."""
        def build() -> dict[str, list[str]]:
            index: dict[str, set[str]] = {}
            for path, resolution in self.documents.items():
                for reference in resolution.references:
                    if reference.target is not None:
                        index.setdefault(reference.target, set()).add(path)
            return {target: sorted(paths) for target, paths in index.items()}
        return self.view("referenced-by", build)  # type: ignore[no-any-return]

    def projection(self) -> Any:
        from engine.retrieval.project import project
        return self.view("projection", lambda: project(self, self.snapshot()))

    def retriever(self, mode: str = "combined") -> Any:
        """The ranked retrieval index over the current projection (engine.retrieval.rank)."""
        from engine.retrieval.rank import Retriever
        return self.view(f"retriever:{mode}", lambda: Retriever(self.projection(), mode))

    def area_suggestions(self) -> list[dict[str, Any]]:
        """Seeded Louvain communities as candidate areas, only when the layout is flat (fewer than 2 areas)."""
        from engine.graph import area_suggestions
        layout = self.universe.layout
        if layout is None or len(layout.areas) >= 2 or len(self.universe.modules) < 6:
            return []
        self.ensure_resolved()
        return self.view("suggestions", lambda: [
            s for s in area_suggestions([r for m in self.modules.values() for r in m.relations])
            if s["label"] not in layout.areas])

    def reuse_report(self) -> dict[str, Any]:
        report = self.last_scan
        total = report.reused + len(report.parsed)
        if total == 0:
            status, reason = "not-applicable", "Nothing was analyzed."
        elif report.reused == 0:
            status, reason = "not-applicable", f"No cached facts were reused; parsed {len(report.parsed)} file(s)."
        else:
            status = "complete" if not report.parsed else "partial"
            shown = ", ".join(report.parsed[:8]) + (f" and {len(report.parsed) - 8} more" if len(
                report.parsed) > 8 else "")
            reason = f"Reused {report.reused} of {total} file(s). " + (
                f"Re-parsed: {shown}." if report.parsed else "Nothing needed re-parsing.")
        return {"status": status, "reused": report.reused, "parsed": len(report.parsed), "reason": reason}

    # ------------------------------------------------------------------ lookups used by several views

    def entity_for_path(self, path: str) -> str | None:
        """The entity a repository path names: document, module, area or package."""
        clean = normalise(path.removeprefix("./").rstrip("/"))
        if clean is None:
            return None
        layout = self.universe.layout
        assert layout is not None
        if clean in self.universe.documents:
            return entity_id(DOCUMENT, clean)
        if clean in self.universe.modules:
            return entity_id(MODULE, clean)
        if clean in layout.areas:
            return layout.areas[clean].id
        key = clean or "."
        if key in layout.packages:
            return layout.packages[key].id
        return None

    def config_line(self, needle: str) -> int | None:
        """The 0-based line of the configuration file where `needle` first appears."""
        if self._config_lines is None:
            try:
                self._config_lines = (self.root / CONFIG_FILE).read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                self._config_lines = []
        for index, line in enumerate(self._config_lines):
            if needle in line:
                return index
        return None
