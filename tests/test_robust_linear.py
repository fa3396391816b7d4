"""Analysis time grows linearly with the Markdown input, whatever its shape; pathological shapes beyond the
analyzer's budgets are skipped with a counted reason. No timing assertions (this machine is shared): the
work is counted, or bounded generously."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from docbridge.engine.discovery import markdown, references
from docbridge.engine.discovery.markdown import MAX_HEADINGS, analyze_markdown
from docbridge.engine.workspace import Workspace

from docbridge.bench.robust import (
    alias_bomb,
    anchor_headings,
    autolinks,
    bracket_lines,
    code_spans,
    deep_quotes,
    heading_count,
    huge_line,
    long_line,
    nested_quotes,
    open_brackets,
    path_lines,
    write_repo,
)
from tests.conftest import docbridge

pytestmark = pytest.mark.attack("Markdown shapes")

GENEROUS = 60  # seconds for a cold scan of a 1 MB document; main took minutes on the quadratic shapes


def _scan(root: Path, timeout: float = GENEROUS) -> dict[str, Any]:
    result = docbridge("scan", "--root", str(root), "--json", "--no-cache", "--jobs", "1", timeout=timeout)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def _expected_missing_anchors(n: int) -> int:
    """`anchor_headings(n)`: own anchors `#item-(n-i)` miss past the recorded headings, and every
    `configuration.md#overview` misses."""
    recorded = min(n, MAX_HEADINGS)
    return sum(1 for i in range(n) if n - i >= recorded) + n


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_headings_with_anchor_links_scan_and_report_every_missing_anchor(tmp_path: Path, size: int) -> None:
    root = write_repo(tmp_path / "repo", anchor_headings(size))
    summary = _scan(root)
    assert summary["skipped"] == {}
    assert summary["unresolved"] == {"anchors": _expected_missing_anchors(heading_count(size))}
    assert summary["relations"]["links-to"] == 1 and summary["relations"]["mentions"] == 1


@pytest.mark.parametrize("size", [250_000, 1_000_000])
def test_code_spans_paths_quotes_and_long_paragraphs_scan_within_a_generous_bound(tmp_path: Path,
                                                                                   size: int) -> None:
    for name, text in (("paths", path_lines(size)), ("spans", code_spans(size)), ("quotes", nested_quotes(size)),
                       ("bomb", alias_bomb(size))):
        root = write_repo(tmp_path / name, text)
        summary = _scan(root)
        assert summary["skipped"] == {}, name
        assert summary["entities"]["document"] == 2, name
        if name in ("paths", "bomb"):
            assert summary["relations"]["mentions"] == 1, name
        if name == "paths":
            assert summary["relations"]["links-to"] == 1


def test_a_megabyte_of_unclosed_brackets_scans_within_a_generous_bound(tmp_path: Path) -> None:
    text = open_brackets(1_000_000)
    root = write_repo(tmp_path / "repo", text + "\nSee [[configuration]] and [x](./configuration.md).\n")
    summary = _scan(root)  # main searched for `]]` from every `[[` to the end of the paragraph: minutes
    assert summary["skipped"] == {}
    assert summary["relations"]["links-to"] == 1
    facts = analyze_markdown("docs/big.md", text[:20_000] + "\n[[configuration]] [[a|b]]\n")
    assert [(link.kind, link.target) for link in facts.links] == [("wiki", "configuration"), ("wiki", "a")]


def test_lines_of_unclosed_brackets_try_no_link_and_scan_within_a_generous_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_it.helpers import parseLinkLabel
    calls = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return parseLinkLabel(*args, **kwargs)
    text = bracket_lines(1_000_000)
    md = markdown.parser()
    monkeypatch.setattr(md.helpers, "parseLinkLabel", counted)
    facts = analyze_markdown("docs/big.md", text + "See [[configuration]] and [x](./configuration.md) and [^n].\n")
    # a link label is looked for only after a `[` some `]` closes: 3 here, not one per `[` (a million)
    assert len(calls) <= 3
    assert sorted((link.kind, link.target) for link in facts.links) == [("inline", "./configuration.md"),
                                                                       ("wiki", "configuration")]
    summary = _scan(write_repo(tmp_path / "repo", bracket_lines(900_000)))  # under the 1 MiB file cap
    assert summary["skipped"] == {}


def test_autolinks_in_a_long_paragraph_see_only_up_to_the_next_space(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = 2000
    text = autolinks(lines * 60)
    seen: list[int] = []
    real_search = markdown._AUTOLINK_SPACE.search

    class Spy:
        def search(self, src: str, pos: int) -> Any:
            found = real_search(src, pos)
            seen.append((found.start() if found else len(src)) - pos)
            return found

    monkeypatch.setattr(markdown, "_AUTOLINK_SPACE", Spy())
    monkeypatch.setattr(markdown, "_space_after", (None, 0, 0))
    markdown._INLINE_MEMO.clear()
    facts = analyze_markdown("docs/a.md", text)
    autolinked = [link for link in facts.links if link.kind == "autolink"]
    assert len(autolinked) == 3 * text.count("\n")
    assert autolinked[1].target.startswith("mailto:a0@ex.org") and autolinked[2].target == "http://www.ex0.com"
    assert sum(seen) < len(text)  # each stretch up to a space is searched once (main copied the rest of the run)


def test_budgets_skip_with_a_counted_reason(tmp_path: Path) -> None:
    cases = {"deep": (deep_quotes(50_000), "nesting-too-deep"), "line": (long_line(150_000), "line-too-long"),
             "under-cap": (huge_line(1024 * 1024 - 1024), "line-too-long"),
             "over-cap": (huge_line(10_000_000), "too-large")}
    files = {f"docs/{name}.md": text for name, (text, _) in cases.items()}
    root = write_repo(tmp_path / "repo", "# Fine\n\nA [link](./configuration.md).\n")
    for path, text in files.items():
        (root / path).write_text(text, encoding="utf-8")
    summary = _scan(root, timeout=120)
    assert summary["skipped"] == {"line-too-long": 2, "nesting-too-deep": 1, "too-large": 1}
    assert summary["entities"]["document"] == 2
    snapshot = json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    assert {s["path"]: s["reason"] for s in snapshot["coverage"]["skipped"]} == {
        f"docs/{name}.md": reason for name, (_, reason) in cases.items()}


def test_the_nesting_and_line_budgets() -> None:
    assert markdown.budget_reason(">" * 16 + " fine\n") is None
    assert markdown.budget_reason(">" * 17 + " deep\n") == "nesting-too-deep"
    assert markdown.budget_reason("- " * 8 + "fine\n") is None
    assert markdown.budget_reason("- " * 9 + "deep\n") == "nesting-too-deep"
    assert markdown.budget_reason("* " * 40 + "\n") is None  # a thematic break
    assert markdown.budget_reason("x" * markdown.MAX_LINE_CHARS + "\n") is None
    assert markdown.budget_reason("x" * (markdown.MAX_LINE_CHARS + 1)) == "line-too-long"
    # the analyzer on its own (editor buffers) stays bounded: no facts from such a document
    facts = analyze_markdown("docs/deep.md", ">" * 200_000 + " [a](b.md)\n")
    assert facts.links == () and facts.headings == ()


def test_an_edit_past_a_budget_leaves_the_model_as_a_fresh_scan_would(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", "# Big\n\nSee [config](./configuration.md).\n")
    ws = Workspace(root, use_cache=False)
    ws.scan()
    assert "docs/big.md" in ws.facts
    deep = "# Big\n\n" + ">" * 40 + " see [config](./configuration.md)\n"
    ws.update("docs/big.md", deep)
    assert ws.skipped.get("docs/big.md") == "nesting-too-deep" and "docs/big.md" not in ws.facts
    (root / "docs/big.md").write_text(deep, encoding="utf-8")
    fresh = Workspace(root, use_cache=False)
    fresh.scan()
    assert fresh.skipped.get("docs/big.md") == "nesting-too-deep"
    ws.update("docs/big.md", "# Big again\n")
    assert "docs/big.md" not in ws.skipped and "docs/big.md" in ws.facts


class _Counting:
    """A compiled pattern whose `sub` calls are counted."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.calls = pattern, 0

    def sub(self, *args: Any) -> Any:
        self.calls += 1
        return self.pattern.sub(*args)


