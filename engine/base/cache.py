"""Artifacts under `.docbridge/`: atomic writes, hash-verified reads, and the per-file facts cache.

Every artifact is one JSON header line (format, a hash of the payload) followed by the payload. A file
whose header is unreadable, whose format or analyzer versions differ, or whose payload does not match its
recorded hash is ignored and rebuilt: a corrupt cache costs one cold scan, never a wrong answer.

The header also carries a seal: an HMAC of the payload's hash under a key kept outside every repository, in
the user's cache folder (`seal_key`). A `.docbridge/` folder that came with a cloned repository was sealed
with another key (or none), so its artifacts, however well their hashes match, are rebuilt and never
believed: a cache is only ever read by the user who wrote it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from docbridge.engine.base.hashing import canonical_bytes, sha256_bytes
from docbridge.engine.base.model import FACT_CLASSES, FileFacts, to_row
from docbridge.engine.base.safe_io import (
    ARTIFACT_DIR,
    ArtifactPathError,
    open_regular,
    prepare_write,
    read_artifact,
    real_dirs,
    user_cache_folder,
)

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


def write_atomic(path: Path, data: bytes | Iterable[bytes] | Callable[[BinaryIO], None]) -> None:
    """Write `data` (bytes, pieces of them, or a function that writes to the file it is given) to `path` so that
    readers see the old file or the new one, never half of either."""
    import tempfile  # deferred: a search over a current index reads artifacts and writes none
    prepare_write(path)  # real folders (no links) under .docbridge, no directory at `path`, stale temps gone
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w+b") as out:
            if callable(data):
                data(out)
            else:
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


def write_new_file(path: Path, data: bytes) -> None:
    """Write `data` as a new file at `path`, whole, never replacing one: FileExistsError when a file is there, or
    appeared since it was looked for (a hard link of the finished temporary file makes the check and the write
    one step)."""
    import tempfile
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: created exclusively, then written
            with open(path, "xb") as out:
                out.write(data)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def write_named_file(path: Path, data: bytes) -> None:
    """Write a file the user named (`--output`): into it as it is when it is not a regular file (`/dev/null`, a
    FIFO, a terminal: an atomic write would replace it with a file, as root `/dev/null` itself), else atomically."""
    try:
        mode: int | None = os.stat(path).st_mode
    except OSError:  # not there yet: written atomically
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            with open(path, "wb") as out:
                out.write(data)
            return
        write_atomic(path, data)
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc  # a failed write names no file by itself


SEAL_KEY_ENV = "DOCBRIDGE_SEAL_KEY_FILE"  # where the seal key is kept (default: the user's cache folder)
_seal: list[bytes] = []
_seal_lock = threading.Lock()


def seal_key_path() -> Path:
    given = os.environ.get(SEAL_KEY_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    return user_cache_folder() / "seal-key"


def seal_key() -> bytes:
    """This user's key for sealing artifacts: read from `seal_key_path()`, made there (readable by the user
    only) when missing; a process-local key when it can be neither read nor made (caches then last one run)."""
    with _seal_lock:
        if _seal:
            return _seal[0]
        path = seal_key_path()
        key = _read_key(path)
        if key is None:
            with contextlib.suppress(OSError):
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(handle, "wb") as out:
                    out.write(os.urandom(32))
                try:
                    os.link(temp, path)  # made only if absent: a concurrent first run keeps the key it wrote
                finally:
                    os.unlink(temp)
            key = _read_key(path) or os.urandom(32)
        _seal.append(key)
        return key


def _read_key(path: Path) -> bytes | None:
    try:
        from docbridge.engine.base.safe_io import read_regular
        key = read_regular(path, 1024)
    except OSError:
        return None
    return key if len(key) >= 16 else None


def _mac(digest: str) -> str:
    return hmac.new(seal_key(), digest.encode("ascii"), hashlib.sha256).hexdigest()


def write_sealed(path: Path, kind: str, payload: Any, extra: dict[str, Any] | None = None,
                 body: bytes | None = None) -> None:
    """Write `payload` as JSON (or `body`, bytes already encoded) under a sealed header."""
    if body is None:
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    digest = sha256_bytes(body)
    header = {"kind": kind, "format": CACHE_FORMAT, "sha256": digest, "seal": _mac(digest), **(extra or {})}
    write_atomic(path, json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + body)


HEADER_ROOM = 1024  # the bytes a streamed artifact's header line may take (padded: it is written last)


def write_sealed_stream(path: Path, kind: str, extra: dict[str, Any], produce: Callable[[BinaryIO], None]) -> None:
    """Write a sealed artifact whose payload `produce` writes to a file, piece by piece, so that a large one is
    never held in memory whole: the header, which needs the payload's hash, is written last, padded into the
    room left for it at the start."""
    def write(out: BinaryIO) -> None:
        out.write(b" " * (HEADER_ROOM - 1) + b"\n")
        hashing = _HashingWriter(out)
        produce(hashing)  # type: ignore[arg-type]
        digest = hashing.digest.hexdigest()
        header = json.dumps({"kind": kind, "format": CACHE_FORMAT, "sha256": digest, "seal": _mac(digest), **extra},
                            sort_keys=True).encode("utf-8")
        if len(header) >= HEADER_ROOM:
            raise ValueError(f"the header of {path.name} is over {HEADER_ROOM} bytes")
        out.seek(0)
        out.write(header.ljust(HEADER_ROOM - 1))
    write_atomic(path, write)


class _HashingWriter:
    """A binary file that hashes what is written through it."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.digest = hashlib.sha256()

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return self.out.write(data)


