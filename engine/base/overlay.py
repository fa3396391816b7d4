"""`.docbridge/overlay.json`: the sealed enrichment overlay, and what its live entries do to retrieval.

The file is one JSON object: `accepted`, `pending` and `rejected` lists (each sorted by proposalId) and
`stats`. `contentHash` seals everything except itself, `seal`, `stats` and each entry's `acceptedAt`, so two
runs that decide the same things write the same hash. `seal` is an HMAC of `contentHash` under the user's key
(docbridge.engine.base.cache): an overlay that an agent (or anyone without the key) wrote is not believed. Writers hold
`overlay.lock` (`overlay_lock`) from their read to their write, so that a decision and an enrichment run never
lose each other's changes. A missing file is no overlay; a corrupt or hash-mismatched
one reads as no overlay too, and says so once per file and process. A read never rewrites the file: an
accepted entry whose target moved (its content hash changed, or the entity or the relation's other endpoint
is gone) is expired in what the read returns, and the next `docbridge enrich` moves it to rejected `expired`.

Pure: nothing here runs an agent (retrieval imports this module).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, write_atomic
from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.safe_io import MAX_ARTIFACT_BYTES, read_regular, real_dirs

OVERLAY_FILE = "overlay.json"
OVERLAY_TYPE = "enrichment-overlay"
SCHEMA_VERSION = 1
EMPTY_OVERLAY_HASH = canonical_hash({"accepted": []})
SIGNAL = {"strong": 1.0, "weak": 0.5}
CANONICAL_SIGNAL = 0.8
_warned: set[str] = set()


def overlay_path(root: Path) -> Path:
    return artifact_dir(root) / OVERLAY_FILE


def _sealed_view(document: dict[str, Any]) -> dict[str, Any]:
    view = {k: v for k, v in document.items() if k not in ("contentHash", "seal", "stats")}
    view["accepted"] = [{k: v for k, v in e.items() if k != "acceptedAt"} for e in document.get("accepted", [])]
    return view


def seal(document: dict[str, Any]) -> str:
    return canonical_hash(_sealed_view(document))


@dataclass(slots=True)
class Overlay:
    accepted: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    snapshot_hash: str | None = None
    content_hash: str | None = None

    def document(self) -> dict[str, Any]:
        def by_id(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sorted(entries, key=lambda e: str(e.get("proposalId", "")))
        doc: dict[str, Any] = {"type": OVERLAY_TYPE, "schemaVersion": SCHEMA_VERSION,
                               "snapshotHash": self.snapshot_hash, "accepted": by_id(self.accepted),
                               "pending": by_id(self.pending), "rejected": by_id(self.rejected),
                               "stats": self.stats}
        doc["contentHash"] = seal(doc)
        return doc

    def ids(self) -> set[str]:
        return {str(e.get("proposalId")) for e in (*self.accepted, *self.pending, *self.rejected)}


def warn_once(path: Path, reason: str) -> None:
    key = f"{path}:{reason}"
    if key in _warned:
        return
    _warned.add(key)
    sys.stderr.write(f"docbridge: {path}: {reason}; no enrichment overlay is used until `docbridge enrich` "
                     "writes a new one.\n")


def read_overlay(root: Path, *, warn: bool = True) -> Overlay | None:
    """The overlay on disk, or None when there is none or it cannot be trusted (said once)."""
    path = overlay_path(root)
    try:
        real_dirs(path.parent, create=False)
        data = read_regular(path, MAX_ARTIFACT_BYTES)  # never through a link, never a FIFO or a device
    except FileNotFoundError:
        return None
    except OSError as exc:
        if warn:
            warn_once(path, f"cannot be read ({exc.strerror or exc})")
        return None
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        if warn:
            warn_once(path, "is not valid JSON")
        return None
    if not isinstance(document, dict) or document.get("type") != OVERLAY_TYPE \
            or document.get("schemaVersion") != SCHEMA_VERSION:
        if warn:
            warn_once(path, f"is not a version {SCHEMA_VERSION} enrichment overlay")
        return None
    lists = [document.get(k) for k in ("accepted", "pending", "rejected")]
    if not all(isinstance(x, list) and all(isinstance(e, dict) for e in x) for x in lists):
        if warn:
            warn_once(path, "has malformed accepted, pending or rejected lists")
        return None
    if document.get("contentHash") != seal(document):
        if warn:
            warn_once(path, "does not match its contentHash (edited or truncated)")
        return None
    if not _sealed_by_user(document):
        if warn:
            warn_once(path, "was not written by Doc Bridge for this user (its seal does not match)")
        return None
    stats = document.get("stats")
    return Overlay(lists[0], lists[1], lists[2], stats if isinstance(stats, dict) else {},  # type: ignore[arg-type]  # the lists were checked to be lists of dicts
                   document.get("snapshotHash"), document["contentHash"])


def _user_seal(content_hash: str) -> str:
    import hashlib
    import hmac

    from docbridge.engine.base.cache import seal_key
    return hmac.new(seal_key(), content_hash.encode("ascii"), hashlib.sha256).hexdigest()


def _sealed_by_user(document: dict[str, Any]) -> bool:
    import hmac
    given = document.get("seal")
    return isinstance(given, str) and hmac.compare_digest(given, _user_seal(str(document.get("contentHash"))))


LOCK_WAIT_SECONDS = 30.0


class OverlayBusy(Exception):
    """Another writer held the overlay for longer than LOCK_WAIT_SECONDS."""


@contextlib.contextmanager
def overlay_lock(root: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold `.docbridge/overlay.lock` (an advisory lock: every writer of the overlay takes it)."""
    import fcntl
    import time
    directory = artifact_dir(root)
    real_dirs(directory, create=True)
    handle = os.open(directory / "overlay.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OverlayBusy("another Doc Bridge process is writing .docbridge/overlay.json (an "
                                      "enrichment run?); try again when it ends.") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(handle)  # releases the lock


def write_overlay(root: Path, overlay: Overlay) -> dict[str, Any]:
    document = overlay.document()
    document["seal"] = _user_seal(document["contentHash"])
    write_atomic(overlay_path(root), (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
                                      + "\n").encode("utf-8"))
    overlay.content_hash = document["contentHash"]
    return document


def entity_hash(entity: Any) -> str:
    """An entity's content hash: its file's, or the hash of its identity for entities without a file."""
    if entity.content_hash:
        return str(entity.content_hash)
    return canonical_hash({"id": entity.id, "kind": entity.kind, "path": entity.path, "name": entity.title,
                           "metadata": {}})


def expired_reason(entry: dict[str, Any], entities: dict[str, Any]) -> str | None:
    """Why an accepted entry no longer applies to the snapshot (None while it is live)."""
    entity = entities.get(entry.get("entity", ""))  # no entity id is empty: a missing one finds nothing
    if entity is None:
        return "entity-gone"
    if entity_hash(entity) != entry.get("targetContentHash"):
        return "target-changed"
    if entry.get("kind") == "propose-relation":
        payload = entry.get("payload", {})
        for end in (payload.get("from"), payload.get("to")):
            if end not in entities:
                return "endpoint-gone"
    return None


def live_entries(overlay: Overlay | None, entities: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The accepted entries that still apply, and the ids of those that expired (the file is not touched)."""
    if overlay is None:
        return [], []
    live, expired = [], []
    for entry in overlay.accepted:
        if expired_reason(entry, entities) is None:
            live.append(entry)
        else:
            expired.append(str(entry.get("proposalId")))
    return live, sorted(expired)


def live_hash(live: list[dict[str, Any]]) -> str:
    if not live:
        return EMPTY_OVERLAY_HASH
    return canonical_hash({"accepted": sorted(({"proposalId": e["proposalId"],
                                                "targetContentHash": e["targetContentHash"]} for e in live),
                                              key=lambda x: str(x["proposalId"]))})


def enabled(config: Any) -> bool:
    intelligence = getattr(config, "intelligence", None)
    return bool(intelligence is not None and intelligence.registry.enabled)


def overlay_source(root: Path, config: Any) -> str | None:
    """What the projection's overlay input is (for the stored projection's freshness): None while the
    registry is disabled, else the overlay file's seal ("none" without a usable overlay)."""
    if not enabled(config):
        return None
    overlay = read_overlay(root, warn=False)
    return overlay.content_hash if overlay is not None else "none"
