"""Gitignore-style globs that never raise: a pattern pathspec rejects is reported, never compiled.

pathspec raises `GitIgnorePatternError` (a lone `!`) or `re.error` (a range such as `[z-a]`) for some
lines; one bad line of a `.gitignore` must not abort a scan, and a bad glob of the configuration is a
configuration error that names its key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pathspec


def glob_error(pattern: str) -> str | None:
    """Why pathspec rejects `pattern` as a gitignore-style line, or None when it compiles."""
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, re.error, TypeError, IndexError) as exc:  # GitIgnorePatternError is a ValueError
        return str(exc) or type(exc).__name__
    return None


def compile_lines(lines: Iterable[str]) -> tuple[pathspec.GitIgnoreSpec, list[tuple[int, str, str]]]:
    """The spec of every line that compiles, and (0-based index, line, reason) of each line that does not."""
    items = list(lines)
    try:
        return pathspec.GitIgnoreSpec.from_lines(items), []
    except (ValueError, re.error, TypeError, IndexError):
        pass
    good: list[str] = []
    bad: list[tuple[int, str, str]] = []
    for index, line in enumerate(items):
        reason = glob_error(line)
        if reason is None:
            good.append(line)
        else:
            bad.append((index, line, reason))
    return pathspec.GitIgnoreSpec.from_lines(good), bad


__all__ = ["compile_lines", "glob_error"]
