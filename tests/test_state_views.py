"""Views of a model state built once across threads: a caller on another thread waits for a build under way
(after a scan the server derives every finding in a worker while the editor's first edits arrive), and an edit
made meanwhile derives its findings from that build instead of from nothing."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture
from docbridge.engine.state.model_state import ModelState, Pending
from docbridge.engine.state.transitions import Change, apply_changes
from docbridge.engine.views.reconcile import FINDINGS_INDEX, FindingsIndex, findings_index_of
from docbridge.engine.workspace import Workspace
from support.wait import WatchedEvent


def _state(tmp_path: Path) -> ModelState:
    workspace = Workspace(copy_fixture("acme", tmp_path))
    workspace.scan()
    return workspace.state


def test_a_view_being_built_is_waited_for_not_built_twice(tmp_path: Path) -> None:
    state = _state(tmp_path)
    release, started = threading.Event(), threading.Event()
    builds: list[str] = []

    def slow() -> object:
        builds.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        return object()

    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(state.view("slow", slow)), name="first")
    first.start()
    assert started.wait(10)
    under_way = state._views["slow"]
    assert type(under_way) is Pending
    under_way.done = watched = WatchedEvent()  # says when a caller starts waiting for the build
    second = threading.Thread(target=lambda: results.append(state.view("slow", slow)), name="second")
    second.start()
    assert watched.waiting.wait(10), "the second caller never waited for the build under way"
    assert second.is_alive() and not state.has_view("slow")  # waiting; a view under way is not "had"
    release.set()
    first.join(10)
    second.join(10)
    assert builds == ["first"] and len(results) == 2 and results[0] is results[1]
    assert state.has_view("slow") and state.view("slow", slow) is results[0]


def test_a_failed_build_is_built_again_by_the_one_waiting(tmp_path: Path) -> None:
    state = _state(tmp_path)
    started, release = threading.Event(), threading.Event()

    def failing() -> object:
        started.set()
        release.wait(10)
        raise RuntimeError("the build failed")

    def failed() -> None:
        with pytest.raises(RuntimeError):
            state.view("flaky", failing)

    first = threading.Thread(target=failed)
    first.start()
    assert started.wait(10)
    results: list[Any] = []
    second = threading.Thread(target=lambda: results.append(state.view("flaky", lambda: "built again")))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert results == ["built again"]
    assert state.view("flaky", lambda: "third") in ("built again", "third")  # the failed build stored nothing


def test_an_edit_made_while_the_findings_are_derived_starts_from_them(tmp_path: Path) -> None:
    state = _state(tmp_path)
    pending = Pending()
    pending.done = watched = WatchedEvent()  # says when the edit's derivation starts waiting for it
    state._views[FINDINGS_INDEX.name] = pending  # the derivation after a scan, under way in a worker
    text = (state.root / "docs/orders.md").read_text(encoding="utf-8") + "\nSee [gone](./gone.md).\n"
    edited = apply_changes(state, [Change("docs/orders.md", text)])[0]
    seed = edited.seeds.get(FINDINGS_INDEX.name)
    assert seed is not None and seed.value is pending  # not dropped: the child waits for it

    waited: list[bool] = []

    def finish() -> None:  # finishes once the edit's derivation waits for it (and in any case, never to hang it)
        waited.append(watched.waiting.wait(10))
        value = FindingsIndex.derive(state, None)
        pending.value = value
        state._views[FINDINGS_INDEX.name] = value
        pending.done.set()

    worker = threading.Thread(target=finish)
    worker.start()
    derived = findings_index_of(edited)
    worker.join(10)
    assert waited == [True], "the edit's derivation did not wait for the one under way"
    base = state._views[FINDINGS_INDEX.name]
    assert derived.base is not None and derived.base() is base  # derived from the scan's, not from nothing
    assert derived.changed_since(base) == {"docs/orders.md"}
    assert any(f.code == "LINK_BROKEN" and "gone.md" in f.message for f in derived.by_path["docs/orders.md"])
    fresh = FindingsIndex.derive(edited, None)
    assert {p: sorted(f.fingerprint for f in fs) for p, fs in derived.by_path.items()} == {
        p: sorted(f.fingerprint for f in fs) for p, fs in fresh.by_path.items()}
