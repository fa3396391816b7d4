"""Initialization, workspace folders coming and going, and configuration changes."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from docbridge.lsp import restart, scanning
from docbridge.lsp.positions import UTF16
from docbridge.lsp.server import DocBridgeServer, safely
from lsprotocol import types as T

log = logging.getLogger("docbridge.lsp")
# a shutdown waits this long for the resolved model still being written (a large tree's first one takes a while)
KEEP_MODEL_AT_SHUTDOWN_S = 30.0
WATCHED = "**/*.{md,markdown,ts,tsx,js,jsx,mjs,cjs,mts,cts}"
RENAME_FILTERS = T.FileOperationRegistrationOptions(filters=[
    T.FileOperationFilter(pattern=T.FileOperationPattern(
        glob="**/*.{md,markdown,ts,tsx,js,jsx,mjs,cjs,mts,cts}", matches=T.FileOperationPatternKind.File)),
    T.FileOperationFilter(pattern=T.FileOperationPattern(glob="**", matches=T.FileOperationPatternKind.Folder)),
])


def keep_for_restart(ls: DocBridgeServer) -> None:
    """What a restart shows at once: the open documents' diagnostics (written at shutdown, before the answer);
    and the resolved model a restart starts from, when it is still being written (waited for, up to a limit)."""
    for folder in ls.folders:  # one folder that cannot keep its diagnostics leaves the others theirs
        if folder.state is not None and not folder.refused:
            try:
                restart.write_kept(folder.root, restart.encoding_name(ls.convert.encoding),
                                   restart.open_diagnostics(ls, folder))
            except Exception:
                log.exception("keeping the diagnostics of %s for the next start failed", folder.root)
    deadline = time.monotonic() + KEEP_MODEL_AT_SHUTDOWN_S
    for folder in ls.folders:
        scanning.wait_for_kept(folder, max(0.0, deadline - time.monotonic()))


def register(server: DocBridgeServer) -> None:
    @server.feature(T.INITIALIZE)
    def initialize(ls: DocBridgeServer, params: T.InitializeParams) -> None:
        ls.convert.encoding = ls.workspace.position_encoding or UTF16
        ls.convert.buffers = ls.workspace
        folders = params.workspace_folders or []
        if not folders and params.root_uri:
            folders = [T.WorkspaceFolder(uri=params.root_uri, name=Path(params.root_uri).name)]
        for folder in folders:
            added = ls.folders.add(folder.uri)
            if added is not None:
                scanning.prepare(ls, added)
        options = params.initialization_options
        if isinstance(options, dict):
            ls.apply_settings(options.get("docbridge", options))

    @server.feature(T.SHUTDOWN)
    @safely()
    def shutdown(ls: DocBridgeServer, params: None) -> None:
        keep_for_restart(ls)

    @server.feature(T.INITIALIZED)
    async def initialized(ls: DocBridgeServer, params: T.InitializedParams) -> None:
        for folder in ls.folders:  # scans start now; settings and registrations follow while they run
            if folder.refused:
                ls.window_show_message(T.ShowMessageParams(
                    type=T.MessageType.Warning,
                    message=f"Doc Bridge does not scan {folder.refused}. Open a project folder; until then only "
                            f"the open file is analyzed."))
                continue
            ls.spawn(scanning.scan(ls, folder))
        await ls.pull_settings()
        watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            try:
                await ls.client_register_capability_async(T.RegistrationParams(registrations=[T.Registration(
                    id="docbridge-watched-files", method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=T.DidChangeWatchedFilesRegistrationOptions(watchers=[
                        T.FileSystemWatcher(glob_pattern=WATCHED),
                        T.FileSystemWatcher(glob_pattern="**/package.json"),
                        T.FileSystemWatcher(glob_pattern="**/{tsconfig,jsconfig}.json"),
                        T.FileSystemWatcher(glob_pattern="**/{doc-bridge.config.json,.gitignore}"),
                        T.FileSystemWatcher(glob_pattern="**/.docbridge/overlay.json"),
                    ]))]))
            except Exception:
                log.debug("watched-file registration failed", exc_info=True)

    @server.feature(T.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: DocBridgeServer, params: T.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            folder = ls.folders.remove(removed.uri)
            if folder is not None:
                folder.after_change = None  # no index rebuilt for a folder that is gone
                if folder.warm_timer is not None:
                    folder.warm_timer.cancel()
                for uri in list(folder.published):
                    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for added in params.event.added:
            folder = ls.folders.add(added.uri)
            if folder is None:
                continue
            if folder.refused:
                ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning,
                                                           message=f"Doc Bridge does not scan {folder.refused}."))
            elif folder.workspace is None and not folder.scanning:
                scanning.prepare(ls, folder)
                ls.spawn(scanning.scan(ls, folder))

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: DocBridgeServer, params: T.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("docbridge"), dict):
            ls.apply_settings(settings["docbridge"])
        else:
            await ls.pull_settings()



__all__ = ["RENAME_FILTERS", "WATCHED", "keep_for_restart", "register"]
