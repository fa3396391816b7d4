"""Workspace commands (`docbridge.search`, `.explain`, `.handoff`, `.lookup`, `.documents`, `.reindex`,
`.render`) and workspace symbols, backed by the engine's retrieval ranking, handoffs and templates.

The search index of a model state is built in a worker thread on first use (memoised on that state, shared by
concurrent callers); other requests are answered meanwhile, and edits go on making newer states. Once a
folder's index was used, it is rebuilt for the newest state when edits pause (`search.warmAfterMs`; an index
patched by edits waits for a pause ten times as long as its last build took). A command
answers from the state current when it was received. While a folder's first scan runs, workspace symbols
match the walked file paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from typing import Any

from docbridge.engine.agent.handoff import UnknownReference, handoff_for_entity, resolve_ref
from docbridge.engine.agent.payloads import lookup
from docbridge.engine.artifacts.snapshot_file import artifact_dir, stored_or_built_projection
from docbridge.engine.base.cache import write_atomic
from docbridge.engine.base.heap import built
from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE
from docbridge.engine.ide.navigation import area_location, documents_about
from docbridge.engine.ide.types import Location
from docbridge.engine.retrieval.project import PROJECTION, projection_of
from docbridge.engine.retrieval.rank import COMBINED, retriever_of
from docbridge.engine.state.model_state import ModelState
from docbridge.lsp import scanning
from docbridge.lsp.folders import Folder, waited
from docbridge.lsp.positions import path_to_uri
from docbridge.lsp.server import DocBridgeServer, safely
from lsprotocol import types as T
from pygls.exceptions import JsonRpcInvalidParams
from rapidfuzz import fuzz, process

log = logging.getLogger("docbridge.lsp")

REBUILD_PAUSE = 10  # a patched search index is rebuilt after a pause this many times its last build's time

_SYMBOL_KINDS = {DOCUMENT: T.SymbolKind.File, MODULE: T.SymbolKind.Module, AREA: T.SymbolKind.Namespace,
                 PACKAGE: T.SymbolKind.Package, "intent": T.SymbolKind.Event, "change": T.SymbolKind.Event}


async def _current(ls: DocBridgeServer, folder: Folder) -> ModelState | None:
    """The folder's state after every change received so far (waiting for the first scan)."""
    await ls.first_model(folder)
    await folder.settled()
    return folder.state


async def _projection(folder: Folder, state: ModelState) -> Any:
    """The state's retrieval projection: read from .docbridge/index when it was built from the same inputs,
    else built in a worker thread (memoised on the state)."""
    def build() -> Any:
        return stored_or_built_projection(state)
    if state.has_view(PROJECTION):
        return projection_of(state)
    return await asyncio.to_thread(build)


async def retriever(ls: DocBridgeServer, folder: Folder, state: ModelState) -> Any:
    """The ranked retrieval index of `state` (hybrid when `retrieval.hybrid` is set: docbridge.engine.semantic)."""
    return _hybrid(ls, state, await _lexical_retriever(ls, folder, state))


async def _ranked(index: Any, query: str, limit: int, kinds: list[str] | None = None) -> list[Any]:
    """`index.search`, in a worker thread when it may wait on the network (hybrid search's query vector)."""
    if getattr(index, "may_block", False):
        return await asyncio.to_thread(lambda: list(index.search(query, limit, kinds=kinds)))
    return list(index.search(query, limit, kinds=kinds))


def _hybrid(ls: DocBridgeServer, state: ModelState, lexical: Any) -> Any:
    """With `retrieval.hybrid`, the lexical retriever fused with the semantic index, which is built and updated
    in a background thread (a search uses the index as it is); why it is off goes to window/logMessage once."""
    if not state.config.retrieval.hybrid:
        return lexical
    from docbridge.engine.semantic.hybrid import hybrid_retriever_for
    loop = asyncio.get_running_loop()

    def warn(message: str) -> None:
        params = T.LogMessageParams(type=T.MessageType.Warning, message=f"Doc Bridge: {message}")
        loop.call_soon_threadsafe(ls.window_log_message, params)
    return hybrid_retriever_for(state, lexical, warn)


def _keep_index_warm(ls: DocBridgeServer, folder: Folder) -> None:
    """After a change of a folder whose search index was used: once changes pause for `search.warmAfterMs`,
    build the newest state's index, so that the next search or workspace symbol finds it ready instead of
    waiting for it (seconds on a large repository)."""
    if folder.warm_timer is not None:
        folder.warm_timer.cancel()
        folder.warm_timer = None
    delay = ls.settings.search_warm_after_ms
    if delay <= 0:
        return

    def warm() -> None:
        folder.warm_timer = None
        state = folder.state
        if state is None or folder.refused:
            return
        building = folder.indexing.get(state.revision)
        if (building is not None and not building.done()) or (
                state.has_view(COMBINED) and not retriever_of(state).lexical.patched_since_built()):
            return  # being built, or built exact
        ls.spawn(_warm(ls, folder, state))

    folder.warm_timer = asyncio.get_running_loop().call_later(delay / 1000, warm)


