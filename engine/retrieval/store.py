"""The search index on disk: `.docbridge/index/`, so that a search over an unchanged tree opens an index
instead of scanning, resolving and indexing the repository again.

- `projection.json` (`engine.artifacts.snapshot_file`): the projection's entries, sealed with the input fingerprint.
- `lexical-<hash>/`: the tantivy index of those entries; `entries.json`, the entries without their field
  texts and edges (ranking reads the index and the masks; an explanation loads the body from the
  projection); `edges.json`, each entry's edges as one packed line;
  `vocabulary.json`, its words (for typo correction); `masks.json`, which fields of each entry hold each
  token. Built in a temporary directory and renamed into place; the name carries the projection's hash.
  Several processes may build at once (the editor's server and a command line): a build another process has
  in progress is never removed (only one untouched for `ABANDONED_BUILD_S`), an index another process has just
  put in place is kept for `SUPERSEDED_KEEP_S` (a reader may be opening it), and when two builds of one
  projection race, the one already in place stands.
- `manifest.json` (sealed): the versions it was built with, the input fingerprint, the SHA-256 of the sealed
  projection it indexes, the lexical directory with the SHA-256 of each of its files, and a stamp of the
  tree.

The stamp is the size and modification time of every file the scan saw (plus `.gitignore` files and the
configuration), the modification time of every directory below the root holding one, and the root's entries
(its time changes when `.docbridge/` is made): a file that changes, appears or disappears changes one of
them. While every stat matches, the index is current and `open_current` answers
without importing the scanner at all; otherwise the caller scans (facts come from their own cache) and
`retriever_for` reuses or rebuilds the index. A stamp is only recorded when nothing in the tree was modified
in the two seconds before the scan began or since (the scan might have read the file before the change), so
a stale index is never taken for a current one. A manifest or a file that fails its hash, or an index that
tantivy cannot open, is rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import ARTIFACT_DIR as ARTIFACTS
from docbridge.engine.base.cache import RACY_WINDOW_NS, artifact_dir, read_sealed, write_atomic, write_sealed
from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.safe_io import MAX_ARTIFACT_BYTES, open_regular, read_regular, real_dirs

MANIFEST_KIND = "search-index"
STORE_VERSION = 2  # 2: a field of each entry's kind
CONFIG_FILE = "doc-bridge.config.json"  # the configuration's name (engine.base.config, not imported on this path)
ABANDONED_BUILD_S = 900  # a temporary build untouched this long belongs to a process that died
SUPERSEDED_KEEP_S = 60  # an index replaced by a newer one is removed once no reader can still be opening it


def index_dir(root: Path) -> Path:
    return artifact_dir(root) / "index"


def _versions() -> dict[str, Any]:
    import tantivy
    from docbridge.engine.base.lexicon import GLOSSARY_VERSION, LEXICON_VERSION, TOKENIZER_REVISION
    from docbridge.engine.discovery import versions
    from docbridge.engine.retrieval.project import PROJECTION_VERSION
    from docbridge.engine.views.graph import GRAPH_VERSION
    return {"store": STORE_VERSION, "projection": PROJECTION_VERSION, "lexicon": LEXICON_VERSION,
            "tokenizer": TOKENIZER_REVISION,
            "glossary": GLOSSARY_VERSION, "graph": GRAPH_VERSION, "tantivy": getattr(tantivy, "__version__", ""),
            "analyzers": {**versions.ANALYZERS, "resolve": versions.RESOLVER}}


# ------------------------------------------------------------------------------------------------ tree stamp


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def tree_stamp(workspace: Any, scan_started_ns: int) -> dict[str, Any] | None:
    """The stamp of the tree `workspace` was scanned from, or None when a file or directory was modified too
    recently (from two seconds before the scan began) for its size and time to prove its content."""
    root: Path = workspace.root
    paths = set(workspace.universe.paths())
    directories = {""}
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            directories.add("/".join(parts[:depth]))
    base = str(root)
    files: dict[str, list[int] | None] = {}
    for path in sorted(paths | {CONFIG_FILE} | {f"{d}/.gitignore" if d else ".gitignore" for d in directories}):
        stat = _stat(os.path.join(base, path))
        if stat is None and path not in paths:
            continue  # no configuration, no .gitignore here: a new one changes its directory's time
        files[path] = list(stat) if stat is not None else None
    dirs: dict[str, int] = {}
    for directory in sorted(directories - {""}):
        stat = _stat(os.path.join(base, directory))
        if stat is None:
            return None
        dirs[directory] = stat[1]
    newest = max([s[1] for s in files.values() if s is not None] + list(dirs.values()), default=0)
    if newest >= scan_started_ns - RACY_WINDOW_NS:
        return None
    # the root by its entries, not its time: creating .docbridge/ there must not make the tree look changed;
    # the enrichment overlay is an input of the projection too
    overlay = _stat(os.path.join(base, ARTIFACTS, "overlay.json"))
    return {"files": files, "dirs": dirs, "root": _root_entries(base), "overlay": list(overlay) if overlay else None}


def _root_entries(base: str) -> list[str] | None:
    try:
        return sorted(name for name in os.listdir(base) if name != ARTIFACTS)
    except OSError:
        return None


def _stamp_holds(root: Path, stamp: dict[str, Any]) -> bool:
    try:
        return _stamp_matches(root, stamp)
    except (TypeError, ValueError, KeyError, AttributeError):  # a stamp of another shape holds nothing
        return False


def _stamp_matches(root: Path, stamp: dict[str, Any]) -> bool:
    base = str(root)
    for path, recorded in stamp["files"].items():
        stat = _stat(os.path.join(base, path))
        if (list(stat) if stat is not None else None) != recorded:
            return False
    for directory, mtime in stamp["dirs"].items():
        stat = _stat(os.path.join(base, directory))
        if stat is None or stat[1] != mtime:
            return False
    overlay = _stat(os.path.join(base, ARTIFACTS, "overlay.json"))
    if (list(overlay) if overlay else None) != stamp.get("overlay"):
        return False
    return stamp.get("root") is not None and _root_entries(base) == stamp["root"]


# ------------------------------------------------------------------------------------------------ reading


def _manifest(root: Path) -> dict[str, Any] | None:
    loaded = read_sealed(index_dir(root) / "manifest.json", MANIFEST_KIND)
    if loaded is None:
        return None
    _, manifest = loaded
    if not isinstance(manifest, dict) or manifest.get("versions") != _versions():
        return None
    lexical, stamp = manifest.get("lexical"), manifest.get("stamp")
    if lexical is not None and not (isinstance(lexical, dict) and isinstance(lexical.get("files", {}), dict)):
        return None  # not what this code writes: the index is built again
    if stamp and not (isinstance(stamp, dict) and isinstance(stamp.get("files"), dict)
                      and isinstance(stamp.get("dirs"), dict)):
        return None
    return manifest


REQUIRED = ("meta.json", "entries.json", "edges.json", "masks.json", "vocabulary.json")


def _read(path: Path) -> bytes:
    return read_regular(path, MAX_ARTIFACT_BYTES)  # OSError when a link, a FIFO, a device or missing


def _lexical_ok(directory: Path, files: dict[str, str]) -> bool:
    """Every file the manifest lists is there with its recorded hash (and the ones an index needs are listed)."""
    if not all(name in files for name in REQUIRED):
        return False
    try:
        return all(sha256_bytes(_read(directory / name)) == digest for name, digest in files.items())
    except OSError:
        return False


def _projection_seal(root: Path, verify: bool = False) -> str | None:
    """The recorded SHA-256 of the sealed projection file (its first line); with `verify`, only when the
    file's body still has that hash (an explanation reads it later; a damaged one is rebuilt now)."""
    try:
        with open_regular(index_dir(root) / "projection.json") as handle:
            header = json.loads(handle.readline(1 << 20))
            body = handle.read() if verify else b""
    except (OSError, ValueError, RecursionError):
        return None
    seal = header.get("sha256") if isinstance(header, dict) else None
    if verify and seal != sha256_bytes(body):
        return None
    return seal if isinstance(seal, str) else None


