"""The semantic index: every document's and module's chunks with their vectors, under `.docbridge/semantic/`
(or the folder `index.dir` names).

- `chunks.jsonl`: one chunk a line (docbridge.engine.semantic.chunks), with its cache key;
- `vectors.npy`: the float32 vectors, one row per chunk, L2-normalised (cosine is a dot product);
- `bm25.json`: BM25 over the chunks' text (docbridge.engine.semantic.bm25): which passage of a result to show;
- `meta.json` (sealed): the model id, dimension, chunk count, passage size, the sources, each file's content
  hash, and the SHA-256 of the three files above, which are verified on every read.

What is chunked: the projection's documents and modules, or, when `index.sources` lists paths, those at or under
one of them (a source that matches none is reported, and skipped).

Vectors are cached by chunk: the key is the SHA-256 of the model id and the exact text embedded, so an unchanged
repository embeds nothing and a one-file edit embeds only the chunks whose text changed. A file whose content
hash is unchanged is not even read again, and a chunk kept keeps its BM25 terms. Search is exact cosine over all
rows (a matrix-vector product).

An unfinished build keeps what it embedded: every CHECKPOINT_SECONDS, and when the build is interrupted (Ctrl-C,
an embedding endpoint that stops answering), the vectors embedded since the last checkpoint are written to
`partial/` (a segment each, `segment-N.npy` with its keys, listed with their hashes in a
sealed `partial/meta.json` with the model and passage size), and the next build with the same model and passage
size reuses them, verified, as it reuses cached vectors. A finished build removes `partial/`. So stopping
`docbridge index --semantic` an hour into an embedding loses at most a minute of it.

The folder is written only through real folders of the repository: a link or a file on the way from the root is
refused (an ArtifactPathError naming it), and a folder Doc Bridge makes outside `.docbridge/` gets a `.gitignore`
of `*`, so the repository's walk and version control both pass it by.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, read_sealed, write_atomic, write_sealed
from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.model import DOCUMENT, MODULE
from docbridge.engine.base.safe_io import (
    MAX_ARTIFACT_BYTES,
    ArtifactPathError,
    ignore_everything_in,
    read_regular,
    real_dirs,
)
from docbridge.engine.semantic.bm25 import ChunkBM25, chunk_terms
from docbridge.engine.semantic.chunks import CHUNKER_VERSION, Chunk, chunk_markdown, chunk_module
from docbridge.engine.semantic.embed import Embedder, EmbeddingError

META_KIND = "semantic-index"
INDEX_VERSION = 2  # 2: bm25.json; an index of version 1 is read (its vectors reused) and gains it when next saved
READABLE_VERSIONS = (1, 2)
INDEX_FILES = frozenset({"chunks.jsonl", "vectors.npy", "bm25.json", "meta.json", ".gitignore", "partial"})
EMBED_BATCH = 256
CHECKPOINT_SECONDS = 60.0  # an unfinished build's vectors are saved at most this far apart
PARTIAL_KIND = "semantic-partial"
MAX_TEXT_BYTES = 2 * 1024 * 1024


def semantic_dir(root: Path, configured: str | None = None) -> Path:
    """Where the index is kept: `index.dir` (a relative path, validated by the configuration) under the root, else
    `.docbridge/semantic`."""
    return root / configured if configured else artifact_dir(root) / "semantic"


def _real_folder(root: Path, directory: Path, create: bool) -> bool:
    """Whether `directory` is a real folder, reached from `root` through real folders only (each checked with
    lstat, none followed); with `create`, the missing ones are made. ArtifactPathError for a link or a file on the
    way. Outside `.docbridge/` (which real_dirs keeps), the index's folder must be its own: Doc Bridge makes it
    with a `.gitignore` of `*` (so the repository's walk never reads its `meta.json` as a site's navigation, and
    version control passes it by); an existing folder is taken when empty (and given that `.gitignore`) or when
    it holds nothing but the index's files, and refused when it holds others."""
    if directory.parent == artifact_dir(root):
        return real_dirs(directory, create=create)
    current = root
    made = False
    for part in directory.relative_to(root).parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if not create:
                return False
            os.mkdir(current)
            if not made:
                ignore_everything_in(current)
            made = True
            continue
        if stat.S_ISLNK(st.st_mode):
            raise ArtifactPathError(f"{current} is a symbolic link; Doc Bridge keeps the semantic index (index.dir) "
                                    f"only in real folders of the repository (remove the link, or choose another "
                                    f"index.dir).")
        if not stat.S_ISDIR(st.st_mode):
            raise ArtifactPathError(f"{current} is not a folder; Doc Bridge keeps the semantic index (index.dir) "
                                    f"there (remove or rename it, or choose another index.dir).")
    if create and not made:
        names = {entry.name for entry in os.scandir(directory)}
        if not names:
            ignore_everything_in(directory)
        elif any(name not in INDEX_FILES and not name.endswith(".tmp") for name in names):
            raise ArtifactPathError(f"{directory} holds other files; the semantic index (index.dir) needs a folder "
                                    f"of its own (choose a new one: Doc Bridge makes it).")
    return True


