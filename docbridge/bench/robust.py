"""`docbridge bench robust`: cold scans of pathological Markdown at growing sizes (figures, not a test).

Each case writes one small repository (a module, a target document and `docs/big.md` of about the given
size) and runs `docbridge scan` on it in a fresh process; wall time and peak RSS are that process's alone
(`os.wait4`). Linear analysis shows as a time ratio near 2 per doubling of the input.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_SIZES = (250_000, 500_000, 1_000_000)
SMALL_SIZES = (25_000, 50_000)
LARGE_SIZES = (1_000_000, 2_000_000, 4_000_000)


def _repeat_to(size: int, line: Callable[[int], str], sep: str = "") -> str:
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        piece = line(i) + sep
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)


def path_lines(size: int) -> str:
    """(a) one backticked path and one link per line."""
    return _repeat_to(size, lambda i: f"Line {i}: see `src/billing/tax.ts` and [config](./configuration.md).\n\n")


def heading_count(size: int) -> int:
    line = "## Item 0000\n\nSee `src/billing/tax.ts` and [doc](#item-0000) and [x](./configuration.md#overview).\n\n"
    return max(1, size // len(line))


def anchor_headings(size: int) -> str:
    """(b) headings, each followed by an anchor link to another heading and a link with a missing anchor."""
    n = heading_count(size)
    return "".join(f"## Item {i}\n\nSee `src/billing/tax.ts` and [doc](#item-{n - i}) and "
                   f"[x](./configuration.md#overview).\n\n" for i in range(n))


def code_spans(size: int) -> str:
    """(c) one paragraph of short code spans, twenty to a line."""
    return _repeat_to(size, lambda i: f"`a{i}`" + ("\n" if i % 20 == 19 else " ")) + "\n"


def nested_quotes(size: int) -> str:
    """(d) lines of growing blockquote nesting, within the nesting budget (analyzed)."""
    return _repeat_to(size, lambda i: ">" * (i % 16) + f" quote {i}\n")


def deep_quotes(size: int) -> str:
    """(d) lines of growing blockquote nesting up to 200 levels, then one line of up to 50,000 `>`: over the
    nesting budget, a counted skip."""
    head = _repeat_to(size - min(size // 2, 50_000), lambda i: ">" * (i % 200) + f" quote {i}\n")
    return head + ">" * max(size - len(head), 1) + " deep\n"


def long_line(size: int) -> str:
    """(e) a document of one line (links and code spans in it): over the line budget, a counted skip."""
    return _repeat_to(size, lambda i: f"word `x{i}` [l](#h{i % 50}) ", "") + "\n"


def wide_lines(size: int) -> str:
    """Lines of 90,000 characters (prose with code spans and links), each just within the line budget: analyzed."""
    line = _repeat_to(90_000, lambda i: f"word `x{i}` [l](#h{i % 50}) ", "")[:90_000].rstrip("[(`") + "\n\n"
    return _repeat_to(size, lambda i: line)


def open_brackets(size: int) -> str:
    """Unclosed `[[` and `[` in one paragraph (link and wiki-link rules look ahead for a closing bracket)."""
    return _repeat_to(size, lambda i: f"[[wiki {i} [label {i} [[x\n")


def bracket_lines(size: int) -> str:
    """Lines of 90,000 `[` (`[[` 45,000 times), each its own paragraph, no `]` anywhere: the link, image and
    footnote rules each scanned for a closing bracket from every `[`."""
    return _repeat_to(size, lambda i: "[[" * 45_000 + "\n\n")


def autolinks(size: int) -> str:
    """Bare URLs, addresses and www. links (GFM autolinks) in one paragraph."""
    return _repeat_to(size, lambda i: f"see https://ex.com/p{i} or a{i}@ex.org or www.ex{i}.com\n")


def alias_bomb(size: int) -> str:
    """(f) a YAML alias bomb in the frontmatter (9 levels of 9 aliases), then `size` bytes of prose in one
    paragraph."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        levels.append(f"a{level}: &a{level} [{refs}]")
    body = _repeat_to(size, lambda i: f"Prose line {i} with `src/billing/tax.ts`.\n")
    return "---\ntitle: Bomb\n" + "\n".join(levels) + "\n---\n\n# Bomb\n\n" + body


CASES: dict[str, Callable[[int], str]] = {
    "paths": path_lines, "anchors": anchor_headings, "code-spans": code_spans, "quotes": nested_quotes,
    "deep-quotes": deep_quotes, "brackets": open_brackets, "bracket-lines": bracket_lines, "autolinks": autolinks,
    "long-line": long_line, "wide-lines": wide_lines, "alias-bomb": alias_bomb}
