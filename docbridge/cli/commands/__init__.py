"""The table of commands: one module per command, in the order `docbridge --help` lists them.

Each module declares its name and help texts, every option it takes (`add_arguments`) and one handler (`run`)
that dispatches on those options; `docbridge.cli.main` builds the parser from this table and nothing else adds
to a command. A module imports only what building the parser needs; its handler imports the engine.
"""

from __future__ import annotations

import argparse
from typing import Protocol

from docbridge.cli.commands import (
    ask,
    audit,
    bench,
    check,
    doctor,
    enrich,
    fix,
    gate,
    index,
    init,
    listing,
    lookup,
    lsp,
    mcp,
    parity,
    query,
    reconcile,
    render,
    retrieve,
    scan,
    search,
    study,
    suggest,
)
from docbridge.cli.commands import map as map_command


class Command(Protocol):
    """A command module: `docbridge NAME`, its line in `docbridge --help` (HELP), the DESCRIPTION and EPILOG of
    `docbridge NAME --help`, its options, and its handler, which returns the exit code."""

    @property
    def NAME(self) -> str: ...

    @property
    def HELP(self) -> str: ...

    @property
    def DESCRIPTION(self) -> str: ...

    @property
    def EPILOG(self) -> str | None: ...

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMANDS: tuple[Command, ...] = (scan, init, check, search, retrieve, query, lookup, lsp, bench, mcp, index, listing,
                                 ask, reconcile, audit, suggest, doctor, gate, parity, study, render, map_command,
                                 enrich, fix)


def command_named(name: str) -> Command:
    """The command `docbridge NAME` runs."""
    return {command.NAME: command for command in COMMANDS}[name]


__all__ = ["COMMANDS", "Command", "command_named"]
