"""The VS Code extension inside a real VS Code: code-server serves VS Code's own workbench, Debian's
Chromium shows it (driven by Playwright), the freshly packaged editors/vscode/docbridge.vsix is installed,
and the real language server runs on a copy of fixtures/acme. Each step is checked through the UI, as a
person would see it, and leaves a screenshot in <scratch>/artifacts/ (never committed).

`make test-vscode-real` installs what this needs into the scratch folder (.cache/vscode-real) and runs it;
`make test` leaves it out (marker `vscode_real`). The tests run in order on one window.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, REPO, copy_fixture, docbridge
from support.embeddings import serve_posts
from support.positions import find, one_based
from vscode_real import code_server
from vscode_real.workbench import Problem, Workbench

pytestmark = pytest.mark.vscode_real

SCRATCH = Path(os.environ.get("DOCBRIDGE_VSCODE_REAL_DIR", REPO / ".cache" / "vscode-real")).resolve()
ARTIFACTS = SCRATCH / "artifacts"
VSIX = REPO / "editors" / "vscode" / "docbridge.vsix"
CHROMIUM = os.environ.get("DOCBRIDGE_CHROMIUM", "/usr/bin/chromium")
SERVER = BIN / "docbridge-lsp"

USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "chat.disableAIFeatures": True,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "security.workspace.trust.enabled": False,
    "editor.lightbulb.enabled": "on",
    "git.enabled": False,
}


class Endpoint:
    """A stub embeddings endpoint on 127.0.0.1 that records every request it receives."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.url = ""


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    def answer(request: Any) -> None:
        state.requests.append(request.path)
        request.send_response(500)
        request.end_headers()

    with serve_posts(answer) as url:
        state.url = url
        yield state


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory, endpoint: Endpoint) -> Path:
    """The fixture, whose configuration (as a hostile repository's would) asks for hybrid search through its own
    endpoint, with a key from the environment: the user's settings do not allow it, so nothing may reach it."""
    os.environ["CLOUD_TOKEN"] = "a-secret-the-repository-wants"  # code-server and the server inherit it
    return _asking(copy_fixture("acme", tmp_path_factory.mktemp("workspace")), endpoint)


def _asking(root: Path, endpoint: Endpoint) -> Path:
    """`root` with its configuration asking for hybrid search through `endpoint` (every copy is written alike,
    so that the findings in the configuration file keep their lines from copy to copy)."""
    config = json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))
    config["retrieval"] = {**config.get("retrieval", {}), "hybrid": True}
    config["index"] = {"embed": {"baseUrl": endpoint.url, "model": "m", "apiKeyEnv": "CLOUD_TOKEN"}}
    (root / "doc-bridge.config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory, endpoint: Endpoint) -> list[dict[str, Any]]:
    """What `docbridge check` reports for the fixture (on a copy of its own, so the workspace stays as is)."""
    root = _asking(copy_fixture("acme", tmp_path_factory.mktemp("check")), endpoint)
    result = docbridge("check", "--root", str(root), "--format", "json", "--fail-on", "never")
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout)["findings"])


@pytest.fixture(scope="module")
def doctor_grade(tmp_path_factory: pytest.TempPathFactory, endpoint: Endpoint) -> str:
    """The grade `docbridge doctor` gives the fixture: the status bar shows it once the first scan is ready."""
    root = _asking(copy_fixture("acme", tmp_path_factory.mktemp("doctor")), endpoint)
    result = docbridge("doctor", "--root", str(root), "--json")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["grade"])


