"""What every command shares: exit codes, the usage error, the console, the repository root, the progress bar,
opening a workspace or a retriever, writing output, and output that cannot drive the terminal.

Building the parser imports this module for every command, so it imports nothing heavy at module level: the
engine, pydantic and rich are imported inside the functions that use them.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


# A repository's file names and text may hold control characters (git keeps any byte of a name but NUL and /):
# printed as they are, ESC and the C1 controls would start the terminal's control sequences (colours, the window's
# title, the clipboard). Written as escapes instead: C0 as \xNN, tab, newline and carriage return aside; DEL and
# C1 as \u00NN, which a JSON string reads back as the same character (JSON escapes C0 itself).
CONTROL_ESCAPES = {c: f"\\x{c:02x}" for c in range(32) if c not in (9, 10, 13)} | {
    c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}


class PrintableStream:
    """A text stream that writes its text with CONTROL_ESCAPES: installed over stdout and stderr while a command
    runs, so what it prints, a repository's text among it, cannot drive the terminal. The rest is the stream's
    own."""

    def __init__(self, stream: Any) -> None:
        self.raw_stream = stream

    def write(self, text: str) -> int:
        self.raw_stream.write(text.translate(CONTROL_ESCAPES))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw_stream, name)


class UsageError(Exception):
    """An error in what the user asked for; printed as one clear sentence, exit 2."""


def input_errors() -> tuple[type[Exception], ...]:
    """The errors printed as one sentence with exit 2. Evaluated only when an exception reaches `main`:
    importing the configuration's model (pydantic) costs more than a search over a current index takes."""
    from docbridge.engine.base.config import ConfigError
    from docbridge.engine.base.safe_io import ArtifactPathError
    return UsageError, ConfigError, ArtifactPathError


def os_error_sentence(exc: OSError) -> str:
    """An error of the operating system as one sentence naming its file: `/dev/full: No space left on device.`"""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return f"{reason}."
    names = str(exc.filename) + (f" -> {exc.filename2}" if exc.filename2 is not None else "")
    return f"{names}: {reason}."


def console(stderr: bool = False, raw: bool = False) -> Any:
    """A rich console on stdout (or stderr) that wraps softly and highlights nothing; `raw`: on the stream under
    `PrintableStream`, for the progress bar's own control sequences (its text is ours)."""
    from rich.console import Console
    if not raw:
        return Console(stderr=stderr, highlight=False, soft_wrap=True)
    stream = sys.stderr if stderr else sys.stdout
    return Console(file=getattr(stream, "raw_stream", stream), highlight=False, soft_wrap=True)


def root_dir(value: str | None) -> Path:
    """The repository root `--root` names (default: the current directory), resolved; a usage error when it
    is not a directory."""
    root = Path(value or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"--root {value!r} is not a directory.")
    return root


def add_root(parser: argparse.ArgumentParser) -> None:
    """The `--root DIR` option most commands take."""
    parser.add_argument("--root", metavar="DIR", help="repository root (default: the current directory)")


class Progress(AbstractContextManager["Progress"]):
    """A progress bar on a terminal (stderr), nothing when piped."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar
            self.bar = Bar(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=console(stderr=True, raw=True), transient=True)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.bar is None:
            return
        task = self.tasks.get(phase)
        if task is None:
            task = self.tasks[phase] = self.bar.add_task(phase, total=max(total, 1))
        self.bar.update(task, completed=done, total=max(total, 1))


def open_workspace(root: Path, *, progress: bool = False, use_cache: bool = True, jobs: int | None = None,
                   resolve: bool = True) -> Any:
    """A scanned Workspace for `root` (warm from the facts cache when nothing changed). The resolved model a
    language server keeps is not read: `check` and `scan` resolve lazily, and reading it cost more than they
    save (15,001 files: `check` 2.5 s and 329 MB with it, 1.7 s and 146 MB without)."""
    from docbridge.engine.workspace import Workspace
    workspace = Workspace(root, use_cache=use_cache, jobs=jobs)
    with Progress(progress) as bar:
        workspace.scan(progress=bar if bar.enabled else None, resolve=resolve)
    return workspace


def open_retriever(root: Path, *, use_cache: bool = True, progress: bool = False) -> tuple[Any, Any]:
    """The workspace (None when it was not needed) and its retriever. Over a tree unchanged since the index
    in .docbridge/index was built, the index is opened and nothing is scanned; otherwise the tree is scanned
    (facts from their cache) and the projection and index are reused when their inputs match, rebuilt when
    they are missing, stale or corrupt (docbridge.engine.retrieval.store)."""
    from docbridge.engine.retrieval import store
    if use_cache:
        retriever = store.open_current(root)
        if retriever is not None:
            return None, retriever
    started = store.now_ns()
    workspace = open_workspace(root, progress=progress, use_cache=use_cache, resolve=False)
    return workspace, store.retriever_for(workspace, started)


def reference_workspace(root: Path, use_cache: bool) -> tuple[Any, Any]:
    """A resolved workspace and its projection (from the on-disk index when the inputs match)."""
    from docbridge.engine.artifacts.snapshot_file import projection_for
    workspace = open_workspace(root, use_cache=use_cache)
    return workspace, projection_for(workspace)[0]


def write_output(path: str, text: str) -> None:
    """`text` written to the file `path`, or to stdout when `path` is '-' (a file that is not a regular one, such
    as `/dev/null` or a FIFO, is written into as it is: `write_named_file`)."""
    if path == "-":
        sys.stdout.write(text)
        return
    from docbridge.engine.base.cache import write_named_file
    write_named_file(Path(path), text.encode("utf-8"))


def emit(text: str, output: str | None = None) -> None:
    """`text` to `--output` when given, else to stdout."""
    if output:
        write_output(output, text)
    else:
        sys.stdout.write(text)


def dump(payload: Any, compact_output: bool = False) -> str:
    """`payload` as JSON with sorted keys: indented, or compact on one line."""
    if compact_output:
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    return json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False) + "\n"

