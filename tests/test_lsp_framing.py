"""The language server's frame reader: malformed frames are answered and skipped, never a silent hang.

The reader is tested on byte streams (every malformed header the protocol can meet), and the real server over
raw stdio: after each bad frame it still answers `initialize`, `shutdown` and exits on `exit`.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp.framing import read_frames

BIN = Path(sys.executable).parent


def frame(payload: dict | bytes, length: int | str | None = None, eol: bytes = b"\r\n") -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    size = len(body) if length is None else length
    return b"Content-Length: " + str(size).encode() + eol + eol + body


def read(data: bytes) -> tuple[list[bytes], list[str]]:
    bodies: list[bytes] = []
    reasons: list[str] = []
    read_frames(io.BytesIO(data), bodies.append, reasons.append)
    return bodies, reasons


PING = {"jsonrpc": "2.0", "id": 1, "method": "$/ping"}
GOOD = json.dumps(PING).encode()


def test_well_formed_frames_arrive_whole_with_other_headers_and_lf_only_line_ends() -> None:
    typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(PING)
    bodies, reasons = read(frame(PING) + typed + frame(PING, eol=b"\n"))
    assert bodies == [GOOD, GOOD, GOOD] and reasons == []


@pytest.mark.parametrize(("bad", "reason"), [
    (frame(PING, length="abc"), "Content-Length is not a number ('abc')"),
    (frame(PING, length="-5"), "Content-Length is not a number ('-5')"),
    (frame(PING, length="99999999999999999999"), "is larger than"),
    (GOOD, "bytes outside any frame"),  # a body with no header at all
    (b"Content-Type: text/plain\r\n\r\n" + GOOD, "a frame without a Content-Length header"),
])
def test_a_malformed_frame_is_reported_and_the_next_one_still_arrives(bad: bytes, reason: str) -> None:
    bodies, reasons = read(bad + frame(PING))
    assert bodies == [GOOD]
    assert len(reasons) == 1 and reason in reasons[0]


def test_a_length_shorter_than_its_body_costs_that_frame_only() -> None:
    bodies, reasons = read(frame(PING, length=10) + frame(PING))
    assert bodies == [GOOD[:10], GOOD]  # the cut body reaches the protocol, which answers a parse error
    assert len(reasons) == 1 and "outside any frame" in reasons[0]


def test_a_stream_that_ends_inside_a_frame_says_so() -> None:
    assert read(frame(PING, length=500)) == ([], ["the stream ended inside a frame's body"])
    assert read(b"Content-Length: 12\r\n") == ([], ["the stream ended inside a frame's header"])


def test_a_header_line_of_megabytes_is_skipped_in_bounded_memory() -> None:
    bodies, reasons = read(b"X" * 5_000_000 + b"\r\n" + frame(PING))
    assert bodies == [GOOD] and len(reasons) == 1


def _server_session(prelude: bytes) -> list[dict]:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    data = prelude + frame(initialize) + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + \
        frame({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run([str(BIN / "docbridge-lsp")], input=data, capture_output=True, timeout=120)
    messages, rest = [], done.stdout
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        size = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"Content-Length"))
        messages.append(json.loads(rest[:size]))
        rest = rest[size:]
    return messages


@pytest.mark.parametrize("prelude", [
    frame(PING, length="abc"), frame(PING, length="-5"), frame(PING, length="99999999999999999999"),
    frame(PING, length=10), GOOD, b"Content-Length: 7\r\n\r\nnot json",
], ids=["not-a-number", "negative", "huge", "shorter-than-body", "no-header", "not-json"])
def test_the_server_answers_a_bad_frame_with_a_parse_error_and_keeps_serving(prelude: bytes) -> None:
    messages = _server_session(prelude)
    errors = [m for m in messages if "error" in m and m.get("id") is None]
    assert errors and all(m["error"]["code"] == -32700 for m in errors)
    answered = {m["id"]: m for m in messages if m.get("id") is not None}
    assert "capabilities" in answered[1]["result"]
    assert answered[2]["result"] is None  # shutdown answered; the process then exited on `exit`
