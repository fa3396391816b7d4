"""A copy of this checkout as a new user would have it: the files git knows or would add."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def checkout_copy(target: Path) -> Path:
    """Copy the files of this checkout that git knows or would add (no .venv, caches or build output) to
    `target`; returns `target`."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode("utf-8").split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    return target
