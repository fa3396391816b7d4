"""Hybrid search: the lexical ranking fused with the dense ranking (docbridge.engine.retrieval.fusion), failing soft.

`HybridRetriever` stands in for a `Retriever` (everything but `search` is the lexical retriever's): a search
ranks lexically, embeds the query, ranks the candidates by the cosine of their best chunk and fuses the two.
Any embedding failure answers the lexical ranking instead and records why in `status` ("semantic":
{"used": false, "reason": …}); search never fails over embeddings.

The passage a result points at (`bestChunk`, and the evidence's chunk and lines) is the chunk of it that ranks
best over every chunk when the chunks' BM25 (docbridge.engine.semantic.bm25, on the query's terms as the lexical
ranking matched them) and their cosine are fused by RRF, as the reference's hybrid search ranks chunks: the
passage holding the query's words, the closest in meaning among those. Which entities rank where is the
entities' fusion alone: measured on the five retrieval suites against the dense ranking by cosine, ranking
entities by their passages' fused rank lowered Vite (hit@3 0.981 → 0.962) and Vitest (MRR 0.905 → 0.898), and
adding the chunks' BM25 as a third ranking lowered TanStack Query (MRR 0.932 → 0.927) and Vitest (hit@3
0.946 → 0.929), so the chunks' BM25 chooses passages and nothing else.

`open_semantic` is the command line's way in: the configured embedder, the index under `.docbridge/semantic/` or
`index.dir` (of the documents and modules under `index.sources`, brought up to date for the current entries,
embedding only new chunks), or the reason there is none.
`SemanticService` is the long-lived servers' way in: it keeps the index in memory and updates it in a
background thread as the model changes, while searches use the index it has.
"""

from __future__ import annotations

import contextlib
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbridge.engine.base.lexicon import STOPWORDS, fold, raw_tokens, tokens
from docbridge.engine.base.safe_io import ArtifactPathError
from docbridge.engine.retrieval.fusion import DENSE_WEIGHT, LEXICAL_KEPT, agree, fuse, is_identity_hit
from docbridge.engine.retrieval.query_shape import read_query
from docbridge.engine.semantic.bm25 import K1, B
from docbridge.engine.semantic.embed import Embedder, EmbeddingError, embedder_for
from docbridge.engine.semantic.index import (
    IndexUnreadable,
    PartialVectors,
    SemanticIndex,
    disk_reader,
    load_index,
    update_index,
)

LEXICAL_DEPTH = 50  # lexical results fused
DENSE_DEPTH = 10  # entities the dense ranking adds to them
LEFT_OUT = -2.0  # below every cosine: an entry the dense ranking leaves out ranks after all it ranks
CHUNK_PREVIEW = 240


@dataclass(slots=True)
class SemanticStatus:
    used: bool
    reason: str | None = None
    model: str | None = None
    index: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"used": self.used}
        if self.reason:
            out["reason"] = self.reason
        if self.model:
            out["model"] = self.model
        if self.index:
            out["index"] = self.index
        return out


def dense_query(query: str) -> str:
    """The query as embedded: without function words (a static model averages its tokens, and `how does … to`
    pulls every query towards every question-shaped passage)."""
    words = [w for w in raw_tokens(query) if fold(w) not in STOPWORDS]
    return " ".join(words) if words else query


