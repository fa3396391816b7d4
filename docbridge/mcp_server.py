"""`docbridge mcp`: the live model over the Model Context Protocol (the official `mcp` SDK, `MCPServer`).

One `LiveWorkspace` per server: scanned on start, then kept equal to the disk. Every tool call first takes the
state that includes every change seen before it (waiting, bounded, for the first scan and reporting its progress
to a caller that asked for progress), then answers from that state alone. Tool arguments are validated by the
pydantic models the SDK builds from the signatures below (their JSON Schemas are what `tools/list` shows); a
bad argument, an unknown reference or a budget that cannot hold the answer is a tool error (`isError`) whose text
names the argument, and the server goes on serving.

Tools: knowledge.search, knowledge.lookup, handoff.resolve, doc.search, doc.get, retriever.query,
docbridge.diagnostics, docbridge.proposals, docbridge.status; and the original's older names as thin aliases:
gate.status, registry.topology, docbridge.snapshot, docbridge.report, docbridge.relations, docbridge.run, and
memory.classify and memory.promoteDraft (no counterpart: a structured tool error naming what to call instead).
Resources: docbridge://snapshot, docbridge://status, and docbridge://handoff/{ref} (one listed per area).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp_types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from docbridge.engine import __version__
from docbridge.engine.agent import knowledge
from docbridge.engine.agent.handoff import UnknownReference
from docbridge.engine.base.budget import BudgetError, compact
from docbridge.engine.state.model_state import ModelState
from docbridge.live import LiveWorkspace, NotReady

log = logging.getLogger("docbridge.mcp")

Kind = Literal["document", "module", "area", "package", "intent", "change"]
Output = Literal["json", "text"]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = """Doc Bridge answers questions about this repository's documentation and JS/TS code from one live,
deterministic model (no network, no model): which document or module is about X, what to read before editing a
unit, which checks to run. Start with knowledge.search (a symbol, a path, an ownership id or a question), then
knowledge.lookup on the best hit before editing it. Every answer carries evidence (path and content hash) and a
confidence; pass budgetTokens to bound a payload (sections are dropped in a declared order and the response says
which). The model follows file changes on disk within a fraction of a second."""

# ---------------------------------------------------------------------------------------------- argument types

Query = Annotated[str, Field(min_length=1, max_length=knowledge.MAX_QUERY_CHARS,
                             description="What to look for: an exported symbol, a path, an ownership id or a "
                                         "question (English or Portuguese).")]
Limit = Annotated[int, Field(ge=1, le=knowledge.MAX_LIMIT, description="At most this many results.")]
Budget = Annotated[int | None, Field(ge=1, le=1_000_000, description=(
    "Token budget (approximate: characters / 4 per message). Sections are dropped in the declared order until the "
    "payload fits; a budget too small for the core answer is an error, never an over-budget payload."))]
Format = Annotated[Output, Field(description="`json` (the payload) or `text` (a readable rendering; the JSON stays "
                                             "in structuredContent).")]
Ref = Annotated[str, Field(min_length=1, max_length=1024, description=(
    "An entity id (area:src/billing), an ownership id, an alias or a repository-relative path."))]
IncludeCaveats = Annotated[bool, Field(strict=True, description=(
    "true: add `caveats` (the open findings where the handoff sends you, the revision analyzed, what was not "
    "analyzed there). Omitted or false: the handoff without them, as every reader of AgentHandoffV1 expects."))]
Result = Annotated[CallToolResult, dict[str, Any]]  # a payload (structuredContent) with its own text rendering
RunId = Annotated[str | None, Field(min_length=1, max_length=128, description=(
    "The run to read (docbridge.run's runId); the current model when omitted. Doc Bridge keeps one live model, so "
    "another run id is an error."))]


def _error(exc: Exception) -> ToolError:
    return ToolError(str(exc))


class DocBridgeMCP(MCPServer[Any]):
    """The SDK's server, with one handoff resource listed per area of the current model."""

    live: LiveWorkspace

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        """The SDK's call; arguments that do not fit a tool's schema are said as `tool: argument: what is wrong`
        (the SDK wrote pydantic's report, its class names and a link to its documentation)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            said = "; ".join(f"{'.'.join(str(part) for part in error['loc']) or '(arguments)'}: {error['msg']}"
                             for error in cause.errors(include_url=False))
            raise ToolError(f"{name}: {said}.") from None

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Context[Any, Any] | None = None) -> Any:
        """The server offers no prompts: a prompt asked for by name is an invalid parameter, answered as one (the SDK
        answered error code 0 and logged two tracebacks)."""
        if self._prompt_manager.get_prompt(name) is None:
            from mcp.shared.exceptions import MCPError
            from mcp_types import INVALID_PARAMS
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name} (this server offers no prompts).")
        return await super().get_prompt(name, arguments, context)

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        state = self.live.state
        layout = state.universe.layout if state is not None else None
        for area in sorted(layout.areas) if layout is not None else []:
            listed.append(Resource(uri=f"docbridge://handoff/{area}", name=f"handoff {area}",
                                   title=f"Handoff for area {area}", mime_type="application/json",
                                   description=f"Where to start, what to read, edit and run for {area}."))
        return listed


def build_server(live: LiveWorkspace) -> DocBridgeMCP:
    server = DocBridgeMCP("docbridge", title="Doc Bridge", version=__version__, instructions=INSTRUCTIONS,
                          log_level="WARNING")
    server.live = live

    async def state_for(ctx: Context | None) -> ModelState:
        async def report(progress: float, total: float | None, message: str) -> None:
            if ctx is not None:
                await ctx.report_progress(progress, total, message)
        try:
            return await live.current(report)
        except NotReady as exc:
            raise _error(exc) from exc

    async def answer(ctx: Context | None, build: Callable[[ModelState, Any], dict[str, Any]], *,
                     ranked: bool = False, render: Callable[[dict[str, Any]], str] | None = None) -> CallToolResult:
        state = await state_for(ctx)
        retriever = await live.retriever(state) if ranked else None
        try:
            # a ranked query over a built index takes milliseconds: answered on the loop (a thread hop costs more
            # than it saves), unless it may wait for an embeddings endpoint; anything that may derive views of
            # the state (findings, lookups) runs in a worker
            on_loop = ranked and not getattr(retriever, "may_block", False)
            payload = build(state, retriever) if on_loop else await anyio.to_thread.run_sync(build, state, retriever)
        except (knowledge.ArgumentError, UnknownReference, BudgetError) as exc:
            raise _error(exc) from exc
        text = render(payload) if render is not None else compact(payload)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)

    @server.tool(name="knowledge.search", title="Search the repository's knowledge", annotations=READ_ONLY)
    async def knowledge_search(query: Query, ctx: Context, kinds: Annotated[list[Kind] | None, Field(
            description="Only these kinds of entry.")] = None, limit: Limit = 20,
            explain: Annotated[bool, Field(description="Attach every score component and the matched terms.")] = False,
            budgetTokens: Budget = None, format: Format = "json") -> Result:
        """Ranked documents, modules, areas, packages and configured routes for a query, each with title, excerpt,
        evidence (path, content hash), provenance and confidence. Budget order: evidenceExcerpts, summaries."""
        return await answer(ctx, lambda state, retriever: knowledge.knowledge_search(
            retriever, query, kinds=list(kinds) if kinds else None, limit=limit, explain=explain,
            budget_tokens=budgetTokens), ranked=True,
            render=knowledge.render_search_text if format == "text" else None)

    @server.tool(name="knowledge.lookup", title="Everything to read before editing", annotations=READ_ONLY)
    async def knowledge_lookup(ctx: Context, id: Annotated[str | None, Field(
            min_length=1, max_length=1024, description="An entity id, ownership id, alias or path.")] = None,
            path: Annotated[str | None, Field(min_length=1, max_length=1024, description=(
                "A repository-relative path (an exact entry path first, else resolved like an id)."))] = None,
            depth: Annotated[int, Field(ge=1, le=3, description="Neighbour hops, 1 to 3.")] = 1,
            budgetTokens: Budget = None, format: Format = "json") -> Result:
        """One entity (give `id` or `path`): its neighbours by relation kind, the documents covering and mentioning
        it, its handoff, its open diagnostics and its evidence. Budget order: evidenceExcerpts, related,
        neighbours, summaries."""
        return await answer(ctx, lambda state, _: knowledge.knowledge_lookup(
            state, _projection(state), ref=id, path=path, depth=depth, budget_tokens=budgetTokens),
            render=knowledge.render_lookup_knowledge_text if format == "text" else None)

    @server.tool(name="handoff.resolve", title="Handoff for a unit", annotations=READ_ONLY)
    async def handoff_resolve(ref: Ref, ctx: Context, budgetTokens: Budget = None,
                              format: Format = "json", includeCaveats: IncludeCaveats = False) -> Result:
        """Where to start, what to read before editing, where to edit, which checks to run and which units are
        related (with the import that proves each) for a package, area, module, document or route. With
        includeCaveats: true, also `caveats` (the open findings where it sends you, the revision analyzed, what
        was not analyzed there); never without. Budget order: related, summaries."""
        from docbridge.engine.agent.handoff import render_handoff_text
        return await answer(ctx, lambda state, _: knowledge.handoff_resolve(
            state, _projection(state), ref, budget_tokens=budgetTokens, include_caveats=includeCaveats),
            render=render_handoff_text if format == "text" else None)

    @server.tool(name="doc.search", title="Search documents", annotations=READ_ONLY)
    async def doc_search(query: Query, ctx: Context, limit: Limit = 10) -> Result:
        """Documents only, ranked: id, path, title, summary, excerpt and score."""
        return await answer(ctx, lambda _, retriever: knowledge.doc_search(retriever, query, limit=limit),
                            ranked=True)

    @server.tool(name="doc.get", title="Read a document", annotations=READ_ONLY)
    async def doc_get(ctx: Context, path: Annotated[str | None, Field(
            min_length=1, max_length=1024, description="The document's repository-relative path.")] = None,
            id: Annotated[str | None, Field(min_length=1, max_length=1024,
                                            description="The document's id (document:docs/api.md).")] = None,
            maxChars: Annotated[int, Field(ge=1, le=knowledge.MAX_DOC_CHARS, description=(
                "At most this many characters of text."))] = knowledge.DOC_CHARS) -> Result:
        """A document of this repository (give `path` or `id`): its text (bounded), title, headings and content
        hash. Only documents the model knows are read; nothing outside the repository."""
        return await answer(ctx, lambda state, _: knowledge.doc_get(state, ref=id, path=path, max_chars=maxChars))

    @server.tool(name="retriever.query", title="Retrieve documents for RAG", annotations=READ_ONLY)
    async def retriever_query(query: Query, ctx: Context, limit: Limit = 8, kinds: Annotated[list[Kind] | None, Field(
            description="Only these kinds of entry.")] = None) -> Result:
        """`RetrievedDocument`s: content (title, summary and body) with metadata kind, path, evidence, explain and
        confidence, for retrieval-augmented generation."""
        return await answer(ctx, lambda _, retriever: knowledge.retriever_query(
            retriever, query, limit=limit, kinds=list(kinds) if kinds else None), ranked=True)

    @server.tool(name="docbridge.diagnostics", title="Open findings", annotations=READ_ONLY)
    async def diagnostics(ctx: Context, path: Annotated[str | None, Field(
            min_length=1, max_length=1024, description="Only findings in this file or directory.")] = None,
            code: Annotated[str | None, Field(min_length=1, max_length=64, description=(
                "Only findings of this code (LINK_BROKEN, MENTION_UNRESOLVED, ...)."))] = None,
            format: Annotated[Literal["native", "finding"], Field(description=(
                "`native` (Doc Bridge's Finding) or `finding` (the ecosystem's canonical shape, most severe first)."
            ))] = "native",
            limit: Annotated[int, Field(ge=1, le=knowledge.MAX_DIAGNOSTICS)] = 200) -> Result:
        """Drift between documentation and code: broken links and anchors, unresolved mentions, malformed
        frontmatter, undocumented areas, import cycles, hand-edited generated regions."""
        return await answer(ctx, lambda state, _: knowledge.diagnostics(state, path=path, code=code, format=format,
                                                                        limit=limit))

    @server.tool(name="docbridge.proposals", title="Pending enrichment proposals", annotations=READ_ONLY)
    async def proposals(ctx: Context) -> Result:
        """Pending enrichment proposals awaiting a person's approval (.docbridge/overlay.json)."""
        return await answer(ctx, lambda state, _: knowledge.proposals(state))

    @server.tool(name="docbridge.status", title="Model status", annotations=READ_ONLY)
    async def status() -> Result:
        """Whether the first scan is done (never waits): state, progress, revision, files, pending changes."""
        payload = live.status()
        return CallToolResult(content=[TextContent(type="text", text=compact(payload))], structured_content=payload)

    _register_aliases(server, live, answer)

    # ------------------------------------------------------------------------------------------ resources

    async def resource_state() -> ModelState:
        try:
            return await live.current()
        except NotReady as exc:
            raise ResourceError(str(exc)) from exc

    @server.resource("docbridge://snapshot", name="snapshot", title="Snapshot summary",
                     mime_type="application/json",
                     description="Entities and relations by kind, files, skipped files and findings by severity.")
    async def snapshot() -> str:
        state = await resource_state()
        return json.dumps(await anyio.to_thread.run_sync(knowledge.snapshot_summary, state), sort_keys=True)

    @server.resource("docbridge://status", name="status", title="Model status", mime_type="application/json")
    async def status_resource() -> str:
        return json.dumps(live.status(), sort_keys=True)

    @server.resource("docbridge://handoff/{+ref}", name="handoff", title="Handoff", mime_type="application/json",
                     description="The handoff of an area (docbridge://handoff/src/billing) or any other reference.")
    async def handoff(ref: str) -> str:
        state = await resource_state()
        try:
            payload = await anyio.to_thread.run_sync(
                lambda: knowledge.handoff_resolve(state, _projection(state), ref))
        except (knowledge.ArgumentError, UnknownReference) as exc:  # the client's reference: InvalidParams
            raise ResourceNotFoundError(str(exc)) from exc
        return json.dumps(payload, sort_keys=True)

    return server


