"""Walking a repository: ignore rules, limits, symlinks, file kinds and hashes.

Nothing outside the root is ever read: a symlink is followed only when its real path stays inside the
root's real path, and directory loops are cut by remembering the real directories already entered.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec
from docbridge.engine.base.config import CONFIG_FILE, Config
from docbridge.engine.base.globs import compile_lines
from docbridge.engine.base.safe_io import UnsafeFileError, read_regular

DEFAULT_EXCLUDED_DIRS = frozenset({"node_modules", "dist", "build", "coverage", ".git", ".docbridge", "out"})
# Hidden folders that hold what documentation names: workflows and agent notes (`.github`), a documentation site's
# configuration and theme (`.vitepress`, `.vuepress`, `.storybook`), site settings (`.config`). Every other hidden
# folder (VCS, caches, build output) stays out.
WALKED_HIDDEN_DIRS = frozenset({".github", ".vitepress", ".vuepress", ".storybook", ".config"})
SITE_TOOL_DIRS = frozenset({".vitepress", ".vuepress"})
SITE_TOOL_OUTPUT = frozenset({"cache", ".temp", ".cache"})
MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdx")
MODULE_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
TSCONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
BINARY_SNIFF_BYTES = 8192
MAX_ATTRIBUTES_BYTES = 1 << 20  # a `.gitattributes` longer than this is read only this far
# the skip reason of a `.gitignore` line pathspec rejects (its `path:line` is the skipped entry)
INVALID_IGNORE_PATTERN = "invalid-ignore-pattern"


def file_kind(path: str) -> str:
    """What the engine does with a path: document, module, package-manifest, tsconfig, config or other."""
    name = path.rsplit("/", 1)[-1]
    lower = name.lower()
    if lower.endswith(MARKDOWN_EXTENSIONS):
        return "document"
    if lower.endswith(MODULE_EXTENSIONS):
        return "module"
    if name == "package.json":
        return "package-manifest"
    if name in TSCONFIG_NAMES:
        return "tsconfig"
    if path == CONFIG_FILE:
        return "config"
    data = "/_data/" in f"/{path}" and lower.endswith((".json", ".yml", ".yaml"))
    if NAVIGATION_NAMES.match(lower) or (_in_docs_folder(path) and (lower in DOCS_FOLDER_NAVIGATION or data)):
        return "navigation"
    return "other"


# a documentation site's navigation kept as data: Docusaurus sidebars, Nextra/Fumadocs meta files, MkDocs and
# undocs configuration; a docs folder's `config.json`/`navigation.json` (sites built elsewhere read it) and the
# data files Eleventy and Jekyll build navigation from (`_data/*.json`, `_data/*.yml`)
NAVIGATION_NAMES = re.compile(r"^(?:[\w.-]*sidebars?\.json|_?meta\.json|mkdocs\.ya?ml|docs\.ya?ml|_sidebar\.md)$")
DOCS_FOLDER_NAVIGATION = frozenset({"config.json", "navigation.json", "nav.json", "toc.json"})
_DOCS_FOLDERS = ("docs", "documentation", "website", "site")


def _in_docs_folder(path: str) -> bool:
    return any(part.lower() in _DOCS_FOLDERS for part in path.split("/")[:-1])


ANALYZED_KINDS = frozenset({"document", "module", "package-manifest", "tsconfig", "navigation"})


@dataclass(frozen=True, slots=True)
class WalkedFile:
    path: str  # repository-relative, forward slashes
    kind: str
    size: int
    mtime_ns: int = 0


@dataclass(slots=True)
class WalkResult:
    files: list[WalkedFile] = field(default_factory=list)  # every file that exists in the model
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason (not analyzed)
    notes: list[str] = field(default_factory=list)


_ANYWHERE_MEMO = 65_536  # answers kept by IgnoreRules.is_ignored_anywhere before it starts again


class IgnoreRules:
    """`.gitignore` files (nested, with negation), default excludes and the config's `ignore` globs."""

    def __init__(self, config: Config) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}
        # link targets typed in the editor are checked on every keystroke: answers are kept until a rule changes
        self._anywhere: dict[str, bool] = {}
        self._config_spec = compile_lines(config.ignore)[0] if config.ignore else None
        self._generated: dict[str, pathspec.GitIgnoreSpec] = {}  # `.gitattributes` by directory
        self.tracked: frozenset[str] | None = None  # what git tracks (None: not a git work tree, or git is absent)
        self._tracked_dirs: frozenset[str] = frozenset()
        self.committed_ignored: set[str] = set()  # tracked files a `.gitignore` lists (walked anyway)
        self.sources: list[tuple[str, str, str]] = []  # (file name, directory, text) of every rule file read

    def set_tracked(self, tracked: frozenset[str] | None) -> None:
        self.tracked = tracked
        self._tracked_dirs = frozenset(d for path in tracked or () for d in parent_dirs(path))

    def add_gitignore(self, directory: str, text: str) -> list[tuple[int, str, str]]:
        """Add one directory's `.gitignore`; a line pathspec rejects is left out and returned as
        (1-based line number, line, reason)."""
        self.sources.append((".gitignore", directory, text))
        numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not numbered:
            return []
        spec, bad = compile_lines(line for _, line in numbered)
        self._specs[directory] = spec
        self._anywhere = {}
        return [(numbered[index][0], line, reason) for index, line, reason in bad]

    def add_gitattributes(self, directory: str, text: str) -> None:
        """Add one directory's `.gitattributes`: the paths it marks `linguist-generated` or `linguist-vendored`
        (a later line wins; `-attr`, `!attr` and `attr=false` unset) are generated, not source."""
        self.sources.append((".gitattributes", directory, text))
        lines = []
        for raw in text.splitlines():
            fields = raw.split()
            if len(fields) < 2 or fields[0].startswith("#"):
                continue
            verdict = None
            for attribute in fields[1:]:
                name, _, value = attribute.lstrip("-!").partition("=")
                if name in ("linguist-generated", "linguist-vendored"):
                    verdict = not (attribute.startswith(("-", "!")) or value.lower() == "false")
            if verdict is not None:
                lines.append(fields[0] if verdict else "!" + fields[0])
        if lines:
            self._generated[directory] = compile_lines(lines)[0]

    def fingerprint(self) -> str:
        """A hash of everything these rules were made from besides the configuration: the rule files' texts and
        the tracked files a `.gitignore` lists."""
        import hashlib
        import json
        payload = json.dumps([sorted(self.sources), sorted(self.committed_ignored)], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def marked_generated(self, path: str) -> bool:
        """Whether `.gitattributes` marks the file generated or vendored."""
        if not self._generated:
            return False
        parts = path.split("/")
        verdict = False
        for depth in range(len(parts)):
            spec = self._generated.get("/".join(parts[:depth]))
            if spec is not None:
                result = spec.check_file("/".join(parts[depth:]))
                if result.include is not None:
                    verdict = result.include
        return verdict

    def excluded(self, path: str, is_dir: bool = False) -> bool:
        """Left out whatever git tracks: the default folders, hidden folders and the configuration's `ignore`."""
        parts = path.split("/")
        folders = parts if is_dir else parts[:-1]
        if any(p in DEFAULT_EXCLUDED_DIRS or (p.startswith(".") and p not in WALKED_HIDDEN_DIRS) for p in folders):
            return True
        probe = path + "/" if is_dir else path
        return self._config_spec is not None and bool(self._config_spec.match_file(probe))

    def tracked_despite_ignore(self, path: str, is_dir: bool) -> bool:
        """Whether git tracks the file (or something under the folder) although a `.gitignore` lists it: such a
        file is part of the repository (often committed build output)."""
        if self.tracked is None or self.excluded(path, is_dir):
            return False
        return path in self._tracked_dirs if is_dir else path in self.tracked

    def is_ignored(self, path: str, is_dir: bool = False) -> bool:
        parts = path.split("/")
        folders = parts if is_dir else parts[:-1]
        if any(p in DEFAULT_EXCLUDED_DIRS or (p.startswith(".") and p not in WALKED_HIDDEN_DIRS) for p in folders):
            return True
        if any(a in SITE_TOOL_DIRS and b in SITE_TOOL_OUTPUT for a, b in itertools.pairwise(folders)):
            return True
        probe = path + "/" if is_dir else path
        if self._config_spec is not None and self._config_spec.match_file(probe):
            return True
        verdict: bool | None = None
        # Deeper .gitignore files take precedence: evaluate from the root down, the last decision wins.
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            spec = self._specs.get(directory)
            if spec is None:
                continue
            relative = "/".join(parts[depth:]) + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)

    def is_ignored_anywhere(self, path: str) -> bool:
        """Whether `path` or any of its parent directories is ignored (for link targets we never walked)."""
        known = self._anywhere.get(path)
        if known is not None:
            return known
        parts = path.split("/")
        # a path never walked may be a folder: `bench/checkouts` is ignored by a `checkouts/` line
        ignored = any(self.is_ignored("/".join(parts[:depth]), is_dir=True) for depth in range(1, len(parts))) \
            or self.is_ignored(path) or self.is_ignored(path, is_dir=True)
        if len(self._anywhere) >= _ANYWHERE_MEMO:
            self._anywhere = {}
        self._anywhere[path] = ignored
        return ignored


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def walk(root: Path, config: Config) -> tuple[WalkResult, IgnoreRules]:
    """List every file of the repository the model should know about, in sorted order."""
    walker = _Walker(root, config)
    walker.rules.set_tracked(tracked_paths(root))
    walker.visit(str(root), "")
    for linked in walker.linked_dirs:  # grows while links inside linked folders are found
        walker.visit(*linked)
    walker.result.files.sort(key=lambda f: f.path)
    return walker.result, walker.rules


