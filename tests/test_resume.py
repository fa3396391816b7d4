"""A restart resumes from the resolved model the last start kept (`.docbridge/cache/model.pickle`), applying the
files changed since (a branch switch), and answers as a start from nothing does. A kept model that is not this
user's, or that holds anything but the model's classes, is never loaded."""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import shutil
from pathlib import Path
from typing import Any

from conftest import copy_fixture
from docbridge.engine.base.cache import write_sealed
from docbridge.engine.base.config import load_config
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.resume import _expect, model_path, write_model
from docbridge.engine.state.scan import scan_state
from lsp_client import Session, session
from support.positions import find

KEPT = Path(".docbridge/cache/model.pickle")


def _messages(s: Session) -> list[str]:
    return [m.message for m in s.client.log_messages]


async def _answers(s: Session, root: Path, opened: list[Path]) -> dict[str, Any]:
    """What a user sees of the whole model: the opened documents' diagnostics, doctor's report, the relations of
    a module and a document."""
    for path in opened:
        s.open(path)
    await s.until(lambda: all(path.as_uri() in s.client.diagnostics for path in opened), 60,
                  what="diagnostics for every opened document")
    doctor = await s.command("docbridge.doctor")
    return {"codes": {str(path.relative_to(root)): s.codes(path) for path in opened},
            "doctor": doctor,
            "invoice": await s.command("docbridge.lookup", "src/billing/invoice.ts", 1),
            "billing": await s.command("docbridge.lookup", "docs/billing.md", 1)}


async def test_a_restart_after_a_branch_switch_resumes_and_answers_as_a_fresh_start(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing, orders, refunds = root / "docs/billing.md", root / "docs/orders.md", root / "docs/refunds.md"
    async with session(root) as s:
        assert not any("resumed" in m for m in _messages(s))
        before = json.dumps(await s.command("docbridge.lookup", "docs/billing.md", 1))
    assert (root / KEPT).is_file(), "the shutdown waited for the model to be written"

    # another branch: a module gone, a page changed, a page new
    (root / "src/billing/tax.ts").unlink()
    orders.write_text(orders.read_text(encoding="utf-8") + "\nSee [the returns policy](./returns.md).\n",
                      encoding="utf-8")
    refunds.write_text("# Refunds\n\nRefunds follow the [tax rules](./billing.md#no-such-heading).\n",
                       encoding="utf-8")
    opened = [billing, orders, refunds]
    async with session(root) as s:
        assert any("resumed from the model kept by the last start, 3 changed since" in m for m in _messages(s))
        resumed = await _answers(s, root, opened)

    # the billing page mentions `calculateTax` in `src/billing/tax.ts`: a relation until the module is gone
    assert "module:src/billing/tax.ts" in before
    assert "module:src/billing/tax.ts" not in json.dumps(resumed["billing"])
    assert ("LINK_BROKEN", find(orders, "(./returns.md)")[0]) in resumed["codes"]["docs/orders.md"]
    assert ("LINK_ANCHOR_MISSING", 2) in resumed["codes"]["docs/refunds.md"]

    (root / KEPT).unlink()
    async with session(root) as s:
        assert not any("resumed" in m for m in _messages(s))
        fresh = await _answers(s, root, opened)
    assert resumed == fresh


def _same(a: ModelState, b: ModelState) -> list[str]:
    """The parts of two states that differ (the resolutions, their dependencies and every fact)."""
    differ = [name for name in ("documents", "modules", "dependents", "skipped")
              if dict(getattr(a, name)) != dict(getattr(b, name))]
    # a file whose resolution asked nothing: a scan records no keys for it, an applied change no entry
    if {path: keys for path, keys in a.deps.items() if keys} != {path: keys for path, keys in b.deps.items() if keys}:
        differ.append("deps")
    differ += [f"universe.{name}" for name in ("documents", "modules", "manifests", "tsconfigs", "navigation", "other",
                                               "owners", "reexporters", "basenames", "stems", "renamed")
               if dict(getattr(a.universe, name)) != dict(getattr(b.universe, name))]
    return differ


def _kept_scan(root: Path) -> ModelState:
    state = scan_state(root, load_config(root), resume=True)
    write_model(state)
    return state


def _age(root: Path) -> None:
    """Every file's time an hour back (a checkout made a while ago: none of them may change unseen)."""
    for path in root.rglob("*"):
        if path.is_file() and ".docbridge" not in path.parts:
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns - 3600 * 10**9, stat.st_mtime_ns - 3600 * 10**9))