def profile_with_extension(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A new code-server run folder with the freshly packaged extension installed in it."""
    for stamp in ("node", "code-server", "playwright"):
        if not (SCRATCH / f"{stamp}.installed").exists():
            pytest.fail(f"{SCRATCH} has no {stamp}: run `make test-vscode-real` (it installs them)")
    assert VSIX.is_file(), f"{VSIX} is missing: run `make test-vscode-real` (it packages the extension)"
    run_dir = tmp_path_factory.mktemp(name)
    installed = code_server.install_extension(SCRATCH, run_dir, VSIX)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert list((run_dir / "extensions").glob("docbridge.docbridge-*/package.json")), installed.stdout
    return run_dir


@pytest.fixture(scope="module")
def vscode(acme: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[code_server.CodeServer]:
    run_dir = profile_with_extension(tmp_path_factory, "code-server")
    # code-server is a remote window: the machine-scoped server command is read from the Machine settings
    code_server.write_settings(run_dir, USER_SETTINGS, {"docbridge.server.command": str(SERVER)})
    with code_server.running(SCRATCH, run_dir, acme) as server:
        try:
            yield server
        finally:
            _keep_logs(server)


def _keep_logs(server: code_server.CodeServer) -> None:
    """The extension host's log and the output channels go next to the screenshots."""
    logs = ARTIFACTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for path in [*server.logs("exthost*/remoteexthost.log"), *server.logs("exthost*/output_logging_*/*.log")]:
        shutil.copy(path, logs / path.name)
    shutil.copy(server.run_dir / "code-server.log", logs / "code-server.log")


@pytest.fixture(scope="module")
def workbench(vscode: code_server.CodeServer, acme: Path) -> Iterator[Workbench]:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    sys.path.insert(0, str(SCRATCH / "python"))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1200})
            page.goto(f"{vscode.url}/?folder={acme}", timeout=90_000)
            page.locator(".monaco-workbench").wait_for(state="visible", timeout=90_000)
            page.set_default_timeout(5_000)  # one action; the steps poll for what they wait for
            yield Workbench(page, ARTIFACTS)
        finally:
            browser.close()


@pytest.fixture(autouse=True)
def screenshot_each_step(request: pytest.FixtureRequest, workbench: Workbench) -> Iterator[None]:
    yield
    workbench.screenshot(request.node.name.removeprefix("test_"))


def test_status_bar_counts_the_findings(workbench: Workbench, findings: list[dict[str, Any]],
                                        doctor_grade: str) -> None:
    expected = f"Doc Bridge: {len(findings)} findings · grade {doctor_grade}"
    workbench.poll(f"the status bar item {expected!r}", lambda: workbench.status_item("Doc Bridge") == expected,
                   timeout=120)
    # VS Code's own problem counts agree, severity by severity
    by_severity = Counter(f["severity"] for f in findings)
    counts = f"Errors: {by_severity['error']}, Warnings: {by_severity['warning']}, Infos: {by_severity['info']}"
    workbench.poll(f"the problem counts {counts!r}", lambda: workbench.problem_counts() == counts)


def test_problems_panel_lists_the_planted_diagnostics(workbench: Workbench, findings: list[dict[str, Any]]) -> None:
    expected = sorted(Problem(f["path"], f["code"], f["range"]["start"]["line"] + 1) for f in findings)
    assert {p.code for p in expected} >= {"LINK_BROKEN", "MENTION_UNRESOLVED", "GENERATED_REGION_EDITED"}
    workbench.show_problems()
    assert workbench.problems() == expected


def test_hover_on_a_broken_link_says_why(workbench: Workbench, acme: Path) -> None:
    line, column = one_based(find(acme / "docs/architecture.md", "[old deployment notes](./deployment-v1.md)"))
    workbench.open_file("docs/architecture.md")
    workbench.go_to(line, column + 3)
    workbench.page.keyboard.press("Control+k")
    workbench.page.keyboard.press("Control+i")  # Show or Focus Hover
    hovers = workbench.page.locator(".monaco-hover:visible").filter(has_text="Broken link")
    # the widget and its parts all match: the longest text is the whole hover
    text = workbench.poll("the hover on the broken link", lambda: max((h.inner_text() for h in hovers.all()),
                                                                       key=len, default=""))
    assert re.search(r"Broken link\s+—\s+\S*\./deployment-v1\.md\S*\s+does not exist", text), text


