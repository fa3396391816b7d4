"""The tests' one JSON-RPC codec for the language server's base protocol: `Content-Length: N`, a blank line,
then N bytes of JSON.

    encode(message)                  a frame (a mapping gets "jsonrpc": "2.0"; bytes are the body as they are)
    encode(body, length="abc")       a malformed frame, on purpose (`length`, `eol`)
    decode(data)                     every message in complete output (a subprocess's stdout)
    Decoder().feed(chunk)            the messages complete so far; a frame split across chunks waits for its rest
    await read_messages(stream)      the messages of an asyncio stream, one by one, until it ends

The server's own reader (docbridge.lsp.framing) is what tests/test_lsp_framing.py tests; this one is the
client's side and fails loudly on what a correct server never writes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

VERSION = "2.0"
HEADER_END = b"\r\n\r\n"
READ_SIZE = 1 << 16


def encode(message: Mapping[str, Any] | bytes, *, length: int | str | None = None, eol: bytes = b"\r\n") -> bytes:
    """One frame. A mapping is sent as JSON with `"jsonrpc": "2.0"` first (a version the mapping names itself
    is kept); bytes are the body as they are (not JSON, not JSON-RPC, nested too deep...). `length` replaces
    the body's size in the header and `eol` the header's line end, to write frames that are wrong on purpose."""
    body = message if isinstance(message, bytes) else json.dumps({"jsonrpc": VERSION, **message}).encode("utf-8")
    size = len(body) if length is None else length
    return b"Content-Length: " + str(size).encode("ascii") + eol + eol + body


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise ValueError(f"a frame without a Content-Length header: {head!r}")


class Decoder:
    """Frames from bytes that arrive in pieces: `feed` returns the messages completed by each piece."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[Any]:
        self._buffer += data
        messages: list[Any] = []
        while True:
            head, found, rest = self._buffer.partition(HEADER_END)
            if not found:
                return messages
            size = _content_length(head)
            if len(rest) < size:
                return messages
            messages.append(json.loads(rest[:size]))
            self._buffer = rest[size:]

    @property
    def pending(self) -> bytes:
        """What was fed and is not a complete frame yet."""
        return self._buffer


def decode(data: bytes) -> list[Any]:
    """Every message in `data`, which must end with a complete frame."""
    decoder = Decoder()
    messages = decoder.feed(data)
    if decoder.pending:
        raise ValueError(f"the output ends inside a frame: {decoder.pending[:200]!r}")
    return messages


async def read_messages(stream: asyncio.StreamReader) -> AsyncIterator[Any]:
    """The messages read from `stream` until it ends (a frame cut by the end is dropped: the process is gone)."""
    decoder = Decoder()
    while True:
        chunk = await stream.read(READ_SIZE)
        if not chunk:
            return
        for message in decoder.feed(chunk):
            yield message


__all__ = ["Decoder", "decode", "encode", "read_messages"]
