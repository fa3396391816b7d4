"""Opening Doc Bridge's own files safely: the artifacts under `.docbridge/` and the configuration.

A repository is input, and input may be hostile: `.docbridge` may be a symbolic link to a folder elsewhere,
an artifact may be a link to `/dev/zero` or a FIFO, the configuration may link to a file outside the root.

- `.docbridge` and every folder below it that holds an artifact must be a real directory (checked with
  `lstat`, never followed); anything else is an `ArtifactPathError` (the CLI's exit 2), so nothing is ever
  written or read through a link.
- An artifact is read only when it is a regular file, opened with `O_NOFOLLOW | O_NONBLOCK` (a link fails to
  open, a FIFO never blocks) and read up to a bound; anything else reads as missing and is rebuilt.
- The configuration is read only as a regular file whose real path is inside the root, up to a bound.
- The temporary files of interrupted atomic writes are removed once they are old, when their folder is
  next written.
- A page written into the repository (`render`, the editor's render command) goes only where the path leads
  lexically, through real directories: a folder on the way or the page itself that is a link (git keeps
  links, and they may point anywhere) is refused, as is a path that leaves the root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

ARTIFACT_DIR = ".docbridge"
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024 * 1024
MAX_CONFIG_BYTES = 4 * 1024 * 1024
STALE_TEMP_SECONDS = 10 * 60
TEMP_SUFFIX = ".tmp"
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class ArtifactPathError(Exception):
    """A path Doc Bridge keeps its files at is not a real directory or regular file inside the root."""


class UnsafeFileError(OSError):
    """A file that is not a regular file, is a symbolic link, or is larger than its bound."""


class WriteRefused(ValueError):
    """A page would be written outside the root or through a link; the message is one sentence naming it."""


def user_cache_folder() -> Path:
    """Doc Bridge's folder in the user's cache (`$XDG_CACHE_HOME/docbridge`, else `~/.cache/docbridge`): what is
    kept outside every repository (the artifacts' seal key, the language server's answers to `initialize`)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    folder = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return folder / "docbridge"


def write_target(root: Path, path: Path, *, outside_allowed: bool = False) -> Path:
    """`path` (absolute, or relative to `root`) as the file to write: inside the root, no folder from the root
    down to it a link or a file, and the file itself not a link. A path outside the root is a WriteRefused
    unless `outside_allowed` (a path the user typed on the command line: theirs to choose, not checked)."""
    candidate = Path(os.path.normpath(path if path.is_absolute() else root / path))
    relative: Path | None = None
    for base in (Path(os.path.normpath(root.absolute())), root.resolve()):
        if candidate == base:
            raise WriteRefused(f"{path} is the repository itself, not a file in it.")
        if base in candidate.parents:
            relative = candidate.relative_to(base)
            break
    if relative is None:
        if outside_allowed:
            return candidate
        raise WriteRefused(f"{path} is outside the repository; Doc Bridge writes only inside it.")
    current = root.resolve()
    for index, part in enumerate(relative.parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break  # the rest is made by the write
        last = index == len(relative.parts) - 1
        if stat.S_ISLNK(st.st_mode):
            what = "is" if last else "lies in"
            raise WriteRefused(f"{relative.as_posix()} {what} a symbolic link ({current.relative_to(root.resolve())}"
                               f" → {os.readlink(current)}); Doc Bridge writes only into real folders of the "
                               f"repository (replace the link with a folder, or choose another --output).")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise WriteRefused(f"{current.relative_to(root.resolve())} is a file, not a folder to write "
                               f"{relative.as_posix()} in.")
    return root.resolve() / relative


def resolved_inside(root: Path, named: str) -> Path | None:
    """The file a repository's configuration names (relative to `root`), links resolved, or None when it lies
    outside the repository: a repository decides only what lies inside it. ValueError for a NUL character,
    RuntimeError for a link loop (as `Path.resolve`)."""
    path = (root / named).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def artifact_base(path: Path) -> Path | None:
    """The `.docbridge` folder `path` lies in (the innermost), or None when it lies in none."""
    parts = path.parts
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] == ARTIFACT_DIR:
            return Path(*parts[:index + 1])
    return None


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError as exc:
        raise ArtifactPathError(f"{path.parent} is not a directory; Doc Bridge keeps its files in a real "
                                f"directory there (remove or rename it).") from exc