def test_quick_fix_from_the_light_bulb_repairs_the_link(workbench: Workbench, acme: Path) -> None:
    architecture = acme / "docs/architecture.md"
    line, column = one_based(find(architecture, "[old deployment notes](./deployment-v1.md)"))
    assert (acme / "docs/deployment.md").is_file()  # the closest existing document, which the fix offers
    workbench.page.keyboard.press("Escape")
    # the light bulb follows the cursor: come to the link from another line, as a person does
    workbench.go_to(line - 2, 1)
    workbench.go_to(line, column + 3)
    bulb = workbench.page.locator(".lightBulbWidget")
    workbench.poll("the light bulb", lambda: bulb.first.is_visible())
    bulb.first.click()
    fix = workbench.page.locator(".action-widget .monaco-list-row.action").filter(has_text="Link to docs/deployment.md")
    workbench.poll("the quick fix in the light bulb menu", lambda: fix.first.is_visible())
    fix.first.click()
    workbench.poll("the link rewritten in the editor",
                   lambda: "[old deployment notes](./deployment.md)" in workbench.editor_text())
    workbench.run_command("File: Save")
    workbench.poll("the document saved", lambda: "Save" not in workbench.active_tab() and workbench.page.locator(
        ".editor-group-container.active .tab.active.dirty").count() == 0)
    workbench.show_problems()
    gone = Problem("docs/architecture.md", "LINK_BROKEN", line)
    workbench.poll("the LINK_BROKEN diagnostic gone", lambda: gone not in workbench.problems())
    assert Problem("docs/architecture.md", "MENTION_UNRESOLVED", line - 1) in workbench.problems()


def test_search_quick_pick_lists_results_and_opens_the_chosen_one(workbench: Workbench, acme: Path) -> None:
    query = "createInvoice"
    result = docbridge("search", query, "--root", str(acme), "--json", "--limit", "20")
    assert result.returncode == 0, result.stderr
    expected = [r["path"] for r in json.loads(result.stdout)["results"]]
    assert expected[0] == "src/billing/invoice.ts"  # where the fixture declares createInvoice
    workbench.run_command("View: Close All Editors")
    workbench.poll("no editor open", lambda: workbench.active_tab() == "")
    workbench.run_command("Doc Bridge: Search")
    workbench.poll("the Doc Bridge search quick pick", lambda: "Doc Bridge: Search" in workbench.quick_input_title())
    # typed as a person types, slower than the quick pick's debounce: a search (and a cancel) per keystroke
    workbench.page.keyboard.type(query, delay=200)
    workbench.poll("the results of the last keystroke",
                   lambda: [row["description"] for row in workbench.quick_rows()] == expected)
    workbench.screenshot("search-results")
    workbench.page.keyboard.press("Enter")  # the first result is selected
    workbench.poll(f"{expected[0]} open", lambda: workbench.active_path() == expected[0])


def test_go_to_definition_from_a_backticked_symbol(workbench: Workbench, acme: Path) -> None:
    line, column = one_based(find(acme / "docs/billing.md", "`createInvoice` is re-exported"))
    declared = one_based(find(acme / "src/billing/invoice.ts", "createInvoice("))
    workbench.run_command("View: Close All Editors")
    workbench.open_file("docs/billing.md")
    workbench.go_to(line, column + 4)
    workbench.page.keyboard.press("F12")
    workbench.poll("the declaration of createInvoice",
                   lambda: workbench.active_path() == "src/billing/invoice.ts" and workbench.cursor() == declared)


def test_show_handoff_opens_the_handoff(workbench: Workbench, acme: Path) -> None:
    config = json.loads((acme / "doc-bridge.config.json").read_text(encoding="utf-8"))
    owner = config["routing"]["options"]["ownership"]["acme-billing"]
    workbench.run_command("Doc Bridge: Show Handoff")
    workbench.poll("the handoff quick pick", lambda: "Show Handoff" in workbench.quick_input_title())
    enter = workbench.page.locator(".quick-input-list .monaco-list-row").filter(has_text="Enter a reference")
    workbench.poll("Enter a reference…", lambda: enter.first.is_visible())
    enter.first.click()
    workbench.poll("the reference input box", lambda: "ownership id, alias or repository-relative path" in
                   workbench.page.locator(".quick-input-widget").inner_text())
    workbench.page.keyboard.press("Control+a")
    workbench.page.keyboard.type("acme-billing")
    workbench.page.keyboard.press("Enter")
    workbench.poll("the handoff document", lambda: workbench.active_tab().startswith("acme-billing.md"))
    text = workbench.poll("the handoff text", lambda: workbench.editor_text() if "Start here" in workbench.editor_text()
                          else "")
    flat = re.sub(r"\s+", " ", text)
    assert "Start here" in flat and owner["agentDoc"] in flat, flat
    assert all(check in flat for check in owner["checks"]), flat
    assert owner["path"] in flat, flat