def test_missing_anchors_cost_one_pass_over_the_headings_not_one_each(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    n = 600
    text = "".join(f"## Part {i}\n\nSee [gone](#gone-{i}) and [there](#part-{i}).\n\n" for i in range(n))
    root = write_repo(tmp_path / "repo", text)
    counting = _Counting(markdown._COMBINING)
    monkeypatch.setattr(markdown, "_COMBINING", counting)  # site slugs (docbridge.engine.discovery.markdown)
    getattr(markdown.site_slug, "cache_clear", lambda: None)()
    extract_calls = []
    real_extract = references.process.extract
    monkeypatch.setattr(references.process, "extract",
                        lambda *a, **k: extract_calls.append(1) or real_extract(*a, **k))
    ws = Workspace(root, use_cache=False)
    ws.scan()
    statuses = [r.status for r in ws.documents["docs/big.md"].references if r.origin == "link"]
    assert statuses.count("anchor-missing") == n and statuses.count("resolved") == n
    assert counting.calls <= n + 10  # each heading's site slug once (main: once per heading per miss)
    assert len(extract_calls) == n  # one suggestion search per distinct missing anchor


def test_positions_in_a_long_paragraph_are_found_without_walking_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = 3000
    text = "".join(f"Line {i} names `src/a{i}.ts` and [b](#x{i}).\n" for i in range(lines))
    touched = [0]

    class Starts(list):  # type: ignore[type-arg]
        def __getitem__(self, index: Any) -> Any:
            touched[0] += 1
            return super().__getitem__(index)

        def __iter__(self) -> Any:
            for item in super().__iter__():
                touched[0] += 1
                yield item

    real_bases = markdown._Positions.bases

    def bases(self: Any, inline: Any) -> Any:
        starts, found = real_bases(self, inline)
        return Starts(starts), found

    monkeypatch.setattr(markdown._Positions, "bases", bases)
    facts = analyze_markdown("docs/p.md", text)
    assert len(facts.code_spans) == lines and len(facts.links) == lines
    assert [s.line for s in facts.code_spans] == list(range(lines))
    assert facts.links[-1].line == lines - 1 and facts.links[-1].column == text.split("\n")[-2].index("[b]")
    assert touched[0] < 40 * 4 * lines  # main walked every line start for every span: ~ lines * lines


def test_bench_robust_prints_a_row_per_case_and_size(tmp_path: Path) -> None:
    result = docbridge("bench", "robust", "--bytes", "2000", "4000", "--case", "anchors", "--case", "deep-quotes",
                       "--case", "huge-line", "--workdir", str(tmp_path), "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "robust" and figures["sizes"] == [2000, 4000]
    rows = figures["rows"]
    assert [(r["case"], r["size"]) for r in rows] == [
        ("anchors", 2000), ("anchors", 4000), ("deep-quotes", 2000), ("deep-quotes", 4000),
        ("huge-line", 10_000_000), ("huge-line", 1024 * 1024 - 1024)]
    for row in rows:
        assert row["exit"] == 0 and row["seconds"] > 0 and row["peak_rss_mb"] > 0
    assert rows[0]["ratio"] is None and rows[1]["ratio"] > 0
    assert rows[1]["unresolved"]["anchors"] == _expected_missing_anchors(heading_count(4000))
    assert rows[2]["skipped"] == {"nesting-too-deep": 1}
    assert rows[4]["skipped"] == {"too-large": 1} and rows[5]["skipped"] == {"line-too-long": 1}
    assert list(tmp_path.iterdir()) == []  # the generated repositories are removed
    text = docbridge("bench", "robust", "--bytes", "2000", "--case", "paths", "--workdir", str(tmp_path))
    assert text.returncode == 0 and text.stdout.startswith("paths") and " MB " in text.stdout
    assert docbridge("bench", "robust", "--case", "nope").returncode == 2


def test_bench_loop_drives_the_server_through_open_edit_and_close_of_each_case(tmp_path: Path) -> None:
    result = docbridge("bench", "loop", "--bytes", "80000", "--case", "anchors", "--case", "code-spans",
                       "--workdir", str(tmp_path), "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "loop" and figures["size"] == 80000 and figures["goal_ms"] == 100
    rows = figures["rows"]
    assert [r["case"] for r in rows] == ["anchors", "code-spans"]
    for row in rows:
        assert row["diagnosed"] is True and row["bytes"] > 70000
        steps = [row["open_ms"], row["edit_ms"], row["close_ms"]]
        assert all(ms > 0 for ms in steps) and row["worst_ms"] == max(steps)
    assert figures["worst_ms"] == max(r["worst_ms"] for r in rows)
    assert list(tmp_path.iterdir()) == []
    assert docbridge("bench", "loop", "--bytes", "1", "2").returncode == 2
    assert docbridge("bench", "loop", "--case", "nope").returncode == 2
