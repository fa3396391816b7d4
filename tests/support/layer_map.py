"""The import drawing of Doc Bridge: its layers, highest first, each with what it imports from the layers below.

    python tests/support/layer_map.py [ROOT]   # or: make layers

Reads the layers from pyproject.toml's import-linter contract and every import (function-local and
`TYPE_CHECKING` ones included) with grimp, in the installed layout (package_view.py). Prints, per layer, its
modules and the number of imports it makes into each lower layer; an import into a higher layer is listed
as a violation (the contract's one declared exception is shown as such). Exit 1 when there is a violation.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import grimp

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from support import package_view

ROOT = Path(__file__).resolve().parents[2]


def layers_of(pyproject: Path) -> tuple[list[list[str]], set[tuple[str, str]]]:
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["type"] == "layers")
    layers = [[m.strip() for m in line.replace("|", ":").split(":")] for line in contract["layers"]]
    ignored: set[tuple[str, str]] = set()
    for rule in contract.get("ignore_imports", []):
        importer, imported = (part.strip() for part in rule.split("->"))
        ignored.add((importer, imported))
    return layers, ignored


def label(members: list[str]) -> str:
    """`docbridge.engine.views : docbridge.engine.governance` -> `views+governance`."""
    return "+".join(m.removeprefix("docbridge.engine.").removeprefix("docbridge.") for m in members)


def layer_index(module: str, layers: list[list[str]]) -> int | None:
    for number, members in enumerate(layers):
        if any(module == m or module.startswith(m + ".") for m in members):
            return number
    return None


def draw(root: Path = ROOT) -> tuple[str, int]:
    view = package_view.build(root, root / ".cache" / "package-view")
    sys.path.insert(0, str(view))
    graph = grimp.build_graph("docbridge")
    layers, ignored = layers_of(root / "pyproject.toml")
    counts: dict[tuple[int, int], int] = {}
    violations: list[str] = []
    exceptions: list[str] = []
    members: dict[int, int] = {}
    for module in sorted(graph.modules):
        here = layer_index(module, layers)
        if here is None:
            continue
        members[here] = members.get(here, 0) + 1
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            there = layer_index(imported, layers)
            if there is None or there == here:
                continue
            if there < here:  # a lower number is a higher layer
                line = f"{module} -> {imported}"
                (exceptions if (module, imported) in ignored else violations).append(line)
                continue
            counts[here, there] = counts.get((here, there), 0) + 1
    lines = []
    for number, names in enumerate(layers):
        lines.append(f"{number + 1:>2}. {label(names)} ({members.get(number, 0)} modules)")
        below = [f"{label(layers[t])} ×{n}" for (h, t), n in sorted(counts.items()) if h == number]
        if below:
            lines.append("      imports from " + ", ".join(below))
    lines.append("")
    for line in exceptions:
        lines.append(f"declared exception: {line}")
    lines += [f"VIOLATION (imports a higher layer): {line}" for line in violations]
    if not violations:
        lines.append("no import runs from a lower layer to a higher one: the layers are a chain without a cycle")
    return "\n".join(lines) + "\n", 1 if violations else 0


if __name__ == "__main__":
    # its own process: grimp finds `docbridge` through the import system, which must see the view first
    text, status = draw(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT)
    sys.stdout.write(text)
    raise SystemExit(status)