def _open(root: Path, manifest: dict[str, Any], projection: Any | None, seal: str | None) -> Any | None:
    """The retriever over `projection` (sealed as `seal`; None: the lean entries kept beside the index) with
    the lexical index the manifest names, or None when it is missing, corrupt or not the index of this
    projection."""
    from docbridge.engine.retrieval.lexical import LexicalIndex
    from docbridge.engine.retrieval.rank import Retriever
    lexical = manifest.get("lexical") or {}
    name = lexical.get("directory")
    if seal is None or manifest.get("projection") != seal or not isinstance(name, str) or "/" in name:
        return None
    directory = index_dir(root) / name
    if not _lexical_ok(directory, lexical.get("files") or {}):
        return None
    bodies = None
    if projection is None:
        projection = _lean_projection(directory)
        if projection is None:
            return None
        bodies = _bodies(root, seal)

    def load(name: str) -> Any:
        def read() -> list[str]:
            value = json.loads(_read(directory / name).decode("utf-8"))
            if not isinstance(value, list) or (name == "masks.json" and len(value) != len(projection.entries)):
                raise ValueError(f"{directory / name} does not belong to this index")
            return value
        return read

    try:
        index = LexicalIndex.open(directory, projection.entries, projection.weights, load("vocabulary.json"),
                                  load("masks.json"), bodies)
    except (OSError, ValueError):
        return None
    retriever = Retriever(projection, lexical=index, edge_loader=_edges(directory) if bodies is not None else None)
    retriever.reused, retriever.source = True, "current" if bodies is not None else "reused"
    return retriever


