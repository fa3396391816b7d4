"""The server's state: settings, one Workspace per workspace folder, open buffers, positions.

Threading: the event loop thread is the single writer of every live Workspace (edits, watched-file events,
diagnostics). A scan (initial or `docbridge.reindex`) builds a new Workspace in a worker thread and hands it
to the loop, which swaps it in and replays the edits that arrived meanwhile; until then requests are
answered from what is known (the previous Workspace, or the open buffer alone).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from engine.discovery.markdown import analyze_markdown
from engine.model import MarkdownFacts
from engine.workspace import Workspace
from lsp.positions import UTF16, LineCache, from_client, path_to_uri, to_client, uri_to_path

log = logging.getLogger("docbridge.lsp")
SEVERITIES = ("error", "warning", "info", "hint", "off")
LOG_LEVELS = {"error": T.MessageType.Error, "warning": T.MessageType.Warning, "info": T.MessageType.Info,
              "debug": T.MessageType.Log}


@dataclass(slots=True)
class Settings:
    """`docbridge.*` settings, read through workspace/configuration."""

    diagnostics_enabled: bool = True
    debounce_ms: int = 200
    severity: dict[str, str] = field(default_factory=dict)
    code_lens: bool = True
    completion_max_items: int = 50
    log_level: str = "info"

    @classmethod
    def from_client(cls, raw: Any) -> Settings:
        settings = cls()
        if not isinstance(raw, dict):
            return settings
        diagnostics = raw.get("diagnostics") if isinstance(raw.get("diagnostics"), dict) else {}
        if isinstance(diagnostics.get("enabled"), bool):
            settings.diagnostics_enabled = diagnostics["enabled"]
        if isinstance(diagnostics.get("debounceMs"), (int, float)) and diagnostics["debounceMs"] >= 0:
            settings.debounce_ms = int(diagnostics["debounceMs"])
        if isinstance(diagnostics.get("severity"), dict):
            settings.severity = {str(k): str(v) for k, v in diagnostics["severity"].items() if v in SEVERITIES}
        lens = raw.get("codeLens") if isinstance(raw.get("codeLens"), dict) else {}
        if isinstance(lens.get("enabled"), bool):
            settings.code_lens = lens["enabled"]
        completion = raw.get("completion") if isinstance(raw.get("completion"), dict) else {}
        if isinstance(completion.get("maxItems"), int) and completion["maxItems"] > 0:
            settings.completion_max_items = completion["maxItems"]
        logging_ = raw.get("log") if isinstance(raw.get("log"), dict) else {}
        if logging_.get("level") in LOG_LEVELS:
            settings.log_level = logging_["level"]
        return settings


@dataclass(slots=True)
class Folder:
    root: Path
    uri: str
    workspace: Workspace | None = None  # the live model; None until the first scan finishes
    scanning: bool = False
    refused: str | None = None  # why this folder is not scanned (home directory, filesystem root)
    pending: dict[str, str | None] = field(default_factory=dict)  # edits received during a scan or index build
    readers: int = 0  # worker threads reading the model now (edits wait in `pending` meanwhile)
    indexing: Any = None  # the retrieval index being built (an asyncio task), shared by concurrent callers
    # uri -> (relative path, signature of what was last published), for files with diagnostics
    published: dict[str, tuple[str, tuple[Any, ...]]] = field(default_factory=dict)
    retriever: Any = None
    retriever_generation: int = -1
    timer: Any = None  # the debounced diagnostics call
    scan_started: float = 0.0
    findings_total: int = 0

    def relative(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            try:
                return path.relative_to(self.root).as_posix()
            except ValueError:
                return None


def refusal(root: Path) -> str | None:
    """Why a folder must not be scanned: a home directory or a filesystem root is not a project."""
    resolved = root.resolve()
    if resolved.parent == resolved:
        return f"{resolved} is the filesystem root"
    try:
        if resolved == Path.home().resolve():
            return f"{resolved} is your home directory"
    except RuntimeError:
        pass
    return None


class ServerState:
    def __init__(self) -> None:
        self.settings = Settings()
        self.folders: dict[str, Folder] = {}
        self.encoding: Any = UTF16
        self.lines = LineCache()
        self._split: dict[str, tuple[str, list[str]]] = {}
        self._uris: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()
        self.buffers: Any = None  # pygls text documents, set by the server

    # ---- folders and paths

    def add_folder(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        root = path.resolve()
        folder = self.folders.get(str(root))
        if folder is None:
            folder = Folder(root=root, uri=uri, refused=refusal(root))
            self.folders[str(root)] = folder
        return folder

    def remove_folder(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        return self.folders.pop(str(path.resolve()), None) if path else None

    def locate(self, uri: str) -> tuple[Folder | None, str | None, Path | None]:
        """The folder that holds `uri` (the deepest), and the repository-relative path in it."""
        path = uri_to_path(uri)
        if path is None:
            return None, None, None
        resolved = path.resolve() if path.exists() else path
        best: Folder | None = None
        for folder in self.folders.values():
            if folder.refused:
                continue
            if (resolved == folder.root or folder.root in resolved.parents) and (
                    best is None or len(str(folder.root)) > len(str(best.root))):
                best = folder
        if best is None:
            return None, None, resolved
        return best, best.relative(resolved), resolved

    def uri_of(self, folder: Folder, relative: str) -> str:
        if not relative:
            return folder.uri
        key = (folder.uri, relative)
        uri = self._uris.get(key)
        if uri is None:  # quoting is slow and diagnostics convert thousands of paths after a scan
            if len(self._uris) > 100_000:
                self._uris.clear()
            uri = self._uris[key] = path_to_uri(folder.root / relative)
        return uri

    # ---- text and columns

    def buffer_text(self, uri: str) -> str | None:
        if self.buffers is None:
            return None
        document = self.buffers.text_documents.get(uri)
        return document.source if document is not None else None

    def buffer_lines(self, uri: str) -> list[str] | None:
        """The lines of an open buffer (split once per version), or None when it is not open."""
        text = self.buffer_text(uri)
        return self._buffer_lines(uri, text) if text is not None else None

    def _buffer_lines(self, uri: str, text: str) -> list[str]:
        # One split per buffer version, not one per converted position.
        cached = self._split.get(uri)
        if cached is not None and cached[0] is text:
            return cached[1]
        lines = text.split("\n")
        self._split[uri] = (text, lines)
        return lines

    def forget_buffer(self, uri: str) -> None:
        self._split.pop(uri, None)

    def line_of(self, folder: Folder | None, relative: str | None, line: int, uri: str | None = None) -> str | None:
        """The text of one line, from the open buffer when there is one, else from disk."""
        if uri is None and folder is not None and relative is not None:
            uri = self.uri_of(folder, relative)
        text = self.buffer_text(uri) if uri else None
        if text is not None:
            lines = self._buffer_lines(uri, text)
        elif folder is not None and relative is not None:
            lines = self.lines.lines(folder.root / relative) or []
        else:
            return None
        return lines[line].rstrip("\r") if 0 <= line < len(lines) else None

    def to_client(self, folder: Folder | None, relative: str | None, line: int, column: int,
                  uri: str | None = None, line_text: str | None = None) -> T.Position:
        if column <= 0:  # column 0 is 0 in every encoding: no need to read the line (often from disk)
            return T.Position(line=max(0, line), character=0)
        if line_text is None:
            line_text = self.line_of(folder, relative, line, uri)
        return T.Position(line=max(0, line), character=max(0, to_client(line_text, column, self.encoding)))

    def range_to_client(self, folder: Folder | None, relative: str | None, line: int, column: int, end_line: int,
                        end_column: int, uri: str | None = None) -> T.Range:
        # most ranges sit on one line: read it once for both ends
        shared = self.line_of(folder, relative, line, uri) if line == end_line and end_column > 0 else None
        return T.Range(start=self.to_client(folder, relative, line, column, uri, shared),
                       end=self.to_client(folder, relative, end_line, end_column, uri, shared))

    def from_client(self, uri: str, position: T.Position) -> tuple[int, int]:
        text = self.buffer_text(uri)
        lines = self._buffer_lines(uri, text) if text is not None else None
        line = position.line
        line_text = lines[line].rstrip("\r") if lines is not None and 0 <= line < len(lines) else None
        return line, from_client(line_text, position.character, self.encoding)

    # ---- facts of an open buffer (without a workspace: single-file mode, or during a scan)

    def buffer_facts(self, uri: str) -> MarkdownFacts | None:
        text = self.buffer_text(uri)
        path = uri_to_path(uri)
        if text is None or path is None or not path.name.lower().endswith((".md", ".markdown")):
            return None
        return analyze_markdown(path.name, text)
