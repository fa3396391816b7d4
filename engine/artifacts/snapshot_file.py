"""Writing `.docbridge/snapshot.json`, and not rewriting it when nothing it depends on changed.

The snapshot is a pure function of the workspace's inputs (every path with its content hash, the
configuration, the analyzer versions). `scan-state.json` records the input fingerprint the current
snapshot was built from and the SHA-256 of its bytes; when both still match, the snapshot is reused and
only its `coverage.reuse` block (outside the content hash) is refreshed in place.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.cache import artifact_dir, read_sealed, write_atomic, write_sealed
from docbridge.engine.base.hashing import canonical_bytes, sha256_bytes
from docbridge.engine.base.safe_io import read_artifact

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

STATE_KIND = "scan-state"


@dataclass(slots=True)
class SnapshotArtifact:
    path: Path
    content_hash: str
    summary: dict[str, Any]
    rebuilt: bool


def snapshot_path(root: Path) -> Path:
    return artifact_dir(root) / "snapshot.json"


def _summary(snapshot: Any) -> dict[str, Any]:
    entities, relations = snapshot.counts()
    return {
        "entities": dict(sorted(entities.items())),
        "relations": dict(sorted(relations.items())),
        "files": snapshot.coverage["files"],
        "skipped": snapshot.coverage["skipped_by_reason"],
        "unresolved": snapshot.coverage["unresolved"],
        "unreadable": _unreadable(snapshot.coverage),
    }


def _unreadable(coverage: dict[str, Any]) -> list[dict[str, str]]:
    """Inputs a person wrote that could not be used (a manifest that is not JSON, an ignore line that does not
    compile): named in `scan`'s report, since the scan goes on without them."""
    found = [{"path": note["scope"].split(":", 1)[1], "reason": note["reason"]} for note in coverage["notes"]
             if note["scope"].startswith("invalid-json:")]
    found += [{"path": entry["path"], "reason": "This ignore line cannot be compiled as a pattern; it is left out."}
              for entry in coverage["skipped"] if entry["reason"] == "invalid-ignore-pattern"]
    return sorted(found, key=lambda item: item["path"])


def state_of(workspace: Any) -> ModelState:
    """The model state a Workspace holds, or the state itself (artifacts are written for either)."""
    from docbridge.engine.state.model_state import (
        ModelState,  # the model's machinery: a search of a stored index never loads it
    )
    return workspace if isinstance(workspace, ModelState) else workspace.state


def write_snapshot(workspace: Any) -> SnapshotArtifact:
    """Write the workspace's snapshot, reusing the file on disk when its inputs did not change."""
    root: Path = workspace.root
    target = snapshot_path(root)
    state_file = artifact_dir(root) / "cache" / "scan-state.json"
    fingerprint = workspace.input_fingerprint()
    reuse = workspace.reuse_report()
    state = _read_current(workspace, "cache/scan-state.json", STATE_KIND)
    if state is not None and not _scan_state_shape(state):
        state = None  # not what this code writes: the snapshot is written again
    if state is not None:
        data = read_artifact(target) or b""
        spliced = data if state.get("reuse") == reuse else _splice_reuse(data, state, reuse)
        if state.get("sha256") == sha256_bytes(data) and spliced is not None:
            if spliced is not data:
                data = spliced
                write_atomic(target, data)
                state = {**state, "reuse": reuse, "sha256": sha256_bytes(data),
                         "reuse_length": len(canonical_bytes(reuse))}
                write_sealed(state_file, STATE_KIND, state)
            return SnapshotArtifact(target, state["content_hash"], {**state["summary"], "reuse": reuse}, False)
    from docbridge.engine.views.snapshot import snapshot_of
    snapshot = snapshot_of(state_of(workspace))
    digest = hashlib.sha256()
    marker = b'"reuse":' + canonical_bytes(snapshot.reuse)
    written, offset = 0, -1

    def pieces() -> Iterator[bytes]:  # hash and locate `coverage.reuse` while writing
        nonlocal written, offset
        previous = b""
        for piece in snapshot.chunks():
            if previous.endswith(b'"coverage":'):
                offset = written + piece.find(marker) + len(b'"reuse":')
            digest.update(piece)
            written += len(piece)
            previous = piece
            yield piece

    write_atomic(target, pieces())
    summary = _summary(snapshot)
    if workspace.use_cache:
        write_sealed(state_file, STATE_KIND, {
            "fingerprint": fingerprint, "sha256": digest.hexdigest(), "content_hash": snapshot.content_hash,
            "summary": summary, "reuse": snapshot.reuse, "reuse_offset": offset,
            "reuse_length": len(canonical_bytes(snapshot.reuse))})
    return SnapshotArtifact(target, snapshot.content_hash, {**summary, "reuse": snapshot.reuse}, True)


def _scan_state_shape(state: dict[str, Any]) -> bool:
    return (isinstance(state.get("sha256"), str) and isinstance(state.get("content_hash"), str)
            and isinstance(state.get("summary"), dict) and isinstance(state.get("reuse"), dict)
            and type(state.get("reuse_offset")) is int and type(state.get("reuse_length")) is int
            and state["reuse_offset"] >= 0 and state["reuse_length"] >= 0)


def _splice_reuse(data: bytes, state: dict[str, Any], reuse: dict[str, Any]) -> bytes | None:
    """The snapshot with `coverage.reuse` replaced, or None when the recorded offset does not hold it."""
    offset, length = state["reuse_offset"], state["reuse_length"]
    if data[offset:offset + length] != canonical_bytes(state["reuse"]):
        return None
    return data[:offset] + canonical_bytes(reuse) + data[offset + length:]


