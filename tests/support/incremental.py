"""An edit as an editor makes it, and the scan from nothing it must equal."""

from __future__ import annotations

from pathlib import Path

from docbridge.engine.workspace import Workspace


def edit_and_rescan(ws: Workspace, root: Path, path: str, text: str | None) -> Workspace:
    """Write `text` to `path` under `root` (None deletes it), send it to `ws` as the editor's buffer (a deleted
    file is re-read from disk: gone), and return a workspace scanned from nothing over the edited tree."""
    target = root / path
    if text is None:
        target.unlink()
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    ws.update(path, text)
    fresh = Workspace(root, use_cache=False)
    fresh.scan()
    return fresh