class _Walker:
    """One walk's state. (A method, not a nested function calling itself: that closure was a cycle, which kept
    the walk's list of every file alive after a scan had frozen what it allocated, never to be collected.)"""

    def __init__(self, root: Path, config: Config) -> None:
        self.result = WalkResult()
        self.rules = IgnoreRules(config)
        self.real_root = _real(str(root))
        self.seen_dirs: set[str] = set()
        self.max_files = config.limits.max_files
        self.linked_dirs: list[tuple[str, str]] = []  # links to folders, walked after every real folder

    def visit(self, abs_dir: str, rel_dir: str) -> None:
        result, rules, real_root = self.result, self.rules, self.real_root
        real_dir = _real(abs_dir)
        if real_dir in self.seen_dirs:  # a link back into its own folder, or to a folder walked already
            inside_target = _inside(_real(os.path.dirname(abs_dir)), real_dir)
            result.skipped[rel_dir or "."] = "symlink-loop" if inside_target else "symlink-duplicate"
            return
        self.seen_dirs.add(real_dir)
        gitignore = os.path.join(abs_dir, ".gitignore")
        if os.path.isfile(gitignore) and _inside(_real(gitignore), real_root):
            try:
                with open(gitignore, encoding="utf-8", errors="replace") as handle:
                    invalid = rules.add_gitignore(rel_dir, handle.read())
            except OSError:
                invalid = []
            for number, _, _ in invalid:  # the line is skipped; everything else proceeds
                result.skipped[f"{rel_dir}/.gitignore:{number}" if rel_dir else f".gitignore:{number}"] = \
                    INVALID_IGNORE_PATTERN
        attributes = os.path.join(abs_dir, ".gitattributes")
        if os.path.isfile(attributes) and _inside(_real(attributes), real_root):
            try:
                with open(attributes, encoding="utf-8", errors="replace") as handle:
                    rules.add_gitattributes(rel_dir, handle.read(MAX_ATTRIBUTES_BYTES))
            except OSError:
                pass
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError:
            result.skipped[rel_dir or "."] = "unreadable"
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not entry.name.isascii() and UNDECODABLE.search(entry.name):
                # bytes that are not UTF-8 in its name (Python keeps them as lone surrogates): no artifact, URI or
                # JSON can name it; reported under its name as UTF-8 reads it, U+FFFD for each such byte
                result.skipped[readable_path(rel)] = "undecodable-name"
                continue
            try:
                is_link = entry.is_symlink()
                st = os.stat(entry.path) if is_link else entry.stat(follow_symlinks=False)
            except OSError:
                if is_link:
                    result.skipped[rel] = "broken-symlink"
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if rules.is_ignored(rel, is_dir=is_dir):
                if not rules.tracked_despite_ignore(rel, is_dir):
                    continue
                if not is_dir:
                    rules.committed_ignored.add(rel)
            if is_link and not _inside(_real(entry.path), real_root):
                result.skipped[rel] = "symlink-outside-root"
                continue
            if is_dir and is_link:  # the folder itself is walked under its own name, the link only when it is not
                self.linked_dirs.append((entry.path, rel))
            elif is_dir:
                self.visit(entry.path, rel)
            elif stat.S_ISREG(st.st_mode):
                if len(result.files) >= self.max_files:
                    result.skipped[rel] = "file-limit"
                    continue
                # a link to another file of the repository (`CLAUDE.md` -> `AGENTS.md`) is that file shown twice:
                # it exists, its target is what is read
                kind = "other" if is_link else file_kind(rel)
                result.files.append(WalkedFile(sys.intern(rel), kind, st.st_size, st.st_mtime_ns))


