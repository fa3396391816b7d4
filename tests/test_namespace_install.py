"""Doc Bridge installed with pip into a project's own environment that already has top-level packages named
`engine` and `lsp`: everything of Doc Bridge installs under `docbridge` (pyproject.toml's package-dir maps the
repository's `engine/` and `lsp/` folders to `docbridge.engine` and `docbridge.lsp`), so the project's packages
still import, Doc Bridge's commands work, and Neovim's plugin drives the server from that environment.

Slow (every dependency is installed into a fresh environment, from the shared pip cache): one module-scoped
install serves every assertion.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, copy_fixture, shared_pip_cache
from support.checkout import checkout_copy
from test_nvim_e2e import run_nvim

TIMEOUT = 900
PROJECT_PACKAGES = {"engine": "the project's own engine", "lsp": "the project's own lsp"}


@dataclass
class Environment:
    root: Path
    site: Path
    work: Path
    install: subprocess.CompletedProcess[str]

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in argv], cwd=self.work, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Environment:
    work = tmp_path_factory.mktemp("namespace")
    root = work / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=TIMEOUT)
    site = next((root / "lib").glob("python3*/site-packages"))
    for name, owner in PROJECT_PACKAGES.items():  # the project's environment before Doc Bridge arrives
        (site / name).mkdir()
        (site / name / "__init__.py").write_text(f"OWNER = {owner!r}\n", encoding="utf-8")
    source = checkout_copy(work / "doc-bridge")
    install = subprocess.run([str(root / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                              "--no-input", str(source)], capture_output=True, text=True, timeout=TIMEOUT,
                             env={"PATH": "/usr/bin:/bin", "HOME": str(work), **shared_pip_cache()}, check=False)
    copy_fixture("acme", work)
    return Environment(root, site, work, install)


def test_pip_installs_into_an_environment_with_its_own_engine_and_lsp(environment: Environment) -> None:
    assert environment.install.returncode == 0, environment.install.stdout[-3000:] + environment.install.stderr[-3000:]


def test_the_projects_packages_still_import_beside_doc_bridge(environment: Environment) -> None:
    probe = ("import engine, lsp, docbridge.engine.workspace, docbridge.lsp.server, docbridge.cli.main\n"
             "print(engine.OWNER); print(lsp.OWNER)\n"
             "print(docbridge.engine.__file__); print(docbridge.lsp.__file__)\n")
    result = environment.run(environment.bin("python"), "-c", probe)
    assert result.returncode == 0, result.stderr[-3000:]
    engine_owner, lsp_owner, ours, our_server = result.stdout.splitlines()
    assert (engine_owner, lsp_owner) == (PROJECT_PACKAGES["engine"], PROJECT_PACKAGES["lsp"])
    assert Path(ours) == environment.site / "docbridge" / "engine" / "__init__.py"
    assert Path(our_server) == environment.site / "docbridge" / "lsp" / "__init__.py"


def test_the_distribution_claims_no_top_level_name_but_docbridge(environment: Environment) -> None:
    record = next(environment.site.glob("docbridge-*.dist-info")) / "RECORD"
    top = sorted({line.split(",")[0].split("/")[0] for line in record.read_text(encoding="utf-8").splitlines()})
    assert [name for name in top if name != ".." and not name.startswith("docbridge")] == [], top  # .. : bin/
    for name, owner in PROJECT_PACKAGES.items():
        assert (environment.site / name / "__init__.py").read_text(encoding="utf-8") == f"OWNER = {owner!r}\n"


def test_the_commands_answer_from_that_environment(environment: Environment) -> None:
    repository = environment.work / "acme"
    check = environment.run(environment.bin("docbridge"), "check", "--root", repository, "--json")
    assert check.returncode in (0, 1), check.stderr[-3000:]
    broken = {(f["code"], f["path"]) for f in json.loads(check.stdout)["findings"]}
    assert ("LINK_BROKEN", "docs/architecture.md") in broken  # its link to ./deployment-v1.md: no such file
    search = environment.run(environment.bin("docbridge"), "search", "how is sales tax calculated", "--root",
                             repository, "--json", "--limit", "3")
    assert search.returncode == 0, search.stderr[-3000:]
    assert "src/billing/tax.ts" in [r["path"] for r in json.loads(search.stdout)["results"]]


def test_neovim_drives_the_server_installed_there(environment: Environment,
                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    server = environment.bin("docbridge-lsp")
    assert server.is_file()
    run = run_nvim(server, tmp_path_factory.mktemp("nvim-namespace"))
    assert run.report is not None, "nvim wrote no report" + run.context()
    failed = [f"{c['name']} ({c['detail']})" for c in run.report["checks"] if not c["ok"]]
    assert run.returncode == 0 and failed == [], "; ".join(failed) + run.context()


def test_the_package_list_names_every_folder_that_installs() -> None:
    """pyproject.toml lists the packages one by one (package-dir maps two folders into `docbridge`): a new
    folder with an `__init__.py` that is not listed would be left out of the wheel."""
    listed = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    mapped = {"docbridge": "docbridge", "engine": "docbridge.engine", "lsp": "docbridge.lsp"}
    folders = sorted(".".join((mapped[init.relative_to(REPO).parts[0]], *init.relative_to(REPO).parts[1:-1]))
                     for top in mapped for init in (REPO / top).rglob("__init__.py") if "__pycache__" not in init.parts)
    assert sorted(listed) == folders