def _register_aliases(server: DocBridgeMCP, live: LiveWorkspace, answer: Callable[..., Any]) -> None:
    """The original's older tool names (its `src/mcp/server.ts`), as thin aliases answered from this model
    (engine/agent/aliases.py); `answer` is build_server's: the current state, then the payload."""

    @server.tool(name="gate.status", title="Documentation gates", annotations=READ_ONLY)
    async def gate_status(ctx: Context) -> Result:
        """The gates the configuration selects (gates.preset, include, exclude), evaluated without writing
        anything, as `docbridge gate run` evaluates them: index-freshness (.docbridge/index.json against the
        current model; `docbridge index` rebuilds it), human-guide-links, okf-type, docs-style and the
        documentation-standard-v1 profile. `{ok, preset, results: [{id, ok, message, expected?, actual?,
        details?}], notEvaluated}`."""
        from docbridge.engine.render import gates
        return await answer(ctx, lambda state, _: gates.run_gates(state, _projection(state)))

    @server.tool(name="memory.classify", title="Classify memory candidates (no counterpart)", annotations=READ_ONLY)
    async def memory_classify() -> Result:
        """The original routed agent memory files into agent/human/playbook/discard. Doc Bridge reads no agent
        memory: a tool error whose structuredContent says so and names what to call instead."""
        from docbridge.engine.agent import aliases
        return _no_counterpart(aliases.memory_classify())

    @server.tool(name="memory.promoteDraft", title="Draft a memory promotion (no counterpart)",
                 annotations=READ_ONLY)
    async def memory_promote_draft() -> Result:
        """The original drafted a promotion body from agent memory files. Doc Bridge reads no agent memory: a
        tool error whose structuredContent says so and names what to call instead."""
        from docbridge.engine.agent import aliases
        return _no_counterpart(aliases.memory_promote_draft())

    @server.tool(name="registry.topology", title="Enrichment agents' topology", annotations=READ_ONLY)
    async def registry_topology(ctx: Context) -> Result:
        """The configured enrichment roles (intelligence.registry) in the original's topology keys: id,
        delegates, roles with the proposal kinds each may make, tools, steps, and the merge policy (which kinds
        policy accepts, which a person decides; nothing merges without a person)."""
        from docbridge.engine.enrich.topology import registry_topology as topology
        tools = sorted(tool.name for tool in await server.list_tools())
        return await answer(ctx, lambda state, _: topology(state.config, tools))

    @server.tool(name="docbridge.snapshot", title="Discovery snapshot", annotations=READ_ONLY)
    async def docbridge_snapshot(ctx: Context, runId: RunId = None) -> Result:
        """The whole discovery snapshot (entities, relations with evidence, coverage), as `docbridge scan`
        writes it. Large: the docbridge://snapshot resource is its summary, docbridge.relations reads it by
        kind."""
        from docbridge.engine.agent import aliases
        return await answer(ctx, lambda state, _: aliases.snapshot(state, runId))

    @server.tool(name="docbridge.report", title="Reconciliation report", annotations=READ_ONLY)
    async def docbridge_report(ctx: Context, runId: RunId = None) -> Result:
        """The reconciliation report (as `docbridge reconcile`, at the configured scope): declared relations
        matched to observed ones, diagnostics and the documentation summary, sealed by contentHash."""
        from docbridge.engine.agent import aliases
        return await answer(ctx, lambda state, _: aliases.report(state, runId))

    @server.tool(name="docbridge.relations", title="Relations of the snapshot", annotations=READ_ONLY)
    async def docbridge_relations(ctx: Context, kind: Annotated[str | None, Field(
            min_length=1, max_length=64, description="Only relations of this kind (imports, links-to, covers, ...)."
            )] = None, limit: Annotated[int, Field(ge=1, le=500, description="At most this many relations.")] = 100
            ) -> Result:
        """Observed and declared relations of the snapshot (source, target, kind, evidence with file and line,
        confidence, provenance), in the snapshot's order."""
        from docbridge.engine.agent import aliases
        return await answer(ctx, lambda state, _: aliases.relations(state, kind, limit))

    @server.tool(name="docbridge.run", title="The model as a run", annotations=READ_ONLY)
    async def docbridge_run(ctx: Context) -> Result:
        """The original's workflow-run state, for the one live model: runId (the snapshot's content, shortened),
        state, revision, files, pending changes and the content hashes of the snapshot and the report."""
        from docbridge.engine.agent import aliases
        return await answer(ctx, lambda state, _: aliases.run(state, live.status()))


