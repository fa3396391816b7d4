"""The resolved model kept between runs, so that a restart does not resolve every document again.

A scan of an unchanged tree reads every file's facts from the facts cache (about 1 s for 15,000 files) and then
resolves every document and module (about 3 s). The resolution is a pure function of the facts, the
configuration and the ignore rules, so it can be kept: `.docbridge/cache/model.pickle` holds the facts and the
resolutions of a scan, with the size and modification time each file had. A later scan with the same analyzers,
resolver code, configuration and ignore rules builds the model from it and applies, as an editor's changes are
applied, the files whose size or time differ, the files that came and the files that went (a branch switch).
When more than `MAX_CHANGED_SHARE` of the files (and over `MAX_CHANGED_FLOOR`) changed, it scans as
before.

The artifact is sealed like every other (only a file this user wrote is read) and read by an unpickler that
builds nothing but the model's own dataclasses. A file modified after its scan began is stored as changed, so it
is read again: its facts may be older than its time says.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import logging
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docbridge.engine.base import model
from docbridge.engine.base.cache import RACY_WINDOW_NS, artifact_dir, open_sealed, write_sealed_stream
from docbridge.engine.base.config import Config
from docbridge.engine.discovery import imports, references
from docbridge.engine.discovery.analyze import ANALYZER_VERSIONS
from docbridge.engine.discovery.files import ANALYZED_KINDS, IgnoreRules, WalkResult, file_kind
from docbridge.engine.discovery.routes import routes_of
from docbridge.engine.discovery.universe import build_universe
from docbridge.engine.state.model_state import ModelState, ScanReport
from docbridge.engine.state.transitions import Change, apply_changes
from immutables import Map

log = logging.getLogger("docbridge.engine")

KIND = "resolved-model"
LAYOUT = 8  # 5: names written once, records refer to them by number (`_NamingPickler`); 6: a document's
# relations derived from its references, not kept; 7: a reference keeps the link or code span it was read from,
# a dependency key asked by one file names that file alone; 8: a module's import relations derived from its
# import outcomes, not kept
# beyond this share of changed files (and this many), a scan (analysis in a pool, then resolution) is quicker
MAX_CHANGED_SHARE = 0.05
MAX_CHANGED_FLOOR = 256
# a resumed scan that applied more changes than this writes the model again (up to this, each start applies them)
REWRITE_SHARE = 0.005
REWRITE_FLOOR = 64
CHANGED = (-1, -1)  # the stored stat of a file to read again whatever its stat says
PICKLE_PROTOCOL = 5


WALK = "resume-walk"  # the view of a scanned state holding its walk: what `write_model` stores of each file


@dataclass(frozen=True, slots=True)
class Walk:
    """What a scan's walk saw, for `write_model` and for `resumed_state`'s checks."""

    started_ns: int  # when the scan began (wall clock): a file modified since may be newer than its facts
    stats: dict[str, tuple[int, int]]  # path -> (size, mtime_ns) when the walk saw it, before its facts were read
    skipped: dict[str, str]  # what the walk left out, and why
    unusual: tuple[str, ...]  # paths the walk classed otherwise than their names say (links to other files)
    total: int  # the bytes of the files of analyzed kinds (`limits.maxTotalBytes` caps them)


def walk_record(walked: WalkResult, started_ns: int) -> Walk:
    stats = {item.path: (item.size, item.mtime_ns) for item in walked.files}
    unusual = tuple(item.path for item in walked.files if item.kind != file_kind(item.path))
    total = sum(item.size for item in walked.files if item.kind in ANALYZED_KINDS)
    return Walk(started_ns, stats, dict(walked.skipped), unusual, total)


def keep_walk(state: ModelState, walk: Walk) -> ModelState:
    """`state` (a scan's) holding what its walk saw of each file, for `write_model`: the stat a file had before
    its facts were read, never a later one. Held by this state alone (a view), so gone with it."""
    state.view(WALK, lambda: walk)
    return state


def model_path(root: Path) -> Path:
    return artifact_dir(root) / "cache" / "model.pickle"


@functools.cache
def code_fingerprint() -> str:
    """A hash of the engine code that facts and resolutions come from (an upgrade, or an edit of a checkout)."""
    engine = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for folder in ("base", "discovery", "state"):
        for source in sorted((engine / folder).glob("*.py")):
            digest.update(source.name.encode())
            with contextlib.suppress(OSError):
                digest.update(source.read_bytes())
    return digest.hexdigest()


def _expect(config: Config, rules: IgnoreRules) -> dict[str, Any]:
    return {"layout": LAYOUT, "analyzers": ANALYZER_VERSIONS, "code": code_fingerprint(),
            "config": config.content_hash(), "rules": rules.fingerprint()}


# every class the artifact may hold besides builtins: the model's dataclasses and the reference statuses
_ALLOWED = {(cls.__module__, cls.__qualname__): cls for cls in (
    *(value for value in vars(model).values() if isinstance(value, type) and issubclass(value, model.Positional)
      and value is not model.Positional and value is not model.Row),
    references.Reference, references.DocumentResolution, references.ReferenceStatus,
    imports.ImportOutcome, imports.ModuleResolution)}


class _NamingPickler(pickle.Pickler):
    """Pickles a record of the kept model with its names, kinds, paths and ids as numbers: `numbers` holds those
    of the records written before it, and the names this one is the first to use are numbered and listed in
    `new`. Each record is a pickle of its own, so a string every file repeats (a kind, a confidence, the path of a
    module many documents name) was read back once per file: a restart's model was a quarter larger than a scan's
    (280 against 223 MB on 20,042 files). `_Reader` keeps one copy of each."""

    def __init__(self, out: Any, numbers: dict[str, int]) -> None:
        super().__init__(out, protocol=PICKLE_PROTOCOL)
        self.numbers = numbers
        self.new: list[str] = []

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not str or len(obj) > model.INTERNED_LENGTH:
            return None
        number = self.numbers.get(obj)
        if number is None:
            number = self.numbers[obj] = len(self.numbers)
            self.new.append(obj)
        return number


def _dump(out: Any, record: Any, numbers: dict[str, int]) -> None:
    """`record` written after the list of the names it is the first to use (`_NamingPickler`)."""
    buffer = io.BytesIO()
    pickler = _NamingPickler(buffer, numbers)
    pickler.dump(record)
    pickle.Pickler(out, protocol=PICKLE_PROTOCOL).dump(pickler.new)
    out.write(buffer.getbuffer())


class _Reader:
    """Reads the records `_dump` wrote."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.names: list[str] = []

    def load(self) -> Any:
        self.names.extend(map(sys.intern, _ModelUnpickler(self.handle).load()))
        unpickler = _ModelUnpickler(self.handle)
        # a C function: no Python frame per name
        unpickler.persistent_load = self.names.__getitem__  # type: ignore[method-assign]
        return unpickler.load()


class _ModelUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of the model")
        return found


@dataclass(slots=True)
class _Stored:
    present: tuple[str, ...]  # every path of the model, sorted
    stats: dict[str, tuple[int, int]]  # analyzable path -> (size, mtime_ns) when its facts were read
    walk_skipped: dict[str, str]
    skipped: dict[str, str]
    facts: dict[str, Any]
    documents: dict[str, Any]
    modules: dict[str, Any]
    dependents: dict[Any, str | tuple[str, ...]]
    unusual: tuple[str, ...]


RECORDS_PER_PAUSE = 0.002  # seconds of writing between two pauses that let the editor's requests run
DEPENDENTS_PER_RECORD = 2048


def _let_others_run() -> None:
    time.sleep(0)  # the interpreter lock to a thread waiting for it


def write_model(state: ModelState, pause: Callable[[], None] = _let_others_run) -> bool:
    """Keep `state` (a scan's result: every fact read from disk, resolved) for the next scan; whether it was
    written. Each analyzable file's stat is taken now; one modified since the scan began (less the window in
    which a time may not have moved) is stored as changed. A resumed scan that applied only a few changes is
    not written again.

    The payload is a sequence of pickles, each with a memo of its own: a header, then a record per file (its
    facts and resolution), then the dependency index in slices. A memo of the whole model would hold every
    object written (on 100,000 files, 950 MB more while writing) and would leave the model read back larger
    (the memory its reading freed stays in the process); `_NamingPickler` keeps one copy of a string shared by two
    files. Between records the thread pauses every few milliseconds, so that a language server writing a large
    model in the background answers edits meanwhile (`pause`: by default, the interpreter lock to a thread waiting
    for it)."""
    scan = state.scan
    if not state.resolved or state.buffers or not state.use_cache or not state.has_view(WALK):
        return False
    if scan.resumed and scan.applied <= max(REWRITE_FLOOR, REWRITE_SHARE * len(state.present)):
        return False  # the next start applies these few changes again (cheaper than writing the whole model)
    pause()  # not started beside a build the editor waits for: its tables would coexist with the build's
    walk: Walk = state.view(WALK, lambda: Walk(0, {}, {}, (), 0))
    universe = state.universe
    root = state.root
    racy_after = walk.started_ns - RACY_WINDOW_NS
    stats: dict[str, tuple[int, int]] = {}
    present = tuple(sorted(state.present))
    for path in present:
        if path not in universe.other or path in state.skipped:
            seen = walk.stats.get(path)
            stats[path] = CHANGED if seen is None or seen[1] >= racy_after else seen
    analyzed = [(path, facts) for facts_by_path in (universe.documents, universe.modules, universe.manifests,
                                                    universe.tsconfigs, universe.navigation)
                for path, facts in facts_by_path.items()]
    dependents = list(state.dependents.items())
    slices = range(0, len(dependents), DEPENDENTS_PER_RECORD)
    header = (present, stats, walk.skipped, dict(state.skipped), len(analyzed), len(slices), walk.unusual)

    def produce(out: Any) -> None:
        numbers: dict[str, int] = {}  # every name written so far (`_NamingPickler`)

        def dump(record: Any) -> None:
            # a pickler per record: a memo of the whole model would double the process's memory while it is
            # written, and one pickler's memo, cleared after each record, keeps the table the largest record grew
            # (the header's every path): clearing it each time made writing quadratic (84 s on 100,000 files)
            _dump(out, record, numbers)

        dump(header)
        paused = time.perf_counter()
        documents, modules = state.documents, state.modules
        for index, (path, facts) in enumerate(analyzed):
            dump((path, facts, documents.get(path) or modules.get(path)))
            if index % 16 == 0 and time.perf_counter() - paused > RECORDS_PER_PAUSE:
                pause()
                paused = time.perf_counter()
        for start in slices:
            dump(dependents[start:start + DEPENDENTS_PER_RECORD])
            pause()

    try:
        write_sealed_stream(model_path(root), KIND, _expect(state.config, universe.rules), produce)
    except OSError as exc:  # a read-only checkout: the next start resolves again
        log.debug("could not keep the resolved model: %s", exc)
        return False
    return True


def _read(root: Path, config: Config, rules: IgnoreRules) -> _Stored | None:
    try:
        opened = open_sealed(model_path(root), KIND, _expect(config, rules))
    except Exception:  # a folder where the artifact goes, a link: nothing kept
        return None
    if opened is None:
        return None
    try:
        with opened[1] as handle:
            reader = _Reader(handle)
            present, stats, walk_skipped, skipped, records, slices, unusual = reader.load()
            facts: dict[str, Any] = {}
            documents: dict[str, Any] = {}
            modules: dict[str, Any] = {}
            for _ in range(records):
                path, found, resolution = reader.load()  # each record has its own memo
                facts[path] = found
                if isinstance(resolution, references.DocumentResolution):
                    documents[path] = resolution
                elif isinstance(resolution, imports.ModuleResolution):
                    modules[path] = resolution
            dependents: dict[Any, str | tuple[str, ...]] = {}
            for _ in range(slices):
                dependents.update(reader.load())
            return _Stored(present, stats, walk_skipped, skipped, facts, documents, modules, dependents, unusual)
    except Exception as exc:  # written by an older layout of the classes: scanned as before
        log.debug("the kept model could not be read: %s", exc)
        return None


def resumed_state(root: Path, config: Config, walked: WalkResult, walk: Walk, rules: IgnoreRules,
                  revision: int) -> ModelState | None:
    """The state of the tree on disk built from the kept model and the files changed since, or None when there
    is no kept model for these analyzers, code, configuration and rules, or too much changed."""
    started = time.perf_counter()
    stored = _read(root, config, rules)
    if stored is None or stored.walk_skipped != walk.skipped:
        return None
    # what applying a change cannot reproduce of a scan: a link classed by the walk, a cap on the total bytes
    if walk.unusual != stored.unusual or walk.total > config.limits.max_total_bytes or \
            "total-cap" in stored.skipped.values():
        return None
    known = set(stored.present)
    changed: list[str] = []
    seen = set()
    for item in walked.files:
        seen.add(item.path)
        came = item.path not in known
        if came or (item.kind in ANALYZED_KINDS and stored.stats.get(item.path) != (item.size, item.mtime_ns)) or \
                stored.skipped.get(item.path) == "unreadable":  # its permissions may have changed, not its time
            changed.append(item.path)
    changed.extend(path for path in stored.present if path not in seen)
    # a change to a file git tracks although a `.gitignore` lists it is walked by a scan, dropped by a change
    if any(rules.is_ignored_anywhere(path) for path in changed):
        return None
    if len(changed) > max(MAX_CHANGED_FLOOR, MAX_CHANGED_SHARE * len(walked.files)):
        return None
    universe = build_universe(config, rules, ((path, stored.facts.get(path)) for path in stored.present))
    state = ModelState(revision=revision, root=root, config=config, universe=universe, skipped=Map(stored.skipped),
                       resolved=False, use_cache=True)
    structure = state.structure
    # what a scan's resolution records besides the resolutions (`resolve_everything`)
    deps = {path: resolution.deps for path, resolution in (*stored.documents.items(), *stored.modules.items())}
    state = state.successor(
        documents=Map(stored.documents), modules=Map(stored.modules), dependents=Map(stored.dependents),
        deps=Map(deps), resolved=True,
        structure=structure._replace(modules=structure.modules + 1, documentation=structure.documentation + 1))
    del stored
    state, _ = apply_changes(state, [Change(path) for path in sorted(changed)])
    # built here, as a scan builds them on its way, not by the first edit on the editor's loop
    state.universe.prepare_lookups()
    routes_of(state.universe)
    parsed = tuple(sorted(path for path in changed if path in state.universe.documents or path in
                          state.universe.modules))
    analyzed = len(state.universe.documents) + len(state.universe.modules) + len(state.universe.manifests) + \
        len(state.universe.tsconfigs) + len(state.universe.navigation)
    return state.successor(scan=ScanReport(parsed, analyzed - len(parsed), time.perf_counter() - started,
                                           resumed=True, applied=len(changed)))


__all__ = ["MAX_CHANGED_SHARE", "Walk", "code_fingerprint", "keep_walk", "model_path", "resumed_state", "walk_record",
           "write_model"]
