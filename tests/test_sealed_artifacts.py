"""Artifacts under `.docbridge/` are believed only when this user sealed them, and never crash a reader.

A cloned repository may ship a `.docbridge/` folder whose every hash matches: its artifacts were sealed with
another key (or none) and are rebuilt. And an artifact sealed here but of the wrong shape (a version skew, a
bug) is detected and rebuilt too: every command still answers, and the snapshot is the one a clean scan writes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_fixture, docbridge

pytestmark = pytest.mark.attack("artifacts")

SEALED = ("cache/facts.json", "cache/findings.json", "cache/scan-state.json", "index/manifest.json",
          "index/projection.json")


def _run(root: Path, *args: str, key: Path | None = None) -> subprocess.CompletedProcess[str]:
    return docbridge(*args, "--root", str(root), env={"DOCBRIDGE_SEAL_KEY_FILE": str(key)} if key is not None else None)


def _every_artifact(root: Path, key: Path | None = None) -> dict[str, Any]:
    scanned = _run(root, "scan", "--json", key=key)
    assert scanned.returncode == 0, scanned.stderr
    for args in (("check", "--json", "--fail-on", "never"), ("search", "invoice", "--json")):
        result = _run(root, *args, key=key)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return dict(json.loads(scanned.stdout))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = copy_fixture("acme", tmp_path_factory.mktemp("sealed"))
    return root, _every_artifact(root)["content_hash"]


def test_a_docbridge_folder_sealed_elsewhere_is_rebuilt(built: tuple[Path, str], tmp_path: Path) -> None:
    root, clean = built
    cloned = tmp_path / "cloned"
    shutil.copytree(root, cloned)  # with its .docbridge/, as if committed or shipped with the repository
    elsewhere = tmp_path / "another-users-key"
    elsewhere.write_bytes(os.urandom(32))
    first = _every_artifact(cloned, key=elsewhere)
    assert first["reuse"]["reused"] == 0 and first["content_hash"] == clean  # nothing believed, all rebuilt
    assert _every_artifact(cloned, key=elsewhere)["reuse"]["parsed"] == 0  # its own seals hold from now on


def _payload(path: Path) -> Any:
    """An artifact's payload; the facts cache's lines (`"path"<TAB>entry`) as one mapping."""
    body = path.read_bytes().partition(b"\n")[2]
    if path.name != "facts.json":
        return json.loads(body)
    lines = [line.split(b"\t", 1) for line in body.split(b"\n") if line]
    return {json.loads(name): json.loads(entry) for name, entry in lines}


def _reseal(path: Path, payload: Any, key: bytes) -> None:
    head = json.loads(path.read_bytes().partition(b"\n")[0])
    if path.name == "facts.json":
        body = b"".join(json.dumps(name).encode() + b"\t" + json.dumps(entry).encode() + b"\n"
                        for name, entry in sorted(payload.items()))
    else:
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    digest = hashlib.sha256(body).hexdigest()
    head.update(sha256=digest, seal=hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest())
    path.write_bytes(json.dumps(head, sort_keys=True).encode("utf-8") + b"\n" + body)


def _set(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    node = json.loads(json.dumps(node))
    if not path:
        return value
    current = node
    for part in path[:-1]:
        current = current[part]
    current[path[-1]] = value
    return node


def _first_key(payload: dict[str, Any]) -> str:
    return sorted(payload)[0]


# (artifact, where in its payload, the wrong value): each one crashed a command or spoiled snapshot.json before
WRONG = [
    ("cache/facts.json", lambda p: (_first_key(p),), True),
    ("cache/facts.json", lambda p: (_first_key(p), 4), [1, "x", None]),
    ("cache/facts.json", lambda p: (_first_key(p), 4, 0), {}),
    ("cache/scan-state.json", lambda p: ("summary",), 1),
    ("cache/scan-state.json", lambda p: ("reuse_offset",), [1, "x", None]),
    ("cache/scan-state.json", lambda p: ("reuse_offset",), 7),
    ("cache/findings.json", lambda p: ("findings", 0), "x"),
    ("index/manifest.json", lambda p: ("lexical",), [1, "x", None]),
    ("index/projection.json", lambda p: ("entries", 0), 10**12),
    ("index/projection.json", lambda p: ("entries", 0, "ownership_id"), 10**12),
    ("index/projection.json", lambda p: ("entries", 1, "graph", "edges", 0, 2), 1.5),
    ("index/projection.json", lambda p: ("entries", 2, "fields", "path"), 1),
    ("index/projection.json", lambda p: ("header", "weights"), [1, "x", None]),
]


@pytest.mark.parametrize("artifact, where, value", WRONG, ids=[f"{a}-{i}" for i, (a, _, _) in enumerate(WRONG)])
def test_an_artifact_sealed_here_but_of_the_wrong_shape_is_rebuilt(built: tuple[Path, str], tmp_path: Path,
                                                                   artifact: str, where: Any, value: Any) -> None:
    root, clean = built
    work = tmp_path / "acme"
    shutil.copytree(root, work)
    target = work / ".docbridge" / artifact
    payload = _payload(target)
    key = Path(os.environ["DOCBRIDGE_SEAL_KEY_FILE"]).read_bytes()
    _reseal(target, _set(payload, where(payload), value), key)
    for args in (("scan", "--json"), ("check", "--json", "--fail-on", "never"), ("search", "invoice", "--json"),
                 ("search", "createInvoice", "--json", "--explain")):
        result = _run(work, *args)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr[-2000:])
        json.loads(result.stdout)
    snapshot = json.loads((work / ".docbridge/snapshot.json").read_text())
    assert snapshot["content_hash"] == clean
