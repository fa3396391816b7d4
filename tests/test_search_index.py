"""The search index on disk (`.docbridge/index/`): reused while the tree is unchanged, rebuilt when it
changes or when any of its files is damaged, and the answers are the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, docbridge, docbridge_json

HOUR_AGO = time.time() - 3600


def settle(root: Path) -> None:
    """Date every file and directory an hour back: a tree modified within two seconds of a scan is never
    stamped (its content could differ from what the scan read), and a test writes files just before."""
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".docbridge"]
        for name in files:
            os.utime(Path(directory) / name, (HOUR_AGO, HOUR_AGO))
        os.utime(directory, (HOUR_AGO, HOUR_AGO))


def search(root: Path, query: str) -> dict[str, Any]:
    return docbridge_json("search", query, "--root", str(root), "--json")  # type: ignore[no-any-return]


def ids(payload: dict[str, Any]) -> list[str]:
    return [r["id"] for r in payload["results"]]


@pytest.fixture
def acme_index(tmp_path: Path) -> Path:
    root = copy_fixture("acme", tmp_path)
    settle(root)
    return root


def test_an_unchanged_tree_is_searched_from_the_stored_index(acme_index: Path) -> None:
    first = search(acme_index, "how is sales tax calculated")
    assert first["index"]["source"] == "built"
    manifest = acme_index / ".docbridge" / "index" / "manifest.json"
    assert manifest.exists() and len(list((acme_index / ".docbridge" / "index").glob("lexical-*"))) == 1
    second = search(acme_index, "how is sales tax calculated")
    assert second["index"]["source"] == "current"  # opened, not scanned
    assert ids(second) == ids(first) and second["results"] == first["results"]
    # explanations read the body text, which the opened index loads when asked
    explained = docbridge_json("search", "how is sales tax calculated", "--root", str(acme_index), "--json",
                               "--explain")
    assert explained["index"]["source"] == "current"
    assert any("body" in r["explain"]["matched"] for r in explained["results"])
    # the agent payload is answered from the same index
    agent = docbridge_json("search", "createInvoice", "--root", str(acme_index), "--agent")
    assert agent["matches"][0]["path"] == "src/billing/invoice.ts"


def test_an_edited_file_is_seen_and_the_index_rebuilt(acme_index: Path) -> None:
    assert search(acme_index, "createInvoice")["index"]["source"] == "built"
    target = acme_index / "src" / "billing" / "invoice.ts"
    target.write_text(target.read_text(encoding="utf-8") + "\nexport function zebraStripes() { return 1 }\n",
                      encoding="utf-8")
    found = search(acme_index, "zebraStripes")
    assert found["index"]["source"] == "built" and ids(found)[0] == "module:src/billing/invoice.ts"
    # a new file in an existing directory is seen too
    (acme_index / "docs" / "quokka.md").write_text("# Quokka notes\n\nAll about the quokka.\n", encoding="utf-8")
    assert ids(search(acme_index, "quokka"))[0] == "document:docs/quokka.md"
    # a removed one disappears
    (acme_index / "docs" / "quokka.md").unlink()
    assert "document:docs/quokka.md" not in ids(search(acme_index, "quokka"))


def test_a_recently_modified_tree_is_not_trusted_without_a_scan(acme_index: Path) -> None:
    (acme_index / "docs" / "fresh.md").write_text("# Fresh\n\nJust written.\n", encoding="utf-8")
    assert search(acme_index, "fresh")["index"]["source"] == "built"
    # written seconds ago: the stamp is not recorded, so the next search scans (facts and index reused)
    assert search(acme_index, "fresh")["index"]["source"] == "reused"


@pytest.mark.parametrize("damage", ["manifest", "lexical", "entries", "masks", "projection", "missing"])
def test_a_damaged_index_is_rebuilt_and_answers_the_same(acme_index: Path, damage: str) -> None:
    expected = search(acme_index, "who owns billing")
    index = acme_index / ".docbridge" / "index"
    lexical = next(index.glob("lexical-*"))
    if damage == "manifest":
        (index / "manifest.json").write_bytes((index / "manifest.json").read_bytes()[:-20] + b"garbage")
    elif damage == "lexical":
        segment = next(p for p in lexical.iterdir() if p.suffix == ".idx")
        segment.write_bytes(b"\0" * segment.stat().st_size)
    elif damage == "entries":
        (lexical / "entries.json").write_text('{"header": {}, "entries": []}')
    elif damage == "masks":
        (lexical / "masks.json").write_text("[]")
    elif damage == "projection":
        (index / "projection.json").write_text("not json")
    else:
        for path in lexical.iterdir():
            path.unlink()
        lexical.rmdir()
    again = search(acme_index, "who owns billing")
    # a damaged projection is projected again, byte for byte the same: the index built from it still serves
    assert again["index"]["source"] == ("reused" if damage == "projection" else "built")
    assert again["results"] == expected["results"]
    assert search(acme_index, "who owns billing")["index"]["source"] == "current"


def test_without_the_cache_nothing_is_written(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    payload = docbridge_json("search", "billing", "--root", str(root), "--json", "--no-cache")
    assert payload["index"]["source"] == "memory" and payload["results"]
    assert not (root / ".docbridge" / "index").exists()


def test_a_configuration_change_rebuilds(acme_index: Path) -> None:
    assert search(acme_index, "billing")["index"]["source"] == "built"
    assert search(acme_index, "billing")["index"]["source"] == "current"
    config = acme_index / "doc-bridge.config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["retrieval"] = {"weights": {"title": 0, "headings": 0, "symbols": 0, "path": 0, "aliases": 0,
                                     "summary": 0, "body": 1}}
    config.write_text(json.dumps(data), encoding="utf-8")
    assert search(acme_index, "billing")["index"]["source"] == "built"
    # an invalid configuration is still reported, not hidden behind the stored index
    config.write_text("{ not json", encoding="utf-8")
    result = docbridge("search", "billing", "--root", str(acme_index))
    assert result.returncode == 2 and "doc-bridge.config.json" in result.stderr


def test_a_new_analyzer_version_rebuilds(acme_index: Path) -> None:
    """An upgrade whose analyzers read files differently must not answer from an index the old ones built,
    even though no file changed."""
    assert search(acme_index, "billing")["index"]["source"] == "built"
    assert search(acme_index, "billing")["index"]["source"] == "current"
    upgraded = ("import sys; from docbridge.engine.discovery import versions; "
                "versions.ANALYZERS['markdown'] += '+next'; "
                "from docbridge.cli.main import main; sys.exit(main(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", upgraded, "search", "billing", "--root", str(acme_index), "--json"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["index"]["source"] != "current"


def test_a_build_in_progress_elsewhere_is_left_alone_and_an_abandoned_one_removed(acme_index: Path) -> None:
    """The editor's server and a command line may build the index at the same time: a build never removes
    another process's build in progress (it would fail it), only one nobody has touched for a long time."""
    base = acme_index / ".docbridge" / "index"
    base.mkdir(parents=True)
    in_progress, abandoned = base / ".lexical-other.tmp", base / ".lexical-dead.tmp"
    for folder in (in_progress, abandoned):
        folder.mkdir()
        (folder / "meta.json").write_text("{}", encoding="utf-8")
    os.utime(abandoned, (HOUR_AGO, HOUR_AGO))
    assert search(acme_index, "createInvoice")["index"]["source"] == "built"
    assert in_progress.is_dir() and not abandoned.exists()


def test_searches_started_together_on_a_tree_without_an_index_all_answer(acme_index: Path) -> None:
    command = [sys.executable, "-m", "docbridge", "search", "how is sales tax calculated", "--root", str(acme_index),
               "--json"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    answers = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], [err[-1500:] for _, err in answers]
    first = [json.loads(out)["results"] for out, _ in answers]
    assert all(results == first[0] for results in first)
    assert search(acme_index, "how is sales tax calculated")["index"]["source"] == "current"
