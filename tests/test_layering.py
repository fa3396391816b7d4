"""The one-way flow: the engine's layers, and the engine never importing a surface (CLI, server, MCP, API)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from support import package_view

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("docbridge.lsp", "docbridge.cli", "docbridge.bench", "docbridge.mcp_server", "docbridge.api", "pygls",
             "lsprotocol")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):  # every import, including the ones inside functions
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_engine_sources_import_nothing_from_the_server() -> None:
    sources = sorted((ROOT / "engine").rglob("*.py"))
    assert len(sources) > 10
    offending = [f"{path.relative_to(ROOT)}:{line} imports {name}"
                 for path in sources for line, name in _imports(path)
                 if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]
    assert offending == []


def test_the_server_reaches_the_model_only_through_the_engine_layers_above_discovery() -> None:
    # lsp/ converts protocol values to engine values and back: analysis and resolution are the engine's
    sources = sorted((ROOT / "lsp").rglob("*.py"))
    assert len(sources) > 5
    offending = [f"{path.relative_to(ROOT)}:{line} imports {name}"
                 for path in sources for line, name in _imports(path)
                 if name == "docbridge.engine.discovery" or name.startswith("docbridge.engine.discovery.")]
    assert offending == []


def test_running_the_cli_loads_no_server_module_and_no_networkx(tmp_path: Path) -> None:
    # runs a scan, a check and a search from nothing in-process, then lists what got loaded; then the server's
    # modules. PageRank, import cycles and proximity run on the engine's own graph: networkx (about 20 MB
    # resident in every language server, 90 ms of every scan) is for betweenness and communities only
    repository = tmp_path / "acme"
    shutil.copytree(ROOT / "fixtures" / "acme", repository, ignore=shutil.ignore_patterns(".docbridge"))
    probe = (
        "import sys\n"
        "from docbridge.cli.main import main\n"
        "root = sys.argv[1]\n"
        "for argv in (['scan', '--root', root], ['check', '--root', root],\n"
        "             ['search', 'sales tax', '--root', root, '--no-cache']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "loaded = sorted(m for m in sys.modules\n"
        "                if m.startswith('docbridge.lsp') or m.split('.')[0] in ('pygls', 'lsprotocol'))\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
        "import docbridge.lsp.server, docbridge.lsp.commands  # noqa: E401\n"
        "print('NETWORKX', sorted(m for m in sys.modules if m.split('.')[0] == 'networkx'), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(repository)], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert (repository / ".docbridge" / "snapshot.json").is_file(), result.stderr[-2000:]
    assert "LOADED []" in result.stderr, result.stderr[-2000:]
    assert "NETWORKX []" in result.stderr, result.stderr[-2000:]


AGENT_CODE = "docbridge.engine.enrich.run"  # the only code that runs the enrichment agent command


def test_only_the_enrich_command_imports_the_agent_command_code() -> None:
    sources = sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "lsp").rglob("*.py"),
                      *(ROOT / "docbridge").rglob("*.py")])
    importers = sorted(str(path.relative_to(ROOT)) for path in sources for _, name in _imports(path)
                       if name == AGENT_CODE
                       or (name == "docbridge.engine.enrich" and "import run" in path.read_text()))
    assert importers == ["docbridge/cli/commands/enrich.py"]


def test_search_query_check_and_the_server_load_no_agent_code(tmp_path: Path) -> None:
    # with enrichment enabled and an overlay present, the retrieval path reads the overlay but never loads
    # the module that runs agents
    repository = tmp_path / "acme"
    shutil.copytree(ROOT / "fixtures" / "acme", repository, ignore=shutil.ignore_patterns(".docbridge"))
    config = repository / "doc-bridge.config.json"
    config.write_text(config.read_text(encoding="utf-8").replace(
        '"schemaVersion": 1,', '"schemaVersion": 1, "intelligence": {"registry": {"enabled": true}},', 1),
        encoding="utf-8")
    probe = (
        "import sys\n"
        "from docbridge.cli.main import main\n"
        "root = sys.argv[1]\n"
        "for argv in (['search', 'billing', '--root', root], ['query', 'billing', '--root', root],\n"
        "             ['check', '--root', root], ['check', '--enrich', '--root', root],\n"
        "             ['lookup', 'docs/billing.md', '--root', root]):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "import docbridge.lsp.server, docbridge.lsp.commands  # noqa: E401\n"
        "import docbridge.lsp.editing, docbridge.lsp.diagnostics  # noqa: E401\n"
        "import docbridge.engine.retrieval.rank, docbridge.engine.agent.handoff  # noqa: E401\n"
        f"print('LOADED', sorted(m for m in sys.modules if m == {AGENT_CODE!r}), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(repository)], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert "LOADED []" in result.stderr, result.stderr[-2000:]


def test_a_warm_search_loads_neither_pydantic_nor_the_check_and_governance_engines(tmp_path: Path) -> None:
    """A search answered from the stored index is a few hundred milliseconds, most of it imports: building the
    command line must not pull in what only other commands need (they cost it 130 ms when they did)."""
    repository = tmp_path / "acme"
    shutil.copytree(ROOT / "fixtures" / "acme", repository, ignore=shutil.ignore_patterns(".docbridge"))
    settled = time.time() - 3600  # a tree modified seconds ago is never trusted without a scan
    for directory, _dirs, files in os.walk(repository):
        for name in files:
            os.utime(Path(directory) / name, (settled, settled))
        os.utime(directory, (settled, settled))
    argv = ["search", "how is sales tax calculated", "--root", str(repository), "--json"]
    probe = (
        "import sys, json, io, contextlib\n"
        "from docbridge.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main({argv!r})\n"
        "print('SOURCE', json.loads(out.getvalue())['index']['source'], file=sys.stderr)\n"
        "heavy = ('pydantic', 'docbridge.engine.base.findings', 'docbridge.engine.governance.reconciliation',\n"
        "         'docbridge.engine.governance.rules', 'docbridge.engine.views.declared',\n"
        "         'docbridge.engine.base.config', 'markdown_it', 'tree_sitter', 'networkx')\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy), file=sys.stderr)\n"
    )
    subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)  # builds
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "SOURCE current" in result.stderr, result.stderr[-2000:]
    assert "LOADED []" in result.stderr, result.stderr[-2000:]


def _lint_imports(root: Path, view: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over `root`, run in the installed package's layout (tests/support/package_view.py)."""
    package_view.build(root, view)
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", str(root / "pyproject.toml")]
    return subprocess.run(command, cwd=view, capture_output=True, text=True, timeout=300)