def in_sources(path: str, sources: Sequence[str] | None) -> bool:
    """Whether a file is chunked: every file when no sources are configured, else one at or under a source."""
    return sources is None or any(path == source or path.startswith(source + "/") for source in sources)


def unmatched_sources(entries: Iterable[Any], sources: Sequence[str] | None) -> list[str]:
    """The configured sources no document or module lies at or under (skipped, as missing ones are)."""
    if sources is None:
        return []
    paths = [e.path for e in _sources(entries, None)]
    return [source for source in sources if not any(in_sources(path, (source,)) for path in paths)]


@dataclass(slots=True)
class SemanticIndex:
    model_id: str
    dim: int
    chunk_chars: int
    chunks: list[Chunk]
    keys: list[str]
    vectors: Any  # numpy float32 (len(chunks), dim)
    files: dict[str, str]  # path -> content hash of the file the chunks were cut from
    chunker: int = CHUNKER_VERSION
    bm25: ChunkBM25 | None = None  # None: read from an index of version 1 (built when first needed)
    sources: tuple[str, ...] | None = None  # what `index.sources` asked for when it was built
    _rows_by_path: dict[str, list[int]] = field(default_factory=dict)
    _starts: list[int] = field(default_factory=list)  # the first row of each entity's run of rows
    _spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # entity -> its rows [start, end)

    def __post_init__(self) -> None:
        rows: dict[str, list[int]] = {}
        for row, chunk in enumerate(self.chunks):
            rows.setdefault(chunk.path, []).append(row)
            if row == 0 or chunk.entity != self.chunks[row - 1].entity:
                self._starts.append(row)
        self._rows_by_path = rows
        ends = [*self._starts[1:], len(self.chunks)]
        self._spans = {self.chunks[start].entity: (start, end) for start, end in zip(self._starts, ends)}

    def entity_cosines(self, query_vector: Any) -> tuple[dict[str, float], Any]:
        """Every entity's best cosine to `query_vector` (an entity's chunks are consecutive rows: they are cut
        file by file), and the cosine of every row (for `best_row`)."""
        import numpy as np
        if not self.chunks:
            return {}, np.zeros(0, dtype=np.float32)
        scores = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        best = np.maximum.reduceat(scores, self._starts).tolist()
        return {self.chunks[start].entity: value for start, value in zip(self._starts, best)}, scores

    def lexical(self) -> ChunkBM25:
        """BM25 over the chunks (built from their text when the index predates `bm25.json`)."""
        if self.bm25 is None:
            self.bm25 = ChunkBM25.build([chunk_terms(chunk) for chunk in self.chunks])
        return self.bm25

    def best_row(self, entity: str, scores: Any) -> int | None:
        """The row of `entity`'s chunk with the highest score (the first of equals)."""
        import numpy as np
        span = self._spans.get(entity)
        if span is None:
            return None
        return span[0] + int(np.argmax(scores[span[0]:span[1]]))

    # ------------------------------------------------------------------ disk

    def save(self, root: Path, configured: str | None = None) -> None:
        """Write the index under `root` (in `index.dir` when configured); ArtifactPathError for a link or a
        file on the way, OSError when it cannot be written."""
        import numpy as np
        directory = semantic_dir(root, configured)
        _real_folder(root, directory, create=True)  # never through a link out of the root
        lines = [json.dumps({**c.to_json(), "key": k}, ensure_ascii=False, separators=(",", ":"))
                 for c, k in zip(self.chunks, self.keys)]
        chunks_bytes = ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(self.vectors, dtype=np.float32), allow_pickle=False)
        vector_bytes = buffer.getvalue()
        bm25_bytes = self.lexical().to_bytes()
        write_atomic(directory / "chunks.jsonl", chunks_bytes)
        write_atomic(directory / "vectors.npy", vector_bytes)
        write_atomic(directory / "bm25.json", bm25_bytes)
        write_sealed(directory / "meta.json", META_KIND, {
            "version": INDEX_VERSION, "model": self.model_id, "dim": self.dim, "count": len(self.chunks),
            "chunkChars": self.chunk_chars, "chunker": self.chunker, "files": dict(sorted(self.files.items())),
            "sources": list(self.sources) if self.sources is not None else None,
            "sha256": {"chunks.jsonl": sha256_bytes(chunks_bytes), "vectors.npy": sha256_bytes(vector_bytes),
                       "bm25.json": sha256_bytes(bm25_bytes)}})


