"""Bad input never crashes and never loses data: each case gets a counted reason, a note or a clear error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, docbridge, docbridge_json, make_repo
from docbridge.engine.base.config import ConfigError, load_config
from docbridge.engine.workspace import Workspace

SECRET = "TOP-SECRET-OUTSIDE-THE-ROOT-4411"


def scan(root: Path) -> dict:
    summary = docbridge_json("scan", "--root", str(root), "--json")
    summary["snapshot_data"] = json.loads((root / ".docbridge" / "snapshot.json").read_text())
    return summary


def test_binary_undecodable_and_oversized_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "bad"}',
        "docs/binary.md": b"# Title\x00\x01\x02 binary",
        "src/a/latin1.ts": "export const caf\xe9 = 1;\n".encode("latin-1"),
        "docs/huge.md": "# Huge\n\n" + ("word " * 230_000),
        "docs/ok.md": "# Fine\n\nSee [binary](binary.md) and [huge](huge.md).\n",
    })
    summary = scan(root)
    assert summary["skipped"] == {"binary": 1, "invalid-utf8": 1, "too-large": 1}
    skipped = {s["path"]: s["reason"] for s in summary["snapshot_data"]["coverage"]["skipped"]}
    assert skipped == {"docs/binary.md": "binary", "src/a/latin1.ts": "invalid-utf8", "docs/huge.md": "too-large"}
    # the files still exist: links to them are not broken
    assert summary["unresolved"] == {}
    assert summary["entities"]["document"] == 1


def test_size_cap_is_configurable(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "doc-bridge.config.json": '{"limits": {"maxFileBytes": 100}}',
        "docs/small.md": "# Small\n",
        "docs/big.md": "# Big\n\n" + "x" * 200,
    })
    assert scan(root)["skipped"] == {"too-large": 1}


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_symlink_loops_and_links_out_of_the_root_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_repo(outside, {"secret.md": f"# Secret\n\n{SECRET}\n", "lib/secret.ts": f"export const s = '{SECRET}';\n"})
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "links"}',
        "docs/guide.md": "# Guide\n\n[escape](../../outside/secret.md) and [up](../../../../etc/passwd)\n",
        "src/core/a.ts": "export const a = 1;\n",
    })
    (root / "docs" / "loop").symlink_to(root / "docs")  # a directory that contains itself
    (root / "docs" / "secret.md").symlink_to(outside / "secret.md")
    (root / "src" / "outside").symlink_to(outside / "lib")
    # inside: it exists, and is the file it shows (not a second module declaring the same names)
    (root / "src" / "core" / "alias.ts").symlink_to(root / "src" / "core" / "a.ts")
    summary = scan(root)
    skipped = {s["path"]: s["reason"] for s in summary["snapshot_data"]["coverage"]["skipped"]}
    assert skipped["docs/secret.md"] == "symlink-outside-root"
    assert skipped["src/outside"] == "symlink-outside-root"
    assert skipped["docs/loop"] == "symlink-loop"
    text = (root / ".docbridge" / "snapshot.json").read_text()
    assert SECRET not in text
    cache = (root / ".docbridge" / "cache" / "facts.json").read_text()
    assert SECRET not in cache
    modules = {e["id"] for e in summary["snapshot_data"]["entities"] if e["kind"] == "module"}
    assert modules == {"module:src/core/a.ts"}
    # both links leave the repository: unresolved, never read
    assert summary["unresolved"] == {"links": 2}


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_scan_in_worker_processes_reads_through_links_as_one_process_does(tmp_path: Path) -> None:
    """Workers read a folder's real path once for all its files: a folder inside the root is read under its own
    name even when a link to it comes first, one a link takes out of the root is not read, and the model is the
    one a single process builds."""
    from docbridge.engine.state.scan import POOL_THRESHOLD
    outside = tmp_path / "outside"
    make_repo(outside, {"lib/secret.ts": f"export const s = '{SECRET}';\n"})
    files: dict[str, str | bytes] = {"package.json": '{"name": "pooled"}'}
    for index in range(POOL_THRESHOLD // 2 + 20):
        files[f"docs/real/page{index:03d}.md"] = f"# Page {index}\n\nSee `src/core/m{index:03d}.ts`.\n"
        files[f"src/core/m{index:03d}.ts"] = f"export const value{index} = {index};\n"
    root = make_repo(tmp_path / "repo", files)
    (root / "docs" / "mirror").symlink_to(root / "docs" / "real", target_is_directory=True)
    (root / "src" / "outside").symlink_to(outside / "lib", target_is_directory=True)
    pooled = docbridge_json("scan", "--root", str(root), "--json", "--jobs", "2", "--no-cache")
    snapshot = json.loads((root / ".docbridge" / "snapshot.json").read_text())
    single = docbridge_json("scan", "--root", str(root), "--json", "--jobs", "1", "--no-cache")
    assert pooled["entities"] == single["entities"]
    assert snapshot == json.loads((root / ".docbridge" / "snapshot.json").read_text())
    documents = {e["id"] for e in snapshot["entities"] if e["kind"] == "document"}
    # the folder is known by its own name; the link to it is that folder shown twice
    assert len(documents) == POOL_THRESHOLD // 2 + 20 and "document:docs/real/page007.md" in documents
    skipped = {s["path"]: s["reason"] for s in snapshot["coverage"]["skipped"]}
    assert skipped["docs/mirror"] == "symlink-duplicate"
    assert skipped["src/outside"] == "symlink-outside-root"
    assert SECRET not in (root / ".docbridge" / "snapshot.json").read_text()


def test_malformed_frontmatter_is_a_note_not_a_crash(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "docs/a.md": "---\ntitle: [oops\n---\n# A\n\nMentions `src/x/y.ts`.\n",
        "src/x/y.ts": "export const y = 1;\n",
    })
    summary = scan(root)
    assert summary["relations"].get("mentions") == 1  # the body still counts
    doc = next(e for e in summary["snapshot_data"]["entities"] if e["id"] == "document:docs/a.md")
    assert doc["frontmatter"] == {}


def test_an_empty_repository_scans_to_an_empty_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    summary = scan(root)
    assert summary["entities"] == {} and summary["relations"] == {}
    assert summary["files"]["seen"] == 0


def test_a_repository_without_package_json_still_gets_areas(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "src/api/server.js": "const x = require('./x.js');\nmodule.exports = { start };\n",
        "src/api/x.js": "module.exports = {};\n",
        "README.md": "# Plain\n\nThe server lives in `src/api/server.js`.\n",
    })
    summary = scan(root)
    assert summary["entities"] == {"area": 1, "document": 1, "module": 2}
    notes = {n["scope"]: n["reason"] for n in summary["snapshot_data"]["coverage"]["notes"]}
    assert "No package.json" in notes["packages"]


def test_gitignore_and_configured_ignore_globs(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        ".gitignore": "tmp/\n*.log.md\n!keep.log.md\n",
        "doc-bridge.config.json": '{"ignore": ["docs/drafts/**"]}',
        "docs/a.md": "# A\n",
        "docs/drafts/wip.md": "# WIP\n",
        "docs/x.log.md": "# log\n",
        "docs/keep.log.md": "# keep\n",
        "tmp/scratch.md": "# scratch\n",
        "sub/.gitignore": "local.md\n",
        "sub/local.md": "# local\n",
        "sub/shared.md": "# shared\n",
        "node_modules/pkg/readme.md": "# dep\n",
        ".hidden/notes.md": "# hidden\n",
    })
    documents = {e["id"] for e in scan(root)["snapshot_data"]["entities"] if e["kind"] == "document"}
    assert documents == {"document:docs/a.md", "document:docs/keep.log.md", "document:sub/shared.md"}


def test_invalid_configuration_is_a_usage_error_naming_the_key(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"doc-bridge.config.json": json.dumps({
        "routing": {"options": {"ownership": {"billing": {"path": "src/billing", "checks": "npm test"}}}}})})
    result = docbridge("scan", "--root", str(root))
    assert result.returncode == 2
    assert "routing.options.ownership.billing.checks" in result.stderr
    (root / "doc-bridge.config.json").write_text('{\n  "analysis": {"areas": {"depth": 0}}\n}')
    result = docbridge("scan", "--root", str(root))
    assert result.returncode == 2 and "analysis.areas.depth" in result.stderr
    (root / "doc-bridge.config.json").write_text('{\n  "corpus": {,\n}')
    result = docbridge("scan", "--root", str(root))
    assert result.returncode == 2 and "doc-bridge.config.json:2:" in result.stderr and "invalid JSON" in result.stderr


def test_config_parses_the_established_format(tmp_path: Path) -> None:
    from conftest import FIXTURES
    config = load_config(FIXTURES / "acme")
    assert [r.id for r in config.ownership] == ["acme-api", "acme-billing", "acme-orders", "acme-shipping"]
    billing = config.ownership[1]
    assert (billing.path, billing.checks, billing.agent_doc) == (
        "src/billing", ("npm test -- billing",), "docs/for-agents/billing.md")
    assert [i.id for i in config.intents] == ["find-endpoint"]
    assert config.changes[0].start_here == "src/billing/tax.ts"
    with pytest.raises(ConfigError):
        make_repo(tmp_path, {"doc-bridge.config.json": '{"routing": {"options": {"ownership": {"x": {}}}}}'})
        load_config(tmp_path)


def test_root_that_is_not_a_directory(tmp_path: Path) -> None:
    result = docbridge("scan", "--root", str(tmp_path / "missing"))
    assert result.returncode == 2 and "is not a directory" in result.stderr


def test_update_with_a_file_outside_or_ignored_is_a_no_op(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"docs/a.md": "# A\n", ".gitignore": "tmp/\n"})
    ws = Workspace(root, use_cache=False)
    ws.scan()
    assert not ws.update("../outside.md", "# x").changed
    assert not ws.update("tmp/x.md", "# x").changed
    assert not ws.update("node_modules/x/readme.md", "# x").changed
    assert ws.update("docs/b.md", "# B\n").changed


def test_a_file_name_that_is_not_utf8_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """git keeps a file name's bytes as they are: a name that is not UTF-8 cannot be written in an artifact, a
    URI or JSON, and crashed `scan` and `check`. Such a file (or folder) is skipped, listed under its name as
    UTF-8 reads it; the rest is scanned and checked."""
    root = make_repo(tmp_path / "repo", {
        "docs/guide.md": "# Guide\n\nSee [the odd page](./gone.md).\n",
        "src/core/value.ts": "export const value = 1;\n",
    })
    (Path(os.fsdecode(bytes(root / "docs") + b"/bad\xffname.md"))).write_bytes(b"# Bad\n")
    odd_folder = Path(os.fsdecode(bytes(root / "src") + b"/we\xfeird"))
    odd_folder.mkdir()
    (odd_folder / "mod.ts").write_text("export const x = 1;\n")
    docbridge_json("scan", "--root", str(root), "--json")
    snapshot = json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    skipped = {s["path"]: s["reason"] for s in snapshot["coverage"]["skipped"]}
    assert skipped == {"docs/bad\ufffdname.md": "undecodable-name", "src/we\ufffdird": "undecodable-name"}
    assert {e["id"] for e in snapshot["entities"] if e["kind"] in ("document", "module")} == {
        "document:docs/guide.md", "module:src/core/value.ts"}
    checked = docbridge("check", "--root", str(root), "--format", "json", "--fail-on", "never")
    assert checked.returncode == 0, checked.stderr
    assert "LINK_BROKEN" in {f["code"] for f in json.loads(checked.stdout)["findings"]}


@pytest.mark.attack("terminal control sequences")
def test_printed_file_names_and_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A file name or a heading may hold ESC or a C1 control (git keeps any byte of a name but NUL and /): printed
    as they are, they start the terminal's control sequences (a colour, the window's title, the clipboard). Text
    output shows them as escapes, a line break in a name too; JSON keeps the exact name; an error names it
    escaped."""
    odd = "r\x1b[31med\x07"
    root = make_repo(tmp_path / "repo", {
        f"docs/{odd}.md": "# Title \x1b]0;pwned\x07 \x9b2J here\n\nSee [x](./missing.md).\n",
        "docs/two\nlines.md": "# Two\n\nSee [y](./gone.md).\n",
    })
    checked = docbridge("check", "--root", str(root))
    assert checked.returncode == 1, checked.stderr
    assert not any(c in checked.stdout + checked.stderr for c in "\x1b\x07\x9b")
    assert "  docs/r\\x1b[31med\\x07.md:3:5  error    LINK_BROKEN" in checked.stdout
    assert "  docs/two\\nlines.md:3:5  error    LINK_BROKEN" in checked.stdout
    as_json = docbridge("check", "--root", str(root), "--format", "json")
    assert {f["path"] for f in json.loads(as_json.stdout)["findings"]} == {f"docs/{odd}.md", "docs/two\nlines.md"}
    found = docbridge("search", "Title here pwned", "--root", str(root))
    assert found.returncode == 0, found.stderr
    assert "docs/r\\x1b[31med\\x07.md" in found.stdout and not any(c in found.stdout for c in "\x1b\x07\x9b")
    hit = json.loads(docbridge("search", "Title here pwned", "--root", str(root), "--json").stdout)["results"][0]
    assert hit["path"] == f"docs/{odd}.md" and "\x9b" in hit["title"]  # JSON reads \u009b back as the character
    missing = docbridge("check", "--root", str(root / odd))
    assert missing.returncode == 2 and "\x1b" not in missing.stderr and "\\x1b[31m" in missing.stderr