def _check_dir(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise ArtifactPathError(f"{path} is a symbolic link; Doc Bridge reads and writes its files only in a real "
                                f"directory inside the repository (remove the link).")
    if not stat.S_ISDIR(st.st_mode):
        raise ArtifactPathError(f"{path} is not a directory; Doc Bridge keeps its files there (remove or rename "
                                f"it).")


def real_dirs(directory: Path, *, create: bool) -> bool:
    """Whether `directory` exists as real directories all the way down from its `.docbridge` folder (each
    checked with lstat, none followed); with `create`, missing ones are made. A link or a file on the way is
    an ArtifactPathError. A directory outside any `.docbridge` folder is not checked."""
    base = artifact_base(directory / "x")
    if base is None:
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        return directory.is_dir()
    chain = [base, *(Path(*directory.parts[:index + 1]) for index in range(len(base.parts), len(directory.parts)))]
    for current in chain:
        st = _lstat(current)
        if st is None:
            if not create:
                return False
            made = False
            with contextlib.suppress(FileExistsError):
                os.mkdir(current)
                made = True
            st = _lstat(current)
            if st is None:
                return False
            if made and current == base:
                ignore_everything_in(base)
        _check_dir(current, st)
    return True


GITIGNORE = "# Doc Bridge's caches and artifacts, rebuilt by docbridge when missing.\n*\n"


def ignore_everything_in(base: Path) -> None:
    """A `.gitignore` of `*` in a new `.docbridge` folder, as tool caches carry, so that the folder never shows
    in `git status` (delete it to commit artifacts; it is written only when the folder is made)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(base / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(GITIGNORE)


def _open_no_follow(path: str | Path) -> int:
    """A descriptor for `path`, opened without following a link and without blocking on a FIFO."""
    try:
        return os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFileError(errno.ELOOP, "is a symbolic link", str(path)) from exc
        raise


MAX_NAMED_BYTES = 256 * 1024 * 1024  # a file the user names to read (a suite, a baseline): far beyond any real one


def read_named_file(path: str | Path, max_bytes: int = MAX_NAMED_BYTES) -> bytes:
    """The bytes of a file the user named (a link is theirs to follow), when it is a regular file of at most
    `max_bytes`: opened without blocking, so a FIFO or a device (`/dev/zero`) is an UnsafeFileError, not a wait
    or a read without end; FileNotFoundError when it is missing."""
    return read_regular(path, max_bytes, follow=True)


def read_regular(path: str | Path, max_bytes: int, *, follow: bool = False) -> bytes:
    """The bytes of `path` when it is a regular file of at most `max_bytes`, opened without following a link
    (unless `follow`) and without blocking; FileNotFoundError when it is missing, UnsafeFileError when it is
    anything else."""
    handle = os.open(path, _OPEN_FLAGS & ~getattr(os, "O_NOFOLLOW", 0)) if follow else _open_no_follow(path)
    try:
        st = os.fstat(handle)
        if stat.S_ISDIR(st.st_mode):
            raise UnsafeFileError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(errno.EINVAL, "is not a regular file", str(path))
        if st.st_size > max_bytes:
            raise UnsafeFileError(errno.EFBIG, f"is larger than {max_bytes} bytes", str(path))
        pieces: list[bytes] = []
        remaining = max_bytes + 1
        # the size it has now and one byte more (its end, or its growth): a read of a megabyte allocates a
        # megabyte, which for a small file cost four times the rest of reading it
        wanted = min(remaining, st.st_size + 1)
        while remaining > 0:
            piece = os.read(handle, wanted)
            if not piece:
                break
            pieces.append(piece)
            remaining -= len(piece)
            wanted = min(remaining, 1 << 20)
        if remaining <= 0:
            raise UnsafeFileError(errno.EFBIG, f"is larger than {max_bytes} bytes", str(path))
        return b"".join(pieces)
    finally:
        os.close(handle)


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for binary reading when it is a regular file (no link followed, no FIFO waited on);
    OSError otherwise. For reading only the start of a large artifact (its header line)."""
    handle = _open_no_follow(path)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise UnsafeFileError(errno.EINVAL, "is not a regular file", str(path))
        return os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise


def read_artifact(path: Path, max_bytes: int = MAX_ARTIFACT_BYTES) -> bytes | None:
    """An artifact's bytes, or None when it is missing or not a regular file (it is then rebuilt, and the
    write replaces whatever was there). A `.docbridge` folder that is a link or a file: ArtifactPathError."""
    if not real_dirs(path.parent, create=False):
        return None
    try:
        return read_regular(path, max_bytes)
    except OSError:
        return None


def prepare_write(path: Path) -> None:
    """Before an atomic write of `path`: its folders are real directories (made when missing), `path` itself
    is not a directory, and stale temporary files of earlier interrupted writes there are removed."""
    real_dirs(path.parent, create=True)
    st = _lstat(path)
    if st is not None and stat.S_ISDIR(st.st_mode) and artifact_base(path) is not None:
        raise ArtifactPathError(f"{path} is a directory where Doc Bridge keeps a file (remove or rename it).")
    remove_stale_temps(path)


def remove_stale_temps(path: Path, now: float | None = None) -> int:
    """Remove temporary files (`.NAME.*.tmp`) older than STALE_TEMP_SECONDS that interrupted atomic writes
    left beside `path`; in a `.docbridge` folder, those of any artifact. Returns how many went."""
    whole_folder = artifact_base(path) is not None
    prefix = "." if whole_folder else f".{path.name}."
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    removed = 0
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)) and st.st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def read_config_file(root: Path, name: str, max_bytes: int = MAX_CONFIG_BYTES) -> bytes | None:
    """The bytes of the configuration file `name` at `root`, or None when there is none. A link whose real path
    leaves the root, a file that is not regular, or one over `max_bytes` is a ValueError whose message is one
    sentence naming the file."""
    path = root / name
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    target = path
    if stat.S_ISLNK(st.st_mode):
        real, real_root = os.path.realpath(path), os.path.realpath(root)
        if not real.startswith(real_root.rstrip(os.sep) + os.sep):
            raise ValueError(f"{name} is a symbolic link to a file outside the repository ({real}); it is not "
                             f"read (copy the file into the repository instead)")
        target = Path(real)
    try:
        return read_regular(target, max_bytes)
    except FileNotFoundError:
        if target is not path:
            raise ValueError(f"{name} is a symbolic link to a file that does not exist") from None
        return None
    except UnsafeFileError as exc:
        raise ValueError(f"{name} {exc.strerror}; it must be a regular file") from exc
    except OSError as exc:
        raise ValueError(f"{name} cannot be read ({exc.strerror or exc})") from exc


__all__ = ["ArtifactPathError", "UnsafeFileError", "artifact_base", "open_regular", "prepare_write",
           "read_artifact",
           "read_config_file", "read_regular", "real_dirs", "remove_stale_temps"]
