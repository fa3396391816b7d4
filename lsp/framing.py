"""Reading LSP frames from a byte stream, in the event loop (or, for a stream it cannot poll, on one thread).

pygls reads each header line and each body through its own executor round trip (three or more thread hops per
message) and stops answering for good after one malformed header. Here the event loop reads what has arrived
when the descriptor says so and frames it at once (a thread hop and a lock handover cost more than a definition
answer); a header it cannot use is reported and skipped until the next `Content-Length:` line, so the stream
resynchronises instead of going silent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:  # asyncio is loaded by the server, not by the start-up that reads the first frame with this
    import asyncio

log = logging.getLogger("docbridge.lsp")

MAX_HEADER_LINE = 8 * 1024
MAX_BODY = 256 * 1024 * 1024  # four times the largest buffer the analyzer accepts, far above any real message
READ_CHUNK = 1024 * 1024  # a body is read in pieces: a Content-Length the client never sends allocates nothing
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class FrameReader:
    """Frames from bytes fed in pieces of any size: `deliver(body)` for each, `report(reason)` for each skipped
    one. Only what has arrived is held: a Content-Length the client never sends allocates nothing.

    Clients write a body with no line end after it, so bytes the reader could not frame run into the next
    frame's header line: a `Content-Length:` anywhere in a line starts a header there."""

    def __init__(self, deliver: Callable[[bytes], None], report: Callable[[str], None]) -> None:
        self.deliver = deliver
        self.report = report
        self.buffer = bytearray()
        self.body_length: int | None = None  # reading a body of this many bytes
        self.long_line = False  # the line being read is longer than any header: only its tail is kept
        self.skipping = False  # the bytes of a frame just skipped are part of that report, not another one
        self._new_header()

    def _new_header(self) -> None:
        self.length: int | None = None
        self.problem: str | None = None
        self.saw_header = False

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.body_length is not None:
                if len(self.buffer) < self.body_length:
                    return
                body = bytes(self.buffer[:self.body_length])
                del self.buffer[:self.body_length]
                self.body_length = None
                self.deliver(body)
                continue
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER_LINE:
                    del self.buffer[:-MAX_HEADER_LINE]
                    self.long_line = True
                return
            line = bytes(self.buffer[:end + 1])
            del self.buffer[:end + 1]
            if self.long_line or len(line) > MAX_HEADER_LINE + 1:
                line, self.long_line = line[-MAX_HEADER_LINE:], False
            self._header_line(line)

    def end(self) -> None:
        """The stream has ended: say what it cut short."""
        if self.buffer and self.body_length is None:  # a last line without its line end
            line, self.buffer = bytes(self.buffer), bytearray()
            self._header_line(line)
        if self.body_length is not None:
            self.report("the stream ended inside a frame's body")
        elif self.saw_header or self.problem:
            self.report(self.problem or "the stream ended inside a frame's header")

    def _header_line(self, line: bytes) -> None:
        text = line.rstrip(b"\r\n")
        start = text.lower().find(b"content-length:")
        if start > 0:  # the tail of something unframed, then a header: resynchronise here
            if not self.skipping:
                self.problem = self.problem or f"bytes outside any frame ({_excerpt(text[:start])})"
            text = text[start:]
            self.saw_header = True
        if not text:
            if self.saw_header:
                self._header_end()
            return  # else: blank lines between frames
        name, colon, value = text.partition(b":")
        if not colon:
            if not self.skipping:
                self.problem = self.problem or f"bytes outside any frame ({_excerpt(text)})"
            return
        self.saw_header = True
        if name.strip().lower() == b"content-length":
            self.length, self.problem = _length(value.strip(), self.problem)

    def _header_end(self) -> None:
        length, problem = self.length, self.problem
        self._new_header()
        if length is None:
            self.report(problem or "a frame without a Content-Length header")
            self.skipping = True
            return
        if problem is not None:
            self.report(problem)
        self.skipping = False
        self.body_length = length


def read_frames(stream: BinaryIO, deliver: Callable[[bytes], None], report: Callable[[str], None],
                frames: FrameReader | None = None) -> None:
    """Read frames from a blocking stream until it ends (see `FrameReader`; `frames`: one holding bytes read
    before, which goes on delivering to `deliver` and `report`)."""
    frames = _adopt(frames, deliver, report)
    read = getattr(stream, "read1", stream.read)  # what has arrived, up to a piece: never waits for a full piece
    while chunk := read(READ_CHUNK):
        frames.feed(chunk)
    frames.end()