def test_resumed_states_equal_fresh_scans_after_random_changes(tmp_path: Path) -> None:
    """Ten rounds on each fixture: a few files edited, removed or added, then the resumed state must equal, part by
    part, a scan from nothing of the same tree."""
    rng = random.Random(7)
    for fixture in ("acme", "monorepo"):
        root = copy_fixture(fixture, tmp_path)
        _age(root)
        _kept_scan(root)
        for round_ in range(10):
            files = sorted(p for p in root.rglob("*") if p.is_file() and ".docbridge" not in p.parts
                           and p.suffix in (".md", ".ts", ".tsx", ".json"))
            for path in rng.sample(files, 2):
                text = path.read_text(encoding="utf-8")
                if path.suffix == ".md":
                    path.write_text(text + f"\nSee [{round_}](./gone-{round_}.md) and `createInvoice`.\n",
                                    encoding="utf-8")
                elif path.suffix == ".json":
                    continue  # a manifest's edit must stay valid JSON: its own test is below
                else:
                    path.write_text(text + f"\nexport const added{round_} = {round_};\n", encoding="utf-8")
            victim = rng.choice([p for p in files if p.suffix in (".md", ".ts")])
            victim.unlink()
            page = root / f"docs/new-{round_}.md"
            page.parent.mkdir(exist_ok=True)
            page.write_text(f"# New {round_}\n\nSee [the victim](../{victim.relative_to(root)}).\n", encoding="utf-8")
            resumed = scan_state(root, load_config(root), resume=True)
            assert resumed.scan.resumed, (fixture, round_)
            fresh = scan_state(root, load_config(root), use_cache=False)
            assert _same(resumed, fresh) == [], (fixture, round_)
            _age(root)
            write_model(resumed)


def test_a_manifest_or_an_ignore_rule_changed_since_is_applied_or_scanned_again(tmp_path: Path) -> None:
    root = copy_fixture("monorepo", tmp_path)
    _age(root)
    _kept_scan(root)
    manifest = next(p for p in sorted(root.glob("packages/*/package.json")))
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"name": "', '"name": "renamed-'),
                        encoding="utf-8")
    resumed = scan_state(root, load_config(root), resume=True)
    assert resumed.scan.resumed
    assert _same(resumed, scan_state(root, load_config(root), use_cache=False)) == []
    _age(root)
    write_model(resumed)
    (root / ".gitignore").write_text("docs/\n", encoding="utf-8")  # the rules changed: nothing kept applies
    again = scan_state(root, load_config(root), resume=True)
    assert not again.scan.resumed
    assert _same(again, scan_state(root, load_config(root), use_cache=False)) == []


