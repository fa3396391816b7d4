"""Bulk builds pause the cyclic garbage collector and freeze what they built (docbridge.engine.base.heap)."""

from __future__ import annotations

import gc
import random
import sys
import threading
from pathlib import Path

from conftest import copy_fixture
from docbridge.engine.base.heap import SORT_RUN, bulk, sorted_in_runs
from docbridge.engine.base.model import Span
from docbridge.engine.state.transitions import INLINE_CHARS, Change, apply_changes
from docbridge.engine.workspace import Workspace


def test_collection_is_paused_during_a_build_and_resumes_after_the_last_of_several() -> None:
    assert gc.isenabled()
    inside = threading.Event()
    leave = threading.Event()

    def other_build() -> None:
        with bulk():
            inside.set()
            leave.wait(10)

    with bulk():
        assert not gc.isenabled()
        worker = threading.Thread(target=other_build)
        worker.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other build still runs
    leave.set()
    worker.join(10)
    assert gc.isenabled()


def test_a_build_freezes_what_it_built_and_keeps_collection_off_when_it_was_off() -> None:
    before = gc.get_freeze_count()
    with bulk():
        kept = [[n] for n in range(1000)]
    assert gc.get_freeze_count() >= before + 1000 and kept
    gc.disable()
    try:
        with bulk():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_scan_its_findings_and_its_search_index_run_without_a_collection(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    warm = Workspace(root, use_cache=False)  # the modules a build imports on first use are imported here
    warm.scan()
    warm.findings_index()
    warm.retriever()
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        ws = Workspace(root, use_cache=False)
        ws.scan()
        ws.findings_index()
        ws.retriever()
    finally:
        gc.callbacks.remove(count)
    assert collections == [] and gc.isenabled()


def test_what_a_session_builds_and_drops_is_freed_without_a_collection(tmp_path: Path) -> None:
    """What a build allocates is frozen: a reference cycle among it is never collected, whatever it holds (the
    walk's list of every file, a replaced search index with all its postings). So a scan, its findings, a search
    index patched after an edit and rebuilt once edits pause, all dropped, leave no cyclic garbage."""
    from collections import Counter

    from docbridge.engine.base.heap import built
    from docbridge.engine.retrieval.rank import COMBINED
    root = copy_fixture("acme", tmp_path)
    text = (root / "docs/billing.md").read_text(encoding="utf-8")

    def session() -> None:
        ws = Workspace(root, use_cache=False)
        ws.scan()
        ws.findings_index()
        ws.retriever().search("invoce totals", 5)
        ws.update("docs/billing.md", text + "\nAn edit.\n")
        patched = ws.retriever()
        patched.search("invoce totals", 5)
        ws.state.replace_view(COMBINED, built(patched.rebuilt)())
        ws.retriever().search("invoce totals", 5)

    session()  # what is made once (classes a first use creates) is left by this one
    gc.unfreeze()  # and what anything before froze, the test runner's too
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        session()
        gc.unfreeze()
        gc.collect()
        left = Counter(type(o).__qualname__ for o in gc.garbage)
        where = [(o.__qualname__, o.__code__.co_firstlineno) for o in gc.garbage if hasattr(o, "__code__")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not left, (left, where)


def test_a_large_buffer_is_applied_without_a_collection_and_a_small_edit_is_not_paused(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    big = "".join(f"Line {i}: `calculateTax` and [billing](billing.md#billing).\n\n" for i in range(2000))
    assert len(big) > INLINE_CHARS
    paused: list[bool] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            paused.append(True)

    apply_changes(ws.state, [Change("docs/small.md", "# Small\n\nSee `calculateTax`.\n")])  # warms imports
    gc.callbacks.append(watch)
    try:
        state, resolved = apply_changes(ws.state, [Change("docs/big.md", big)])
    finally:
        gc.callbacks.remove(watch)
    assert "docs/big.md" in resolved and state.facts["docs/big.md"].path == "docs/big.md"
    assert paused == [] and gc.isenabled()
    frozen = gc.get_freeze_count()
    apply_changes(state, [Change("docs/small.md", "# Small\n\nSee `calculateTax` twice.\n")])
    assert gc.get_freeze_count() <= frozen  # an ordinary edit freezes nothing (freed frozen objects leave)


def test_a_sort_in_runs_is_the_sort() -> None:
    rng = random.Random(7)
    pairs = [(rng.randrange(50), n) for n in range(3 * SORT_RUN + 17)]
    assert sorted_in_runs(pairs, key=lambda p: p[0]) == sorted(pairs, key=lambda p: p[0])  # stable: equal keys
    assert sorted_in_runs(set(pairs)) == sorted(set(pairs))
    assert sorted_in_runs(pairs[:10]) == sorted(pairs[:10]) and sorted_in_runs([]) == []


def test_findings_share_their_field_names_and_references_keep_what_they_were_read_from(tmp_path: Path) -> None:
    """Held by the tens of thousands on a large tree: a finding's values sit in a dictionary whose keys every finding
    shares (pydantic's own construction gives each a dictionary of its own, twice the size), and a reference to a
    link or an inline code span keeps that fact as its place instead of a span of its own."""
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    findings = [f for fs in ws.findings_index().by_path.values() for f in fs]
    assert findings
    for finding in findings:
        assert sys.getsizeof(finding.__dict__) < sys.getsizeof(dict(finding.__dict__))  # a key-sharing dictionary
        assert finding.model_fields_set == set(type(finding).model_fields)
        assert type(finding).model_validate_json(finding.model_dump_json()) == finding
    state = ws.state
    read_from = 0
    for path, resolution in state.documents.items():
        facts = state.universe.documents[path]
        places = {id(fact) for fact in (*facts.links, *facts.code_spans)}
        for reference in resolution.references:
            if reference.origin in ("link", "image", "code", "link-text"):
                assert id(reference.at) in places
                read_from += 1
            assert reference.span == Span(reference.at.line, reference.at.column, reference.at.end_line,
                                          reference.at.end_column)
    assert read_from > 20