def _length(value: bytes, problem: str | None) -> tuple[int | None, str | None]:
    if not value.isdigit():
        return None, problem or f"Content-Length is not a number ({_excerpt(value)})"
    if len(value) > 12 or int(value) > MAX_BODY:
        return None, problem or f"Content-Length {_excerpt(value)} is larger than {MAX_BODY} bytes"
    return int(value), problem


def _excerpt(value: bytes) -> str:
    text = value[:40].decode("utf-8", "replace")
    return repr(text + ("…" if len(value) > 40 else ""))


async def serve(protocol: Any, stream: BinaryIO, stop: threading.Event, early: Any = None,
                heard: Callable[[], None] = lambda: None) -> None:
    """Feed `protocol` every frame read from `stream` until it ends (or `stop` is set). `early` (an
    `docbridge.lsp.bootstrap.Early`) holds what the start-up read before: its frames are handled first, its reader goes
    on with the bytes it holds. `heard` is called for each message (the client is waiting for something)."""
    import asyncio
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def handle(body: bytes) -> None:
        if stop.is_set():
            return
        heard()
        try:
            data = json.loads(body)
        except ValueError as exc:  # not JSON (or not UTF-8): the client hears it, with no id to answer
            log.error("a message that is not JSON was skipped: %s", exc)
            _send_error(protocol, PARSE_ERROR, f"The message is not valid JSON: {exc}.")
            return
        except RecursionError:  # nested too deeply to read; raised out of here, it left the frames after it unread
            log.error("a message nested too deeply to read was skipped")
            _send_error(protocol, PARSE_ERROR, "The message is nested too deeply to read.")
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
        except Exception as exc:  # one line on stderr (the traceback at debug level): the server keeps serving
            method = data.get("method") if isinstance(data, dict) else None
            log.error("handling a %s message failed: %s: %s", method or "client", type(exc).__name__, exc)
            log.debug("the failure in full", exc_info=True)

    def skipped(reason: str) -> None:
        log.error("a malformed frame was skipped: %s", reason)
        _send_error(protocol, PARSE_ERROR, f"A malformed frame was skipped: {reason}.")

    def finished() -> None:
        if not ended.done():
            ended.set_result(None)

    frames = None
    if early is not None:
        for event in early.events:
            handle(event) if isinstance(event, bytes) else skipped(event)
        if early.ended:
            early.reader.end()
            return
        frames = early.reader
    if _read_in_loop(loop, stream, handle, skipped, finished, frames):
        await ended
        return

    def run() -> None:
        try:
            read_frames(stream, lambda body: _call(loop, handle, body), lambda reason: _call(loop, skipped, reason),
                        frames)
        except (OSError, ValueError) as exc:
            log.error("reading the client's messages failed: %s", exc)
        finally:
            _call(loop, finished)

    threading.Thread(target=run, name="docbridge-lsp-reader", daemon=True).start()
    await ended


def _adopt(frames: FrameReader | None, deliver: Callable[[bytes], None], report: Callable[[str], None]) -> FrameReader:
    if frames is None:
        return FrameReader(deliver, report)
    frames.deliver, frames.report = deliver, report
    frames.feed(b"")  # frames complete in what it holds already
    return frames


def _read_in_loop(loop: asyncio.AbstractEventLoop, stream: BinaryIO, deliver: Callable[[bytes], None],
                  report: Callable[[str], None], finished: Callable[[], None],
                  frames: FrameReader | None = None) -> bool:
    """Read `stream` in the event loop when it is a pipe, socket or terminal: a message is handled in the loop
    turn that sees it, with no thread to wake and no lock to pass (a regular file cannot be polled: False).
    Nothing is made non-blocking: the loop reads only once the descriptor says bytes (or the end) are there,
    and a client that hands the server one socket as stdin and stdout keeps blocking writes."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    reader = _adopt(frames, deliver, report)  # frames the start-up's reader holds already are handled here

    def readable() -> None:
        try:
            chunk = os.read(descriptor, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            log.error("reading the client's messages failed: %s", exc)
            chunk = b""
        if chunk:
            reader.feed(chunk)
            return
        loop.remove_reader(descriptor)
        reader.end()
        finished()

    try:
        loop.add_reader(descriptor, readable)
    except (OSError, ValueError):  # a regular file or no pollable descriptor
        return False
    return True


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