def _no_counterpart(payload: dict[str, Any]) -> CallToolResult:
    """A tool of the original with no counterpart here: a tool error whose text and structuredContent say why
    and what to call instead."""
    from docbridge.engine.agent.aliases import render_unavailable
    return CallToolResult(content=[TextContent(type="text", text=render_unavailable(payload))],
                          structured_content=payload, is_error=True)


def _projection(state: ModelState) -> Any:
    from docbridge.engine.artifacts.snapshot_file import stored_or_built_projection
    return stored_or_built_projection(state)


# ------------------------------------------------------------------------------------------------ the wire


def checked_message(line: str) -> tuple[Any, dict[str, Any] | None]:
    """The message a line holds, and the JSON-RPC error answering it when the SDK would drop it without a reply
    (None: pass it on).

    JSON-RPC 2.0 answers what it cannot parse (-32700) and what is not a request object, or whose id is of no
    allowed type (-32600), with id null; MCP's params are objects, so a request with other params is answered
    -32602 with its id. Notifications are never answered."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: not JSON."}}
    return message, _wire_error(message)


def _wire_error(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, dict):
        return {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid Request: a message is one JSON object (batches are not part of MCP)."}}
    has_id = "id" in message
    identifier = message.get("id")
    if has_id and (isinstance(identifier, bool) or not isinstance(identifier, (str, int))):
        return {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid Request: an id is a string or an integer."}}
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return {"jsonrpc": "2.0", "id": identifier if has_id else None, "error": {
            "code": -32600, "message": "Invalid Request: the method is not a string."}} if has_id else None
    if isinstance(method, str) and has_id and "params" in message and not isinstance(message["params"], dict):
        return {"jsonrpc": "2.0", "id": identifier, "error": {
            "code": -32602, "message": f"Invalid params: {method} takes an object."}}
    return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _replaced(value: Any) -> Any:
    """`value` with each lone surrogate of its strings (and keys) read as U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    return value