class PartialVectors:
    """The vectors an unfinished build embedded (`partial/`, see the module's note): `vectors` (key -> vector)
    read when opened, for one model and passage size; `add` saves the next segment; `discard` removes them all.
    Unreadable, foreign or mismatched segments are ignored, never trusted."""

    def __init__(self, root: Path, configured: str | None, model_id: str, chunk_chars: int) -> None:
        self.root, self.configured = root, configured
        self.directory = semantic_dir(root, configured) / "partial"
        self.identity = {"model": model_id, "chunkChars": chunk_chars, "chunker": CHUNKER_VERSION}
        self.segments: list[dict[str, Any]] = []
        self.vectors: dict[str, Any] = {}
        self._read()

    def _read(self) -> None:
        import numpy as np
        try:
            if not _real_folder(self.root, semantic_dir(self.root, self.configured), create=False) \
                    or not self._real():
                return
        except ArtifactPathError:
            return
        loaded = read_sealed(self.directory / "meta.json", PARTIAL_KIND)
        if loaded is None or not isinstance(loaded[1], dict) or loaded[1].get("identity") != self.identity:
            return
        segments: list[dict[str, Any]] = []
        for segment in loaded[1].get("segments", []):
            try:
                data = _verified(self.directory, str(segment["file"]), {str(segment["file"]): segment["sha256"]})
                stored = np.load(io.BytesIO(data), allow_pickle=False)
                keys, vectors = [str(k) for k in stored["keys"]], stored["vectors"]
            except (OSError, ValueError, KeyError, TypeError):
                break  # the segments after a damaged one are not trusted either
            if vectors.ndim != 2 or len(keys) != len(vectors):
                break
            self.vectors.update(zip(keys, vectors.astype(np.float32, copy=False)))
            segments.append(segment)
        self.segments = segments

    def add(self, keys: list[str], vectors: Any) -> None:
        """Save vectors just embedded as the next segment (a failure to write loses only the checkpoint)."""
        import numpy as np
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.asarray(keys, dtype=str), vectors=np.ascontiguousarray(vectors, dtype=np.float32))
        data = buffer.getvalue()
        name = f"segment-{len(self.segments) + 1}.npz"
        try:
            _real_folder(self.root, semantic_dir(self.root, self.configured), create=True)
            if not self._real():
                os.mkdir(self.directory)
            write_atomic(self.directory / name, data)
            self.segments.append({"file": name, "sha256": sha256_bytes(data), "count": len(keys)})
            write_sealed(self.directory / "meta.json", PARTIAL_KIND,
                         {"identity": self.identity, "segments": self.segments})
        except (OSError, ArtifactPathError):
            return

    def _real(self) -> bool:
        """Whether `partial/` is a real folder (ArtifactPathError for a link or a file there)."""
        try:
            st = os.lstat(self.directory)
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(st.st_mode):  # a link included: lstat does not follow it
            raise ArtifactPathError(f"{self.directory} is not a real folder; Doc Bridge keeps an unfinished "
                                    "semantic build's vectors there (remove it).")
        return True

    def discard(self) -> None:
        """Remove the segments (the build they were for has been saved whole)."""
        import shutil
        with contextlib.suppress(ArtifactPathError):
            if self._real():
                shutil.rmtree(self.directory, ignore_errors=True)


class IndexUnreadable(Exception):
    """The index on disk is missing, damaged or of another version (the message says which)."""


def read_meta(root: Path, configured: str | None = None) -> dict[str, Any] | None:
    loaded = read_sealed(semantic_dir(root, configured) / "meta.json", META_KIND)
    if loaded is None or not isinstance(loaded[1], dict) or loaded[1].get("version") not in READABLE_VERSIONS:
        return None
    return loaded[1]


def _verified(directory: Path, name: str, hashes: dict[str, Any]) -> bytes:
    data = read_regular(directory / name, MAX_ARTIFACT_BYTES)
    if sha256_bytes(data) != hashes[name]:
        raise ValueError(f"{name} does not match its recorded hash")
    return data