def _lean_projection(directory: Path) -> Any | None:
    from docbridge.engine.artifacts.snapshot_file import projection_from_state
    try:
        state = json.loads(_read(directory / "entries.json"))
    except (OSError, ValueError, RecursionError):
        return None
    return projection_from_state(state)


def _edges(directory: Path) -> Any:
    """Reads an entry's edges from `edges.json` (one packed line per entry) when ranking first asks."""
    from docbridge.engine.retrieval.project import Edge
    lines: list[str] = []
    cache: dict[int, tuple[Any, ...]] = {}

    def load(index: int) -> tuple[Any, ...]:
        found = cache.get(index)
        if found is None:
            if not lines:
                lines.extend(json.loads(_read(directory / "edges.json")))
            packed = lines[index]
            found = cache[index] = tuple(Edge(*item.split("\t")) for item in packed.split("\n")) if packed else ()
        return found
    return load


def _bodies(root: Path, seal: str) -> Any:
    """Loads the entries' body text from the sealed projection when an explanation first asks for it."""
    def load() -> list[str]:
        from docbridge.engine.artifacts.snapshot_file import PROJECTION_KIND
        loaded = read_sealed(index_dir(root) / "projection.json", PROJECTION_KIND)
        if loaded is None or loaded[0].get("sha256") != seal:
            raise ValueError("the projection changed under the index")
        return [e["fields"].get("body", "") for e in loaded[1]["entries"]]
    return load


def open_current(root: Path) -> Any | None:
    """The retriever for `root` straight from `.docbridge/index/` when the tree is exactly as it was when
    the index was built (every stamped stat matches), else None. Reads no source file and no configuration."""
    manifest = _manifest(root)
    if manifest is None or not manifest.get("stamp"):
        return None
    if not _stamp_holds(root, manifest["stamp"]):
        return None
    return _open(root, manifest, None, _projection_seal(root, verify=True))


# ------------------------------------------------------------------------------------------------ writing


