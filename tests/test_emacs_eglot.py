"""Emacs with eglot, as the README configures it: headless Emacs (`--batch`, Debian's eglot and markdown-mode)
against the real server on a git copy of fixtures/acme. tests/editors/emacs_e2e.el loads the README's snippet
as a user's init file would, opens documents and reports each check."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, REPO, copy_fixture

SCRIPT = REPO / "tests" / "editors" / "emacs_e2e.el"
EXPECTED = [
    "markdown-mode buffers get the docbridge server",
    "the project is the repository",
    "flymake shows LINK_BROKEN for ./deployment-v1.md on line 58",  # docs/architecture.md:58 links to it
    "xref goes from `createInvoice` to src/billing/invoice.ts:44",  # docs/billing.md:20 → the declaration
]


def readme_snippet() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- emacs:begin -->\s*```elisp\n(.*?)```\s*<!-- emacs:end -->", text, re.S)
    assert match, "README.md has no emacs:begin/emacs:end block"
    return textwrap.dedent(match.group(1))  # the block is indented under its list item


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        if os.environ.get("CI"):
            pytest.fail("emacs is not on PATH, but CI is set: .ci/run installs emacs-nox, elpa-eglot and "
                        "elpa-markdown-mode")
        pytest.skip("emacs is not on PATH (apt-get install emacs-nox elpa-eglot elpa-markdown-mode)")
    tmp = tmp_path_factory.mktemp("emacs")
    root = copy_fixture("acme", tmp)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # eglot's project is the repository
    snippet = tmp / "init.el"
    snippet.write_text(readme_snippet(), encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp / "home"), "ROOT": str(root), "SNIPPET": str(snippet),
           "REPORT": str(tmp / "report.json"), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    Path(env["HOME"]).mkdir()
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], env=env, cwd=root, capture_output=True, text=True,
                          timeout=180, check=False)
    path = Path(env["REPORT"])
    assert path.is_file(), done.stdout + done.stderr
    checks = json.loads(path.read_text(encoding="utf-8"))
    assert done.returncode == 0 or any(not c["ok"] for c in checks), done.stderr
    return list(checks)


def test_the_snippet_is_what_the_readme_shows() -> None:
    snippet = readme_snippet()
    assert snippet.startswith("(with-eval-after-load 'eglot\n") and '("docbridge-lsp")' in snippet


@pytest.mark.parametrize("name", EXPECTED)
def test_emacs_check(report: list[dict[str, Any]], name: str) -> None:
    checks = {c["name"]: c for c in report}
    assert name in checks, f"{name!r} did not run: {report}"
    assert checks[name]["ok"], f"{name}: {checks[name]['detail']}"