class _Planted:
    """What a hostile pickle would run on load (`os.system` called with a command that leaves a file)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_a_resumed_model_holds_one_copy_of_each_name_the_files_share(tmp_path: Path) -> None:
    """Each file's record is a pickle of its own: a module's id that several documents name, or a kind every
    relation has, must still be one string in the resumed model, as it is in a scan's (the kept model read back
    was a quarter larger than the scanned one)."""
    root = copy_fixture("acme", tmp_path)
    _age(root)
    _kept_scan(root)
    resumed = scan_state(root, load_config(root), resume=True)
    assert resumed.scan.resumed
    copies: dict[str, set[int]] = {}
    for resolution in resumed.documents.values():
        for relation in resolution.relations:
            for text in (relation.target, relation.kind, relation.confidence):
                copies.setdefault(text, set()).add(id(text))
    shared = {text: ids for text, ids in copies.items() if text.startswith("module:")}
    assert len(shared) >= 3 and "mentions" in copies  # module ids named by documents, and relation kinds
    assert {text: len(ids) for text, ids in copies.items() if len(ids) > 1} == {}


def _lookups_built(state: ModelState) -> set[str]:
    """The repository-wide lookups the universe of `state` has built (each is kept while no path comes or goes)."""
    u = state.universe
    built = {f"sorted:{name}" for name in u._sorted} | {f"routes:{name}" for name in u._routes} | \
        {f"suffixes:{name}" for name in u._suffixes}
    for name, value in (("fuzzy", u._fuzzy.choices), ("packages", u._packages.full), ("sites", u._roles.sites)):
        if value is not None:
            built.add(name)
    return built


def test_a_resumed_model_has_the_lookups_a_scan_builds_so_the_first_edit_does_not(tmp_path: Path) -> None:
    """A scan builds the repository-wide lookups (documentation sites, path suffixes, packages' names, routes) on
    the way; a resumed model did not, and the first edit after a restart built them on the editor's loop (half a
    second on babel, while the findings of every file were being derived beside it)."""
    root = copy_fixture("acme", tmp_path)
    _age(root)
    scanned = _kept_scan(root)
    resumed = scan_state(root, load_config(root), resume=True)
    assert resumed.scan.resumed
    expected = _lookups_built(scanned)
    assert {"sites", "packages", "suffixes:reversed-paths"} <= expected
    assert expected <= _lookups_built(resumed)


def test_a_kept_model_whose_references_name_nothing_is_never_loaded(tmp_path: Path) -> None:
    """A record refers to a name by its number among those written before it: a number past them, or anything
    but a number, is a damaged model, scanned as before."""
    root = copy_fixture("acme", tmp_path)
    _age(root)
    state = _kept_scan(root)

    for reference in (7, "planted", ("not", "a", "number")):
        class Referencing(pickle.Pickler):
            def persistent_id(self, obj: Any, reference: Any = reference) -> Any:
                return reference if obj == "planted" else None

        body = io.BytesIO()
        pickle.Pickler(body, protocol=5).dump(["a name"])  # the names the header is the first to use
        # a header of the right shape, whose one path is the reference
        Referencing(body, protocol=5).dump((("planted",), {}, {}, {}, 0, 0, ()))
        write_sealed(model_path(root), "resolved-model", None, _expect(state.config, state.universe.rules),
                     body=body.getvalue())
        assert not scan_state(root, load_config(root), resume=True).scan.resumed, reference


def test_a_kept_model_with_a_foreign_seal_or_foreign_classes_is_never_loaded(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    _age(root)
    state = _kept_scan(root)
    marker = tmp_path / "ran"
    path = model_path(root)
    # sealed with this user's key and carrying a call of os.system: refused by the unpickler, scanned as before
    write_sealed(path, "resolved-model", None, _expect(state.config, state.universe.rules),
                 body=pickle.dumps(_Planted(marker)))
    again = scan_state(root, load_config(root), resume=True)
    assert not again.scan.resumed and not marker.exists()
    # a model written by another user (or that came with the repository): its seal is not this user's
    write_model(state)
    header, _, body = path.read_bytes().partition(b"\n")
    path.write_bytes(header.replace(b'"seal": "', b'"seal": "0') + b"\n" + body)
    assert not scan_state(root, load_config(root), resume=True).scan.resumed
    # a corrupt one
    write_model(state)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert not scan_state(root, load_config(root), resume=True).scan.resumed
    shutil.rmtree(root / ".docbridge")
    assert not scan_state(root, load_config(root), resume=True).scan.resumed


def _link_added(root: Path) -> None:
    (root / "CLAUDE.md").symlink_to("AGENTS.md")  # walked as another name of AGENTS.md, not a document of its own


def _shrunk_past_the_limit(root: Path) -> None:
    (root / "docs/orders.md").write_text("# Orders\n\nShort now.\n", encoding="utf-8")


def _total_grown(root: Path) -> None:
    agents = root / "AGENTS.md"
    agents.write_text(agents.read_text(encoding="utf-8") + "\n" + "word " * 2000, encoding="utf-8")


def test_what_applying_changes_cannot_reproduce_gives_a_state_equal_to_a_fresh_scan(tmp_path: Path) -> None:
    """A link classed by the walk, a file over `limits.maxFileBytes` that shrinks (the pages linking to it must
    see it now), a tree that grows past `limits.maxTotalBytes`: resumed or scanned anew, never stale."""
    cases = {"link": (_link_added, None), "shrunk": (_shrunk_past_the_limit, "maxFileBytes"),
             "total": (_total_grown, "maxTotalBytes")}
    for name, (change, limit) in cases.items():
        root = copy_fixture("acme", tmp_path / name)
        config = root / "doc-bridge.config.json"
        if limit == "maxFileBytes":
            orders = root / "docs/orders.md"
            orders.write_text(orders.read_text(encoding="utf-8") + "x" * 5000, encoding="utf-8")
            settings = json.loads(config.read_text(encoding="utf-8"))
            settings.setdefault("limits", {})[limit] = 4000
            config.write_text(json.dumps(settings), encoding="utf-8")
        elif limit == "maxTotalBytes":
            total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and p.suffix in (".md", ".ts", ".tsx"))
            settings = json.loads(config.read_text(encoding="utf-8"))
            settings.setdefault("limits", {})[limit] = total + 1000
            config.write_text(json.dumps(settings), encoding="utf-8")
        _age(root)
        _kept_scan(root)
        change(root)
        resumed = scan_state(root, load_config(root), resume=True)
        assert _same(resumed, scan_state(root, load_config(root), use_cache=False)) == [], name


def test_a_file_replaced_between_the_scan_and_the_write_by_an_older_copy_is_read_again(tmp_path: Path) -> None:
    """The kept size and time are those the walk saw before the facts were read: a copy that keeps an older time
    (`cp -p`, `rsync -a`), put in place before the model is written, is not believed to be what was read."""
    root = copy_fixture("acme", tmp_path)
    _age(root)
    scanned = scan_state(root, load_config(root), resume=True)
    orders = root / "docs/orders.md"
    before = orders.stat()
    orders.write_text(orders.read_text(encoding="utf-8") + "\nSee [gone](./gone.md).\n", encoding="utf-8")
    os.utime(orders, ns=(before.st_atime_ns, before.st_mtime_ns - 10**9))
    write_model(scanned)
    resumed = scan_state(root, load_config(root), resume=True)
    assert resumed.scan.resumed
    assert _same(resumed, scan_state(root, load_config(root), use_cache=False)) == []


def test_writing_the_kept_model_waits_while_the_editor_waits_for_something(tmp_path: Path) -> None:
    """The server writes the kept model in the background. While a search index is built for a waiting search,
    each of the writer's pauses waits for it to end; while the editor is busy (a message heard a moment ago), each
    pause rests a little; at a shutdown, no pause waits. The model written is whole."""
    import threading
    import time

    from docbridge.lsp.folders import Waited
    root = copy_fixture("acme", tmp_path)
    _age(root)
    state = scan_state(root, load_config(root), resume=True)
    waited = Waited()
    pauses: list[float] = []

    def pause() -> None:
        waited.pause()
        pauses.append(time.perf_counter())

    build = waited.running()
    build.__enter__()  # a build starts before the writer
    writer = threading.Thread(target=write_model, args=(state, pause))
    writer.start()
    time.sleep(0.3)
    assert pauses == [] and writer.is_alive()  # its first pause waits for the build
    # before it began: its tables and the file it writes would be held beside the build's
    assert not list((root / KEPT).parent.glob(f".{KEPT.name}.*.tmp"))
    ended = time.perf_counter()
    build.__exit__(None, None, None)
    writer.join(10)
    assert not writer.is_alive() and pauses and min(pauses) >= ended
    resumed = scan_state(root, load_config(root), resume=True)
    assert resumed.scan.resumed and resumed.scan.applied == 0 and not _same(resumed, state)

    def timed_pause() -> float:
        started = time.perf_counter()
        waited.pause()
        return time.perf_counter() - started
    assert timed_pause() < Waited.YIELD_S / 2  # a quiet editor: no rest
    waited.heard()
    assert Waited.YIELD_S * 0.9 <= timed_pause() < Waited.QUIET_S  # a busy one: a short rest, not until quiet
    with waited.running():
        waited.close()
        assert timed_pause() < Waited.YIELD_S / 2  # shutting down: nothing waits, not even for a build