def without_lone_surrogates(line: str) -> str:
    """A line whose JSON escapes a lone surrogate (`\\ud800`: no UTF-8 text can hold one, and its answer could not
    be written, so the request went unanswered) with each one read as U+FFFD; any other line as it is."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        return json.dumps(_replaced(json.loads(line)))
    except (ValueError, RecursionError):
        return line  # not JSON: the transport answers it


class _CountedAnswers:
    """The server's write stream, counting the answers (results and errors) sent through it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.answered = 0
        self.changed = anyio.Event()

    async def send(self, item: Any) -> None:
        await self.stream.send(item)
        message = getattr(getattr(item, "message", None), "root", getattr(item, "message", None))
        if "id" in getattr(message, "model_fields_set", ()) and not hasattr(message, "method"):
            self.answered += 1
            self.changed.set()
            self.changed = anyio.Event()

    async def __aenter__(self) -> _CountedAnswers:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _CheckedLines:
    """stdin's lines, less the ones `checked_message` answers (sent through the transport's own writer, so that no
    two writers share stdout). At the end of the input, the requests read are answered before the end is passed
    on (`printf '…' | docbridge mcp` lost the answers still being worked on), for at most `drain` seconds."""

    def __init__(self, drain: float) -> None:
        from io import TextIOWrapper
        self._lines = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        self.write_stream: Any = None
        self.answers: _CountedAnswers | None = None
        self.ready = anyio.Event()
        self.requests = 0
        self.drain = drain

    def __aiter__(self) -> Any:
        return self._checked()

    async def _checked(self) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter
        async for line in self._lines:
            if not line.strip():
                continue
            line = without_lone_surrogates(line)
            message, error = checked_message(line)
            if error is None:
                self.requests += "id" in message and "method" in message
                yield line
                continue
            await self.ready.wait()
            await self.write_stream.send(SessionMessage(jsonrpc_message_adapter.validate_python(error)))
        with anyio.move_on_after(self.drain):
            while self.answers is not None and self.answers.answered < self.requests:
                await self.answers.changed.wait()


