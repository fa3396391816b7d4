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
from docbridge.lsp.framing import MAX_BODY, invalid_message, read_frames
from support.jsonrpc import decode, encode

BIN = Path(sys.executable).parent


def read(data: bytes) -> tuple[list[bytes], list[str]]:
    bodies: list[bytes] = []
    reasons: list[str] = []
    read_frames(io.BytesIO(data), bodies.append, reasons.append)
    return bodies, reasons


PING = {"jsonrpc": "2.0", "id": 1, "method": "$/ping"}
GOOD = json.dumps(PING).encode()


def test_well_formed_frames_arrive_whole_with_other_headers_and_lf_only_line_ends() -> None:
    typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + encode(PING)
    bodies, reasons = read(encode(PING) + typed + encode(PING, eol=b"\n"))
    assert bodies == [GOOD, GOOD, GOOD] and reasons == []


@pytest.mark.parametrize(("bad", "reason"), [
    (encode(PING, length="abc"), "Content-Length is not a number ('abc')"),
    (encode(PING, length="-5"), "Content-Length is not a number ('-5')"),
    (encode(PING, length="99999999999999999999"), "is larger than"),
    (GOOD, "bytes outside any frame"),  # a body with no header at all
    (b"Content-Type: text/plain\r\n\r\n" + GOOD, "a frame without a Content-Length header"),
])
def test_a_malformed_frame_is_reported_and_the_next_one_still_arrives(bad: bytes, reason: str) -> None:
    bodies, reasons = read(bad + encode(PING))
    assert bodies == [GOOD]
    assert len(reasons) == 1 and reason in reasons[0]


def test_a_length_shorter_than_its_body_costs_that_frame_only() -> None:
    bodies, reasons = read(encode(PING, length=10) + encode(PING))
    assert bodies == [GOOD[:10], GOOD]  # the cut body reaches the protocol, which answers a parse error
    assert len(reasons) == 1 and "outside any frame" in reasons[0]


def test_a_stream_that_ends_inside_a_frame_says_so() -> None:
    assert read(encode(PING, length=500)) == ([], ["the stream ended inside a frame's body"])
    assert read(b"Content-Length: 12\r\n") == ([], ["the stream ended inside a frame's header"])


def test_what_is_a_json_rpc_message() -> None:
    assert invalid_message(PING) is None
    assert invalid_message({"jsonrpc": "2.0", "method": "exit"}) is None
    assert invalid_message({"jsonrpc": "2.0", "id": 3, "result": None}) is None
    assert invalid_message({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}}) is None
    assert "JSON object" in (invalid_message([PING]) or "")
    assert "id must be" in (invalid_message({"jsonrpc": "2.0", "id": True, "method": "x"}) or "")


class Trickle(io.BytesIO):
    """A stream that hands over at most `size` bytes a read, as a pipe does when the client writes slowly."""

    def __init__(self, data: bytes, size: int) -> None:
        super().__init__(data)
        self.size = size

    def read1(self, size: int = -1) -> bytes:
        return super().read1(self.size)


TRICKLED = [
    encode(PING) + encode(PING, eol=b"\n"), encode(PING, length="abc") + encode(PING), GOOD + encode(PING),
    encode(PING, length=10) + encode(PING), encode(PING, length=500), b"Content-Length: 12\r\n",
    b"Content-Type: text/plain\r\n\r\n" + GOOD + encode(PING), b"\r\n\r\n" + encode(PING) + b"tail",
    b"X" * 20_000 + b"Content-Length: 40\r\n\r\n" + encode(PING), encode(b"") + encode(PING),
]


@pytest.mark.parametrize("size", [1, 2, 7, 64])
@pytest.mark.parametrize("data", TRICKLED, ids=[str(n) for n in range(len(TRICKLED))])
def test_frames_fed_a_few_bytes_at_a_time_arrive_as_when_fed_at_once(data: bytes, size: int) -> None:
    bodies: list[bytes] = []
    reasons: list[str] = []
    read_frames(Trickle(data, size), bodies.append, reasons.append)
    assert (bodies, reasons) == read(data)
    assert bodies or reasons


def test_a_header_line_of_megabytes_is_skipped_in_bounded_memory() -> None:
    bodies, reasons = read(b"X" * 5_000_000 + b"\r\n" + encode(PING))
    assert bodies == [GOOD] and len(reasons) == 1


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}}