class HybridRetriever:
    may_block = True  # a search may wait for the query's vector from an endpoint: servers run it off their loop

    def __init__(self, lexical: Any, index: SemanticIndex | None, embedder: Embedder | None, rrf_k: int = 60,
                 status: SemanticStatus | None = None, warn: Callable[[str], None] | None = None) -> None:
        self.lexical = lexical
        self.index = index
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.status = status or SemanticStatus(used=index is not None and embedder is not None)
        self.warn = warn

    def __getattr__(self, name: str) -> Any:  # the lexical retriever's entries, projection, index_of, …
        return getattr(self.lexical, name)

    def _fail(self, reason: str) -> None:
        already = self.status.reason == reason and not self.status.used
        self.status.used, self.status.reason = False, reason
        if self.warn is not None and not already:
            self.warn(reason)

    def search(self, query: str, limit: int = 20, *, kinds: list[str] | None = None, agent: bool = False,
               floor: float | None = None) -> list[Any]:
        extra = {} if floor is None else {"floor": floor}
        if self.index is None or self.embedder is None or (not self.status.used and self.status.reason):
            return self.lexical.search(query, limit, kinds=kinds, agent=agent, **extra)
        lexical = self.lexical.search(query, max(limit, LEXICAL_DEPTH), agent=agent, **extra)
        try:
            # a model that averages its tokens is asked without the query's function words; a model that reads
            # the sentence is asked the sentence
            asked = dense_query(query) if getattr(self.embedder, "averages_tokens", False) else query
            vector = self.embedder.embed_query(asked)
            if vector.shape != (self.index.dim,):
                raise EmbeddingError(f"the model answered {vector.shape[-1]} dimensions; the semantic index holds "
                                     f"{self.index.dim}: rebuild it with `docbridge index --semantic`.")
            cosines, scores = self.index.entity_cosines(vector)
        except EmbeddingError as exc:
            self._fail(str(exc))
            return self.lexical.search(query, limit, kinds=kinds, agent=agent, **extra)
        terms = lexical[0].terms if lexical else tokens(query, unique=True)
        shape = lexical[0].shape if lexical and lexical[0].shape is not None else \
            read_query(query, tokens(query, unique=True)).shape
        return self._fuse(lexical, cosines, scores, limit, kinds, self._passages(terms, scores), shape)

    def _passages(self, terms: list[str], scores: Any) -> tuple[Any, Any]:
        """Every chunk's BM25 for the query's terms, and its passage score: 1/(k + its BM25 rank) when it holds a
        term, + 1/(k + its cosine rank), ranks over every chunk (ties by row)."""
        import numpy as np
        index = self.index
        assert index is not None
        params = {"k1": K1, "b": B, **getattr(getattr(self.lexical, "projection", None), "params", {})}
        count = len(index.chunks)
        try:
            bm25 = index.lexical().scores(terms, params["k1"], params["b"])
        except ValueError:  # a malformed posting (the file matched its recorded hash): passages by cosine alone
            bm25 = np.zeros(count, dtype=np.float64)
        rows = np.arange(count)

        def ranks(values: Any) -> Any:
            order = np.lexsort((rows, -np.round(values, 6)))
            out = np.empty(count, dtype=np.float64)
            out[order] = np.arange(1, count + 1)
            return out
        k = self.rrf_k
        passage = 1.0 / (k + ranks(np.asarray(scores, dtype=np.float64)))
        passage += np.where(bm25 > 0, 1.0 / (k + ranks(bm25)), 0.0)
        return bm25, passage

    def _fuse(self, lexical: list[Any], cosines: dict[str, float], scores: Any, limit: int,
              kinds: list[str] | None, passages: tuple[Any, Any] | None = None, shape: Any = None) -> list[Any]:
        from docbridge.engine.retrieval.rank import COMPONENTS, Result
        retriever = self.lexical
        index = self.index
        assert index is not None
        folded: dict[str, tuple[float, str]] = {}  # a copy of a page counts as its canonical copy
        left_out: set[str] = set()
        asks_peripheral = shape is not None and shape.asks_peripheral

        def canonical(entity: str) -> str:
            entry = retriever.entries[retriever.index_of[entity]]
            return entry.variant_of if entry.variant_of and entry.variant_of in retriever.index_of else entity
        for entity, cosine in cosines.items():
            position = retriever.index_of.get(entity)
            if position is None:
                continue
            if retriever.entries[position].surface == "peripheral" and not asks_peripheral:
                left_out.add(entity)  # tests, fixtures, examples, playgrounds: as the lexical ranking halves them
                continue
            target = canonical(entity)
            found = folded.get(target)
            if found is None or cosine > found[0]:
                folded[target] = (cosine, entity)
        by_id = {r.entry.id: r for r in lexical}
        named = {r.entry.id for r in lexical if is_identity_hit(r)}
        # what the dense ranking says of each lexical result: its canonical copy's cosine; ranked after every entity
        # it ranks when it was left out; nothing when it has no passages (a package, a directory)
        seen: dict[str, float] = {}
        for entity in by_id:
            if canonical(entity) in folded:
                seen[entity] = folded[canonical(entity)][0]
            elif entity in left_out:
                seen[entity] = LEFT_OUT
        every = {**{e: value for e, (value, _) in folded.items()}, **seen}
        agreed = agree(list(by_id), every, sorted(named))
        if agreed:
            # the rankings agree on the best answer: the lexical order stands (each result says where the dense
            # ranking put it among every entity it ranks)
            dense_best: list[str] = []
            weight = 0.0
            pinned = list(by_id)
        else:
            dense_best = sorted(folded, key=lambda e: (-round(folded[e][0], 6), e))[:DENSE_DEPTH]
            weight = DENSE_WEIGHT
            pinned = sorted(named | {r.entry.id for r in lexical[:LEXICAL_KEPT]})
        candidates = {**dict.fromkeys(by_id), **dict.fromkeys(dense_best)}
        cosine_of = {e: every[e] for e in candidates if e in every}
        # every cosine, negated and ascending: a result's place among them is one bisection
        below = sorted(-round(v, 6) for v in every.values()) if agreed else []
        terms = lexical[0].terms if lexical else []
        results = []
        for fused in fuse(list(by_id), cosine_of, pinned, self.rrf_k, weight):
            result = by_id.get(fused.id)
            if result is None:
                entry = retriever.entries[retriever.index_of[fused.id]]
                components = dict.fromkeys(COMPONENTS, 0.0)
                components["prior"] = components["aboutness"] = 1.0
                result = Result(entry, 0.0, components, {}, entry.confidence, terms=terms, shape=shape)
            dense_rank = fused.dense_rank
            if agreed and fused.id in every:  # its place among every entity the dense ranking ranks
                dense_rank = 1 + bisect_left(below, -round(every[fused.id], 6))
            best = folded.get(canonical(fused.id))
            row = index.best_row(best[1], passages[1] if passages is not None else scores) if best is not None \
                else None
            chunk = index.chunks[row] if row is not None else None
            result.fusion = {
                "lexicalRank": fused.lexical_rank, "lexicalScore": round(result.score, 6) if fused.id in by_id
                else None, "denseRank": dense_rank, "cosine": round(best[0], 6) if best else None,
                "fused": fused.score, "agreed": agreed,
                "pinned": ("named by the query" if fused.id in named else
                           "the lexical best" if fused.lexical_rank == 1 else "the lexical second")
                if fused.pinned and not agreed else None,
                "bestChunk": {"id": chunk.chunk_id, "heading": chunk.heading, "startLine": chunk.start_line,
                              "endLine": chunk.end_line, "text": chunk.text[:CHUNK_PREVIEW],
                              "cosine": round(float(scores[row]), 6),
                              **({"bm25": round(float(passages[0][row]), 6)} if passages is not None else {})}
                if chunk is not None and row is not None else None}
            result.score = fused.score
            results.append(result)
        if kinds:
            results = [r for r in results if r.entry.kind in kinds]
        return results[:limit]


