"""The tests' shared helpers (tests/support): the JSON-RPC codec, positions in text and the waits."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from support.jsonrpc import Decoder, decode, encode, read_messages
from support.positions import apply_edit, lines, lsp_position, lsp_range, offset, one_based, position
from support.wait import WaitTimeout, WatchedEvent, describe, not_before, not_before_async, wait_until, wait_until_async

PING = {"id": 1, "method": "$/ping", "params": {"text": "é中😋"}}


def test_a_message_is_framed_with_its_byte_length_and_the_version() -> None:
    frame = encode(PING)
    head, _, body = frame.partition(b"\r\n\r\n")
    assert head == b"Content-Length: %d" % len(body)
    assert json.loads(body) == {"jsonrpc": "2.0", **PING} and next(iter(json.loads(body))) == "jsonrpc"
    assert encode(b"not json") == b"Content-Length: 8\r\n\r\nnot json"
    assert encode(b"{}", length="abc", eol=b"\n") == b"Content-Length: abc\n\n{}"


def test_frames_split_anywhere_arrive_whole_and_in_order() -> None:
    data = encode(PING) + b"Content-Type: application/vscode-jsonrpc\r\n" + encode({"id": 2, "result": None})
    expected = [{"jsonrpc": "2.0", **PING}, {"jsonrpc": "2.0", "id": 2, "result": None}]
    assert decode(data) == expected
    for size in (1, 2, 7, len(data) - 1):
        decoder, messages = Decoder(), []
        for start in range(0, len(data), size):
            messages += decoder.feed(data[start:start + size])
        assert messages == expected and decoder.pending == b""


def test_output_cut_inside_a_frame_or_without_a_length_is_an_error() -> None:
    with pytest.raises(ValueError, match="ends inside a frame"):
        decode(encode(PING)[:-1])
    with pytest.raises(ValueError, match="Content-Length"):
        decode(b"Content-Type: x\r\n\r\n{}")


async def test_messages_are_read_from_a_stream_until_it_ends() -> None:
    stream = asyncio.StreamReader()
    data = encode(PING) + encode({"method": "exit"})
    stream.feed_data(data[:5])
    stream.feed_data(data[5:])
    stream.feed_eof()
    messages = [m async for m in read_messages(stream)]
    assert messages == [{"jsonrpc": "2.0", **PING}, {"jsonrpc": "2.0", "method": "exit"}]


TEXT = "# Title\r\nSee [a](a.md) and [a](a.md).\rlast\u2028same line\n"


def test_positions_count_the_protocols_lines_only() -> None:
    assert lines(TEXT) == ["# Title", "See [a](a.md) and [a](a.md).", "last\u2028same line", ""]
    assert position(TEXT, "[a]") == (1, 4)
    assert position(TEXT, "[a]", 2) == (1, 18)
    assert position(TEXT, "same") == (2, 5)  # U+2028 ends no line
    assert position(TEXT, "a", line=2) == (2, 1)
    assert one_based(position(TEXT, "[a]")) == (2, 5)
    assert lsp_position(TEXT, "[a]", shift=1) == {"line": 1, "character": 5}
    assert lsp_range(TEXT, "[a]") == {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}}
    with pytest.raises(AssertionError, match="not found"):
        position(TEXT, "[a]", 3)


def test_offsets_and_edits_follow_the_protocol() -> None:
    assert offset(TEXT, 1, 0) == TEXT.index("See")
    assert offset(TEXT, 0, 99) == TEXT.index("\r\n")  # past the line's end: its end
    assert offset(TEXT, 9, 0) == len(TEXT)
    assert apply_edit(TEXT, (1, 0), (1, 3), "Read") == TEXT.replace("See", "Read")
    assert apply_edit("a\nb\nc", (0, 1), (2, 0), "-") == "a-c"


def test_a_wait_that_times_out_says_what_it_waited_for() -> None:
    started = time.monotonic()
    with pytest.raises(WaitTimeout, match="waiting for the moon") as failure:
        wait_until(lambda: 0, 0.05, what="the moon")
    assert isinstance(failure.value, AssertionError) and isinstance(failure.value, TimeoutError)
    assert time.monotonic() - started < 5
    assert wait_until(lambda: "here", what="something") == "here"
    assert "the_moon_rose" in describe(lambda: the_moon_rose)  # what a wait given no `what` names


the_moon_rose = False


def test_a_wait_on_a_condition_wakes_when_it_is_notified() -> None:
    condition, box = threading.Condition(), []

    def put() -> None:
        with condition:
            box.append("x")
            condition.notify_all()

    threading.Timer(0.05, put).start()
    assert wait_until(lambda: list(box), 10, what="the box filled", condition=condition, interval=60) == ["x"]


async def test_an_async_wait_takes_coroutines_and_conditions() -> None:
    condition, box = asyncio.Condition(), []

    async def put() -> None:
        async with condition:
            box.append(1)
            condition.notify_all()

    asyncio.get_running_loop().call_later(0.05, lambda: asyncio.ensure_future(put()))
    assert await wait_until_async(lambda: sum(box), 10, what="a number", condition=condition) == 1

    async def answer() -> str:
        return "answer"
    assert await wait_until_async(answer, what="an answer") == "answer"
    with pytest.raises(WaitTimeout, match="never"):
        await wait_until_async(lambda: False, 0.05, what="never")


async def test_an_absence_is_shown_by_a_later_event_and_fails_when_the_thing_happened() -> None:
    events = ["milestone"]
    assert not_before(lambda: "milestone" in events, lambda: "unwanted" in events, what="the milestone",
                      unwanted_what="the unwanted thing")
    events.append("unwanted")
    with pytest.raises(AssertionError, match="the unwanted thing happened before the milestone"):
        not_before(lambda: "milestone" in events, lambda: "unwanted" in events, what="the milestone",
                   unwanted_what="the unwanted thing")
    with pytest.raises(AssertionError, match="happened before"):
        await not_before_async(lambda: True, lambda: ["it"], what="x", unwanted_what="y")


def test_a_watched_event_says_when_somebody_waits_on_it() -> None:
    event = WatchedEvent()
    waiter = threading.Thread(target=event.wait, args=(10,))
    assert not event.waiting.is_set()
    waiter.start()
    assert event.waiting.wait(10)
    event.set()
    waiter.join(10)
    assert not waiter.is_alive()
