"""Which file events change the model, and the files a moved folder holds: what an editor integration asks
about paths."""

from __future__ import annotations

import os
from pathlib import Path

from engine.config import CONFIG_FILE
from engine.discovery.files import ANALYZED_KINDS, DEFAULT_EXCLUDED_DIRS, file_kind


def needs_rescan(path: str) -> bool:
    """A change to the configuration or to ignore rules changes what every file means: scan again."""
    return path == CONFIG_FILE or path.rsplit("/", 1)[-1] == ".gitignore"


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
        subdirectories[:] = sorted(d for d in subdirectories
                                   if d not in DEFAULT_EXCLUDED_DIRS and not d.startswith("."))
        for name in sorted(files):
            try:
                found.append((Path(directory) / name).relative_to(root).as_posix())
            except ValueError:
                continue
    return found


__all__ = ["files_under", "is_markdown", "matters", "needs_rescan"]
