"""The README's Install section, done as a new user on a fresh machine account would: an empty HOME, no Doc Bridge
anywhere on PATH, pipx as a package manager provides it. The lines between the `install:begin` and `install:end`
markers are run as written (`./doc-bridge` is a copy of this checkout, `your-project` a copy of
fixtures/statekit), then the pre-commit hook the section offers runs on that project.

Slow (every dependency is installed into fresh environments; pip's cache of the user running the tests is
shared), so one module-scoped run serves every assertion.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, copy_fixture, path_without, shared_pip_cache
from support.checkout import checkout_copy

README = REPO / "README.md"
TIMEOUT = 900


def install_lines() -> list[str]:
    """The shell lines of the Install section's block, without their comments."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- install:begin.*?-->\s*```sh\n(.*?)```\s*<!-- install:end -->", text, re.S)
    assert match, "README.md has no install:begin/install:end block"
    lines = [line.split("  #")[0].strip() for line in match.group(1).splitlines()]
    return [line for line in lines if line]


@dataclass
class Step:
    line: str
    returncode: int
    output: str


@dataclass
class Machine:
    home: Path
    work: Path
    project: Path
    env: dict[str, str]
    tools: Path
    steps: list[Step]

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=cwd or self.project, env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)


def _fresh_environment(home: Path, tool_bin: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DOCBRIDGE_", "XDG_", "PIPX_", "VIRTUAL_ENV", "PYTHON"))}
    system = path_without("docbridge", "pipx", path=env.get("PATH", ""))
    env["PATH"] = os.pathsep.join([str(tool_bin), str(home / ".local" / "bin"), *filter(None, [system])])
    env["HOME"] = str(home)
    env.update(shared_pip_cache())
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Machine:
    python = shutil.which("python3") or sys.executable
    base = tmp_path_factory.mktemp("new-user")
    home, work, tools, tool_bin = base / "home", base / "work", base / "tools", base / "tool-bin"
    for folder in (home, work, tool_bin):
        folder.mkdir()
    # pipx and pre-commit, as the user's package manager would provide them
    subprocess.run([python, "-m", "venv", str(tools)], check=True, timeout=TIMEOUT)
    subprocess.run([str(tools / "bin" / "python"), "-m", "pip", "install", "--quiet", "pipx", "pre-commit"],
                   check=True, timeout=TIMEOUT, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    for tool in ("pipx", "pre-commit"):
        (tool_bin / tool).symlink_to(tools / "bin" / tool)
    checkout_copy(work / "doc-bridge")
    copy_fixture("statekit", work).rename(work / "your-project")
    env = _fresh_environment(home, tool_bin)
    steps = []
    cwd = work
    for line in install_lines():
        if line.startswith("cd "):
            cwd = cwd / line[3:].strip()
            steps.append(Step(line, 0 if cwd.is_dir() else 1, ""))
            continue
        done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
        steps.append(Step(line, done.returncode, done.stdout + done.stderr))
    return Machine(home, work, work / "your-project", env, tools, steps)


def _step(machine: Machine, command: str) -> Step:
    found = [s for s in machine.steps if s.line.startswith(command)]
    assert found, f"the Install section has no `{command}` line: {[s.line for s in machine.steps]}"
    return found[0]


def test_the_section_installs_with_pipx_then_inits_checks_and_searches() -> None:
    commands = [line.split()[0:2] for line in install_lines()]
    assert commands == [["pipx", "install"], ["cd", "your-project"], ["docbridge", "init"], ["docbridge", "check"],
                        ["docbridge", "search"]]


def test_pipx_puts_both_commands_on_path(machine: Machine) -> None:
    step = _step(machine, "pipx install")
    assert step.returncode == 0, step.output
    for command in ("docbridge", "docbridge-lsp"):
        assert shutil.which(command, path=machine.env["PATH"]) == str(machine.home / ".local" / "bin" / command)


def test_init_writes_a_configuration_that_says_what_it_found(machine: Machine) -> None:
    step = _step(machine, "docbridge init")
    assert step.returncode == 0, step.output
    config = (machine.project / "doc-bridge.config.json").read_text(encoding="utf-8")
    # statekit: examples/ and playground/ are not library source (read from the fixture's layout)
    assert "example: examples/" in config and "demo: playground/" in config, config
    assert "Wrote " in step.output


def test_check_and_search_answer_on_the_project(machine: Machine) -> None:
    check = _step(machine, "docbridge check")
    assert check.returncode in (0, 1), check.output
    assert "error:" not in check.output and "Traceback" not in check.output, check.output
    search = _step(machine, "docbridge search")
    assert search.returncode == 0 and search.output.strip(), search.output
    # the caches stayed in the project and ignore themselves
    assert (machine.project / ".docbridge" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    # the user's own seal key and settings folder, under the empty HOME
    assert (machine.home / ".cache" / "docbridge" / "seal-key").is_file()


def test_the_pre_commit_hook_runs_check_on_the_project(machine: Machine) -> None:
    hooks = machine.work / "doc-bridge"
    git = ["git", "-c", "user.email=docs@example.com", "-c", "user.name=Docs"]
    for folder in (hooks, machine.project):
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "initial"]):
            done = machine.run(*git, *argv, cwd=folder)
            assert done.returncode == 0, done.stderr
    rev = machine.run("git", "rev-parse", "HEAD", cwd=hooks).stdout.strip()
    (machine.project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: docbridge-check\n", encoding="utf-8")
    ran = machine.run("pre-commit", "run", "docbridge-check", "--all-files")
    expected = _step(machine, "docbridge check").returncode
    assert "Doc Bridge check" in ran.stdout, ran.stdout + ran.stderr
    assert ran.returncode == expected, ran.stdout + ran.stderr
    assert ("Passed" if expected == 0 else "Failed") in ran.stdout


def test_upgrade_and_an_extra_as_the_section_says(machine: Machine) -> None:
    upgraded = machine.run("pipx", "upgrade", "docbridge", cwd=machine.work)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    extra = machine.run("pipx", "install", "--force", "./doc-bridge[mcp]", cwd=machine.work)
    assert extra.returncode == 0, extra.stdout + extra.stderr
    python = machine.home / ".local" / "share" / "pipx" / "venvs" / "docbridge" / "bin" / "python"
    imported = machine.run(str(python), "-c", "import mcp, watchfiles")  # what `docbridge mcp` needs
    assert imported.returncode == 0, imported.stderr
