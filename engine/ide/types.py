"""The values editor features return, in engine coordinates (0-based lines, code-point columns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docbridge.engine.base.model import Span


@dataclass(frozen=True, slots=True)
class Location:
    path: str  # repository-relative
    span: Span

    @staticmethod
    def at(path: str, line: int = 0, column: int = 0, end_column: int | None = None) -> Location:
        return Location(path, Span(line, column, line, column if end_column is None else end_column))


@dataclass(frozen=True, slots=True)
class Hover:
    markdown: str
    span: Span


@dataclass(frozen=True, slots=True)
class TextEdit:
    path: str
    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class FileMove:
    """A file or folder renamed or moved (repository-relative paths)."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class WorkspaceEdit:
    """Text edits (at most one per place, sorted) and, when the edit also moves files, the moves."""

    edits: tuple[TextEdit, ...] = ()
    moves: tuple[FileMove, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.edits or self.moves)

    def by_path(self) -> dict[str, list[TextEdit]]:
        out: dict[str, list[TextEdit]] = {}
        for edit in self.edits:
            out.setdefault(edit.path, []).append(edit)
        return out


QUICKFIX, SOURCE, REFACTOR = "quickfix", "source", "refactor"


@dataclass(frozen=True, slots=True)
class Action:
    title: str
    kind: str  # quickfix | source | refactor (and their dotted sub-kinds)
    edit: WorkspaceEdit | None = None
    command: str | None = None
    arguments: tuple[Any, ...] = ()
    fixes: int | None = None  # the index, in the request's context, of the diagnostic it fixes
    preferred: bool = False


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: str  # document | module | file | directory | heading | symbol
    detail: str
    new_text: str
    span: Span  # the text it replaces
    sort_text: str = ""


@dataclass(frozen=True, slots=True)
class Lens:
    span: Span
    title: str
    command: str
    arguments: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class DocumentLink:
    span: Span
    target: Location
    tooltip: str


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    detail: str
    span: Span
    selection: Span
    children: list[Symbol] = field(default_factory=list)


__all__ = ["QUICKFIX", "REFACTOR", "SOURCE", "Action", "Completion", "DocumentLink", "FileMove", "Hover", "Lens",
           "Location", "Symbol", "TextEdit", "WorkspaceEdit"]
