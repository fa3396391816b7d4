"""Workspace commands (`docbridge.search`, `.handoff`, `.lookup`, `.explain`, `.reindex`, `.documents`) and
workspace symbols, all backed by the engine's retrieval ranking and handoffs."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from lsprotocol import types as T
from pygls.exceptions import JsonRpcInvalidParams

from engine.artifacts import artifact_dir
from engine.cache import write_atomic
from engine.handoff import UnknownReference, handoff_for_entity
from engine.model import AREA, DOCUMENT, MODULE, PACKAGE
from engine.payloads import lookup
from lsp.app import DocBridgeServer, safely, server
from lsp.navigation import _documents_about, _location, area_location
from lsp.positions import path_to_uri
from lsp.state import Folder

_SYMBOL_KINDS = {DOCUMENT: T.SymbolKind.File, MODULE: T.SymbolKind.Module, AREA: T.SymbolKind.Namespace,
                 PACKAGE: T.SymbolKind.Package, "intent": T.SymbolKind.Event, "change": T.SymbolKind.Event}


def _folders(ls: DocBridgeServer) -> list[Folder]:
    return [f for f in ls.state.folders.values() if f.workspace is not None]


def _entry_location(ls: DocBridgeServer, folder: Folder, entry: Any) -> T.Location | None:
    workspace = folder.workspace
    if entry.kind == AREA:
        return area_location(ls, folder, workspace, entry.path)
    if entry.kind == PACKAGE:
        info = workspace.universe.layout.package_by_id(entry.id)
        path = info.manifest if info and info.manifest else None
        return _location(ls, folder, path, 0, 0, 0) if path else None
    if (folder.root / entry.path).is_file():
        return _location(ls, folder, entry.path, 0, 0, 0)
    return None


def _result(ls: DocBridgeServer, folder: Folder, result: Any, explain: bool = False) -> dict[str, Any]:
    out = result.to_json(explain=explain)
    location = _entry_location(ls, folder, result.entry)
    if location is not None:
        out["location"] = {"uri": location.uri, "range": {
            "start": {"line": location.range.start.line, "character": location.range.start.character},
            "end": {"line": location.range.end.line, "character": location.range.end.character}}}
    if len(ls.state.folders) > 1:
        out["root"] = folder.uri
    return out


async def _search(ls: DocBridgeServer, query: str, limit: int, kinds: list[str] | None,
                  explain: bool) -> dict[str, Any]:
    if not isinstance(query, str):
        raise ValueError("docbridge.search takes a query string")
    limit = max(1, min(int(limit or 20), 200))
    results = []
    for folder in _folders(ls):
        index = await ls.retriever(folder)
        if index is None or folder.workspace is None:
            continue
        for result in index.search(query, limit, kinds=kinds or None):
            results.append((result.score, folder, result))
    results.sort(key=lambda item: (-item[0], item[2].entry.id))
    return {"query": query, "results": [_result(ls, folder, r, explain) for _, folder, r in results[:limit]],
            "scanning": any(f.scanning for f in ls.state.folders.values())}


def clear_errors(handler: Any) -> Any:
    """Bad arguments and unknown references become JSON-RPC "invalid params" errors whose message is the
    sentence itself (and, for references, the candidates in `data`), not an internal error."""

    def convert(exc: Exception) -> JsonRpcInvalidParams:
        if isinstance(exc, UnknownReference):
            return JsonRpcInvalidParams(str(exc), data={"candidates": exc.candidates})
        return JsonRpcInvalidParams(str(exc))

    if asyncio.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def run_async(*args: Any) -> Any:
            try:
                return await handler(*args)
            except (UnknownReference, ValueError) as exc:
                raise convert(exc) from exc
        return run_async

    @functools.wraps(handler)
    def run(*args: Any) -> Any:
        try:
            return handler(*args)
        except (UnknownReference, ValueError) as exc:
            raise convert(exc) from exc
    return run


def arguments(command: str, given: tuple[Any, ...], *spec: tuple[str, type, Any]) -> list[Any]:
    """Positional command arguments checked against (name, type, default); a missing required one is an error."""
    out = []
    for index, (name, kind, default) in enumerate(spec):
        value = given[index] if index < len(given) else default
        if value is ... or (value is not None and not isinstance(value, kind)):
            raise ValueError(f"{command}: argument {index + 1} ({name}) must be a {kind.__name__}")
        out.append(value)
    return out


@server.command("docbridge.search")
@clear_errors
async def search(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
    """`[query, limit?, kinds?]` -> `{query, results: [...with location]}`."""
    query, limit, kinds = arguments("docbridge.search", args, ("query", str, ...), ("limit", int, 20),
                                    ("kinds", list, None))
    return await _search(ls, query, limit, kinds, explain=False)


@server.command("docbridge.explain")
@clear_errors
async def explain(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
    """`[query, limit?]` -> search results, each with its score components and matched terms."""
    query, limit = arguments("docbridge.explain", args, ("query", str, ...), ("limit", int, 10))
    return await _search(ls, query, limit, None, explain=True)


async def _resolve_folder(ls: DocBridgeServer, ref: str) -> tuple[Folder, Any, str, Any]:
    """The folder a reference belongs to (a file URI, or the first folder whose projection knows it), the
    model the projection was built from (the folder may hold a newer one by the time it is ready), the
    reference within it, and that projection (built in a worker when stale)."""
    from engine.handoff import resolve_ref
    if ref.startswith("file:"):
        folder, relative, _ = ls.state.locate(ref)
        workspace = folder.workspace if folder is not None else None
        if folder is None or relative is None or workspace is None:
            raise UnknownReference(ref, [])
        return folder, workspace, relative, await ls.off_thread(folder, workspace.projection)
    last: UnknownReference | None = None
    for folder in _folders(ls):
        workspace = folder.workspace
        if workspace is None:
            continue
        projection = await ls.off_thread(folder, workspace.projection)
        try:
            resolve_ref(projection, ref)
            return folder, workspace, ref, projection
        except UnknownReference as exc:
            last = exc
    raise last or UnknownReference(ref, [])


def render_markdown(handoff: dict[str, Any]) -> str:
    target = handoff["target"]
    lines = [f"# Handoff: {target['title']}", "", f"`{target['entityId']}` · {target['type']} · `{target['path']}`", ""]
    if handoff.get("notes"):
        lines += [handoff["notes"][0], ""]
    start = handoff["startHere"]
    why = handoff["explain"]["startHere"]
    lines += ["| | |", "| --- | --- |", f"| **Start here** | [`{start}`]({start}) — {why} |"]
    for path, reason in zip(handoff["readBeforeEditing"], handoff["explain"]["readBeforeEditing"]):
        lines.append(f"| Read before editing | [`{path}`]({path}) — {reason} |")
    lines.append(f"| Edit only under | {', '.join(f'`{r}`' for r in handoff['editRoots']) or '—'} |")
    checks = "<br>".join(f"`{c}`" for c in handoff["checks"]) or "—"
    lines.append(f"| Run to check | {checks} ({handoff['metadata']['checksSource']}) |")
    if handoff.get("humanDoc"):
        lines.append(f"| Human guide | {handoff['humanDoc']} |")
    for relation in handoff.get("related", []):
        lines.append(f"| Related ({relation['direction']}) | `{relation['path']}` — {relation['strength']} import(s), "
                     f"e.g. `{relation['evidence'][0]}` |")
    return "\n".join(lines) + "\n"


@server.command("docbridge.handoff")
@clear_errors
async def handoff(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
    """`[ref, {"show": true}?]` -> `{handoff, markdown}`; with `show` it is also written under
    .docbridge/handoffs and opened in the editor."""
    ref, options = arguments("docbridge.handoff", args, ("ref", str, ...), ("options", dict, None))
    folder, workspace, resolved, projection = await _resolve_folder(ls, ref)
    payload = handoff_for_entity(workspace, resolved, projection)
    markdown = render_markdown(payload)
    if isinstance(options, dict) and options.get("show"):
        name = "".join(c if c.isalnum() or c in "._-" else "-" for c in payload["target"]["path"]).strip("-.")
        target = artifact_dir(folder.root) / "handoffs" / f"{name or 'root'}.md"
        write_atomic(target, markdown.encode("utf-8"))
        await ls.window_show_document_async(T.ShowDocumentParams(uri=path_to_uri(target), take_focus=True))
    return {"handoff": payload, "markdown": markdown}


@server.command("docbridge.lookup")
@clear_errors
async def lookup_command(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
    """`[ref, depth?]` -> the lookup payload (entity, neighbours, documents, handoff, findings, evidence)."""
    ref, depth = arguments("docbridge.lookup", args, ("ref", str, ...), ("depth", int, 1))
    _, workspace, resolved, projection = await _resolve_folder(ls, ref)
    return lookup(workspace, resolved, max(1, min(int(depth or 1), 3)), None, projection)


@server.command("docbridge.reindex")
async def reindex(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
    """`[]` -> `{files, seconds}` after every folder was scanned again."""
    started = time.perf_counter()
    folders = [f for f in ls.state.folders.values() if not f.refused]
    await asyncio.gather(*(ls.scan(folder, "requested") for folder in folders))
    files = sum(len(f.workspace.facts) for f in folders if f.workspace is not None)
    return {"files": files, "seconds": round(time.perf_counter() - started, 3)}


@server.command("docbridge.documents")
@clear_errors
async def documents(ls: DocBridgeServer, *args: Any) -> list[dict[str, Any]]:
    """`[module path, symbol?]` -> the documents that mention the export (or its module); the first one is
    opened in the editor (the code lens action)."""
    module, symbol = arguments("docbridge.documents", args, ("module", str, ...), ("symbol", str, None))
    out = []
    for folder in _folders(ls):
        if module not in folder.workspace.universe.modules:
            continue
        found = [(p, k) for p, k in _documents_about(folder.workspace, f"{MODULE}:{module}", symbol)]
        for path, kind in found:
            out.append({"uri": ls.state.uri_of(folder, path), "path": path, "relation": kind})
    if out:
        await ls.window_show_document_async(T.ShowDocumentParams(uri=out[0]["uri"], take_focus=True))
    return out


@server.feature(T.WORKSPACE_SYMBOL)
@safely(list)
async def workspace_symbols(ls: DocBridgeServer, params: T.WorkspaceSymbolParams) -> list[T.SymbolInformation]:
    query = params.query.strip()
    if not query:
        return []
    out = []
    for folder in _folders(ls):
        index = await ls.retriever(folder)
        if index is None or folder.workspace is None:
            continue
        for result in index.search(query, 50):
            location = _entry_location(ls, folder, result.entry)
            if location is None:
                continue
            out.append(T.SymbolInformation(name=result.entry.title, kind=_SYMBOL_KINDS.get(
                result.entry.kind, T.SymbolKind.File), location=location, container_name=result.entry.path))
    return out
