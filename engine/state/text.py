"""The text of a file as the model knows it: the editor buffer its facts came from, else the file on disk.

Lines are the protocol's (and Markdown's): only `\n`, `\r\n` and `\r` end one; U+2028, U+0085, a form feed
and the like are characters of their line.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

from docbridge.engine.base.safe_io import read_regular
from docbridge.engine.state.model_state import ModelState

MAX_DISK_BYTES = 8 * 1024 * 1024
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """`text`'s lines without their ends, as the protocol counts them (not `str.splitlines`)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


class _DiskLines:
    """Lines of files that are not open in an editor, by path and modification time (a small LRU)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.cache: OrderedDict[Path, tuple[int, int, list[str]]] = OrderedDict()
        self.lock = threading.Lock()  # readers on worker threads share it with the server's thread

    def lines(self, path: Path) -> list[str] | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        with self.lock:
            cached = self.cache.get(path)
            if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
                self.cache.move_to_end(path)
                return cached[2]
        if stat.st_size > MAX_DISK_BYTES:
            return None
        try:  # a regular file only, never waiting on a FIFO (a hover must not hang the server)
            lines = split_lines(read_regular(path.resolve(), MAX_DISK_BYTES).decode("utf-8", errors="replace"))
        except (OSError, RuntimeError):
            return None
        with self.lock:
            self.cache[path] = (stat.st_mtime_ns, stat.st_size, lines)
            if len(self.cache) > self.size:
                self.cache.popitem(last=False)
        return lines


_DISK = _DiskLines()
_SPLIT: dict[int, tuple[str, list[str]]] = {}  # id(buffer text) -> its lines, for the few open buffers


def lines_of(state: ModelState, path: str) -> list[str] | None:
    """Every line of `path` (without line ends), or None when it is neither open nor readable."""
    text = state.text_of(path)
    if text is None:
        return _DISK.lines(state.root / path)
    cached = _SPLIT.get(id(text))
    if cached is not None and cached[0] is text:
        return cached[1]
    lines = split_lines(text)
    if len(_SPLIT) > 64:
        _SPLIT.clear()
    _SPLIT[id(text)] = (text, lines)
    return lines


def line_of(state: ModelState, path: str, line: int) -> str | None:
    """One line's text (without its line end), or None."""
    lines = lines_of(state, path)
    if lines is None or not 0 <= line < len(lines):
        return None
    return lines[line].rstrip("\r")


__all__ = ["LINE_BREAK", "line_of", "lines_of", "split_lines"]
