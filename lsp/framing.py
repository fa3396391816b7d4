"""Reading LSP frames from a byte stream: one reader thread, one event-loop wake-up per message.

pygls reads each header line and each body through its own executor round trip (three or more thread hops per
message) and stops answering for good after one malformed header. Here a thread reads whole frames and hands
each body to the event loop at once; a header it cannot use is reported and skipped until the next
`Content-Length:` line, so the stream resynchronises instead of going silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger("docbridge.lsp")

MAX_HEADER_LINE = 8 * 1024
MAX_BODY = 256 * 1024 * 1024  # four times the largest buffer the analyzer accepts, far above any real message
READ_CHUNK = 1024 * 1024  # a body is read in pieces: a Content-Length the client never sends allocates nothing
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def read_frames(stream: BinaryIO, deliver: Callable[[bytes], None], report: Callable[[str], None]) -> None:
    """Read frames until the stream ends: `deliver(body)` for each, `report(reason)` for each skipped one.

    Clients write a body with no line end after it, so bytes the reader could not frame run into the next
    frame's header line: a `Content-Length:` anywhere in a line starts a header there."""
    skipping = False  # the bytes of a frame just skipped are part of that report, not another one
    while True:
        length: int | None = None
        problem: str | None = None
        saw_header = False
        while True:  # the header block, up to its empty line
            line = stream.readline(MAX_HEADER_LINE + 1)
            if not line:
                if saw_header or problem:
                    report(problem or "the stream ended inside a frame's header")
                return
            if len(line) > MAX_HEADER_LINE and not line.endswith(b"\n"):
                line = _long_line(stream, line)
            text = line.rstrip(b"\r\n")
            start = text.lower().find(b"content-length:")
            if start > 0:  # the tail of something unframed, then a header: resynchronise here
                if not skipping:
                    problem = problem or f"bytes outside any frame ({_excerpt(text[:start])})"
                text = text[start:]
                saw_header = True
            if not text:
                if saw_header:
                    break
                continue  # blank lines between frames
            name, colon, value = text.partition(b":")
            if not colon:
                if not skipping:
                    problem = problem or f"bytes outside any frame ({_excerpt(text)})"
                continue
            saw_header = True
            if name.strip().lower() == b"content-length":
                length, problem = _length(value.strip(), problem)
        if length is None:
            report(problem or "a frame without a Content-Length header")
            skipping = True
            continue
        if problem is not None:
            report(problem)
        skipping = False
        body = _read_exactly(stream, length)
        if body is None:
            report("the stream ended inside a frame's body")
            return
        deliver(body)


def _long_line(stream: BinaryIO, head: bytes) -> bytes:
    """A line longer than any header: keep only what may start a header in its last 8 KiB."""
    tail = head[-MAX_HEADER_LINE:]
    while True:
        rest = stream.readline(MAX_HEADER_LINE)
        if not rest:
            return tail
        tail = (tail + rest)[-MAX_HEADER_LINE:]
        if rest.endswith(b"\n"):
            return tail


def _length(value: bytes, problem: str | None) -> tuple[int | None, str | None]:
    if not value.isdigit():
        return None, problem or f"Content-Length is not a number ({_excerpt(value)})"
    if len(value) > 12 or int(value) > MAX_BODY:
        return None, problem or f"Content-Length {_excerpt(value)} is larger than {MAX_BODY} bytes"
    return int(value), problem


def _read_exactly(stream: BinaryIO, length: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = length
    read = getattr(stream, "read1", stream.read)  # what has arrived, up to a piece: never `length` bytes at once
    while remaining > 0:
        chunk = read(min(remaining, READ_CHUNK))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _excerpt(value: bytes) -> str:
    text = value[:40].decode("utf-8", "replace")
    return repr(text + ("…" if len(value) > 40 else ""))


async def serve(protocol: Any, stream: BinaryIO, stop: threading.Event) -> None:
    """Feed `protocol` every frame read from `stream` until it ends (or `stop` is set)."""
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def handle(body: bytes) -> None:
        if stop.is_set():
            return
        try:
            data = json.loads(body)
        except ValueError as exc:  # not JSON (or not UTF-8): the client hears it, with no id to answer
            log.error("a message that is not JSON was skipped: %s", exc)
            _send_error(protocol, PARSE_ERROR, f"The message is not valid JSON: {exc}.")
            return
        problem = invalid_message(data)
        if problem is not None:  # JSON, but no JSON-RPC 2.0 message: answered, with its id when it has one
            log.error("a message that is not a JSON-RPC 2.0 message was skipped: %s", problem)
            request_id = data.get("id") if isinstance(data, dict) and "method" in data else None
            _send_error(protocol, INVALID_REQUEST, f"Invalid request: {problem}.",
                        request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None)
            return
        try:
            protocol.handle_message(protocol.structure_message(data))
        except Exception:
            log.exception("handling a message failed")

    def skipped(reason: str) -> None:
        log.error("a malformed frame was skipped: %s", reason)
        _send_error(protocol, PARSE_ERROR, f"A malformed frame was skipped: {reason}.")

    def finished() -> None:
        if not ended.done():
            ended.set_result(None)

    def run() -> None:
        try:
            read_frames(stream, lambda body: _call(loop, handle, body), lambda reason: _call(loop, skipped, reason))
        except (OSError, ValueError) as exc:
            log.error("reading the client's messages failed: %s", exc)
        finally:
            _call(loop, finished)

    threading.Thread(target=run, name="docbridge-lsp-reader", daemon=True).start()
    await ended


def _call(loop: asyncio.AbstractEventLoop, function: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop has closed: the server is exiting
        loop.call_soon_threadsafe(function, *args)


def invalid_message(data: Any) -> str | None:
    """Why `data` (parsed JSON) is no JSON-RPC 2.0 request, notification or response; None when it is one.
    (Batches are not part of the Language Server Protocol.)"""
    if not isinstance(data, dict):
        return f"a message is a JSON object, not {type(data).__name__}"
    if data.get("jsonrpc") != "2.0":
        return f"jsonrpc must be \"2.0\", not {_excerpt(json.dumps(data.get('jsonrpc')).encode())}"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "method must be a string"
        if "id" in data and not (isinstance(data["id"], str | int) and not isinstance(data["id"], bool)):
            return "id must be a number or a string"
        return None
    if "id" not in data or ("result" not in data and "error" not in data):
        return "a message without a method is a response: it has an id and a result or an error"
    return None


def _send_error(protocol: Any, code: int, message: str, request_id: Any = None) -> None:
    payload = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    body = json.dumps(payload).encode("utf-8")
    writer = getattr(protocol, "writer", None)
    if writer is None:
        return
    with contextlib.suppress(OSError, ValueError):
        writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


__all__ = ["invalid_message", "read_frames", "serve"]
