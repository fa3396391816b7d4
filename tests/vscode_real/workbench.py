"""Driving VS Code's workbench in a browser page (Playwright, sync API) the way a person does: the command
palette, Quick Open, Go to Line, the keyboard, clicks. Every wait polls the UI until a condition holds or a
timeout passes; nothing waits a fixed time."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

QUICK_INPUT = ".quick-input-widget"
QUICK_ROWS = ".quick-input-widget .quick-input-list .monaco-list-row"
_FILE_ROW = re.compile(r"^\d+ problems? in file (?P<file>.+) of folder (?P<folder>.+)$")
_MARKER = re.compile(r"\bdocbridge\s*\(?\s*(?P<code>[A-Z_]+)\s*\)?\s*\[Ln (?P<line>\d+), Col (?P<col>\d+)\]")


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    code: str
    line: int  # 1-based, as the Problems panel shows it


class Workbench:
    def __init__(self, page: Any, screenshots: Path, timeout: float = 30) -> None:
        self.page = page
        self.screenshots = screenshots
        self.timeout = timeout
        self.shots = 0

    # ---- waiting

    def poll(self, what: str, probe: Callable[[], T | None], timeout: float | None = None) -> T:
        """`probe()` until it returns something truthy; fails naming `what` after the timeout."""
        deadline = time.monotonic() + (timeout or self.timeout)
        last: Any = None
        while True:
            try:
                last = probe()
            except Exception as exc:  # an element that is being re-rendered: try again
                last = exc
            if last and not isinstance(last, Exception):
                return last
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what} (last seen: {last!r})")
            self.page.wait_for_timeout(100)

    def screenshot(self, name: str) -> Path:
        self.shots += 1
        path = self.screenshots / f"{self.shots:02d}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
        self.page.screenshot(path=str(path))
        return path

    # ---- palette, quick input, editors

    def quick_input_title(self) -> str:
        title = self.page.locator(f"{QUICK_INPUT} .quick-input-title")
        return title.inner_text() if title.is_visible() else ""

    def quick_rows(self) -> list[dict[str, str]]:
        """The rows of the open quick pick, top to bottom, read in one go (the list re-renders as it fills)."""
        rows: list[dict[str, str]] = self.page.evaluate("""() => [...document.querySelectorAll(
            '.quick-input-widget .quick-input-list .monaco-list-row')]
            .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
            .map(row => ({label: row.getAttribute('aria-label') || '',
                          name: row.querySelector('.label-name')?.innerText || '',
                          description: row.querySelector('.label-description')?.innerText || ''}))""")
        return [{key: value.replace("\xa0", " ").strip() for key, value in row.items()} for row in rows]

    def run_command(self, title: str) -> None:
        """Runs a command from the command palette: the entry whose title is exactly `title`."""
        self.escape_quick_input()
        self.page.keyboard.press("F1")
        self.page.locator(f"{QUICK_INPUT} input").wait_for(state="visible")
        self.page.keyboard.type(title)

        def entry() -> Any:
            names = [row["name"] for row in self.quick_rows()]
            return self.page.locator(QUICK_ROWS).nth(names.index(title)) if title in names else None

        self.poll(f"the palette entry {title!r}", entry).click()

    def escape_quick_input(self) -> None:
        if self.page.locator(QUICK_INPUT).is_visible():
            self.page.keyboard.press("Escape")
            self.poll("the quick input to close", lambda: not self.page.locator(QUICK_INPUT).is_visible())

    def open_file(self, relative: str) -> None:
        """Quick Open (Ctrl+P) with a workspace-relative path."""
        self.escape_quick_input()
        self.page.keyboard.press("Control+p")
        self.page.locator(f"{QUICK_INPUT} input").wait_for(state="visible")
        self.page.keyboard.type(relative)
        folder, _, name = relative.rpartition("/")
        self.poll(f"{relative} first in Quick Open", lambda: [(row["name"], row["description"]) for row in
                                                               self.quick_rows()[:1]] == [(name, folder)])
        self.page.keyboard.press("Enter")
        self.poll(f"{relative} in the editor", lambda: self.active_path() == relative)

    def active_path(self) -> str:
        """The active editor's path from its breadcrumbs (`docs/billing.md`), or ''."""
        crumbs = self.page.locator(".editor-group-container.active .breadcrumbs-control .monaco-breadcrumb-item")
        parts = []
        for index in range(crumbs.count()):
            text = crumbs.nth(index).inner_text().strip()
            parts.append(text)
            if "." in text:  # the file name ends the path; symbols follow it
                break
        return "/".join(parts)

    def active_tab(self) -> str:
        tab = self.page.locator(".editor-group-container.active .tab.active")
        return (tab.first.get_attribute("aria-label") or "") if tab.count() else ""

    def go_to(self, line: int, column: int) -> None:
        """Go to Line (Ctrl+G), 1-based line and column."""
        self.escape_quick_input()
        self.page.keyboard.press("Control+g")
        self.page.locator(f"{QUICK_INPUT} input").wait_for(state="visible")
        self.page.keyboard.type(f"{line}:{column}")
        # Enter acts on the widget's answer to what was typed: wait until it says where it goes
        self.page.locator(f"{QUICK_INPUT} .monaco-list-row").filter(has_text=f"line {line}").first.wait_for(
            state="visible")
        self.page.keyboard.press("Enter")
        self.poll(f"the cursor at {line}:{column}", lambda: self.cursor() == (line, column))

    def cursor(self) -> tuple[int, int] | None:
        item = self.page.locator("[id='status.editor.selection']")
        match = re.search(r"Ln (\d+), Col (\d+)", item.inner_text()) if item.count() else None
        return (int(match.group(1)), int(match.group(2))) if match else None

    def editor_text(self) -> str:
        """The rendered lines of the active editor (Monaco draws spaces as no-break spaces)."""
        lines = self.page.locator(".editor-group-container.active .monaco-editor .view-lines")
        return lines.first.inner_text().replace("\xa0", " ") if lines.count() else ""

    # ---- status bar and Problems panel

    def status_item(self, text: str) -> str:
        items = self.page.locator("#workbench\\.parts\\.statusbar .statusbar-item").filter(has_text=text)
        return items.first.inner_text().strip() if items.count() else ""

    def problem_counts(self) -> str:
        item = self.page.locator("[id='status.problems']")
        return (item.get_attribute("aria-label") or "") if item.count() else ""

    def problem_total(self) -> int:
        return sum(int(n) for n in re.findall(r"\d+", self.problem_counts()))

    def show_problems(self) -> None:
        """The Problems panel, maximized: its list renders only the rows in view."""
        self.run_command("Problems: Focus on Problems View")
        self.page.locator(".markers-panel").wait_for(state="visible")
        panel = self.page.locator(".part.panel").first
        viewport = self.page.viewport_size or {"height": 0}

        def maximized() -> bool:
            box = panel.bounding_box()
            return box is not None and box["height"] > 0.8 * viewport["height"]

        if not maximized():
            self.page.locator(".part.panel .codicon-panel-maximize").first.click()
            self.poll("the maximized panel", maximized)

    def problems(self, source: str = "docbridge") -> list[Problem]:
        """The problems of `source` in the Problems panel (file, code, line), read once the panel lists as
        many problems as the status bar counts. Rows: files (level 1), problems (2), related locations (3)."""
        def read() -> tuple[list[tuple[str, str, str]]] | None:
            rows = [(row["level"], row["label"], row["text"]) for row in self.page.evaluate("""() => [
                ...document.querySelectorAll('.markers-panel .monaco-list-row')]
                .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
                .map(row => ({level: row.getAttribute('aria-level') || '', label: row.getAttribute('aria-label') || '',
                              text: row.innerText}))""")]
            markers = [row for row in rows if row[0] == "2"]
            return (rows,) if len(markers) == self.problem_total() else None

        (rows,) = self.poll("every problem in the Problems panel", read)
        problems = []
        current = ""
        for level, label, text in rows:
            file_row = _FILE_ROW.match(label)
            if level == "1" and file_row:
                folder = file_row["folder"]
                current = file_row["file"] if folder in (".", "") else f"{folder}/{file_row['file']}"
            elif level == "2" and (marker := _MARKER.search(text)) and source in text:
                problems.append(Problem(current, marker["code"], int(marker["line"])))
        return sorted(problems)