FINDINGS_KIND = "check-state"


def _read_current(workspace: Any, relative: str, kind: str, versions: dict[str, Any] | None = None) -> Any:
    """A sealed artifact's state when caching is on and it was built from exactly these inputs, else None."""
    if not workspace.use_cache:
        return None
    loaded = read_sealed(artifact_dir(workspace.root) / relative, kind, versions)
    if loaded is None:
        return None
    _, state = loaded
    if not isinstance(state, dict) or state.get("fingerprint") != workspace.input_fingerprint():
        return None
    return state


def load_findings(workspace: Any) -> list[Any] | None:
    """The findings of an earlier run over exactly these inputs, or None (verified by hash and fingerprint)."""
    from docbridge.engine.base.findings import Finding
    state = _read_current(workspace, "cache/findings.json", FINDINGS_KIND)
    if state is None:
        return None
    try:
        return [Finding.model_validate(f) for f in state["findings"]]
    except (KeyError, TypeError, ValueError):
        return None


def store_findings(workspace: Any, findings: list[Any]) -> None:
    if not workspace.use_cache:
        return
    with contextlib.suppress(OSError):  # a read-only checkout still checks; it only loses the warm start
        write_sealed(artifact_dir(workspace.root) / "cache" / "findings.json", FINDINGS_KIND, {
            "fingerprint": workspace.input_fingerprint(),
            "findings": [f.model_dump(mode="json") for f in findings]})


PROJECTION_KIND = "retrieval-projection"


def load_projection(workspace: Any) -> Any | None:
    """The projection built from exactly these inputs, or None when missing, stale or corrupt."""
    from docbridge.engine.base.lexicon import LEXICON_VERSION
    from docbridge.engine.retrieval.project import PROJECTION_VERSION
    state = _read_current(workspace, "index/projection.json", PROJECTION_KIND, {
        "projection_version": PROJECTION_VERSION, "lexicon_version": LEXICON_VERSION})
    if state is None:
        return None
    from docbridge.engine.base.overlay import overlay_source
    if state.get("overlay_source") != overlay_source(workspace.root, workspace.config):
        return None  # the overlay changed (or was switched on or off) since it was built
    projection = projection_from_state(state)
    if projection is None or projection.weights != workspace.config.weights() or \
            projection.params != workspace.config.retrieval.params.tuned():
        return None
    hashes = state.get("out_hashes")  # what a patch after an edit compares with (engine.retrieval.incremental)
    if type(hashes) is dict and all(type(k) is str and type(v) is str for k, v in hashes.items()):
        projection.out_hashes = hashes
    return projection


def projection_from_state(state: Any) -> Any | None:
    """The projection a stored state holds, or None when its shape is wrong."""
    from docbridge.engine.retrieval.project import Projection, entry_from_json
    try:
        header = state["header"]
        weights = header["weights"]
        if type(weights) is not dict or not all(type(k) is str and type(v) in (int, float) for k, v in weights.items()):
            return None
        if not all(type(header[key]) is str for key in ("snapshot_hash", "configuration_hash", "overlay_hash")):
            return None
        params = header.get("params", {})
        if type(params) is not dict or not all(k in ("k1", "b") and type(v) in (int, float) for k, v in params.items()):
            return None
        if type(state["entries"]) is not list:
            return None
        made: dict[tuple[str, ...], Any] = {}
        return Projection([entry_from_json(e, made) for e in state["entries"]], weights,
                          header["snapshot_hash"], header["configuration_hash"], header["overlay_hash"],
                          params={k: float(v) for k, v in params.items()})
    except (KeyError, TypeError, ValueError):
        return None


def store_projection(workspace: Any, projection: Any) -> None:
    from docbridge.engine.base.lexicon import LEXICON_VERSION
    from docbridge.engine.base.overlay import overlay_source
    from docbridge.engine.retrieval.project import PROJECTION_VERSION
    if not workspace.use_cache:
        return
    with contextlib.suppress(OSError):
        write_sealed(artifact_dir(workspace.root) / "index" / "projection.json", PROJECTION_KIND, {
            "fingerprint": workspace.input_fingerprint(), "header": projection.header(),
            "overlay_source": overlay_source(workspace.root, workspace.config),
            "entries": [e.to_json() for e in projection.entries],
            **({"out_hashes": dict(sorted(projection.out_hashes.items()))} if projection.out_hashes else {})},
            {"projection_version": PROJECTION_VERSION, "lexicon_version": LEXICON_VERSION})


def stored_or_built_projection(state: ModelState) -> Any:
    """The state's projection, memoised on it: the one in `.docbridge/index` when it was built from these
    inputs, else built (what the language server, the MCP server and the Python API search)."""
    from docbridge.engine.retrieval.incremental import patched_projection, with_basis
    from docbridge.engine.retrieval.project import PROJECTION, projection_of
    return state.view(PROJECTION, lambda: patched_projection(state) or with_basis(load_projection(state), state)
                      or projection_of(state))


def projection_for(workspace: Any) -> tuple[Any, bool]:
    """The workspace's projection from .docbridge/index when its inputs match, else built and stored;
    and whether it was reused."""
    projection = load_projection(workspace)
    if projection is not None:
        return projection, True
    from docbridge.engine.retrieval.project import projection_of  # search's modules load only when searching
    projection = projection_of(state_of(workspace))
    store_projection(workspace, projection)
    return projection, False