def _run_server(data: bytes, from_file: Path | None = None) -> tuple[list[dict], str, int]:
    """The server's messages, its stderr and its exit status after reading `data` and the end of its input
    (from a pipe, or from a regular file, which the event loop cannot poll, when `from_file` is given)."""
    if from_file is None:
        done = subprocess.run([str(BIN / "docbridge-lsp")], input=data, capture_output=True, timeout=120)
    else:
        from_file.write_bytes(data)
        with from_file.open("rb") as stdin:
            done = subprocess.run([str(BIN / "docbridge-lsp")], stdin=stdin, capture_output=True, timeout=120)
    return decode(done.stdout), done.stderr.decode("utf-8", "replace"), done.returncode


def _server_session(prelude: bytes, eol: bytes = b"\r\n") -> tuple[list[dict], str]:
    data = prelude + b"".join(encode(message, eol=eol) for message in (
        INITIALIZE, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}))
    messages, stderr, status = _run_server(data)
    assert status == 0, stderr
    assert "Traceback" not in stderr, stderr  # every bad input is reported in one line; a traceback is a bug
    return messages, stderr


def _served(messages: list[dict]) -> None:
    answered = {m["id"]: m for m in messages if m.get("id") is not None}
    assert "capabilities" in answered[1]["result"]
    assert answered[2]["result"] is None  # shutdown answered; the process then exited on `exit`


BAD_FRAMES = {
    "not-a-number": encode(PING, length="abc"), "negative": encode(PING, length="-5"),
    "huge": encode(PING, length="99999999999999999999"), "over-the-cap": encode(PING, length=str(MAX_BODY + 1)),
    "shorter-than-body": encode(PING, length=10), "no-header": GOOD,
    "no-content-length": b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + GOOD,
    "lf-only-not-a-number": encode(PING, length="abc", eol=b"\n"), "empty-length": b"Content-Length: \r\n\r\n" + GOOD,
    "not-json": b"Content-Length: 7\r\n\r\nnot json", "not-utf8": encode(b'{"jsonrpc": "2.0", "method": "\xff"}'),
}


@pytest.mark.parametrize("prelude", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
def test_the_server_answers_a_bad_frame_with_a_parse_error_and_keeps_serving(prelude: bytes) -> None:
    messages, stderr = _server_session(prelude)
    errors = [m for m in messages if "error" in m and m.get("id") is None]
    assert errors and all(m["error"]["code"] == -32700 for m in errors)
    assert "was skipped" in stderr  # and the log says why
    _served(messages)


NOT_JSON_RPC = {
    "array": b"[1, 2]", "empty-batch": b"[]", "number": b"42", "string": b'"x"', "null": b"null",
    "no-version": b'{"id": 5, "method": "shutdown"}', "version-1": b'{"jsonrpc": "1.0", "id": 6, "method": "x"}',
    "method-not-a-string": b'{"jsonrpc": "2.0", "id": 7, "method": 5}',
    "id-not-a-number-or-string": b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}',
    "neither-request-nor-response": b'{"jsonrpc": "2.0", "id": 8}',
}


@pytest.mark.parametrize("body", list(NOT_JSON_RPC.values()), ids=list(NOT_JSON_RPC))
def test_json_that_is_no_json_rpc_message_is_an_invalid_request(body: bytes) -> None:
    messages, stderr = _server_session(encode(body))
    errors = [m for m in messages if "error" in m and m.get("id") not in (1, 2)]
    assert len(errors) == 1 and errors[0]["error"]["code"] == -32600, messages
    assert "not a JSON-RPC 2.0 message" in stderr
    _served(messages)


def test_the_server_reads_a_session_from_a_regular_file_too(tmp_path: Path) -> None:
    prelude = encode(PING, length="abc")
    data = prelude + encode(INITIALIZE) + encode({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + \
        encode({"jsonrpc": "2.0", "method": "exit"})
    messages, stderr, status = _run_server(data, tmp_path / "session.bin")
    assert status == 0 and "Traceback" not in stderr, stderr
    assert [m["error"]["code"] for m in messages if "error" in m] == [-32700]
    _served(messages)


def test_the_server_speaks_with_lf_only_line_ends() -> None:
    messages, stderr = _server_session(b"", eol=b"\n")
    assert not [m for m in messages if "error" in m] and stderr == ""
    _served(messages)


@pytest.mark.parametrize("tail", [b"Content-Length: 500\r\n\r\n{\"jsonrpc\"", b"Content-Length: 12\r\n",
                                  b"Content-Length: " + str(MAX_BODY).encode() + b"\r\n\r\n{}"],
                         ids=["inside-a-body", "inside-a-header", "inside-a-body-at-the-cap"])
def test_input_that_ends_inside_a_frame_ends_the_server_with_a_message(tail: bytes) -> None:
    messages, stderr, status = _run_server(encode(INITIALIZE) + tail)
    assert status == 0 and "Traceback" not in stderr
    assert "the stream ended inside a frame" in stderr
    assert messages[0]["id"] == 1 and messages[-1]["error"]["code"] == -32700
