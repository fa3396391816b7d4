"""Artifacts under `.docbridge/`: atomic writes, hash-verified reads, and the per-file facts cache.

Every artifact is one JSON header line (format, a hash of the payload) followed by the payload. A file
whose header is unreadable, whose format or analyzer versions differ, or whose payload does not match its
recorded hash is ignored and rebuilt: a corrupt cache costs one cold scan, never a wrong answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.hashing import sha256_bytes
from engine.model import FACT_CLASSES, FileFacts, to_row
from engine.safe_io import ARTIFACT_DIR, ArtifactPathError, prepare_write, read_artifact, real_dirs

CACHE_FORMAT = 1
# A file modified this close to the cache write may change again within the same mtime tick ("racy" entry).
RACY_WINDOW_NS = 2_000_000_000


def artifact_dir(root: Path) -> Path:
    """`root/.docbridge`; an ArtifactPathError when it exists as anything but a real directory (a link to a
    folder elsewhere would have every artifact written there)."""
    path = root / ARTIFACT_DIR
    try:
        st = os.lstat(path)
    except OSError:
        return path
    if not stat.S_ISDIR(st.st_mode):
        real_dirs(path, create=False)  # raises, naming the path
    return path


def write_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write `data` (bytes, or pieces of them) to `path` so that readers see the old file or the new one,
    never half of either."""
    import tempfile  # deferred: a search over a current index reads artifacts and writes none
    prepare_write(path)  # real folders (no links) under .docbridge, no directory at `path`, stale temps gone
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for piece in (data,) if isinstance(data, bytes) else data:
                out.write(piece)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.replace(temp, path)
        except IsADirectoryError as exc:
            raise ArtifactPathError(f"{path} is a directory where a file is written (remove or rename it).") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_sealed(path: Path, kind: str, payload: Any, extra: dict[str, Any] | None = None) -> None:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    header = {"kind": kind, "format": CACHE_FORMAT, "sha256": sha256_bytes(body), **(extra or {})}
    write_atomic(path, json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + body)


def read_sealed(path: Path, kind: str, expect: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any] | None:
    """The header and payload of a sealed artifact, or None when it is missing, foreign or corrupt."""
    raw = read_artifact(path)  # a regular file, never through a link, never a FIFO or a device
    if raw is None:
        return None
    head, sep, body = raw.partition(b"\n")
    if not sep:
        return None
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    if not isinstance(header, dict) or header.get("kind") != kind or header.get("format") != CACHE_FORMAT:
        return None
    for key, value in (expect or {}).items():
        if header.get(key) != value:
            return None
    if header.get("sha256") != sha256_bytes(body):
        return None
    try:
        return header, json.loads(body)
    except (ValueError, RecursionError):
        return None


class FactsCache:
    """FileFacts by path, valid while the file's size, mtime and content hash say it is the same file."""

    def __init__(self, root: Path, analyzers: dict[str, str]) -> None:
        self.path = artifact_dir(root) / "cache" / "facts.json"
        self.analyzers = analyzers
        self.entries: dict[str, list[Any]] = {}
        self.written_ns = 0
        self.dirty = False
        loaded = read_sealed(self.path, "facts-cache", {"analyzers": analyzers})
        if loaded is not None:
            header, payload = loaded
            if isinstance(payload, dict):
                self.entries = payload
                self.written_ns = int(header.get("written_ns", 0))

    def lookup_stat(self, path: str, kind: str, size: int, mtime_ns: int) -> tuple[str, list[Any]] | None:
        """Reuse without reading the file when its size and mtime match an entry that is not racy."""
        entry = self.entries.get(path)
        if entry is None or entry[0] != kind or entry[2] != size or entry[3] != mtime_ns:
            return None
        if mtime_ns >= self.written_ns - RACY_WINDOW_NS:
            return None
        return entry[1], entry[4]

    def lookup_hash(self, path: str, kind: str, content_hash: str) -> list[Any] | None:
        entry = self.entries.get(path)
        if entry is None or entry[0] != kind or entry[1] != content_hash:
            return None
        return entry[4]

    def store(self, path: str, kind: str, content_hash: str, size: int, mtime_ns: int, row: list[Any]) -> None:
        entry = [kind, content_hash, size, mtime_ns, row]
        if self.entries.get(path) != entry:
            self.entries[path] = entry
            self.dirty = True

    def prune(self, keep: set[str]) -> None:
        for path in [p for p in self.entries if p not in keep]:
            del self.entries[path]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        now = time.time_ns()
        write_sealed(self.path, "facts-cache", self.entries, {"analyzers": self.analyzers, "written_ns": now})
        self.written_ns = now
        self.dirty = False


def facts_from_row(kind: str, row: list[Any]) -> FileFacts:
    return FACT_CLASSES[kind].from_row(row)  # type: ignore[attr-defined, no-any-return]


__all__ = ["FactsCache", "facts_from_row", "read_sealed", "to_row", "write_atomic", "write_sealed"]
