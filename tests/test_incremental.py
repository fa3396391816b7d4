"""Determinism, the facts cache, and incremental updates checked against a from-scratch oracle."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

from conftest import copy_fixture, docbridge, docbridge_json
from docbridge.engine.workspace import Workspace
from support.incremental import edit_and_rescan


def _without_reuse(snapshot: Any) -> dict[str, Any]:
    data = snapshot.to_json_obj()
    data["coverage"].pop("reuse")
    return data


def test_two_scans_of_an_unchanged_tree_are_identical_and_the_second_parses_nothing(acme: Path) -> None:
    first = docbridge_json("scan", "--root", str(acme), "--json")
    snapshot_one = (acme / ".docbridge" / "snapshot.json").read_text()
    second = docbridge_json("scan", "--root", str(acme), "--json")
    snapshot_two = json.loads((acme / ".docbridge" / "snapshot.json").read_text())
    assert first["content_hash"] == second["content_hash"] == snapshot_two["content_hash"]
    assert first["reuse"]["parsed"] == 51 and first["reuse"]["reused"] == 0
    assert second["reuse"] == {"status": "complete", "reused": 51, "parsed": 0,
                               "reason": "Reused 51 of 51 file(s). Nothing needed re-parsing."}
    assert snapshot_two["coverage"]["reuse"]["status"] == "complete"  # the artifact says so too
    one = json.loads(snapshot_one)
    one["coverage"].pop("reuse")
    snapshot_two["coverage"].pop("reuse")
    assert one == snapshot_two


def test_a_cold_scan_without_the_cache_gives_the_same_hash(acme: Path) -> None:
    warm = docbridge_json("scan", "--root", str(acme), "--json")
    cold = docbridge_json("scan", "--root", str(acme), "--json", "--no-cache")
    assert warm["content_hash"] == cold["content_hash"]


def test_editing_one_file_reparses_exactly_that_file(acme: Path) -> None:
    docbridge_json("scan", "--root", str(acme), "--json")
    doc = acme / "docs" / "orders.md"
    doc.write_text(doc.read_text() + "\nSee also `src/billing/tax.ts`.\n")
    summary = docbridge_json("scan", "--root", str(acme), "--json")
    assert summary["reuse"]["parsed"] == 1 and summary["reuse"]["reused"] == 50
    assert "Re-parsed: docs/orders.md." in summary["reuse"]["reason"]


def _cache_lines(root: Path) -> dict[str, bytes]:
    """The facts cache's entries as the bytes of their lines, by path (`"path"<TAB>entry` per file)."""
    body = (root / ".docbridge" / "cache" / "facts.json").read_bytes().partition(b"\n")[2]
    lines = body.split(b"\n")
    assert lines[-1] == b"" and all(b"\t" in line for line in lines[:-1])
    paths = [json.loads(line.split(b"\t", 1)[0]) for line in lines[:-1]]
    assert paths == sorted(paths)
    return dict(zip(paths, lines[:-1], strict=True))


def test_the_facts_cache_keeps_a_line_per_file_and_rewrites_only_what_changed(acme: Path) -> None:
    odd = acme / "docs" / 'a "quoted"\\ name\twith a tab.md'
    odd.write_text("# Odd\n\nSee [billing](billing.md).\n", encoding="utf-8")
    first = docbridge_json("scan", "--root", str(acme), "--json")
    before = _cache_lines(acme)
    assert len(before) == first["reuse"]["parsed"] == 52 and 'docs/a "quoted"\\ name\twith a tab.md' in before
    doc = acme / "docs" / "orders.md"
    doc.write_text(doc.read_text(encoding="utf-8") + "\nSee also `src/billing/tax.ts`.\n", encoding="utf-8")
    summary = docbridge_json("scan", "--root", str(acme), "--json")
    assert summary["reuse"]["parsed"] == 1 and summary["reuse"]["reused"] == 51  # the odd name is read back too
    after = _cache_lines(acme)
    assert {path for path in after if after[path] != before[path]} == {"docs/orders.md"}
    odd.unlink()
    assert docbridge_json("scan", "--root", str(acme), "--json")["reuse"]["reused"] == 51
    assert set(_cache_lines(acme)) == set(after) - {'docs/a "quoted"\\ name\twith a tab.md'}