# one size whatever the sizes asked: a line of 10 MB (over the file size cap) and one just under the cap
FIXED_SIZES: dict[str, tuple[int, ...]] = {"huge-line": (10_000_000, 1024 * 1024 - 1024)}


def huge_line(size: int) -> str:
    """(e) one line of `size` bytes."""
    return "x" * (size - 1) + "\n"


CASES["huge-line"] = huge_line


DEFAULT_MAX_FILE_BYTES = 1024 * 1024


def write_repo(root: Path, big: str, max_file_bytes: int | None = None) -> Path:
    """A small repository with `docs/big.md` holding `big` (and a config raising the file size cap to
    `max_file_bytes`, when given)."""
    if root.exists():
        shutil.rmtree(root)
    (root / "src" / "billing").mkdir(parents=True)
    if max_file_bytes is not None:
        (root / "doc-bridge.config.json").write_text(json.dumps(
            {"schemaVersion": 1, "limits": {"max_file_bytes": max_file_bytes}}) + "\n")
    (root / "docs").mkdir()
    (root / "package.json").write_text('{"name": "robust", "version": "1.0.0"}\n')
    (root / "src" / "billing" / "tax.ts").write_text("export function tax(x: number): number { return x; }\n")
    (root / "docs" / "configuration.md").write_text("# Configuration\n\n## Settings\n\nNothing here.\n")
    (root / "docs" / "big.md").write_text(big, encoding="utf-8")
    return root


def run_scan(root: Path) -> dict[str, Any]:
    """A cold `docbridge scan --json` of `root` in a fresh process: wall seconds, peak RSS (MB), summary."""
    command = [sys.executable, "-m", "docbridge.cli.main", "scan", "--root", str(root), "--no-cache", "--json",
               "--jobs", "1"]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    try:
        summary = json.loads(text)
    except ValueError:
        summary = None
    return {"seconds": round(seconds, 3), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "exit": process.returncode, "summary": summary}


def bench_robust(sizes: list[int], workdir: Path | None, as_json: bool, cases: list[str] | None = None) -> int:
    base = Path(tempfile.mkdtemp(prefix="docbridge-robust-", dir=workdir))
    rows: list[dict[str, Any]] = []
    try:
        for case in cases or list(CASES):
            previous: dict[str, Any] | None = None
            for size in FIXED_SIZES.get(case, sizes):
                text = CASES[case](size)
                raise_cap = case not in FIXED_SIZES and len(text.encode("utf-8")) > DEFAULT_MAX_FILE_BYTES
                root = write_repo(base / f"{case}-{size}", text, 2 * size + 4096 if raise_cap else None)
                result = run_scan(root)
                summary = result.pop("summary") or {}
                row = {"case": case, "size": size, "bytes": len(text.encode("utf-8")), **result,
                       "skipped": _skipped(summary), "unresolved": _unresolved(summary), "ratio": None}
                if previous is not None and previous["seconds"] > 0 and size > previous["size"]:
                    row["ratio"] = round(row["seconds"] / previous["seconds"], 2)
                rows.append(row)
                previous = row
                shutil.rmtree(root, ignore_errors=True)
                if not as_json:
                    _print_row(row)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if as_json:
        print(json.dumps({"benchmark": "robust", "sizes": sizes, "rows": rows}, indent=2))
    return 0


def _skipped(summary: dict[str, Any]) -> dict[str, int]:
    skipped = summary.get("skipped") if isinstance(summary, dict) else None
    return dict(skipped) if isinstance(skipped, dict) else {}


def _unresolved(summary: dict[str, Any]) -> dict[str, int]:
    unresolved = summary.get("unresolved") if isinstance(summary, dict) else None
    return dict(unresolved) if isinstance(unresolved, dict) else {}


def _print_row(row: dict[str, Any]) -> None:
    ratio = f"x{row['ratio']:.2f}" if row["ratio"] is not None else "-"
    skipped = ", ".join(f"{r} {n}" for r, n in sorted(row["skipped"].items())) or "-"
    print(f"{row['case']:<11} {row['bytes']:>9,} B  {row['seconds']:>7.2f} s  {ratio:>6}  "
          f"{row['peak_rss_mb']:>7.1f} MB  exit {row['exit']}  skipped: {skipped}", flush=True)
