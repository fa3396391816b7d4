"""What a restart shows at once: the diagnostics of the documents that were open when the server last stopped.

An editor restarting its server (a window reload, a crash, a branch switch) reopens the same documents. Their
diagnostics then wait for the libraries to load (0.4 s) and for the first scan. So the server keeps, per folder,
the diagnostics it last sent for each open document together with a hash of the text they were computed from
(`.docbridge/cache/open-diagnostics.json`, sealed like every artifact: written when the folder is ready and at
shutdown). The start-up (`docbridge.lsp.bootstrap`), reading the first messages while the libraries load, publishes a
kept set for a document opened with exactly that text, in the position encoding it was computed for. The set
stands until the full model's diagnostics replace it (a provisional answer does not: it knows less); on a
branch switch it may say what the other branch said for a second, never about other text.

Only the standard library and `docbridge.engine.base.cache` are imported here, so that the start-up can read the file.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("docbridge.lsp")

KEPT = ("cache", "open-diagnostics.json")
KIND = "open-diagnostics"
MAX_KEPT_DIAGNOSTICS = 2000  # a document with more is not kept (its frame is encoded off the loop anyway)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encoding_name(encoding: Any) -> str:
    """`utf-16`, `utf-8`...: the wire name of a position encoding (lsprotocol's enum, or a string)."""
    return str(getattr(encoding, "value", encoding))


def kept_path(root: Path) -> Path:
    from docbridge.engine.base.cache import artifact_dir
    return artifact_dir(root).joinpath(*KEPT)


def write_kept(root: Path, encoding: str, documents: dict[str, tuple[str, list[dict[str, Any]]]]) -> None:
    """Keep, for each open document's uri, the hash of its text and the diagnostics last sent for it."""
    from docbridge.engine.base.cache import write_sealed
    payload = {"encoding": encoding, "documents": {
        uri: {"sha256": digest, "diagnostics": diagnostics} for uri, (digest, diagnostics) in sorted(documents.items())
        if len(diagnostics) <= MAX_KEPT_DIAGNOSTICS}}
    from docbridge.engine.base.safe_io import ArtifactPathError
    try:
        write_sealed(kept_path(root), KIND, payload)
    except (OSError, ArtifactPathError) as exc:  # a read-only checkout, a `.docbridge` that is a file or a link
        log.debug("could not keep the open documents' diagnostics: %s", exc)  # (said to the user already)


def read_kept(root: Path, encoding: str) -> dict[str, tuple[str, list[Any]]]:
    """uri -> (text hash, diagnostics) kept under `root` for `encoding`; empty when there is nothing valid."""
    from docbridge.engine.base.cache import read_sealed
    try:
        loaded = read_sealed(kept_path(root), KIND)
    except Exception:  # a folder that is not one, a link where the artifacts go: nothing kept
        return {}
    if loaded is None:
        return {}
    payload = loaded[1]
    if not isinstance(payload, dict) or payload.get("encoding") != encoding:
        return {}
    documents = payload.get("documents")
    kept = {}
    for uri, entry in (documents.items() if isinstance(documents, dict) else ()):
        if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(
                entry.get("diagnostics"), list):
            kept[uri] = (entry["sha256"], entry["diagnostics"])
    return kept


def open_diagnostics(server: Any, folder: Any) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """The diagnostics last sent for each document open in `folder`, by uri with the hash of its text: only
    those the current model computed from the text now in the buffer."""
    state = folder.state
    kept = {}
    for uri, (text, diagnostics) in list(folder.open_sent.items()):
        owner, path = server.folders.locate(uri)
        if owner is not folder or path is None or state is None:
            continue
        if server.convert.buffer_text(uri) == text and state.text_of(path) == text:
            kept[uri] = (text_hash(text), diagnostics)
    return kept


async def keep(server: Any, folder: Any) -> None:
    """Write what a restart shows for `folder` (off the event loop)."""
    import asyncio
    if folder.state is None or folder.refused:
        return
    documents = open_diagnostics(server, folder)
    await asyncio.to_thread(write_kept, folder.root, encoding_name(server.convert.encoding), documents)


__all__ = ["encoding_name", "keep", "open_diagnostics", "read_kept", "text_hash", "write_kept"]