def test_a_cache_written_whole_by_an_older_version_is_rebuilt(acme: Path) -> None:
    docbridge_json("scan", "--root", str(acme), "--json")
    cache = acme / ".docbridge" / "cache" / "facts.json"
    head, _, _ = cache.read_bytes().partition(b"\n")
    header = json.loads(head)
    header.pop("layout")  # what the whole-JSON cache's header held; its payload a single object
    body = json.dumps({path: json.loads(line.split(b"\t", 1)[1])
                       for path, line in _cache_lines(acme).items()}).encode()
    digest = hashlib.sha256(body).hexdigest()  # sealed with this user's key: only the layout is old
    key = Path(os.environ["DOCBRIDGE_SEAL_KEY_FILE"]).read_bytes()
    header.update(sha256=digest, seal=hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest())
    cache.write_bytes(json.dumps(header).encode() + b"\n" + body)
    assert docbridge_json("scan", "--root", str(acme), "--json")["reuse"]["parsed"] == 51
    assert docbridge_json("scan", "--root", str(acme), "--json")["reuse"]["parsed"] == 0


def test_a_corrupt_cache_is_ignored_and_rebuilt(acme: Path) -> None:
    docbridge_json("scan", "--root", str(acme), "--json")
    cache = acme / ".docbridge" / "cache" / "facts.json"
    data = bytearray(cache.read_bytes())
    data[-10:] = b"##########"
    cache.write_bytes(bytes(data))
    summary = docbridge_json("scan", "--root", str(acme), "--json")
    assert summary["reuse"]["parsed"] == 51  # nothing trusted from a cache that fails its hash
    cache.write_bytes(b'{"kind": "facts-cache", "format": 999}\n{}')
    assert docbridge_json("scan", "--root", str(acme), "--json")["reuse"]["parsed"] == 51
    assert docbridge_json("scan", "--root", str(acme), "--json")["reuse"]["parsed"] == 0


def test_the_snapshot_on_disk_is_rewritten_when_it_was_tampered_with(acme: Path) -> None:
    first = docbridge_json("scan", "--root", str(acme), "--json")
    target = acme / ".docbridge" / "snapshot.json"
    target.write_text("{}")
    second = docbridge_json("scan", "--root", str(acme), "--json")
    assert json.loads(target.read_text())["content_hash"] == first["content_hash"] == second["content_hash"]


# ------------------------------------------------------------------------------------------------ oracle

MODULE_TEMPLATE = "import {{ {symbol} }} from '{spec}';\n\nexport function {name}(): number {{\n  return 1;\n}}\n"


def _random_edit(rng: random.Random, root: Path, ws: Workspace, step: int) -> tuple[str, str | None]:
    """One edit a person might make: returns (path, new text or None when the file is deleted)."""
    documents = sorted(ws.universe.documents)
    modules = sorted(p for p in ws.universe.modules if p.endswith(".ts"))
    choice = rng.random()
    if choice < 0.3 and documents:
        path = rng.choice(documents)
        text = (root / path).read_text(encoding="utf-8")
        module = rng.choice(modules)
        symbols = [e.name for e in ws.universe.modules[module].exports if e.declared and e.name != "default"]
        other = rng.choice(documents)
        addition = rng.choice([
            f"\nSee `{module}`.\n",
            f"\nCall `{rng.choice(symbols)}`.\n" if symbols else "\nNothing.\n",
            f"\nRead [this](/{other}#{rng.choice(['overview', 'setup', 'nope'])}).\n",
            f"\nThe `{module.rsplit('/', 1)[0]}` area.\n",
            f"\nA typo: `{module.replace('src/', 'scr/')}`.\n",
            "\n## A new heading\n",
        ])
        return path, text + addition
    if choice < 0.5 and modules:
        path = rng.choice(modules)
        text = (root / path).read_text(encoding="utf-8")
        if rng.random() < 0.5:
            return path, text + f"\nexport const added{step} = {step};\n"
        lines = [line for line in text.split("\n") if not line.startswith("export const")]
        return path, "\n".join(lines)
    if choice < 0.65:
        target = rng.choice(modules)
        spec = "../" + target.removeprefix("src/").removesuffix(".ts") + ".js"
        name = f"generated{step}"
        return f"src/extra/gen{step}.ts", MODULE_TEMPLATE.format(symbol="x", spec=spec, name=name)
    if choice < 0.78:
        module = rng.choice(modules)
        return f"docs/new-{step}.md", f"# New {step}\n\nAbout `{module}` and [billing](billing.md#taxes).\n"
    if choice < 0.9 and len(documents) > 3:
        return rng.choice([d for d in documents if d != "README.md"]), None
    return rng.choice(modules), None