def load_index(root: Path, configured: str | None = None) -> SemanticIndex:
    """The index under `.docbridge/semantic/` (or `index.dir`), every file verified by its recorded hash."""
    import numpy as np
    directory = semantic_dir(root, configured)
    try:
        present = _real_folder(root, directory, create=False) and (directory / "meta.json").exists()
    except ArtifactPathError as exc:
        raise IndexUnreadable(str(exc)) from exc
    if not present:
        raise IndexUnreadable("no semantic index: build it with `docbridge index --semantic`.")
    meta = read_meta(root, configured)
    if meta is None:
        raise IndexUnreadable("the semantic index is damaged or from another version: rebuild it with "
                              "`docbridge index --semantic`.")
    try:
        hashes = meta["sha256"]
        chunks_bytes = _verified(directory, "chunks.jsonl", hashes)
        vector_bytes = _verified(directory, "vectors.npy", hashes)
        rows = [json.loads(line) for line in chunks_bytes.decode("utf-8").splitlines() if line]
        chunks = [Chunk.from_json(row) for row in rows]
        keys = [str(row["key"]) for row in rows]
        vectors = np.load(io.BytesIO(vector_bytes), allow_pickle=False)
        dim = int(meta["dim"])
        if len(chunks) != int(meta["count"]) or (len(chunks) and tuple(vectors.shape) != (len(chunks), dim)):
            raise ValueError("shape mismatch")
        bm25 = ChunkBM25.from_bytes(_verified(directory, "bm25.json", hashes), len(chunks)) \
            if meta["version"] >= 2 else None
        sources = meta.get("sources")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexUnreadable("the semantic index is damaged (its files do not match their recorded hashes): "
                              "rebuild it with `docbridge index --semantic`.") from exc
    if not len(chunks):
        vectors = np.zeros((0, dim), dtype=np.float32)
    return SemanticIndex(str(meta["model"]), dim, int(meta["chunkChars"]), chunks, keys,
                         vectors.astype(np.float32, copy=False), {str(k): str(v) for k, v in meta["files"].items()},
                         int(meta.get("chunker", 0)), bm25,
                         tuple(str(s) for s in sources) if isinstance(sources, list) else None)


@dataclass(slots=True)
class UpdateReport:
    files: int = 0
    files_read: int = 0
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    seconds: float = 0.0
    changed: bool = False
    resumed: int = 0  # vectors an unfinished build had embedded, reused
    unmatched: list[str] = field(default_factory=list)  # configured sources no document or module lies under

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "filesRead": self.files_read, "chunks": self.chunks, "embedded": self.embedded,
                "reused": self.reused, "seconds": round(self.seconds, 3),
                **({"resumed": self.resumed} if self.resumed else {}),
                **({"sourcesUnmatched": self.unmatched} if self.unmatched else {})}


def _sources(entries: Iterable[Any], sources: Sequence[str] | None) -> list[Any]:
    return sorted((e for e in entries if e.kind in (DOCUMENT, MODULE) and not e.id.startswith("ownership:")
                   and in_sources(e.path, sources)), key=lambda e: e.path)


def context_of(entry: Any) -> str:
    """What a chunk of `entry` is embedded under: its title (a document's first heading, a module's file
    name)."""
    return entry.title or entry.path


