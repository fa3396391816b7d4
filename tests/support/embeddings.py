"""A stub embeddings endpoint for the tests: an HTTP server on 127.0.0.1 (a port the system picks) that hands
every POST to the test's own function, which records it and answers as the test needs (vectors, an error,
garbage, a trickle).

    with serve_posts(answer) as url:    url = "http://127.0.0.1:PORT/v1" (an OpenAI-style base URL)
    read_json(request)                  the JSON body of a request (its Content-Length bytes)
    vector(text, dim)                   a vector that depends only on the text
    send_json(request, payload)         a 200 answer with a JSON body
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextlib.contextmanager
def serve_posts(answer: Answer) -> Iterator[str]:
    """Serve until the block ends, each request on its own daemon thread (an answer that never ends holds
    nothing up); yields the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            answer(self)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def read_json(request: http.server.BaseHTTPRequestHandler) -> Any:
    return json.loads(request.rfile.read(int(request.headers["Content-Length"])))


def send_json(request: http.server.BaseHTTPRequestHandler, payload: bytes | Any, *, length: bool = False) -> None:
    """A 200 answer whose body is `payload` (bytes as they are, anything else as JSON); with `length`, with a
    Content-Length header."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    request.send_response(200)
    request.send_header("Content-Type", "application/json")
    if length:
        request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)


def vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i] - 128) / 128 for i in range(dim)]


__all__ = ["read_json", "send_json", "serve_posts", "vector"]