async def _warm(ls: DocBridgeServer, folder: Folder, state: ModelState) -> None:
    started = time.perf_counter()
    try:
        retriever = await _lexical_retriever(ls, folder, state, waited_for=False)
        if not retriever.lexical.patched_since_built():  # built whole for this state, ahead of the next search
            ls.log("debug", f"Doc Bridge: search index of revision {state.revision} ready in "
                            f"{time.perf_counter() - started:.2f}s (rebuilt after edits paused)")
            return
        # patched after edits: it answers as a build would, rescoring every hit (milliseconds a search). Rebuilding
        # it is worth a pause at least REBUILD_PAUSE times as long as the last build took, so that the work done
        # while the editor is idle stays a small share of that time (a build of a 100,000-file tree's index takes
        # 25 s of a core: every 2-second pause in editing started one)
        await asyncio.sleep(max(0.0, REBUILD_PAUSE * folder.index_build_s - ls.settings.search_warm_after_ms / 1000))
        if folder.state is not state:
            return  # edited meanwhile: the pause after that edit decides
        # into an index of its own (not under the folder's index lock: a search after the next edit patches the
        # current index meanwhile instead of waiting for this)
        rebuilding = time.perf_counter()
        fresh = await asyncio.to_thread(built(retriever.rebuilt))
        folder.index_build_s = time.perf_counter() - rebuilding
        state.replace_view(COMBINED, fresh)
    except Exception:
        log.exception("building the search index failed")
        return
    ls.log("debug", f"Doc Bridge: search index of revision {state.revision} ready in "
                    f"{time.perf_counter() - started:.2f}s (rebuilt after edits paused, "
                    f"in {folder.index_build_s:.2f}s)")


async def _lexical_retriever(ls: DocBridgeServer, folder: Folder, state: ModelState, waited_for: bool = True) -> Any:
    """The lexical ranked index of `state`, built once in a worker thread (one build at a time per folder).
    `waited_for`: a search waits for it, and the kept model's writing pauses meanwhile (not for a build ahead of
    time, which on a large tree runs after every pause in editing and would keep it from ever being written)."""
    from docbridge.engine.retrieval.rank import combined_retriever
    if folder.after_change is None:  # used once: kept ready after edits from now on
        folder.after_change = functools.partial(_keep_index_warm, ls)
    if state.has_view(COMBINED):
        return retriever_of(state)
    task = folder.indexing.get(state.revision)
    if task is None:
        async def build() -> Any:
            # not beside the burst that publishes every file's diagnostics after a scan: the two share one
            # interpreter, so the build ends no later after it than beside it, and their temporaries never
            # coexist (on a 100,000-file tree, a search right after the scan peaked 110 MB higher, and the
            # memory their interleaved allocations freed stayed in the process)
            await folder.published_all.wait()
            async with folder.index_lock:
                with waited.running() if waited_for else contextlib.nullcontext():
                    started = time.perf_counter()
                    ls.log("debug", f"Doc Bridge: building the search index of revision {state.revision}")
                    projection = await _projection(folder, state)
                    retriever = await asyncio.to_thread(
                        lambda: state.view(COMBINED, lambda: combined_retriever(state, projection)))
                    if not retriever.lexical.patched_since_built():
                        folder.index_build_s = time.perf_counter() - started
                        ls.log("debug", f"Doc Bridge: search index of revision {state.revision} built in "
                                        f"{folder.index_build_s:.2f}s")
                    return retriever
        task = folder.indexing[state.revision] = asyncio.ensure_future(build())
        for revision in [r for r in folder.indexing if r < state.revision and folder.indexing[r].done()]:
            del folder.indexing[revision]
    return await asyncio.shield(task)


def _entry_location(ls: DocBridgeServer, folder: Folder, state: ModelState, entry: Any) -> T.Location | None:
    found: Location | None = None
    if entry.kind == AREA:
        found = area_location(state, entry.path)
    elif entry.kind == PACKAGE:
        layout = state.universe.layout
        info = layout.package_by_id(entry.id) if layout is not None else None
        found = Location.at(info.manifest) if info is not None and info.manifest else None
    elif (folder.root / entry.path).is_file():
        found = Location.at(entry.path)
    return ls.convert.location(folder, found, state) if found is not None else None