@pytest.mark.attack("writes and reads outside the repository")
def test_a_configured_doctor_suite_outside_the_repository_is_refused_unread(tmp_path: Path) -> None:
    """`doctor.suite` is the repository's choice: a path leading out of it (`../`, absolute, or through a link)
    was opened and its cases shown in the report. It is a usage error naming the key; `--suite`, the user's
    own choice, may still name a file anywhere."""
    root = make_repo(tmp_path / "repo", {"docs/guide.md": "# Guide\n\nHow to start.\n"})
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"version": 1, "name": "outside", "cases": [
        {"id": "secret-case", "input": "start", "expected": {"anyOf": ["docs/guide.md"]}}]}), encoding="utf-8")
    (root / "linked.json").symlink_to(outside)
    for named in ("../outside.json", str(outside), "linked.json"):
        (root / "doc-bridge.config.json").write_text(json.dumps({"doctor": {"suite": named}}), encoding="utf-8")
        result = docbridge("doctor", "--root", str(root), "--json")
        assert result.returncode == 2, (named, result.stdout, result.stderr)
        assert result.stderr.startswith(f"error: doc-bridge.config.json: doctor.suite names {named!r}, which is "
                                        "outside the repository"), result.stderr
        assert "secret-case" not in result.stdout + result.stderr
    (root / "doc-bridge.config.json").unlink()
    chosen = docbridge("doctor", "--root", str(root), "--json", "--suite", str(outside))
    assert chosen.returncode in (0, 1), chosen.stderr
    assert json.loads(chosen.stdout)["dimensions"]["hitAt3"]["status"] == "analyzed"


