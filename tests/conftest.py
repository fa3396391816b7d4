"""Shared helpers: the CLI as a subprocess, fixture copies, and tiny repositories built in a temp dir."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
BIN = Path(sys.executable).parent

# The tests never read the settings of whoever runs them (every subprocess inherits this); a test that needs
# user settings writes its own file and points DOCBRIDGE_USER_CONFIG at it.
os.environ["DOCBRIDGE_USER_CONFIG"] = ""
# Artifacts are sealed with a key of the test run's own (removed at exit), not the one in the user's cache folder.
if "DOCBRIDGE_SEAL_KEY_FILE" not in os.environ:
    _SEAL_KEY = Path(tempfile.gettempdir()) / f"docbridge-test-seal-{os.getpid()}"
    os.environ["DOCBRIDGE_SEAL_KEY_FILE"] = str(_SEAL_KEY)
    atexit.register(lambda: _SEAL_KEY.unlink(missing_ok=True))
# The language server keeps its answers to `initialize` in a folder of the test run's own too.
if "DOCBRIDGE_INITIALIZE_ANSWERS" not in os.environ:
    _ANSWERS = Path(tempfile.mkdtemp(prefix="docbridge-test-answers-"))
    os.environ["DOCBRIDGE_INITIALIZE_ANSWERS"] = str(_ANSWERS)
    atexit.register(shutil.rmtree, _ANSWERS, True)


def user_settings(directory: Path, settings: dict[str, Any]) -> dict[str, str]:
    """Write a user settings file under `directory`; the environment that makes docbridge read it."""
    path = directory / "user-settings.json"
    path.write_text(json.dumps(settings), encoding="utf-8")
    return {"DOCBRIDGE_USER_CONFIG": str(path)}


def path_without(*commands: str, path: str | None = None) -> str:
    """`path` (default PATH) with every folder that holds one of `commands` left out: a new user's machine."""
    folders = (os.environ.get("PATH", "") if path is None else path).split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not any((Path(f) / c).exists() for c in commands))


def shared_pip_cache() -> dict[str, str]:
    """The pip cache of the user running the tests, for installs into fresh environments and homes (the same
    downloads, fetched once per machine)."""
    cache = Path.home() / ".cache" / "pip"
    return {"PIP_CACHE_DIR": str(cache)} if cache.is_dir() else {}


def docbridge(*args: str, cwd: Path | None = None, timeout: float = 300,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed `docbridge` console script (`env`: variables added to the environment)."""
    return subprocess.run([str(BIN / "docbridge"), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, check=False, env={**os.environ, **env} if env else None)


def docbridge_json(*args: str, cwd: Path | None = None, expect: int = 0) -> Any:
    result = docbridge(*args, cwd=cwd)
    assert result.returncode == expect, result.stderr + result.stdout
    return json.loads(result.stdout)


def copy_fixture(name: str, destination: Path) -> Path:
    target = destination / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns(".docbridge"))
    return target


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def scanned_retriever(root: Path) -> Any:
    """The combined search index of a repository scanned from nothing (no facts cache)."""
    from docbridge.engine.workspace import Workspace
    workspace = Workspace(root, use_cache=False)
    workspace.scan()
    return workspace.retriever()


def result_by_id(results: list[Any], entry_id: str) -> Any:
    return next(r for r in results if r.entry.id == entry_id)


@pytest.fixture
def acme(tmp_path: Path) -> Path:
    return copy_fixture("acme", tmp_path)


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    return copy_fixture("monorepo", tmp_path)


@pytest.fixture
def statekit(tmp_path: Path) -> Path:
    return copy_fixture("statekit", tmp_path)


@pytest.fixture
def governance(tmp_path: Path) -> Path:
    return copy_fixture("governance", tmp_path)


# ------------------------------------------------------------------------------------------------ the attack set

_ATTACKS: dict[str, list[int]] = {}  # kind -> [attempts, passed]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test marked `attack(kind)` once (its call, or the setup that failed or skipped it)."""
    kind = getattr(report, "attack_kind", None)
    if kind is None or not (report.when == "call" or (report.when == "setup" and not report.passed)):
        return
    counts = _ATTACKS.setdefault(kind, [0, 0])
    counts[0] += 1
    counts[1] += int(report.passed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    outcome = yield
    marker = item.get_closest_marker("attack")
    if marker is not None and marker.args:
        outcome.get_result().attack_kind = marker.args[0]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Attempts and passes per class of attack (`make attacks` runs only them)."""
    if not _ATTACKS:
        return
    terminalreporter.section("attacks")
    for kind, (attempts, passed) in sorted(_ATTACKS.items()):
        terminalreporter.write_line(f"{kind:<45} {passed:>4} / {attempts:<4} passed")
    total, passed = sum(a for a, _ in _ATTACKS.values()), sum(p for _, p in _ATTACKS.values())
    terminalreporter.write_line(f"{'total':<45} {passed:>4} / {total:<4} passed")