def test_output_channel_has_only_the_startup_lines(workbench: Workbench, vscode: code_server.CodeServer) -> None:
    workbench.run_command("Doc Bridge: Show Output")
    panel = workbench.page.locator(".part.panel .monaco-editor .view-lines")
    workbench.poll("the Doc Bridge output", lambda: "Starting" in panel.first.inner_text() if panel.count() else False)
    (channel,) = vscode.logs("exthost*/output_logging_*/*Doc Bridge.log")
    lines = [line for line in channel.read_text(encoding="utf-8").splitlines() if line.strip()]
    startup = [
        re.compile(rf"^\[client [^\]]+\] Starting {re.escape(str(SERVER))} in \S+$"),
        re.compile(r"^\[Info\s+- [^\]]+\] Doc Bridge: initial scan of \S+ took [\d.]+s \(\d+ files, \d+ from cache\)$"),
        REFUSED,  # the workspace's endpoint, refused (test_a_repository_endpoint_gets_nothing)
    ]
    assert lines and startup[0].match(lines[0]), lines
    others = [line for line in lines if not any(pattern.match(line) for pattern in startup)]
    assert others == [], "the Doc Bridge output has more than its start-up lines"


REFUSED = re.compile(r"^\[Warn(?:ing)?\s+- [^\]]+\] Doc Bridge: semantic search off, lexical only: this repository's "
                     r"doc-bridge\.config\.json asks to send text to http://127\.0\.0\.1:\d+/v1 with the key in "
                     r"\$CLOUD_TOKEN; only your own settings decide where text and keys go")


def test_a_repository_endpoint_gets_nothing(workbench: Workbench, vscode: code_server.CodeServer,
                                            endpoint: Endpoint) -> None:
    """The workspace asks for hybrid search through its own endpoint; the searches above ran: the endpoint
    received nothing, and the output says why in one line."""
    (channel,) = vscode.logs("exthost*/output_logging_*/*Doc Bridge.log")
    refused = [line for line in channel.read_text(encoding="utf-8").splitlines() if REFUSED.match(line)]
    assert len(refused) == 1, channel.read_text(encoding="utf-8")
    assert endpoint.requests == []


def test_vscode_logged_no_problem_with_the_extension(vscode: code_server.CodeServer) -> None:
    """VS Code checks what the extension and its server answer (code action kinds, for one) and logs what it
    drops or rejects in the extension host log."""
    (log,) = vscode.logs("exthost*/remoteexthost.log")
    complaints = [line for line in log.read_text(encoding="utf-8").splitlines()
                  if re.search(r"\[(warning|error)\]", line) and "docbridge" in line.lower()]
    assert complaints == []


def test_a_missing_server_in_this_remote_window_says_where_the_setting_goes(
        workbench: Workbench, vscode: code_server.CodeServer, tmp_path: Path) -> None:
    """code-server is a remote window: the server command is a Machine (Remote) setting. Pointing it at nothing
    restarts the extension's client, and the notification says where the setting has to go."""
    missing = tmp_path / "nowhere" / "docbridge-lsp"
    code_server.write_settings(vscode.run_dir, USER_SETTINGS, {"docbridge.server.command": str(missing)})
    toasts = workbench.page.locator(".notification-toast").filter(has_text="was not found")
    text = workbench.poll("the not-found notification", lambda: toasts.first.inner_text() if toasts.count() else "")
    flat = re.sub(r"\s+", " ", text)
    assert f"`{missing}` was not found" in flat, flat
    assert re.search(r"This is a remote window \(.+\): set it in the Remote settings .* or the workspace settings",
                     flat), flat
    workbench.poll("the status bar", lambda: workbench.status_item("Doc Bridge") == "Doc Bridge: server not found")