def _result(ls: DocBridgeServer, folder: Folder, state: ModelState, result: Any, explain: bool) -> dict[str, Any]:
    out = result.to_json(explain=explain)
    location = _entry_location(ls, folder, state, result.entry)
    if location is not None:
        out["location"] = {"uri": location.uri, "range": {
            "start": {"line": location.range.start.line, "character": location.range.start.character},
            "end": {"line": location.range.end.line, "character": location.range.end.character}}}
    if len(ls.folders) > 1:
        out["root"] = folder.uri
    return out


async def _search(ls: DocBridgeServer, query: str, limit: int, kinds: list[str] | None,
                  explain: bool) -> dict[str, Any]:
    limit = max(1, min(int(limit or 20), 200))
    results = []
    for folder in ls.folders:
        if folder.refused:
            continue
        state = await _current(ls, folder)
        if state is None:
            continue
        index = await retriever(ls, folder, state)
        for result in await _ranked(index, query, limit, kinds or None):
            results.append((result.score, folder, state, result))
    results.sort(key=lambda item: (-item[0], item[3].entry.id))
    return {"query": query, "results": [_result(ls, folder, state, r, explain)
                                        for _, folder, state, r in results[:limit]],
            "scanning": any(f.scanning for f in ls.folders)}


def clear_errors(handler: Any) -> Any:
    """Bad arguments and unknown references become JSON-RPC "invalid params" errors whose message is the
    sentence itself (and, for references, the candidates in `data`), not an internal error."""

    def convert(exc: Exception) -> JsonRpcInvalidParams:
        if isinstance(exc, UnknownReference):
            return JsonRpcInvalidParams(str(exc), data={"candidates": exc.candidates})
        return JsonRpcInvalidParams(str(exc))

    @functools.wraps(handler)
    async def run(*args: Any) -> Any:
        try:
            return await handler(*args)
        except (UnknownReference, ValueError) as exc:
            raise convert(exc) from exc
    return run


def arguments(command: str, given: tuple[Any, ...], *spec: tuple[str, type, Any]) -> list[Any]:
    """Positional command arguments checked against (name, type, default); a missing required one, or a
    value of the wrong type (a JSON null included), is an error naming the argument."""
    out = []
    for index, (name, kind, default) in enumerate(spec):
        value = given[index] if index < len(given) else default
        if value is ... or (index < len(given) and value is None and default is ...) or (
                value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool)))):
            raise ValueError(f"{command}: argument {index + 1} ({name}) must be a {kind.__name__}")
        out.append(value)
    return out


def string_options(command: str, options: dict[str, Any], *names: str) -> None:
    """Each of `names` in `options`, when given, a string that can name a path (no NUL): else an error naming
    the option."""
    for name in names:
        value = options.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{command}: options.{name} must be a string")
        if "\x00" in value:
            raise ValueError(f"{command}: options.{name} holds a NUL character, which no path can hold")


async def _resolve_folder(ls: DocBridgeServer, ref: str) -> tuple[Folder, ModelState, str, Any]:
    """The folder a reference belongs to (a file URI, or the first folder whose projection knows it), its
    current state, the reference within it, and that state's projection."""
    if ref.startswith("file:"):
        folder, relative = ls.folders.locate(ref)
        state = await _current(ls, folder) if folder is not None else None
        if folder is None or relative is None or state is None:
            raise UnknownReference(ref, [])
        return folder, state, relative, await _projection(folder, state)
    last: UnknownReference | None = None
    for folder in ls.folders:
        if folder.refused:
            continue
        state = await _current(ls, folder)
        if state is None:
            continue
        projection = await _projection(folder, state)
        try:
            resolve_ref(projection, ref)
            return folder, state, ref, projection
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


def _walked_symbols(ls: DocBridgeServer, query: str) -> list[T.SymbolInformation]:
    """During a first scan: files whose path matches the query (the walk has listed them)."""
    out = []
    for folder in ls.folders:
        if folder.workspace is not None or not folder.walked:
            continue
        for path, _score, _ in process.extract(query, folder.walked, scorer=fuzz.partial_ratio, limit=50,
                                              score_cutoff=60):
            kind = T.SymbolKind.File if path.lower().endswith((".md", ".markdown")) else T.SymbolKind.Module
            out.append(T.SymbolInformation(name=path.rsplit("/", 1)[-1], kind=kind, container_name=path,
                                           location=T.Location(uri=ls.convert.uri(folder, path), range=T.Range(
                                               start=T.Position(line=0, character=0),
                                               end=T.Position(line=0, character=0)))))
    return out