# ------------------------------------------------------------------------------------------------ command line


def open_semantic(root: Path, config: Any, entries: Iterable[Any], read_text: Callable[[str], str | None] | None = None,
                  save: bool = True) -> tuple[SemanticIndex | None, Embedder | None, SemanticStatus]:
    """The embedder and the index brought up to date with `entries` (saved when it changed), or the reason
    hybrid search cannot run (lexical search answers then)."""
    try:
        embedder = embedder_for(config)
    except EmbeddingError as exc:
        return None, None, SemanticStatus(False, str(exc))
    try:
        index = load_index(root, config.index.dir)
    except IndexUnreadable as exc:
        return None, embedder, SemanticStatus(False, str(exc), embedder.model_id)
    if index.model_id != embedder.model_id:
        return None, embedder, SemanticStatus(False, f"model mismatch: the semantic index was built with "
                                                     f"{index.model_id}, the configuration asks for "
                                                     f"{embedder.model_id}; rebuild it with "
                                                     f"`docbridge index --semantic`.", embedder.model_id)
    if not index.chunks:
        return None, embedder, SemanticStatus(False, "the semantic index is empty: build it with "
                                                     "`docbridge index --semantic`.", embedder.model_id)
    try:
        updated, report = update_index(entries, read_text or disk_reader(root), embedder,
                                       config.index.chunk_chars, index, sources=config.index.sources)
    except EmbeddingError as exc:
        return None, embedder, SemanticStatus(False, str(exc), embedder.model_id)
    if report.changed and save:
        with contextlib.suppress(OSError, ArtifactPathError):  # a read-only checkout searches with it in memory
            updated.save(root, config.index.dir)
    return updated, embedder, SemanticStatus(True, None, embedder.model_id,
                                             {"chunks": len(updated.chunks), "embedded": report.embedded})


def build_semantic(root: Path, config: Any, entries: Iterable[Any], read_text: Callable[[str], str | None],
                   progress: Callable[[str, int, int], None] | None = None) -> tuple[Any, SemanticStatus]:
    """`docbridge index --semantic`: the index for `entries`, reusing every cached vector; (report, status)."""
    try:
        embedder = embedder_for(config)
    except EmbeddingError as exc:
        return None, SemanticStatus(False, str(exc))
    try:
        previous: SemanticIndex | None = load_index(root, config.index.dir)
    except IndexUnreadable:
        previous = None
    # what an interrupted build embedded is reused, and what this one embeds is kept as it goes
    partial = PartialVectors(root, config.index.dir, embedder.model_id, config.index.chunk_chars)
    try:
        index, report = update_index(entries, read_text, embedder, config.index.chunk_chars, previous, progress,
                                     sources=config.index.sources, partial=partial)
    except EmbeddingError as exc:
        return None, SemanticStatus(False, str(exc), embedder.model_id)
    index.save(root, config.index.dir)  # a link or a file on the way to index.dir: ArtifactPathError (exit 2)
    partial.discard()
    return report, SemanticStatus(True, None, embedder.model_id, {"chunks": len(index.chunks), "dim": index.dim})


