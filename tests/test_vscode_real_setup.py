"""A new user's first start in a real VS Code: a clean profile, no `docbridge-lsp` on PATH, no setting, a
workspace without a `.venv`. The extension (the freshly packaged .vsix, which carries the Doc Bridge wheel)
offers to set the server up; accepted, it makes a private environment with the machine's Python, installs the
wheel and its dependencies, starts the server, and the Problems panel fills with what `docbridge check` reports.

Run by `make test-vscode-real` beside tests/test_vscode_real.py (same scratch folder, marker `vscode_real`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, docbridge, path_without, shared_pip_cache
from test_vscode_real import ARTIFACTS, CHROMIUM, SCRATCH, USER_SETTINGS, profile_with_extension
from vscode_real import code_server
from vscode_real.workbench import Problem, Workbench

pytestmark = pytest.mark.vscode_real

SET_UP_SECONDS = 900  # a fresh environment and every dependency from the package index


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_fixture("acme", tmp_path_factory.mktemp("new-user"))
    assert not (root / ".venv").exists()
    return root


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    root = copy_fixture("acme", tmp_path_factory.mktemp("new-user-check"))
    result = docbridge("check", "--root", str(root), "--format", "json", "--fail-on", "never")
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout)["findings"])


@pytest.fixture(scope="module")
def workbench(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    run_dir = profile_with_extension(tmp_path_factory, "code-server-new-user")
    (extension,) = (run_dir / "extensions").glob("docbridge.docbridge-*")
    assert list((extension / "server").glob("docbridge-*.whl")), "the .vsix carries no wheel (make wheel)"
    code_server.write_settings(run_dir, USER_SETTINGS, {})  # no docbridge.server.command anywhere
    path = path_without("docbridge-lsp")
    assert shutil.which("docbridge-lsp", path=path) is None
    environment = {"PATH": f"{SCRATCH / 'bin'}{os.pathsep}{path}", **shared_pip_cache()}  # code-server's node first
    artifacts = ARTIFACTS / "new-user"
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    with code_server.running(SCRATCH, run_dir, workspace, environment=environment) as server:
        sys.path.insert(0, str(SCRATCH / "python"))
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                try:
                    page = browser.new_page(viewport={"width": 1600, "height": 1200})
                    page.goto(f"{server.url}/?folder={workspace}", timeout=90_000)
                    page.locator(".monaco-workbench").wait_for(state="visible", timeout=90_000)
                    page.set_default_timeout(5_000)
                    yield Workbench(page, artifacts)
                finally:
                    browser.close()
        finally:
            logs = artifacts / "logs"
            logs.mkdir(exist_ok=True)
            for log in server.logs("exthost*/output_logging_*/*.log"):
                shutil.copy(log, logs / log.name)


def test_the_extension_sets_the_server_up_and_the_problems_panel_fills(
        workbench: Workbench, findings: list[dict[str, Any]]) -> None:
    page = workbench.page
    workbench.open_file("docs/billing.md")  # activates the extension (onLanguage:markdown)
    offer = page.locator(".notification-toast").filter(has_text="no language server was found")
    workbench.poll("the offer to set the server up", lambda: offer.count() > 0, timeout=120)
    workbench.screenshot("offer")
    offer.first.get_by_role("button", name="Set Up").click()
    expected = f"Doc Bridge: {len(findings)} findings"
    workbench.poll(f"the status bar item {expected!r}",
                   lambda: workbench.status_item("Doc Bridge").startswith(expected), timeout=SET_UP_SECONDS)
    workbench.screenshot("ready")
    workbench.show_problems()
    assert workbench.problems() == sorted(Problem(f["path"], f["code"], f["range"]["start"]["line"] + 1)
                                          for f in findings)