def retriever_for(workspace: Any, scan_started_ns: int) -> Any:
    """The workspace's retriever, from `.docbridge/index/` when it was built from these inputs, else built
    now and stored (atomically: a reader sees the old index or the new one). Without the cache, in memory."""
    import shutil
    import tempfile

    from docbridge.engine.artifacts.snapshot_file import projection_for
    from docbridge.engine.retrieval.rank import Retriever
    projection, reused = projection_for(workspace)
    if not workspace.use_cache:
        in_memory = Retriever(projection)
        in_memory.reused = reused
        return in_memory
    root: Path = workspace.root
    fingerprint = workspace.input_fingerprint()
    manifest = _manifest(root)
    seal = _projection_seal(root)
    if seal is None:  # the projection could not be stored (a read-only checkout): answer from memory
        in_memory = Retriever(projection)
        in_memory.reused = reused
        return in_memory
    retriever: Retriever | None = None
    if manifest is not None and manifest.get("fingerprint") == fingerprint:
        retriever = _open(root, manifest, projection, seal)
    if retriever is not None and manifest is not None:
        retriever.reused = reused  # whether the projection was reused (the index was, being opened)
        if not manifest.get("stamp"):  # a quiet tree now: record the stamp that lets the next search skip the scan
            stamp = tree_stamp(workspace, scan_started_ns)
            if stamp is not None:
                _write_manifest(root, {**manifest, "stamp": stamp})
        return retriever
    base = index_dir(root)
    name = f"lexical-{seal[:16]}"
    try:
        real_dirs(base, create=True)  # no link on the way: the build goes inside the root or nowhere
        building = Path(tempfile.mkdtemp(prefix=".lexical-", suffix=".tmp", dir=base))
    except OSError:  # a read-only checkout still searches, in memory
        retriever = Retriever(projection)
        retriever.reused = reused
        return retriever
    try:
        target = _build(root, building, base / name, projection)
        files = {p.name: sha256_bytes(p.read_bytes()) for p in sorted(target.iterdir())
                 if p.is_file() and not p.name.endswith(".lock")}
    except (OSError, ValueError):  # the disk, or tantivy on a folder that went away: answer from memory
        shutil.rmtree(building, ignore_errors=True)
        retriever = Retriever(projection)
        retriever.reused = reused
        return retriever
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    _write_manifest(root, {"versions": _versions(), "fingerprint": fingerprint, "projection": seal,
                           "lexical": {"directory": name, "files": files},
                           "stamp": tree_stamp(workspace, scan_started_ns)})
    _remove_stale(base, name)
    retriever = _open(root, _manifest(root) or {}, projection, seal)
    if retriever is None:  # written but not readable back (a full disk, say): answer from memory
        retriever = Retriever(projection)
    retriever.reused, retriever.source = reused, "built"
    return retriever


def _build(root: Path, building: Path, target: Path, projection: Any) -> Path:
    """The lexical index of `projection` written in `building`, then put in place as `target` (returned)."""
    import shutil

    from docbridge.engine.retrieval.lexical import LexicalIndex
    index = LexicalIndex(projection.entries, projection.weights, path=building)
    write_atomic(building / "vocabulary.json", json.dumps(index.vocabulary(), ensure_ascii=False).encode())
    write_atomic(building / "masks.json", json.dumps(index.packed_masks(), ensure_ascii=False).encode())
    lean = [e.to_json() for e in projection.entries]
    for entry in lean:
        entry["fields"] = {}  # the index and masks.json hold what ranking reads of them
        entry.pop("code", None)  # ...and the index a module's code words
        entry["graph"]["edges"] = []  # edges.json holds them, read per entry
        # what ranking does not read (handoffs and lookups read the full projection)
        entry["graph"]["covered_by"], entry["graph"]["mentioned_by"] = [], []
        if set(entry["declared_symbols"]) == set(entry["symbols"]):
            del entry["declared_symbols"]  # read back as every symbol
    write_atomic(building / "edges.json", json.dumps(
        ["\n".join("\t".join((e.kind, e.other, e.direction, e.confidence)) for e in entry.edges)
         for entry in projection.entries], ensure_ascii=False).encode())
    write_atomic(building / "entries.json", json.dumps({"header": projection.header(), "entries": lean},
                                                       ensure_ascii=False, separators=(",", ":")).encode())
    del index  # tantivy holds files open until the index object goes
    if target.exists():  # a broken one, or one another process built from the same projection meanwhile
        lexical = (_manifest(root) or {}).get("lexical") or {}
        if lexical.get("directory") == target.name and _lexical_ok(target, lexical.get("files") or {}):
            shutil.rmtree(building, ignore_errors=True)  # verified by the other process's manifest: it stands
            return target
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(building, target)
    except OSError:
        if not (target / "entries.json").is_file():
            raise
        shutil.rmtree(building, ignore_errors=True)  # the other process's rename came first
    return target


def _remove_stale(base: Path, current: str) -> None:
    """Earlier indexes, and builds that never finished: never a build in progress, nor an index another
    process may be opening."""
    import shutil
    now = time.time()
    for stale in base.iterdir():
        if not stale.is_dir() or stale.name == current:
            continue
        keep = ABANDONED_BUILD_S if stale.name.startswith(".lexical-") else SUPERSEDED_KEEP_S
        if stale.name.startswith(("lexical-", ".lexical-")):
            with contextlib.suppress(OSError):
                if now - stale.stat().st_mtime >= keep:
                    shutil.rmtree(stale, ignore_errors=True)


def _write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        write_sealed(index_dir(root) / "manifest.json", MANIFEST_KIND, manifest)


def now_ns() -> int:
    return time.time_ns()