def _header_matches(header: Any, kind: str, expect: dict[str, Any] | None) -> bool:
    """Whether an artifact's header is of this kind and format and has the `expect`ed values."""
    return isinstance(header, dict) and header.get("kind") == kind and header.get("format") == CACHE_FORMAT and \
        all(header.get(key) == value for key, value in (expect or {}).items())


def read_sealed(path: Path, kind: str, expect: dict[str, Any] | None = None,
                parse: bool = True) -> tuple[dict[str, Any], Any] | None:
    """The header and payload of a sealed artifact (its bytes, unparsed, with `parse=False`), or None when it is
    missing, foreign or corrupt."""
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
    if not _header_matches(header, kind, expect):
        return None
    digest = sha256_bytes(body)
    if header.get("sha256") != digest:
        return None
    seal = header.get("seal")
    if not isinstance(seal, str) or not hmac.compare_digest(seal, _mac(digest)):
        return None  # sealed by another user or machine, or by nobody: rebuilt, never believed
    if not parse:
        return header, body
    try:
        return header, json.loads(body)
    except (ValueError, RecursionError):
        return None


def open_sealed(path: Path, kind: str, expect: dict[str, Any] | None = None) -> tuple[dict[str, Any], BinaryIO] | None:
    """A sealed artifact too large to hold in memory twice: its header, and the file positioned at its payload
    once the payload's hash and seal were checked (read in pieces); None when it is missing, foreign or corrupt.
    The caller closes the file."""
    if not real_dirs(path.parent, create=False):
        return None
    try:
        handle = open_regular(path)
    except OSError:
        return None
    try:
        header = json.loads(handle.readline(64 * 1024))
        if not _header_matches(header, kind, expect):
            raise ValueError("another artifact")
        start = handle.tell()
        digest = hashlib.sha256()
        while piece := handle.read(1 << 20):
            digest.update(piece)
        seal = header.get("seal")
        if header.get("sha256") != digest.hexdigest() or not isinstance(seal, str) or \
                not hmac.compare_digest(seal, _mac(digest.hexdigest())):
            raise ValueError("not sealed by this user")  # or corrupt: rebuilt, never believed
        handle.seek(start)
        return header, handle
    except (OSError, ValueError, RecursionError):
        handle.close()
        return None


FACTS_LAYOUT = 2  # one line per file: `"path"<TAB>[kind, hash, size, mtime, row]`, parsed when the file is looked up