def update_index(entries: Iterable[Any], read_text: Callable[[str], str | None], embedder: Embedder,
                 chunk_chars: int, previous: SemanticIndex | None = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 sources: Sequence[str] | None = None,
                 partial: PartialVectors | None = None) -> tuple[SemanticIndex, UpdateReport]:
    """The index of `entries` (the projection's documents and modules, those under `sources` when given),
    reusing `previous` wherever a file's content hash, or a chunk's text, is unchanged for the same model: only
    new chunk texts are embedded, and only new chunks are tokenized for BM25. With `partial`, the vectors an
    unfinished build embedded are reused too, and what this one embeds is checkpointed there as it goes."""
    import numpy as np
    started = time.perf_counter()
    entries = list(entries)
    report = UpdateReport(unmatched=unmatched_sources(entries, sources))
    model_id = embedder.model_id
    same_model = previous is not None and previous.model_id == model_id and previous.chunk_chars == chunk_chars \
        and previous.chunker == CHUNKER_VERSION
    cached: dict[str, int] = {}
    if same_model and previous is not None:
        cached = {key: row for row, key in enumerate(previous.keys)}
    chunks: list[Chunk] = []
    keys: list[str] = []
    origin: list[int | None] = []  # each chunk's row in `previous` (same text), for its BM25 terms
    files: dict[str, str] = {}
    chosen = _sources(entries, sources)
    for entry in chosen:
        files[entry.path] = entry.content_hash
        if same_model and previous is not None and previous.files.get(entry.path) == entry.content_hash:
            for row in previous._rows_by_path.get(entry.path, ()):
                chunks.append(previous.chunks[row])
                keys.append(previous.keys[row])
                origin.append(row)
            continue
        report.files_read += 1
        text = read_text(entry.path)
        if not text:
            continue
        cut = chunk_markdown if entry.kind == DOCUMENT else chunk_module
        for chunk in cut(entry.path, entry.id, text, chunk_chars):
            key = chunk.key(model_id, context_of(entry))
            chunks.append(chunk)
            keys.append(key)
            earlier = cached.get(key)
            same = earlier is not None and previous is not None and \
                (previous.chunks[earlier].heading, previous.chunks[earlier].text) == (chunk.heading, chunk.text)
            origin.append(earlier if same else None)
    titles = {e.path: context_of(e) for e in chosen}
    resumed = partial.vectors if partial is not None else {}
    missing = [i for i, key in enumerate(keys) if key not in cached and key not in resumed]
    vectors_new: Any = None
    if missing:
        parts: list[Any] = []
        saved, last = 0, time.monotonic()

        def checkpoint() -> None:  # the vectors embedded since the last checkpoint, kept in `partial`
            nonlocal saved, last
            if partial is not None and len(parts) > saved:
                done = min(len(parts) * EMBED_BATCH, len(missing))
                partial.add([keys[i] for i in missing[saved * EMBED_BATCH:done]], np.concatenate(parts[saved:]))
                saved, last = len(parts), time.monotonic()

        try:
            for start in range(0, len(missing), EMBED_BATCH):
                batch = missing[start:start + EMBED_BATCH]
                parts.append(embedder.embed([chunks[i].embedding_text(titles.get(chunks[i].path, ""))
                                             for i in batch]))
                if progress is not None:
                    progress("embedding", start + len(batch), len(missing))
                if start + len(batch) < len(missing) and time.monotonic() - last >= CHECKPOINT_SECONDS:
                    checkpoint()
        except BaseException:  # interrupted (Ctrl-C, an endpoint gone): what was embedded is kept for the next build
            checkpoint()
            raise
        vectors_new = np.concatenate(parts) if len(parts) > 1 else parts[0]
    dims = {previous.dim} if cached and previous is not None else set()
    if vectors_new is not None:
        dims.add(int(vectors_new.shape[1]))
    if resumed:
        dims.add(len(next(iter(resumed.values()))))
    if len(dims) > 1:
        raise EmbeddingError(f"the model answered {sorted(dims)[-1]} dimensions where the index holds "
                             f"{sorted(dims)[0]}.")
    dim = dims.pop() if dims else (previous.dim if previous is not None and same_model else 0)
    matrix = np.zeros((len(chunks), dim), dtype=np.float32)
    position = {row: n for n, row in enumerate(missing)}
    for row, key in enumerate(keys):
        if row in position:
            matrix[row] = vectors_new[position[row]]
        elif key in resumed and key not in cached:
            matrix[row] = resumed[key]
        else:
            matrix[row] = previous.vectors[cached[key]]  # type: ignore[union-attr]  # cached keys exist only with previous vectors
    report.files, report.chunks = len(chosen), len(chunks)
    report.embedded, report.reused = len(missing), len(chunks) - len(missing)
    report.resumed = sum(1 for key in keys if key in resumed and key not in cached)
    wanted = tuple(sources) if sources is not None else None
    report.changed = not same_model or previous is None or previous.files != files or previous.keys != keys \
        or previous.bm25 is None or previous.sources != wanted
    if not report.changed and previous is not None and previous.bm25 is not None:
        bm25 = previous.bm25
    else:
        kept = previous.bm25.rows() if previous is not None and previous.bm25 is not None and same_model else None
        bm25 = ChunkBM25.build([kept[row] if kept is not None and row is not None else chunk_terms(chunk)
                                for chunk, row in zip(chunks, origin)])
    report.seconds = time.perf_counter() - started
    return SemanticIndex(model_id, dim, chunk_chars, chunks, keys, matrix, files, bm25=bm25, sources=wanted), report


def disk_reader(root: Path) -> Callable[[str], str | None]:
    """Reads a repository file's text (never outside the root; None when unreadable or too large)."""
    base = root.resolve()

    def read(path: str) -> str | None:
        target = (base / path).resolve()
        if not target.is_relative_to(base):
            return None
        try:  # a regular file only, never waiting on a FIFO
            return read_regular(target, MAX_TEXT_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None
    return read
