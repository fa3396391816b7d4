"""The Python API: a scanned repository (`Workspace`), its retriever (`Retriever` → `RetrievedDocument`) and its
graph (`GraphMemory`). Every call answers from the model state current when it starts; `update()` moves the
model forward after a file changed. The payloads are the MCP tools' payloads (docbridge.engine.agent.knowledge)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from docbridge.engine.agent import knowledge
from docbridge.engine.agent.handoff import UnknownReference
from docbridge.engine.agent.knowledge import ArgumentError
from docbridge.engine.base.budget import BudgetError
from docbridge.engine.retrieval.rank import retriever_of
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.views.snapshot import snapshot_of
from docbridge.engine.workspace import Workspace as EngineWorkspace

Direction = Literal["out", "in", "both"]


def open_workspace(root: str | Path, *, use_cache: bool = True) -> Workspace:
    """Scan `root` (warm from `.docbridge/cache` when nothing changed) and return its model."""
    path = Path(root).resolve()
    if not path.is_dir():
        raise ArgumentError(f"root {str(root)!r} is not a directory.")
    engine = EngineWorkspace(path, use_cache=use_cache)
    engine.scan()
    return Workspace(engine)


class Workspace:
    """One repository's documentation and code as one model (see `open_workspace`)."""

    def __init__(self, engine: EngineWorkspace) -> None:
        self._engine = engine

    @property
    def root(self) -> Path:
        return self._engine.root

    @property
    def state(self) -> ModelState:
        """The current immutable model state (its revision moves with every change)."""
        return self._engine.state

    @property
    def revision(self) -> int:
        return self._engine.state.revision

    def _projection(self, state: ModelState) -> Any:
        from docbridge.engine.artifacts.snapshot_file import stored_or_built_projection
        return stored_or_built_projection(state)

    def _retriever(self, state: ModelState) -> Any:
        self._projection(state)
        return retriever_of(state)

    # ------------------------------------------------------------------ queries

    def search(self, query: str, *, kinds: list[str] | None = None, limit: int = 20, explain: bool = False,
               budget_tokens: int | None = None) -> dict[str, Any]:
        """The `knowledge.search` payload: ranked entries with title, excerpt, evidence and confidence."""
        state = self.state
        return knowledge.knowledge_search(self._retriever(state), query, kinds=kinds, limit=limit, explain=explain,
                                          budget_tokens=budget_tokens)

    def lookup(self, ref: str | None = None, *, path: str | None = None, depth: int = 1,
               budget_tokens: int | None = None) -> dict[str, Any]:
        """The `knowledge.lookup` payload for an id, ownership id, alias or path (or `path=` for an exact path)."""
        state = self.state
        return knowledge.knowledge_lookup(state, self._projection(state), ref=ref, path=path, depth=depth,
                                          budget_tokens=budget_tokens)

    def handoff(self, ref: str, *, budget_tokens: int | None = None) -> dict[str, Any]:
        """The handoff of a package, area, module, document or route (`handoff.resolve`)."""
        state = self.state
        return knowledge.handoff_resolve(state, self._projection(state), ref, budget_tokens=budget_tokens)

    def findings(self, *, path: str | None = None, code: str | None = None,
                 format: Literal["native", "finding"] = "native", limit: int = 1000) -> list[dict[str, Any]]:
        """Open findings (of one file or directory, of one code); `format="finding"` for the ecosystem shape."""
        return list(knowledge.diagnostics(self.state, path=path, code=code, format=format, limit=limit)["findings"])

    def document(self, path: str, *, max_chars: int = knowledge.DOC_CHARS) -> dict[str, Any]:
        """A document's text (bounded), title, headings and content hash (`doc.get`)."""
        return knowledge.doc_get(self.state, path=path, max_chars=max_chars)

    def summary(self) -> dict[str, Any]:
        """Entity and relation counts, files and findings by severity."""
        return knowledge.snapshot_summary(self.state)

    def retriever(self, *, kinds: list[str] | None = None, limit: int = 8) -> Retriever:
        return Retriever(self, kinds=kinds, limit=limit)

    def graph(self) -> GraphMemory:
        """The graph of the current state (entities and relations with evidence)."""
        return GraphMemory(self.state)

    # ------------------------------------------------------------------ changes

    def update(self, path: str, text: str | None = None) -> None:
        """Re-read one file from disk (`text=None`; a file that is gone is removed) or take `text` as its
        content, and move the model to the next state."""
        clean = knowledge.repository_path(path)
        self._engine.update(clean, text)

    def rescan(self) -> None:
        """Scan the whole repository again (after many changes, or a changed configuration)."""
        from docbridge.engine.base.config import load_config
        self._engine.config = load_config(self.root)
        self._engine.scan()


# ---------------------------------------------------------------------------------------------- retriever


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    """The ecosystem's `RetrievedDocument`: `content` is the title, summary and body; `metadata` carries kind,
    path, title, evidence, explain, confidence and provenance."""

    id: str
    content: str
    score: float
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "content": self.content, "score": self.score, "source": self.source,
                "metadata": self.metadata}


