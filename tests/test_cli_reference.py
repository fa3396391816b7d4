"""The command line reference in docs/cli.md is what the parser renders now (docbridge/cli/reference.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docbridge.cli import reference
from docbridge.cli.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"


def test_docs_cli_md_holds_the_reference_the_parser_renders() -> None:
    written = reference.generated_part(PAGE.read_text(encoding="utf-8"))
    assert written == reference.render_reference(), (
        f"docs/cli.md's command line reference differs from the parser's; regenerate it: .venv/bin/"
        f"{reference.REGENERATE}")


def test_the_reference_has_every_command_in_the_tables_order() -> None:
    text = reference.render_reference()
    headings = [line.removeprefix("### `").removesuffix("`") for line in text.splitlines()
                if line.startswith("### `")]
    expected = ["docbridge"]
    for command in COMMANDS:
        expected.append(f"docbridge {command.NAME}")
        if command.NAME == "study":
            expected.append("docbridge study expectations")  # a subcommand follows its command
    assert headings == expected


def test_the_reference_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    narrow = reference.render_reference()
    monkeypatch.setenv("COLUMNS", "300")
    assert reference.render_reference() == narrow
    assert max(len(line) for line in narrow.splitlines() if not line.startswith("<!--")) <= reference.WIDTH


def test_splicing_keeps_the_hand_written_page(tmp_path: Path) -> None:
    page = f"# Title\n\nintro\n\n{reference.BEGIN}\nold\n{reference.END}\n\nafter\n"
    spliced = reference.splice(page, "new\n")
    assert spliced == f"# Title\n\nintro\n\n{reference.BEGIN}\nnew\n{reference.END}\n\nafter\n"
    assert reference.generated_part(spliced) == "new\n"
    target = tmp_path / "cli.md"
    target.write_text(page, encoding="utf-8")
    assert reference.main(["--check", str(target)]) == 1
    assert reference.main(["--write", str(target)]) == 0
    assert reference.main(["--check", str(target)]) == 0
    with pytest.raises(ValueError):
        reference.generated_part("no markers here")