def test_a_suite_or_baseline_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    """`study expectations`, `bench retrieval` and `enrich --retrieval-delta` read the file they are given to
    its end: `/dev/zero` ran until memory ran out, a FIFO waited forever. A file that is not a regular one is a
    usage error naming it, at once."""
    root = make_repo(tmp_path / "repo", {"docs/guide.md": "# Guide\n"})
    fifo = tmp_path / "suite.fifo"
    os.mkfifo(fifo)
    for special in (str(fifo), "/dev/zero"):
        for command in (["study", "expectations", special], ["bench", "retrieval", special],
                        ["enrich", "--retrieval-delta", special]):
            result = docbridge(*command, "--root", str(root), timeout=60)
            assert result.returncode == 2, (command, result.stderr)
            assert "not a regular file" in result.stderr and "Traceback" not in result.stderr, (command, result.stderr)


def test_a_nul_character_in_the_configuration_is_an_error_naming_its_key(tmp_path: Path) -> None:
    """A NUL character in a configured path (`render.templates`, a conformance source) crashed `render` and
    `gate run` with "embedded null byte"; no path, pattern or name holds one, so the configuration is refused
    with the key, as any other invalid value is."""
    root = make_repo(tmp_path / "repo", {"docs/guide.md": "# Guide\n"})
    for config, command, key in (
            ({"render": {"templates": {"ownership": "a\u0000"}}}, ["render", "ownership"],
             "render.templates.ownership"),
            ({"gates": {"include": ["documentation-standard-v1"]},
              "conformance": {"documentationStandardV1": {"rawSources": ["a\u0000"]}}}, ["gate", "run"],
             "conformance.documentationStandardV1.rawSources.0")):
        (root / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
        result = docbridge(*command, "--root", str(root))
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr == f"error: doc-bridge.config.json: {key}: holds a NUL character (\\u0000), which no " \
                                "path, pattern or name can hold.\n"


def test_init_never_replaces_a_file_that_appeared_meanwhile_and_bench_counts_are_checked(tmp_path: Path) -> None:
    """Two `init` run at once both said they wrote the configuration, one replacing the other's: the write is a
    new file or nothing. `bench scan --files 0` ended in a worker's traceback."""
    from docbridge.engine.base.cache import write_new_file
    target = tmp_path / "doc-bridge.config.json"
    write_new_file(target, b"{}\n")
    with pytest.raises(FileExistsError):
        write_new_file(target, b'{"other": 1}\n')
    assert target.read_bytes() == b"{}\n" and [p.name for p in tmp_path.iterdir()] == [target.name]
    root = make_repo(tmp_path / "repo", {"docs/guide.md": "# Guide\n"})
    runs = [subprocess.Popen([str(BIN / "docbridge"), "init", "--root", str(root), "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outcomes = [(run.wait(120), run.stdout.read(), run.stderr.read()) for run in runs if run.stdout and run.stderr]
    written = [out for code, out, _ in outcomes if code == 0]
    assert len(written) == 1 and json.loads(written[0])["written"], outcomes
    assert all(code == 2 and ("already exists" in err or "appeared" in err) for code, _, err in outcomes if code != 0)
    result = docbridge("bench", "scan", "--files", "0")
    assert result.returncode == 2 and result.stderr == \
        "error: bench scan: --files and --trials count files and runs: each must be at least 1.\n"
    for too_many in (["scan", "--files", "99999999999999999999"], ["robust", "--bytes", "99999999999999"]):
        result = docbridge("bench", *too_many, timeout=60)  # it filled the memory before measuring anything
        assert result.returncode == 2 and "--files is at most 1,000,000" in result.stderr, result.stderr
    result = docbridge("bench", "search", "--files", "-1")
    assert result.returncode == 2 and "--files and --trials count files and runs: each must be at least 0" in \
        result.stderr