class Retriever:
    """`retrieve(query, limit=...)` → `RetrievedDocument`s, ranked by the repository's search."""

    def __init__(self, workspace: Workspace, *, kinds: list[str] | None = None, limit: int = 8) -> None:
        self.workspace = workspace
        self.kinds = kinds
        self.limit = limit

    def retrieve(self, query: str, *, limit: int | None = None) -> list[RetrievedDocument]:
        state = self.workspace.state
        found = knowledge.retrieved_documents(self.workspace._retriever(state), query,
                                              limit=limit if limit is not None else self.limit, kinds=self.kinds)
        return [RetrievedDocument(**item) for item in found]

    __call__ = retrieve


# ---------------------------------------------------------------------------------------------- graph memory


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: str
    kind: str
    path: str | None
    title: str | None
    summary: str | None
    content_hash: str | None
    provenance: str
    confidence: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    id: str
    source: str
    target: str
    kind: str
    confidence: str
    provenance: str
    evidence: tuple[dict[str, Any], ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reached:
    node: GraphNode
    distance: int
    via: GraphEdge | None  # the edge that reached it (None for the start)


class GraphMemory:
    """The repository graph through the `GraphMemory` contract: `get_node`, `find_edges`, `traverse`. Read-only:
    the graph is derived from the files, so it changes when they do (`Workspace.update`)."""

    def __init__(self, state: ModelState) -> None:
        from docbridge.engine.views.snapshot import relation_json
        snapshot = snapshot_of(state)
        self._nodes: dict[str, GraphNode] = {}
        for entity in snapshot.entities.values():
            self._nodes[entity.id] = GraphNode(entity.id, entity.kind, entity.path, entity.title, entity.summary,
                                               entity.content_hash, entity.provenance, entity.confidence,
                                               dict(entity.data))
        self._edges: list[GraphEdge] = []
        for relation in snapshot.relations:
            data = relation_json(relation, snapshot.hashes)
            self._edges.append(GraphEdge(data["id"], data["source"], data["target"], data["kind"], data["confidence"],
                                         data["provenance"], tuple(data["evidence"]), data["metadata"]))
        self._out: dict[str, list[GraphEdge]] = {}
        self._in: dict[str, list[GraphEdge]] = {}
        for edge in self._edges:
            self._out.setdefault(edge.source, []).append(edge)
            self._in.setdefault(edge.target, []).append(edge)

    def get_node(self, node_id: str) -> GraphNode | None:
        return self._nodes.get(node_id)

    def nodes(self, kind: str | None = None) -> Iterator[GraphNode]:
        return (n for _, n in sorted(self._nodes.items()) if kind is None or n.kind == kind)

    def find_edges(self, *, source: str | None = None, target: str | None = None,
                   kind: str | Iterable[str] | None = None) -> list[GraphEdge]:
        """Edges matching every given filter, sorted by (source, kind, target, id)."""
        kinds = {kind} if isinstance(kind, str) else (set(kind) if kind is not None else None)
        pool = self._out.get(source, []) if source is not None else (
            self._in.get(target, []) if target is not None else self._edges)
        found = [e for e in pool if (target is None or e.target == target) and (kinds is None or e.kind in kinds)]
        return sorted(found, key=lambda e: (e.source, e.kind, e.target, e.id))

    def traverse(self, start: str, *, depth: int = 1, kinds: Iterable[str] | None = None,
                 direction: Direction = "both") -> list[Reached]:
        """Breadth-first from `start` to `depth` hops over edges of `kinds` (all when None), following edges
        out of, into, or both ways through each node; first reach wins; sorted by (distance, id)."""
        if start not in self._nodes:
            raise UnknownReference(start, [])
        if direction not in ("out", "in", "both"):
            raise ArgumentError(f"direction must be 'out', 'in' or 'both'; got {direction!r}.")
        wanted = set(kinds) if kinds is not None else None
        reached = {start: Reached(self._nodes[start], 0, None)}
        queue = deque([start])
        while queue:
            current = queue.popleft()
            distance = reached[current].distance
            if distance >= depth:
                continue
            steps: list[tuple[str, GraphEdge]] = []
            if direction in ("out", "both"):
                steps += [(e.target, e) for e in self._out.get(current, [])]
            if direction in ("in", "both"):
                steps += [(e.source, e) for e in self._in.get(current, [])]
            for other, edge in sorted(steps, key=lambda item: (item[0], item[1].kind, item[1].id)):
                if (wanted is not None and edge.kind not in wanted) or other in reached or other not in self._nodes:
                    continue
                reached[other] = Reached(self._nodes[other], distance + 1, edge)
                queue.append(other)
        return sorted(reached.values(), key=lambda r: (r.distance, r.node.id))


__all__ = ["ArgumentError", "BudgetError", "GraphEdge", "GraphMemory", "GraphNode", "Reached", "RetrievedDocument",
           "Retriever", "UnknownReference", "Workspace", "open_workspace"]