def test_the_engine_keeps_its_layers_and_never_imports_a_surface(tmp_path: Path) -> None:
    result = _lint_imports(ROOT, tmp_path / "view")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Contracts: 3 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(("module", "line", "broken"), [
    # a function-local import counts: the state (a lower layer) reaching for the command line
    ("engine/state/model_state.py",
     "    def _upward(self) -> None:\n        from docbridge.cli.main import main  # noqa: F401\n\n",
     "docbridge.engine.state.model_state -> docbridge.cli.main"),
    ("engine/base/model.py", "import docbridge.lsp.server  # noqa: E402,F401\n",
     "docbridge.engine.base.model -> docbridge.lsp.server"),
    ("engine/retrieval/rank.py", "import docbridge.bench.core  # noqa: E402,F401\n",
     "docbridge.engine.retrieval.rank -> docbridge.bench.core"),
    ("lsp/commands.py", "import docbridge.bench.core  # noqa: E402,F401\n",
     "docbridge.lsp.commands -> docbridge.bench.core"),
])
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, line: str, broken: str) -> None:
    for name in ("engine", "lsp", "docbridge"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    assert _lint_imports(tmp_path, tmp_path / "view").returncode == 0  # the copy keeps the contracts
    target = tmp_path / module
    text = target.read_text(encoding="utf-8")
    anchor = "    def has_view(" if line.startswith("    def") else "\n\n\n"
    assert anchor in text
    target.write_text(text.replace(anchor, line + anchor if anchor.startswith("    ") else "\n" + line + anchor, 1),
                      encoding="utf-8")
    result = _lint_imports(tmp_path, tmp_path / "view")
    assert result.returncode != 0 and broken in " ".join(result.stdout.split()), result.stdout[-3000:]


def _installed_name(path: Path) -> str:
    """The module name a source file is installed under (pyproject.toml's package-dir)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join(("docbridge", *parts) if parts[0] in ("engine", "lsp") else parts)
    return name.removesuffix(".__init__")


def test_every_module_belongs_to_a_layer() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c["layers"] for c in contracts["contracts"] if c["type"] == "layers")
    members = [m.strip() for layer in layers for m in layer.replace("|", ":").split(":")]
    modules = sorted(_installed_name(p) for folder in ("engine", "lsp", "docbridge")
                     for p in (ROOT / folder).rglob("*.py") if p.name != "__init__.py")
    outside = [m for m in modules if not any(m == member or m.startswith(member + ".") for member in members)]
    assert len(modules) > 100 and outside == [], outside


def _layer_map(root: Path) -> tuple[str, int]:
    result = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "layer_map.py"), str(root)],
                            capture_output=True, text=True, timeout=300, cwd=root)
    return result.stdout + result.stderr, result.returncode


def test_the_layer_map_draws_a_chain_and_names_an_upward_import(tmp_path: Path) -> None:
    text, status = _layer_map(ROOT)
    assert status == 0 and "the layers are a chain without a cycle" in text, text
    assert text.splitlines()[0].startswith(" 1. __main__+cli+bench+lsp") and "10. base" in text
    for name in ("engine", "lsp", "docbridge"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    state = tmp_path / "engine" / "state" / "text.py"
    state.write_text(state.read_text(encoding="utf-8") + "\n\ndef _upward() -> None:\n"
                     "    from docbridge.engine.ide import hover  # noqa: F401\n", encoding="utf-8")
    text, status = _layer_map(tmp_path)
    assert status == 1 and "VIOLATION (imports a higher layer): docbridge.engine.state.text -> " \
        "docbridge.engine.ide.hover" in text, text
