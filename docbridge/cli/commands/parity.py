"""`docbridge parity`: the claims public documents make, held to the repository's facts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, emit, open_workspace, root_dir

NAME = "parity"
HELP = "hold the claims public documents make to the repository's facts"
DESCRIPTION = ("Check every claim of the sealed registry (default docs/parity/public-claims-v1.json) against its "
               "evidence on each public surface: stale, missing, contradicting or not analysed.")
EPILOG = "Exit 0 when no finding blocks, 1 when one does, 2 on a broken registry or a usage error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--text", action="store_true", help="one line per finding, with its remediation")
    parser.add_argument("--claims", metavar="FILE", help="a registry somewhere else")
    parser.add_argument("--init", action="store_true",
                        help="write a starter registry from the numbers and commands README.md states")


def cli_commands() -> set[str]:
    """The commands `docbridge` has (the table)."""
    from docbridge.cli.commands import COMMANDS
    return {command.NAME for command in COMMANDS}


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.governance import doctor_report
    from docbridge.engine.base.cache import write_atomic
    from docbridge.engine.governance import parity
    root = root_dir(args.root)
    shown = args.claims or parity.DEFAULT_REGISTRY
    file = root / shown if not args.claims else Path(args.claims)
    cache: dict[str, Any] = {}

    def workspace() -> Any:
        if "ws" not in cache:
            cache["ws"] = open_workspace(root)
        return cache["ws"]

    def counts() -> dict[str, int]:
        state = workspace().ensure_resolved()
        layout = state.universe.layout
        return {"document": len(state.universe.documents), "module": len(state.universe.modules),
                "area": len(layout.areas) if layout else 0, "package": len(layout.packages) if layout else 0}

    if args.init:
        if file.exists():
            raise UsageError(f"{shown}: a claims registry already exists; edit it (and reseal) instead.")
        readme = root / "README.md"
        text = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else ""
        registry = parity.starter_registry(root, text, counts(), cli_commands())
        write_atomic(file, (json.dumps(registry, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        sys.stdout.write(f"wrote {shown} with {len(registry['claims'])} claim(s) from README.md\n")
        return EXIT_OK
    try:
        registry = parity.load_registry(file, shown)
    except parity.RegistryError as exc:
        raise UsageError(str(exc)) from exc
    facts = {"counts": counts, "commands": cli_commands, "doctor": lambda: doctor_report(root, None)}
    report = parity.check(registry, root, facts)
    emit(parity.render_text(report) if args.text else json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK if report["ok"] else EXIT_FINDINGS
