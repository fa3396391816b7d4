"""Completion, code actions, code lenses and renames (headings, files and folders): protocol in and out,
the engine IDE layer in between."""

from __future__ import annotations

from typing import Any

from docbridge.engine.ide import actions as ide_actions
from docbridge.engine.ide import rename as ide_rename
from docbridge.engine.ide.completion import complete
from docbridge.engine.ide.types import Action, FileMove, WorkspaceEdit
from docbridge.lsp.convert import COMPLETION_KINDS
from docbridge.lsp.folders import Folder
from docbridge.lsp.lifecycle import RENAME_FILTERS
from docbridge.lsp.server import DocBridgeServer, Target, safely
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was valid but cannot be done (the message says why)."""

    CODE = -32803
    MESSAGE = "Request failed"


ACTION_KINDS = {"quickfix": T.CodeActionKind.QuickFix, "source": T.CodeActionKind.Source,
                "refactor": T.CodeActionKind.Refactor}


def _empty() -> T.CompletionList:
    return T.CompletionList(is_incomplete=False, items=[])


def _can_rename_files(ls: DocBridgeServer) -> bool:
    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    operations = edit.resource_operations if edit else None
    return bool(edit and edit.document_changes and operations and T.ResourceOperationKind.Rename in operations)


def _action(ls: DocBridgeServer, target: Target, action: Action, diagnostics: list[T.Diagnostic]) -> T.CodeAction:
    edit = ls.convert.workspace_edit(target.folder, action.edit, target.state) if action.edit is not None else None
    command = T.Command(title=action.title, command=action.command, arguments=list(action.arguments)) \
        if action.command else None
    fixed = [diagnostics[action.fixes]] if action.fixes is not None and action.fixes < len(diagnostics) else None
    return T.CodeAction(title=action.title, kind=ACTION_KINDS.get(action.kind, action.kind), diagnostics=fixed,
                        is_preferred=action.preferred or None, edit=edit, command=command)


def register(server: DocBridgeServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=["(", "/", "#", "`", "["]))
    @safely(_empty)
    async def completion(ls: DocBridgeServer, params: T.CompletionParams) -> T.CompletionList:
        target = await ls.target(params.text_document.uri, provisional=False)
        target = await ls.full(target) if target is not None else None
        if target is None:
            return _empty()
        line, column = ls.convert.from_client(target.uri, params.position, target.state, target.path)
        items, incomplete = complete(target.state, target.path, line, column, ls.settings.completion_max_items)
        return T.CompletionList(is_incomplete=incomplete, items=[T.CompletionItem(
            label=item.label, kind=COMPLETION_KINDS.get(item.kind), detail=item.detail, sort_text=item.sort_text,
            filter_text=item.label, text_edit=T.TextEdit(
                range=ls.convert.range(target.folder, target.path, item.span, target.uri, target.state),
                new_text=item.new_text)) for item in items])

    @server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
        code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.Source], resolve_provider=False))
    @safely(list)
    async def code_actions(ls: DocBridgeServer, params: T.CodeActionParams) -> list[T.CodeAction]:
        target = await ls.target(params.text_document.uri)
        target = await ls.full(target) if target is not None else None
        if target is None:
            return []
        ours = [d for d in params.context.diagnostics if d.source == "docbridge" and isinstance(d.data, dict)]
        found = []
        for diagnostic in ours:
            data: dict[str, Any] = diagnostic.data if isinstance(diagnostic.data, dict) else {}
            line, column = ls.convert.from_client(target.uri, diagnostic.range.start, target.state, target.path)
            found.append(ide_actions.Diagnostic(str(data.get("code", "")), data, line, column))
        only = [str(kind) for kind in params.context.only] if params.context.only is not None else None
        automatic = params.context.trigger_kind == T.CodeActionTriggerKind.Automatic
        actions = ide_actions.code_actions(target.state, target.path, found, only, automatic)
        return [_action(ls, target, action, ours) for action in actions]

    @server.feature(T.TEXT_DOCUMENT_CODE_LENS, T.CodeLensOptions(resolve_provider=False))
    @safely(list)
    async def code_lens(ls: DocBridgeServer, params: T.CodeLensParams) -> list[T.CodeLens]:
        if not ls.settings.code_lens:
            return []
        target = await ls.target(params.text_document.uri)
        target = await ls.full(target) if target is not None else None
        if target is None:
            return []
        return [T.CodeLens(range=ls.convert.range(target.folder, target.path, lens.span, target.uri, target.state),
                           command=T.Command(title=lens.title, command=lens.command, arguments=list(lens.arguments)))
                for lens in ide_actions.code_lenses(target.state, target.path)]

    @server.feature(T.TEXT_DOCUMENT_PREPARE_RENAME)
    @safely()
    async def prepare_rename(ls: DocBridgeServer, params: T.PrepareRenameParams) -> Any:
        target = await ls.target(params.text_document.uri)
        target = await ls.full(target) if target is not None else None
        if target is None:
            return None
        line, column = ls.convert.from_client(target.uri, params.position, target.state, target.path)
        found = ide_rename.prepare_rename(target.state, target.path, line, column)
        if found is None:
            return None
        if found.kind == "path" and not _can_rename_files(ls):
            raise RequestFailed("This editor cannot rename files through the language server.")
        return T.PrepareRenamePlaceholder(range=ls.convert.range(target.folder, target.path, found.span, target.uri,
                                                                 target.state), placeholder=found.placeholder)

    @server.feature(T.TEXT_DOCUMENT_RENAME, T.RenameOptions(prepare_provider=True))
    async def rename(ls: DocBridgeServer, params: T.RenameParams) -> T.WorkspaceEdit | None:
        target = await ls.target(params.text_document.uri)
        target = await ls.full(target) if target is not None else None
        if target is None:
            return None
        line, column = ls.convert.from_client(target.uri, params.position, target.state, target.path)
        try:
            edit = ide_rename.rename(target.state, target.path, line, column, params.new_name)
        except ide_rename.RenameError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        if edit.moves and not _can_rename_files(ls):
            raise RequestFailed("This editor cannot rename files through the language server.")
        return ls.convert.workspace_edit(target.folder, edit, target.state, with_moves=True)

    @server.feature(T.WORKSPACE_WILL_RENAME_FILES, RENAME_FILTERS)
    @safely()
    async def will_rename_files(ls: DocBridgeServer, params: T.RenameFilesParams) -> T.WorkspaceEdit | None:
        """Files or folders are about to move: rewrite every reference to them (and the relative links inside
        moved documents) in every document, open or not."""
        moves: dict[str, tuple[Folder, list[FileMove]]] = {}
        for item in params.files:
            folder, old = ls.folders.locate(item.old_uri)
            owner, new = ls.folders.locate(item.new_uri)
            if folder is None or old is None:
                continue
            if new is None or owner is not folder:  # links never point out of their repository
                ls.window_show_message(T.ShowMessageParams(
                    type=T.MessageType.Warning,
                    message=f"Doc Bridge: links to {old} are not rewritten: it moves out of its workspace folder "
                            f"({item.new_uri})."))
                continue
            moves.setdefault(str(folder.root), (folder, []))[1].append(FileMove(old, new))
        changes: dict[str, list[T.TextEdit]] = {}
        for folder, folder_moves in moves.values():
            await ls.first_model(folder)
            await folder.settled()
            state = folder.state
            if state is None:
                continue
            edit: WorkspaceEdit = ide_rename.move_edits(state, folder_moves)
            converted = ls.convert.workspace_edit(folder, WorkspaceEdit(edit.edits), state)
            for uri, edits in (converted.changes or {}).items():
                changes.setdefault(uri, []).extend(edits)
        return T.WorkspaceEdit(changes=changes) if changes else None


__all__ = ["register"]