def register(server: DocBridgeServer) -> None:
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

    @server.command("docbridge.handoff")
    @clear_errors
    async def handoff(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[ref, {"show": true}?]` -> `{handoff, markdown}`; with `show` it is also written under
        .docbridge/handoffs and opened in the editor."""
        ref, options = arguments("docbridge.handoff", args, ("ref", str, ...), ("options", dict, None))
        folder, state, resolved, projection = await _resolve_folder(ls, ref)
        payload = handoff_for_entity(state, resolved, projection)
        markdown = render_markdown(payload)
        if isinstance(options, dict) and options.get("show"):
            name = "".join(c if c.isalnum() or c in "._-" else "-" for c in payload["target"]["path"]).strip("-.")
            target = artifact_dir(folder.root) / "handoffs" / f"{name or 'root'}.md"
            write_atomic(target, markdown.encode("utf-8"))
            await ls.show_document(path_to_uri(target))
        return {"handoff": payload, "markdown": markdown}

    @server.command("docbridge.render")
    @clear_errors
    async def render(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[template, {"area"?, "record"?, "output"?, "folder"?, "show"?}]` -> `{template, source, pages}`: what
        `docbridge render TEMPLATE --output ...` writes, rendered from the editor's model (open buffers)."""
        from docbridge.engine.render.pages import write_pages
        from docbridge.engine.render.templating import RenderError
        template, options = arguments("docbridge.render", args, ("template", str, ...), ("options", dict, None))
        options = options or {}
        string_options("docbridge.render", options, "area", "record", "output", "folder")
        folders = [f for f in ls.folders if not f.refused]
        if isinstance(options.get("folder"), str):
            folders = [f for f in folders if f.root.as_uri() == options["folder"].rstrip("/")] or folders[:0]
        state = await _current(ls, folders[0]) if folders else None
        if state is None:
            raise ValueError("docbridge.render: no workspace folder is ready")
        if not state.root.is_dir():  # a write would make the folder again, holding only the page
            raise ValueError(f"docbridge.render: the folder {state.root} no longer exists")
        key = options.get("area") or options.get("record")
        try:
            payload = await asyncio.to_thread(write_pages, state, template, key=key if isinstance(key, str) else None,
                                              output=options.get("output"))
        except RenderError as exc:
            raise ValueError(str(exc)) from None
        if options.get("show") and payload["pages"]:
            await ls.show_document(path_to_uri(state.root / payload["pages"][0]["path"]))
        return payload

    @server.command("docbridge.lookup")
    @clear_errors
    async def lookup_command(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[ref, depth?]` -> the lookup payload (entity, neighbours, documents, handoff, findings, evidence)."""
        ref, depth = arguments("docbridge.lookup", args, ("ref", str, ...), ("depth", int, 1))
        _, state, resolved, projection = await _resolve_folder(ls, ref)
        return await asyncio.to_thread(lookup, state, resolved, max(1, min(int(depth or 1), 3)), None, projection)

    @server.command("docbridge.reindex")
    async def reindex(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[]` -> `{files, seconds}` after every folder was scanned again."""
        started = time.perf_counter()
        folders = [f for f in ls.folders if not f.refused]
        await asyncio.gather(*(scanning.scan(ls, folder, "requested") for folder in folders))
        files = sum(len(f.state.facts) for f in folders if f.state is not None)
        return {"files": files, "seconds": round(time.perf_counter() - started, 3)}

    @server.command("docbridge.documents")
    @clear_errors
    async def documents(ls: DocBridgeServer, *args: Any) -> list[dict[str, Any]]:
        """`[module path, symbol?]` -> the documents that mention the export (or its module); the first one is
        opened in the editor (the code lens action)."""
        module, symbol = arguments("docbridge.documents", args, ("module", str, ...), ("symbol", str, None))
        out = []
        for folder in ls.folders:
            state = await _current(ls, folder) if not folder.refused else None
            if state is None or module not in state.universe.modules:
                continue
            for path, kind in documents_about(state, f"{MODULE}:{module}", symbol):
                out.append({"uri": ls.convert.uri(folder, path), "path": path, "relation": kind})
        if out:
            await ls.show_document(out[0]["uri"])
        return out

    @server.feature(T.WORKSPACE_SYMBOL)
    @safely(list)
    async def workspace_symbols(ls: DocBridgeServer, params: T.WorkspaceSymbolParams) -> list[T.SymbolInformation]:
        query = params.query.strip()
        if not query:
            return []
        out = _walked_symbols(ls, query)
        for folder in ls.folders:
            if folder.refused or folder.workspace is None:
                continue
            await folder.settled()
            state = folder.state
            if state is None:
                continue
            index = await retriever(ls, folder, state)
            for result in await _ranked(index, query, 50):
                location = _entry_location(ls, folder, state, result.entry)
                if location is None:
                    continue
                out.append(T.SymbolInformation(name=result.entry.title, kind=_SYMBOL_KINDS.get(
                    result.entry.kind, T.SymbolKind.File), location=location, container_name=result.entry.path))
        return out


__all__ = ["register", "render_markdown", "retriever"]