# ------------------------------------------------------------------------------------------------ servers


class SemanticService:
    """One repository's semantic index kept in memory for a server: loaded or built, then updated, in a
    background thread; `wrap` hands a search the index it has at that moment (never waiting for it)."""

    def __init__(self, root: Path, warn: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.warn = warn
        self.index: SemanticIndex | None = None
        self.embedder: Embedder | None = None
        self.status = SemanticStatus(False, "the semantic index is being built.")
        self._lock = threading.Lock()
        self._pending: tuple[Any, list[Any], Callable[[str], str | None]] | None = None
        self._worker: threading.Thread | None = None
        self._done_revision: Any = None
        self._warned: set[str] = set()
        self.updates = 0  # completed updates (for tests and figures)

    def _say(self, reason: str) -> None:
        if self.warn is not None and reason not in self._warned:
            self._warned.add(reason)
            self.warn(f"semantic search off, lexical only: {reason}")

    def refresh(self, revision: Any, config: Any, entries: Iterable[Any],
                read_text: Callable[[str], str | None]) -> None:
        """Bring the index up to `entries` in the background (the latest request wins; one worker at a time)."""
        with self._lock:
            if revision == self._done_revision:
                return
            self._pending = (config, list(entries), read_text)
            self._done_revision = revision
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="docbridge-semantic", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                job, self._pending = self._pending, None
                if job is None:
                    self._worker = None
                    return
            config, entries, read_text = job
            try:
                self._update(config, entries, read_text)
            except Exception as exc:  # a background failure must not take the server down: lexical answers
                self.status = SemanticStatus(False, f"the semantic index could not be updated: {exc}")
                self._say(self.status.reason or "")
            self.updates += 1

    def _update(self, config: Any, entries: list[Any], read_text: Callable[[str], str | None]) -> None:
        try:
            # the editor's server embeds with a core to spare: the first build of a large repository takes minutes
            embedder = self.embedder if self.embedder is not None else embedder_for(config, background=True)
        except EmbeddingError as exc:
            self.status = SemanticStatus(False, str(exc))
            self._say(str(exc))
            return
        self.embedder = embedder
        previous = self.index
        if previous is None:
            try:
                previous = load_index(self.root, config.index.dir)
            except IndexUnreadable:
                previous = None
        partial = PartialVectors(self.root, config.index.dir, embedder.model_id, config.index.chunk_chars)
        try:
            index, report = update_index(entries, read_text, embedder, config.index.chunk_chars, previous,
                                         sources=config.index.sources, partial=partial)
        except EmbeddingError as exc:
            self.status = SemanticStatus(False, str(exc), embedder.model_id)
            self._say(str(exc))
            return
        if report.changed:
            with contextlib.suppress(OSError, ArtifactPathError):
                index.save(self.root, config.index.dir)
                partial.discard()
        self.index = index
        self.status = SemanticStatus(True, None, embedder.model_id, {"chunks": len(index.chunks),
                                                                      "embedded": report.embedded})

    def wrap(self, lexical: Any, rrf_k: int) -> HybridRetriever:
        index, embedder = self.index, self.embedder
        status = SemanticStatus(self.status.used and index is not None, self.status.reason, self.status.model,
                                dict(self.status.index))
        return HybridRetriever(lexical, index, embedder, rrf_k, status, self._say)

    def wait(self, timeout: float = 60.0) -> bool:
        """Until the background work is done (tests and benchmarks)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self._worker is None or not self._worker.is_alive()


_SERVICES: dict[Path, SemanticService] = {}
_SERVICES_LOCK = threading.Lock()


def service_for(root: Path, warn: Callable[[str], None] | None = None) -> SemanticService:
    with _SERVICES_LOCK:
        found = _SERVICES.get(root)
        if found is None:
            found = _SERVICES[root] = SemanticService(root, warn)
        return found


def hybrid_retriever_for(state: Any, lexical: Any, warn: Callable[[str], None] | None = None) -> Any:
    """For a server: `lexical` itself when the configuration does not ask for hybrid search, else a hybrid
    retriever over the index the service holds, with an update for `state` started in the background."""
    config = state.config
    if not config.retrieval.hybrid:
        return lexical
    service = service_for(state.root, warn)

    disk = disk_reader(state.root)

    def read(path: str) -> str | None:
        buffered = state.text_of(path)
        return buffered if buffered is not None else disk(path)
    service.refresh(state.revision, config, lexical.entries, read)
    return service.wrap(lexical, config.index.rrf_k)