def test_incremental_updates_equal_a_fresh_scan_of_the_edited_tree(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    rng = random.Random(20261129)
    for step in range(60):
        path, text = _random_edit(rng, root, ws, step)
        fresh = edit_and_rescan(ws, root, path, text)
        incremental, scratch = _without_reuse(ws.snapshot()), _without_reuse(fresh.snapshot())
        if incremental != scratch:
            for key in ("entities", "relations", "coverage"):
                assert incremental[key] == scratch[key], f"step {step}: {path} diverged in {key}"
        assert ws.snapshot().content_hash == fresh.snapshot().content_hash, f"step {step}: {path}"
        # findings are refreshed incrementally too (what the language server publishes)
        live = [f.model_dump(mode="json") for f in ws.findings()]
        assert live == [f.model_dump(mode="json") for f in fresh.findings()], f"step {step}: {path} findings"
        index = ws.findings_index()  # the count a status line reads, kept from one index to the next
        assert index.total == sum(len(found) for found in index.by_path.values()) == \
            fresh.findings_index().total, f"step {step}: {path} total"


def test_an_update_reresolves_only_what_can_change(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    # a body edit in a module (no export added or removed) re-resolves that module alone
    path = "src/billing/tax.ts"
    report = ws.update(path, (root / path).read_text() + "\n// comment\n")
    assert report.resolved == [path]
    # renaming a heading re-resolves the documents that link to that document's anchors
    doc = "docs/configuration.md"
    text = (root / doc).read_text().replace("## Environment variables", "## Environment")
    report = ws.update(doc, text)
    assert "docs/configuration.md" in report.resolved and "docs/storage.md" in report.resolved
    assert "docs/billing.md" not in report.resolved


def test_scan_then_delete_a_linked_document(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    shutil.rmtree(root / "docs" / "guias")
    result = docbridge("scan", "--root", str(root), "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["entities"]["document"] == 14


def test_paths_that_appear_and_modules_that_grow_too_large_match_a_fresh_scan(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    # doc-bridge.config.json owns `src/shipping`, which does not exist: a plain file appearing there answers it
    assert [f.code for f in ws.findings() if "`src/shipping`" in f.message] == ["OWNERSHIP_PATH_UNOBSERVED"]
    (root / "src/shipping").mkdir()
    (root / "src/shipping/notes.txt").write_text("carriers to be decided\n", encoding="utf-8")
    ws.update("src/shipping/notes.txt")
    assert not [f for f in ws.findings() if "`src/shipping`" in f.message]
    # a module edited past the size cap leaves the model (and its area) as a fresh scan would
    module = "src/util/money.ts"
    huge = (root / module).read_text(encoding="utf-8") + "// " + "x" * ws.config.limits.max_file_bytes + "\n"
    (root / module).write_text(huge, encoding="utf-8")
    ws.update(module, huge)
    fresh = Workspace(root, use_cache=False)
    fresh.scan()
    assert fresh.skipped.get(module) == "too-large"
    assert _without_reuse(ws.snapshot()) == _without_reuse(fresh.snapshot())
    assert [f.model_dump(mode="json") for f in ws.findings()] == [f.model_dump(mode="json") for f in fresh.findings()]


def test_a_relation_declared_or_withdrawn_by_an_edit_changes_the_check_scope_as_a_fresh_scan_does(
        tmp_path: Path) -> None:
    """The scope of `check` (`library` unless some document declares relations) follows edits: read from the
    documents an edit changed, not from every document again, and equal to a fresh scan's after each edit."""
    from docbridge.engine.views.reconcile import check_scope
    root = copy_fixture("statekit", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    assert check_scope(ws.state) == "library"
    path = "docs/guide/react.md"
    original = (root / path).read_text(encoding="utf-8")
    declaring = ("---\ndocbridge:\n  relations:\n    - from: packages/core/src/store/create.ts\n"
                 "      to: packages/core/src/events/notify.ts\n---\n" + original)
    for text, scope in ((declaring, "all"), (original + "\nMore prose.\n", "library"), (declaring, "all")):
        ws.findings()  # the scope of this state, which the next one starts from
        fresh = edit_and_rescan(ws, root, path, text)
        assert check_scope(ws.state) == check_scope(fresh.state) == scope
    fresh = edit_and_rescan(ws, root, path, None)  # the declaring page deleted
    assert check_scope(ws.state) == check_scope(fresh.state) == "library"
