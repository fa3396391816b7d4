"""Document synchronisation: buffers opened, edited, saved and closed; files changed, created, deleted and
renamed on disk. Each becomes a change of the folder's model, applied in the order it arrived."""

from __future__ import annotations

import asyncio
import logging

from docbridge.engine.ide.files import files_under, is_markdown, matters, needs_rescan
from docbridge.engine.ide.provisional import is_complete
from docbridge.engine.ide.rename import paths_under
from docbridge.engine.state.transitions import Change
from docbridge.lsp import diagnostics, scanning
from docbridge.lsp.folders import Folder
from docbridge.lsp.lifecycle import RENAME_FILTERS
from docbridge.lsp.proposals import OVERLAY
from docbridge.lsp.proposals import refresh as refresh_proposals
from docbridge.lsp.restart import text_hash
from docbridge.lsp.server import DocBridgeServer, safely
from docbridge.lsp.textsync import clean_buffer, holds_lone_surrogate
from lsprotocol import types as T

log = logging.getLogger("docbridge.lsp")


def edited(ls: DocBridgeServer, uri: str, text: str | None, *, opened: bool = False) -> None:
    """A buffer changed (text), or was closed or changed on disk (None): a change of the owning model."""
    folder, path = ls.folders.locate(uri)
    if folder is None or path is None:
        return
    if folder.workspace is None:  # the first scan runs: answer from the buffer and the file system
        if folder.scanning:
            folder.touched[path] = text
        kept = ls.prepublished.pop(uri, None) if opened else None
        if kept is not None and text is not None and kept[0] == text_hash(text):
            # published by the start-up from the last stop, for this very text: it stands until the full model
            # replaces it (a provisional answer knows less)
            diagnostics.adopt(folder, path, uri, text, kept[1])
            return
        if text is not None and is_markdown(path):
            # first what the buffer and the file system decide; then, once the messages already received are
            # answered, what the headings of the documents it links to decide too
            target = ls.provisional(folder, path, uri, linked=False)
            if target is not None:
                diagnostics.publish_provisional(ls, folder, path, target.state)
                if not is_complete(target.state):
                    asyncio.get_running_loop().call_soon(_complete_provisional, ls, folder, path, uri, text)
        return
    applied = folder.change([Change(path, text)])
    if opened:
        if applied:
            diagnostics.schedule(ls, folder, force=frozenset({path}))
        else:  # published once the queued change is in the model (its change schedules diagnostics)
            folder.forced.add(path)


def _complete_provisional(ls: DocBridgeServer, folder: Folder, path: str, uri: str, text: str) -> None:
    """The complete provisional diagnostics of a buffer, unless it changed or the scan ended meanwhile."""
    if folder.workspace is not None or ls.convert.buffer_text(uri) is not text:
        return
    target = ls.provisional(folder, path, uri)
    if target is not None:
        diagnostics.publish_provisional(ls, folder, path, target.state, force=False)


def register(server: DocBridgeServer) -> None:  # noqa: C901 (to split)
    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    @safely()
    def did_open(ls: DocBridgeServer, params: T.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        edited(ls, uri, clean_buffer(ls.workspace.text_documents.get(uri), params.text_document.text), opened=True)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    @safely()
    def did_change(ls: DocBridgeServer, params: T.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        text = ls.convert.buffer_text(uri)
        if text is not None:
            # the buffer was clean before: only what this change brings can hold a lone surrogate (a 1 MB buffer
            # that is not ASCII takes 3 ms to search, an edit's text microseconds)
            if any(holds_lone_surrogate(change.text) for change in params.content_changes):
                text = clean_buffer(ls.workspace.text_documents.get(uri), text)
            edited(ls, uri, text)

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE)
    @safely()
    def did_save(ls: DocBridgeServer, params: T.DidSaveTextDocumentParams) -> None:
        text = ls.convert.buffer_text(params.text_document.uri)
        if text is not None:
            edited(ls, params.text_document.uri, text)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    @safely()
    def did_close(ls: DocBridgeServer, params: T.DidCloseTextDocumentParams) -> None:
        ls.convert.forget(params.text_document.uri)
        edited(ls, params.text_document.uri, None)  # the file on disk is the truth again

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @safely()
    def watched_files_changed(ls: DocBridgeServer, params: T.DidChangeWatchedFilesParams) -> None:
        rescan: dict[str, Folder] = {}
        overlays: dict[str, Folder] = {}
        for change in params.changes:
            folder, path = ls.folders.locate(change.uri)
            if folder is None or path is None:
                continue
            if path == OVERLAY:  # enrichment proposals changed: their hints follow
                overlays[str(folder.root)] = folder
                continue
            if needs_rescan(path):
                rescan[str(folder.root)] = folder
                continue
            if change.uri in ls.workspace.text_documents and change.type != T.FileChangeType.Deleted:
                continue  # the editor's buffer is newer than the disk
            if matters(path, change.type != T.FileChangeType.Changed):
                edited(ls, change.uri, None)
        for folder in rescan.values():
            ls.spawn(scanning.scan(ls, folder, "configuration"))
        for folder in overlays.values():
            if str(folder.root) not in rescan:
                refresh_proposals(ls, folder)

    @server.feature(T.WORKSPACE_DID_RENAME_FILES, RENAME_FILTERS)
    @safely()
    def did_rename_files(ls: DocBridgeServer, params: T.RenameFilesParams) -> None:
        """Files or folders moved: the model follows without a rescan (old paths go, new ones are read)."""
        by_folder: dict[str, tuple[Folder, list[Change]]] = {}
        for rename in params.files:
            folder, old = ls.folders.locate(rename.old_uri)
            owner, new = ls.folders.locate(rename.new_uri)
            for holder, path, going in ((folder, old, True), (owner, new, False)):
                if holder is None or path is None:
                    continue
                changes = by_folder.setdefault(str(holder.root), (holder, []))[1]
                if going:
                    state = holder.state
                    gone = paths_under(state, path) if state is not None else [path]
                    changes.extend(Change(p, None) for p in (gone or [path]))
                else:
                    changes.extend(Change(p, _buffer(ls, holder, p)) for p in files_under(holder.root, path))
        for holder, changes in by_folder.values():
            if holder.workspace is None:
                for change in changes:
                    holder.touched[change.path] = change.text
                continue
            holder.change(changes)

    @server.feature(T.WORKSPACE_DID_CREATE_FILES, RENAME_FILTERS)
    @safely()
    def did_create_files(ls: DocBridgeServer, params: T.CreateFilesParams) -> None:
        for created in params.files:
            edited(ls, created.uri, ls.convert.buffer_text(created.uri))

    @server.feature(T.WORKSPACE_DID_DELETE_FILES, RENAME_FILTERS)
    @safely()
    def did_delete_files(ls: DocBridgeServer, params: T.DeleteFilesParams) -> None:
        for deleted in params.files:
            folder, path = ls.folders.locate(deleted.uri)
            state = folder.state if folder is not None else None
            if folder is None or path is None or state is None:
                continue
            folder.change([Change(p, None) for p in (paths_under(state, path) or [path])])


def _buffer(ls: DocBridgeServer, folder: Folder, path: str) -> str | None:
    return ls.convert.buffer_text(ls.convert.uri(folder, path))


__all__ = ["edited", "register"]
