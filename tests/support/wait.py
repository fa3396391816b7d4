"""Waiting in tests without guessing durations.

    wait_until(predicate, timeout, what=...)          until `predicate()` is truthy: woken by a condition when
    await wait_until_async(predicate, timeout, ...)   the observed thing has one, else polled at a short interval;
                                                      a timeout fails naming what was waited for
    not_before(milestone, unwanted, ...)              "X did not happen", proven without a sleep: wait for a
    await not_before_async(milestone, unwanted, ...)  positive event that only comes after the point where X
                                                      would have happened, then check X did not
    WatchedEvent                                      a threading.Event that says when somebody waits on it

A sleep stays only where time itself is what a test exercises (a file's mtime must differ, a quiet period the
test configures must pass); each such sleep says so where it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
TIMEOUT = 20.0  # seconds: ample for anything a test waits for on a loaded machine
POLL = 0.01  # seconds between two looks when nothing says that something changed


class WaitTimeout(AssertionError, TimeoutError):
    """What a wait that timed out raises: a test failure (AssertionError) that code catching TimeoutError sees."""


def describe(predicate: Callable[..., Any]) -> str:
    """The source of `predicate` (a lambda's line), for a failure message when the caller gave none."""
    try:
        return " ".join(inspect.getsource(predicate).split())
    except Exception:  # no source (built in, made by exec) or one inspect cannot cut out
        return repr(predicate)


def _timed_out(what: str, timeout: float, last: Any) -> WaitTimeout:
    return WaitTimeout(f"timed out after {timeout:g} s waiting for {what} (last seen: {last!r})")


def wait_until(predicate: Callable[[], T], timeout: float = TIMEOUT, *, what: str,
               condition: threading.Condition | None = None, interval: float = POLL) -> T:
    """Block until `predicate()` returns something truthy and return it. With `condition` (notified by whatever
    changes what the predicate reads) the predicate is checked each time it is notified; without one it is
    checked every `interval` seconds. Fails (WaitTimeout) after `timeout` seconds, naming `what`."""
    deadline = time.monotonic() + timeout
    if condition is not None:
        with condition:
            value = predicate()
            while not value:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timed_out(what, timeout, value)
                condition.wait(left)
                value = predicate()
            return value
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(what, timeout, value)
        time.sleep(min(interval, left))


async def wait_until_async(predicate: Callable[[], T | Awaitable[T]], timeout: float = TIMEOUT, *, what: str,
                           condition: asyncio.Condition | None = None, interval: float = POLL) -> T:
    """`wait_until` on an event loop. The predicate may be a coroutine function (a request whose answer is
    looked at), in which case it is polled; a plain predicate with `condition` is checked each time the
    condition is notified (the check and the wait happen without yielding, so no notification is lost)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    if condition is not None:
        async with condition:
            value: Any = predicate()
            assert not inspect.isawaitable(value), "a condition wakes plain predicates only"
            while not value:
                left = deadline - loop.time()
                if left <= 0:
                    raise _timed_out(what, timeout, value)
                with contextlib.suppress(TimeoutError):  # checked once more, then the deadline says it
                    await asyncio.wait_for(condition.wait(), left)
                value = predicate()
            return value  # type: ignore[no-any-return]
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[no-any-return]
        left = deadline - loop.time()
        if left <= 0:
            raise _timed_out(what, timeout, value)
        await asyncio.sleep(min(interval, left))


def _absent(unwanted: Callable[[], Any], what: str, unwanted_what: str) -> None:
    found = unwanted()
    assert not found, f"{unwanted_what} happened before {what}: {found!r}"


def not_before(milestone: Callable[[], T], unwanted: Callable[[], Any], timeout: float = TIMEOUT, *, what: str,
               unwanted_what: str, condition: threading.Condition | None = None, interval: float = POLL) -> T:
    """Show that `unwanted` did not happen: wait for `milestone`, a positive event the system reaches only after
    the point where the unwanted thing would have happened (a later response or notification, a log line, a
    file written), then assert that `unwanted()` is falsy. Returns the milestone's value."""
    value = wait_until(milestone, timeout, what=what, condition=condition, interval=interval)
    _absent(unwanted, what, unwanted_what)
    return value


async def not_before_async(milestone: Callable[[], T | Awaitable[T]], unwanted: Callable[[], Any],
                           timeout: float = TIMEOUT, *, what: str, unwanted_what: str,
                           condition: asyncio.Condition | None = None, interval: float = POLL) -> T:
    """`not_before` on an event loop."""
    value = await wait_until_async(milestone, timeout, what=what, condition=condition, interval=interval)
    _absent(unwanted, what, unwanted_what)
    return value


class WatchedEvent(threading.Event):
    """A threading.Event that also sets `waiting` when a thread starts waiting on it: a test can wait until the
    code under test blocks on the event (the positive event for "it waits and has not gone on")."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


__all__ = ["POLL", "TIMEOUT", "WaitTimeout", "WatchedEvent", "describe", "not_before", "not_before_async",
           "wait_until", "wait_until_async"]
