"""A new Neovim user: an init.lua with only the README's plain setup, no `docbridge-lsp` on PATH, empty data
folders. `:DocBridgeInstall!` sets the server up from this checkout in Neovim's data folder (a private
environment, the dependencies from the package index), and diagnostics, definition and `:DocBridgeSearch!`
work (editors/nvim/tests/install.lua reports each check)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, copy_fixture, path_without, shared_pip_cache
from test_nvim_e2e import _nvim

PLUGIN = REPO / "editors" / "nvim"
SCRIPT = PLUGIN / "tests" / "install.lua"
NVIM_TIMEOUT = 900  # a fresh environment and every dependency from the package index
# the README's plain setup, as a user pastes it
INIT_LUA = f'vim.opt.runtimepath:append("{PLUGIN}")\nrequire("docbridge").setup({{}})\n'

EXPECTED_CHECKS = [
    "docbridge-lsp is not on PATH",
    "the init.lua's setup defined :DocBridgeInstall",
    "without a server the notification names :DocBridgeInstall",
    "the server is installed in Neovim's data folder",
    "it is the command the plugin starts",
    "LINK_BROKEN arrives for the document opened before the install",
    "definition lands on src/billing/invoice.ts:44",
    ":DocBridgeSearch! lists src/billing/invoice.ts first",
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    nvim = _nvim()
    tmp = tmp_path_factory.mktemp("nvim-install")
    root = copy_fixture("acme", tmp)
    env = dict(os.environ)
    env["HOME"] = str(tmp / "home")
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        directory = tmp / name.split("_")[1].lower()
        directory.mkdir()
        env[name] = str(directory)
    (tmp / "config" / "nvim").mkdir()
    (tmp / "config" / "nvim" / "init.lua").write_text(INIT_LUA, encoding="utf-8")
    env["PATH"] = path_without("docbridge-lsp")
    env.update(shared_pip_cache())
    env.pop("NVIM", None)
    env.pop("NVIM_LISTEN_ADDRESS", None)
    env.update({"DOCBRIDGE_E2E_ROOT": str(root), "DOCBRIDGE_E2E_REPORT": str(tmp / "report.json"),
                "NVIM_LOG_FILE": str(tmp / "nvim.log")})
    started = time.perf_counter()
    result = subprocess.run([nvim, "--headless", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"], capture_output=True,
                            text=True, env=env, cwd=root, timeout=NVIM_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    report = tmp / "report.json"
    data = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {"checks": []}
    data.update(returncode=result.returncode, stderr=result.stderr[-6000:], seconds=time.perf_counter() - started,
                data_dir=str(tmp / "data"))
    return data


def test_the_install_runs_to_the_end(run: dict[str, Any]) -> None:
    failed = [c for c in run["checks"] if not c["ok"]]
    assert run["returncode"] == 0 and run["checks"] and not failed, (run["returncode"], failed, run["stderr"])


@pytest.mark.parametrize("name", EXPECTED_CHECKS)
def test_install_check(run: dict[str, Any], name: str) -> None:
    checks = {c["name"]: c for c in run["checks"]}
    assert name in checks, f"{name!r} did not run; stderr: {run['stderr']}"
    assert checks[name]["ok"], f"{name}: {checks[name]['detail']}"


def test_the_environment_is_in_neovims_data_folder(run: dict[str, Any]) -> None:
    assert (Path(run["data_dir"]) / "nvim" / "docbridge" / "venv" / "bin" / "docbridge-lsp").is_file()
