"""Which file events change the model, and the files a moved folder holds: what an editor integration asks
about paths."""

from __future__ import annotations

import os
from pathlib import Path

from docbridge.engine.base.config import CONFIG_FILE
from docbridge.engine.discovery.files import ANALYZED_KINDS, DEFAULT_EXCLUDED_DIRS, UNDECODABLE, file_kind
from docbridge.engine.discovery.markdown import MAX_LINE_CHARS, MAX_NESTING
from docbridge.engine.state.model_state import ModelState

# Skip reasons of a file (or its open buffer) beyond a budget: nothing answers from it, and an editor shows
# one notice saying why it is not analyzed.
NOT_ANALYZED = ("too-large", "line-too-long", "nesting-too-deep")
NOTICE_CODES = ("FILE_TOO_LARGE", "FILE_LINE_TOO_LONG", "FILE_NESTING_TOO_DEEP")


def not_analyzed(state: ModelState, path: str) -> bool:
    """Whether the file is beyond a budget: over `limits.maxFileBytes`, a line too long or containers nested
    too deep to analyze."""
    return state.skipped.get(path) in NOT_ANALYZED


def not_analyzed_notice(state: ModelState, path: str) -> tuple[str, str] | None:
    """The code and sentence that tell a person why the file is not analyzed, or None when it is."""
    reason = state.skipped.get(path)
    if reason == "too-large":
        return "FILE_TOO_LARGE", (f"This file is larger than the {state.config.limits.max_file_bytes:,}-byte limit "
                                  f"(`limits.maxFileBytes`), so Doc Bridge does not analyze it.")
    if reason == "line-too-long":
        return "FILE_LINE_TOO_LONG", (f"A line of this file is longer than {MAX_LINE_CHARS:,} characters, so "
                                      f"Doc Bridge does not analyze it.")
    if reason == "nesting-too-deep":
        return "FILE_NESTING_TOO_DEEP", (f"A line of this file nests more than {MAX_NESTING} quotes or list items, "
                                         f"so Doc Bridge does not analyze it.")
    return None


def needs_rescan(path: str) -> bool:
    """A change to the configuration or to ignore rules changes what every file means: scan again. The ignore
    file of a folder that is never walked (`.docbridge/.gitignore`, written with the folder) changes nothing."""
    parts = path.split("/")
    if any(part in DEFAULT_EXCLUDED_DIRS for part in parts[:-1]):
        return False
    return path == CONFIG_FILE or parts[-1] == ".gitignore"


def matters(path: str, created_or_deleted: bool) -> bool:
    """Whether a file event on disk changes the model: analyzed files always, other files when they come or
    go (a link to an image breaks when the image is deleted)."""
    return file_kind(path) in ANALYZED_KINDS or created_or_deleted


def is_markdown(path: str) -> bool:
    return file_kind(path) == "document"


def files_under(root: Path, path: str) -> list[str]:
    """The files at `path` (a file, or every file of a folder, excluded directories not entered), as
    repository-relative paths, sorted."""
    full = root / path
    if not full.is_dir():
        return [path]
    found = []
    for directory, subdirectories, files in os.walk(full):
        # a name holding bytes that are not UTF-8 is left out, as a scan's walk leaves it
        subdirectories[:] = sorted(d for d in subdirectories
                                   if d not in DEFAULT_EXCLUDED_DIRS and not d.startswith(".")
                                   and not UNDECODABLE.search(d))
        for name in sorted(files):
            if UNDECODABLE.search(name):
                continue
            try:
                found.append((Path(directory) / name).relative_to(root).as_posix())
            except ValueError:
                continue
    return found


__all__ = ["files_under", "is_markdown", "matters", "needs_rescan"]