async def _run_stdio(server: MCPServer, drain: float) -> None:
    from mcp.server.stdio import stdio_server
    lines = _CheckedLines(drain)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]  # the SDK's stream type is narrower than the text stream it reads
        lines.write_stream = write_stream
        lines.answers = _CountedAnswers(write_stream)
        lines.ready.set()
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, lines.answers, lowlevel.create_initialization_options())


def serve(root: Path, *, transport: str = "stdio", port: int = 8765, debounce_ms: int = 200,
          scan_timeout: float = 120.0, use_cache: bool = True, jobs: int | None = None) -> int:
    """Run the server until the client goes away (stdio) or the process is interrupted (http)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("mcp").setLevel(logging.WARNING)  # a rejected argument is the caller's answer, not a log line
    live = LiveWorkspace(root, debounce_ms=debounce_ms, scan_timeout=scan_timeout, use_cache=use_cache, jobs=jobs)
    server = build_server(live)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(live.run)
            if transport == "stdio":
                await _run_stdio(server, scan_timeout + 30)
            else:  # streamable HTTP, on the loopback interface only
                await server.run_streamable_http_async(host="127.0.0.1", port=port)
            group.cancel_scope.cancel()

    if transport != "stdio":  # a port in use is one sentence before anything starts, not a server's traceback
        refused = _unavailable(port)
        if refused is not None:
            print(f"docbridge: error: cannot serve MCP on 127.0.0.1:{port}: {refused} (choose another port with "
                  f"--port).", file=sys.stderr)
            return 2
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        if not _client_gone(exc):
            raise
        print("docbridge: the MCP client closed the connection.", file=sys.stderr)
    return 0


def _client_gone(exc: BaseException) -> bool:
    """Whether `exc` (or every exception of its group) says the client stopped reading: a broken pipe."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError))


def _unavailable(port: int) -> str | None:
    """Why 127.0.0.1:`port` cannot be listened on (as the HTTP server binds it), or None."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


__all__ = ["DocBridgeMCP", "build_server", "serve"]
