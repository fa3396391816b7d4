"""The installed package's layout, built from the repository's folders, for tools that read files, not imports.

setuptools installs `engine/` as `docbridge.engine` and `lsp/` as `docbridge.lsp` (pyproject.toml's
`package-dir`). The interpreter follows that mapping; import-linter and mypy walk a package's folder instead,
so they are run in a folder where `docbridge/engine` and `docbridge/lsp` exist: real directories, one symbolic
link per source file, so an error names a path that leads back to the file in the repository.

    python tests/support/package_view.py [ROOT] [DEST]    # prints DEST (default ROOT/.cache/package-view)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

MAPPED = {"docbridge": "docbridge", "docbridge/engine": "engine", "docbridge/lsp": "lsp"}


def build(root: Path, dest: Path) -> Path:
    """Rebuild `dest/docbridge` from `root`; returns `dest`."""
    shutil.rmtree(dest / "docbridge", ignore_errors=True)
    for target, source in MAPPED.items():
        base = root / source
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            link = dest / target / path.relative_to(base)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path.resolve())
    return dest


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else ".").resolve()
    dest = Path(argv[1]).resolve() if len(argv) > 1 else root / ".cache" / "package-view"
    print(build(root, dest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
