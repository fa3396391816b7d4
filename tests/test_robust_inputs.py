"""Hostile or broken inputs never crash a command: each gets a counted skip reason, a note, a finding or one
clear configuration error (exit 2) that names the file; never a traceback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import copy_fixture, docbridge


def _no_traceback(result) -> None:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.stderr + result.stdout, result.stderr[-2000:]


def _coverage(root: Path) -> dict:
    return json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))["coverage"]


def test_invalid_gitignore_lines_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    (root / "docs" / ".gitignore").write_text("# ok\n!\nscratch-*.md\n[z-a]\n", encoding="utf-8")
    (root / "docs" / "scratch-1.md").write_text("# Scratch\n", encoding="utf-8")
    for command in (("scan",), ("check",), ("search", "tax")):
        result = docbridge(*command, "--root", str(root))
        _no_traceback(result)
        assert result.returncode in (0, 1), result.stderr
    report = docbridge("scan", "--root", str(root)).stdout  # the text report names each line left out
    assert "Unreadable: docs/.gitignore:2: This ignore line cannot be compiled" in report
    assert "Unreadable: docs/.gitignore:4: This ignore line cannot be compiled" in report
    coverage = _coverage(root)
    skipped = {s["path"]: s["reason"] for s in coverage["skipped"]}
    assert skipped == {"docs/.gitignore:2": "invalid-ignore-pattern", "docs/.gitignore:4": "invalid-ignore-pattern"}
    assert coverage["skipped_by_reason"] == {"invalid-ignore-pattern": 2}
    # the valid lines still apply
    snapshot = json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    assert not any(e["id"] == "document:docs/scratch-1.md" for e in snapshot["entities"])


def test_out_of_range_and_boolean_numbers_and_bad_globs_are_configuration_errors(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    original = (root / "doc-bridge.config.json").read_text(encoding="utf-8")
    cases = [
        ('{"retrieval": {"weights": {"title": 1e999}}}', "retrieval.weights.title", "Infinity"),
        ('{"retrieval": {"weights": {"title": NaN}}}', "retrieval.weights.title", "NaN"),
        ('{"retrieval": {"weights": {"body": 1000}}}', "retrieval.weights", "1000"),
        ('{"limits": {"maxFileBytes": true}}', "limits.maxFileBytes", "true"),
        ('{"check": {"ignore": ["docs/**", "[z-a]"]}}', "check.ignore.1", "[z-a]"),
        ('{"rules": {"criticalPaths": ["!"]}}', "rules.criticalPaths.0", '"!"'),
    ]
    for text, key, value in cases:
        (root / "doc-bridge.config.json").write_text(text, encoding="utf-8")
        command = ("search", "tax") if "weights" in text else ("check",)
        result = docbridge(*command, "--root", str(root))
        _no_traceback(result)
        assert result.returncode == 2, (text, result.stdout, result.stderr)
        assert "doc-bridge.config.json" in result.stderr and key in result.stderr and value in result.stderr, (
            text, result.stderr)
    (root / "doc-bridge.config.json").write_text(original, encoding="utf-8")
    assert docbridge("search", "tax", "--root", str(root)).returncode == 0


def test_deeply_nested_or_invalid_manifests_are_noted_and_a_nested_config_is_an_error(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    (root / "src" / "billing" / "package.json").write_text(deep, encoding="utf-8")
    (root / "tsconfig.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (root / "src" / "orders" / "package.json").write_text('{"name": oops', encoding="utf-8")
    result = docbridge("scan", "--root", str(root))
    _no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert "Unreadable: src/orders/package.json: " in result.stdout and "Unreadable: tsconfig.json: " in result.stdout
    notes = {n["scope"]: n["reason"] for n in _coverage(root)["notes"]}
    assert "nests too deeply" in notes["invalid-json:src/billing/package.json"]
    assert "nests too deeply" in notes["invalid-json:tsconfig.json"]
    assert "not valid JSON" in notes["invalid-json:src/orders/package.json"]
    (root / "doc-bridge.config.json").write_text(deep, encoding="utf-8")
    result = docbridge("check", "--root", str(root))
    _no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "doc-bridge.config.json" in result.stderr, result.stderr


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(9))


def test_frontmatter_tags_alias_bombs_and_deep_nesting_are_malformed_frontmatter(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    bad = {
        "docs/int.md": "---\n0: !!int\n---\n# Int\n",
        "docs/float.md": "---\ntitle: !!float abc\n---\n# Float\n",
        "docs/bool.md": "---\ntitle: !!bool maybe\n---\n# Bool\n",
        "docs/time.md": "---\ntitle: !!timestamp 2020-13-45\n---\n# Time\n",
        "docs/bomb.md": f"---\n{BOMB}---\n# Bomb\n",
        "docs/deep.md": "---\n" + "".join(" " * i + "k:\n" for i in range(200)) + " " * 200 + "v\n---\n# Deep\n",
    }
    for path, text in bad.items():
        (root / path).write_text(text, encoding="utf-8")
    result = docbridge("check", "--root", str(root), "--format", "json", timeout=120)
    _no_traceback(result)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    found = {f["path"]: f["message"] for f in report["findings"] if f["code"] == "DOCBRIDGE_BLOCK_INVALID"}
    assert set(bad) <= set(found), found
    assert "too complex" in found["docs/bomb.md"] and "too complex" in found["docs/deep.md"]
    assert all("not valid YAML" in found[p] for p in ("docs/int.md", "docs/float.md", "docs/bool.md", "docs/time.md"))
    result = docbridge("scan", "--root", str(root))
    _no_traceback(result)
    assert result.returncode == 0


def test_artifacts_and_configuration_are_never_read_or_written_through_links(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    # `.docbridge` linking out of the root: exit 2 naming it, nothing written there
    (root / ".docbridge").symlink_to(outside)
    for command in (("scan",), ("check",), ("search", "tax")):
        result = docbridge(*command, "--root", str(root))
        _no_traceback(result)
        assert result.returncode == 2 and ".docbridge" in result.stderr and result.stderr.count("\n") == 1, (
            command, result.stderr)
    assert list(outside.iterdir()) == []
    (root / ".docbridge").unlink()
    assert docbridge("search", "tax", "--root", str(root)).returncode == 0
    # artifacts that are links to an endless device or FIFOs read as missing and are rebuilt as files
    for name in ("cache/facts.json", "index/projection.json", "index/manifest.json"):
        (root / ".docbridge" / name).unlink()
        (root / ".docbridge" / name).symlink_to("/dev/zero")
    os.mkfifo(root / ".docbridge" / "cache" / "findings.json")
    for command in (("search", "tax"), ("check",)):
        result = docbridge(*command, "--root", str(root), timeout=60)
        _no_traceback(result)
        assert result.returncode in (0, 1), result.stderr
    for name in ("cache/facts.json", "index/projection.json", "cache/findings.json"):
        assert (root / ".docbridge" / name).is_file() and not (root / ".docbridge" / name).is_symlink()
    # a directory where an artifact file belongs: exit 2 naming it
    (root / ".docbridge" / "snapshot.json").unlink(missing_ok=True)
    (root / ".docbridge" / "snapshot.json").mkdir()
    result = docbridge("scan", "--root", str(root))
    _no_traceback(result)
    assert result.returncode == 2 and "snapshot.json" in result.stderr
    (root / ".docbridge" / "snapshot.json").rmdir()
    # temporary files of interrupted writes go once they are old
    stale = root / ".docbridge" / "cache" / ".facts.json.k3j2.tmp"
    fresh = root / ".docbridge" / ".snapshot.json.a8f1.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    (root / "docs" / "new.md").write_text("# New\n", encoding="utf-8")
    assert docbridge("scan", "--root", str(root)).returncode == 0
    assert not stale.exists() and fresh.exists()
    # a configuration that links out of the root is not read
    secret = outside / "doc-bridge.config.json"
    secret.write_text('{"retrieval": {"weights": {"title": 9}}}', encoding="utf-8")
    (root / "doc-bridge.config.json").unlink()
    (root / "doc-bridge.config.json").symlink_to(secret)
    result = docbridge("scan", "--root", str(root))
    _no_traceback(result)
    assert result.returncode == 2 and "doc-bridge.config.json" in result.stderr and "outside" in result.stderr