class FactsCache:
    """FileFacts by path, valid while the file's size, mtime and content hash say it is the same file.

    The cache of a 100,000-file repository is 130 MB of JSON: parsed whole, its rows cost five times that in
    objects at once, and the freed objects leave the process that much larger. So each file's entry is a line
    of its own, found by an offset into the artifact's bytes and parsed when the scan looks that file up; an
    entry the scan does not change is written back as the bytes it was read as."""

    def __init__(self, root: Path, analyzers: dict[str, str]) -> None:
        self.path = artifact_dir(root) / "cache" / "facts.json"
        self.analyzers = analyzers
        # entries stored (or changed) by this run, encoded as they will be written: a row's lists and strings,
        # kept until the save, were five times its line (150 MB more at the peak of a cold scan of 20,000 files)
        self.entries: dict[str, bytes] = {}
        self._body = b""
        self._lines: dict[str, tuple[int, int]] = {}  # path -> where its entry is in `_body`
        self.written_ns = 0
        self.dirty = False
        expect = {"analyzers": analyzers, "layout": FACTS_LAYOUT}
        loaded = read_sealed(self.path, "facts-cache", expect, parse=False)
        if loaded is not None:
            header, body = loaded
            written = header.get("written_ns", 0)
            lines = _index_lines(body)
            if type(written) is int and lines is not None:
                self._body, self._lines = body, lines
                self.written_ns = written

    def _entry(self, path: str, kind: str) -> list[Any] | None:
        line = self._line(path)
        if line is None:
            return None
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if type(entry) is not list or len(entry) != 5 or entry[0] != kind or type(entry[4]) is not list:
            return None  # absent, or not of the shape `store` writes
        return entry

    def lookup_stat(self, path: str, kind: str, size: int, mtime_ns: int) -> tuple[str, list[Any]] | None:
        """Reuse without reading the file when its size and mtime match an entry that is not racy."""
        entry = self._entry(path, kind)
        if entry is None or entry[2] != size or entry[3] != mtime_ns or type(entry[1]) is not str:
            return None
        if mtime_ns >= self.written_ns - RACY_WINDOW_NS:
            return None
        return entry[1], entry[4]

    def known_hash(self, path: str, kind: str) -> str | None:
        """The content hash of `path`'s cached facts (a scan compares it with the file's before analysing)."""
        entry = self._entry(path, kind)
        return entry[1] if entry is not None and type(entry[1]) is str else None

    def lookup_hash(self, path: str, kind: str, content_hash: str) -> list[Any] | None:
        entry = self._entry(path, kind)
        if entry is None or entry[1] != content_hash:
            return None
        return entry[4]

    def _line(self, path: str) -> bytes | None:
        """The encoded entry of `path`: stored by this run, or as read."""
        line = self.entries.get(path)
        if line is None:
            where = self._lines.get(path)
            if where is None:
                return None
            line = self._body[where[0]:where[1]]
        return line

    def store(self, path: str, kind: str, content_hash: str, size: int, mtime_ns: int, row: list[Any]) -> None:
        line = canonical_bytes([kind, content_hash, size, mtime_ns, row])
        if self._line(path) != line:  # the encoding is canonical: equal bytes, equal entries
            self.entries[path] = line
            self.dirty = True

    def prune(self, keep: set[str]) -> None:
        for path in [p for p in (*self.entries, *self._lines) if p not in keep]:
            self.entries.pop(path, None)
            self._lines.pop(path, None)
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        now = time.time_ns()

        def produce(out: BinaryIO) -> None:  # line by line: the whole body is never held a second time
            for path in sorted({*self.entries, *self._lines}):
                line = self._line(path)
                assert line is not None
                out.write(json.dumps(path, ensure_ascii=False).encode("utf-8") + b"\t" + line + b"\n")
        write_sealed_stream(self.path, "facts-cache", {"analyzers": self.analyzers, "layout": FACTS_LAYOUT,
                                                       "written_ns": now}, produce)
        self.written_ns = now
        self.dirty = False


def _index_lines(body: bytes) -> dict[str, tuple[int, int]] | None:
    """Path -> (start, end) of its entry in a facts cache's body; None when the body is not of that layout.
    A path is JSON (a raw tab or line end never occurs in it), so the first tab of a line ends it."""
    lines: dict[str, tuple[int, int]] = {}
    start, size = 0, len(body)
    while start < size:
        end = body.find(b"\n", start)
        end = size if end < 0 else end
        tab = body.find(b"\t", start, end)
        if tab < 0:
            return None
        quoted = body[start:tab]
        try:
            if len(quoted) > 1 and quoted[0] == quoted[-1] == 0x22 and b"\\" not in quoted:
                path = quoted[1:-1].decode("utf-8")  # nothing escaped: the common case, without a parser
            else:
                path = json.loads(quoted)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None
        if type(path) is not str:
            return None
        lines[path] = (tab + 1, end)
        start = end + 1
    return lines


def facts_from_row(kind: str, row: list[Any]) -> FileFacts:
    return FACT_CLASSES[kind].from_row(row)


def cached_facts(path: str, kind: str, row: list[Any]) -> FileFacts | None:
    """Facts of `path` rebuilt from a cached row, or None when the row is not theirs or not of their shape
    (the file is analysed again)."""
    try:
        facts = facts_from_row(kind, row)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return None
    return facts if facts.path == path and type(facts.content_hash) is str else None


__all__ = ["FactsCache", "cached_facts", "facts_from_row", "read_sealed", "seal_key", "to_row", "write_atomic",
           "write_sealed"]