GIT_TIMEOUT = 30  # seconds `git ls-files` may take before the walk goes on without it


def tracked_paths(root: Path) -> frozenset[str] | None:
    """The files git tracks in a work tree rooted at `root` (None when `root` is not the top of one, or git is
    missing or fails): `.gitignore` only hides untracked files, so a tracked file it lists is still walked."""
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached"], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT, check=True)  # stdin is a server's wire
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(p for p in done.stdout.decode("utf-8", errors="replace").split("\0") if p)


UNDECODABLE = re.compile("[\udc80-\udcff]")  # a byte of a file name that is not UTF-8, as `os` decodes it


def readable_path(path: str) -> str:
    """`path` with each byte that is not UTF-8 (kept by `os` as a lone surrogate) read as U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class ReadResult:
    data: bytes | None
    text: str | None
    reason: str | None  # why the file is not analyzed, when it is not


def read_text(root: Path, path: str, max_bytes: int, real_root: str | None = None,
              real_folders: dict[str, str] | None = None) -> ReadResult:
    """Read one analyzable file: too large, binary or undecodable files come back with a reason. `real_root`:
    the root's real path, and `real_folders` a memo of folders' real paths, when the caller reads many files at
    once (each realpath walks every component: a quarter of reading a small file)."""
    real_root = real_root or _real(str(root))
    if real_folders is None:
        real = _real(os.path.join(root, path))
    else:
        real = _in_real_folder(root, path, real_root, real_folders)
    if not _inside(real, real_root):
        return ReadResult(None, None, "symlink-outside-root")
    try:
        # a regular file only, opened without blocking: a FIFO put where a document was never hangs a reader
        data = read_regular(real, max_bytes)
    except UnsafeFileError as exc:
        if exc.errno == errno.ELOOP and real_folders is not None:  # the file is a link: where it leads is read
            return read_text(root, path, max_bytes, real_root)
        return ReadResult(None, None, "too-large" if exc.errno == errno.EFBIG else "unreadable")
    except OSError:
        return ReadResult(None, None, "unreadable")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return ReadResult(data, None, "binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ReadResult(data, None, "invalid-utf8")
    return ReadResult(data, text.removeprefix("\ufeff"), None)


def _in_real_folder(root: Path, path: str, real_root: str, real_folders: dict[str, str]) -> str:
    """`path` in its folder's real path (memoised in `real_folders`); the file itself is left unresolved, opened
    without following a link."""
    folder, _, name = path.rpartition("/")
    real_folder = real_folders.get(folder)
    if real_folder is None:
        real_folder = real_folders[folder] = _real(os.path.join(root, folder)) if folder else real_root
    return os.path.join(real_folder, name)


def read_ahead(root: Path, paths: Iterable[str], real_root: str, real_folders: dict[str, str]) -> None:
    """Ask the kernel to start reading these files now, all at once, before they are read one by one: on a
    cold page cache a scan's workers otherwise wait for the disk file after file (a fifth of the cold scan of
    100,000 files). Nothing is read here; links, files outside the root and anything not a regular file are
    left to `read_text`."""
    if not hasattr(os, "posix_fadvise"):
        return
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for path in paths:
        real = _in_real_folder(root, path, real_root, real_folders)
        if not _inside(real, real_root):
            continue
        try:
            handle = os.open(real, flags)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(handle).st_mode):
                os.posix_fadvise(handle, 0, 0, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass
        finally:
            os.close(handle)


def normalise(path: str) -> str | None:
    """A repository-relative POSIX path with `.` and `..` folded, or None when it leaves the root."""
    if "\\" in path:
        path = path.replace("\\", "/")
    # interned: the paths references resolve to are the walked files' (one copy each, however many links name one)
    if "//" not in path and "/." not in path and not path.startswith((".", "/")) and not path.endswith("/"):
        return sys.intern(path)  # already clean: the common case, kept cheap
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return sys.intern("/".join(parts))


def parent_dirs(path: str) -> Iterator[str]:
    """`a/b/c.md` -> `a/b`, `a` (never the root)."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        yield "/".join(parts[:depth])
