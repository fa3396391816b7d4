"""`docbridge init` on a repository of the usual shape, `analysis.roles`, `$comment` members, and a
`.docbridge/` that never shows in `git status`: through the CLI as a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import docbridge, docbridge_json, make_repo

# A small monorepo laid out like the ones on GitHub: a VitePress site, one library package with its tests and
# a snapshot of its API, an example app, a release script.
SHAPE = {
    "package.json": json.dumps({"name": "shapes-monorepo", "private": True, "workspaces": ["packages/*"]}),
    "README.md": "# Shapes\n\nSee [the guide](docs/guide.md) and `packages/core/src/area.ts`.\n",
    "docs/.vitepress/config.ts": "export default { title: 'Shapes' }\n",
    "docs/guide.md": "# Guide\n\nCall `area` from `@shapes/core`.\n",
    "docs/api.md": "# API\n\n`perimeter` returns the length around a shape.\n",
    "docs/faq.md": "# FAQ\n\nNothing yet.\n",
    "packages/core/package.json": json.dumps({"name": "@shapes/core", "main": "src/index.ts"}),
    "packages/core/src/index.ts": "export { area } from './area'\nexport { perimeter } from './perimeter'\n",
    "packages/core/src/area.ts": "export function area(width: number, height: number) { return width * height }\n",
    "packages/core/src/perimeter.ts": "export function perimeter(w: number, h: number) { return 2 * (w + h) }\n",
    "packages/core/__tests__/area.test.ts": "import { area } from '../src/area'\nexport const cases = [area(1, 2)]\n",
    "packages/core/__tests__/perimeter.test.ts": "import { perimeter } from '../src/perimeter'\n",
    "packages/core/__snapshots__/api.d.ts": "export declare function area(w: number, h: number): number\n",
    "examples/basic/package.json": json.dumps({"name": "example-basic", "private": True}),
    "examples/basic/main.ts": "import { area } from '@shapes/core'\nexport const shown = area(2, 3)\n",
    "scripts/release.ts": "export function release() { return 'v1' }\n",
}


def _shape(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shapes", SHAPE)


def test_init_writes_what_it_found_as_comments_and_the_file_configures_nothing_else(tmp_path: Path) -> None:
    root = _shape(tmp_path)
    done = docbridge("init", "--root", str(root))
    assert done.returncode == 0, done.stderr
    config = json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))
    notes = config["$comment"]
    assert "Scanned 4 documents and 9 modules." in notes
    assert any(line.startswith("Documentation: docs/: 3 pages, a site built with VitePress "
                               "(docs/.vitepress/config.ts)") for line in notes)
    assert "Packages: 1 library package (@shapes/core); 2 more package.json (private, or of tests, examples and " \
           "the like)." in notes
    # 3 library modules (index, area, perimeter); the other 6 (site config, 2 tests, snapshot, example, script)
    assert any(line.startswith("Library source: 3 modules; the other 6 modules") for line in notes)
    assert "  test: packages/core/__tests__/ (2 modules; the folder's name)" in notes
    assert "  example: examples/ (1 module; the folder's name)" in notes
    assert "  docs-site: docs/ (1 module; the folder's name)" in notes
    assert "  script: scripts/ (1 module; the folder's name)" in notes
    assert "  generated: packages/core/__snapshots__/ (1 module; the folder's name)" in notes
    assert any(line.startswith("check.scope: library (") for line in notes)
    assert config["analysis"]["roles"] == {} and config["check"]["ignore"] == [] and config["ignore"] == []
    # what was printed is what was written
    for line in notes[1:-1]:
        assert line.strip() in done.stdout
    assert "Wrote " + str(root / "doc-bridge.config.json") in done.stdout
    # the written file is a valid configuration: check runs on it, and the snapshot's config is the default's
    checked = docbridge("check", "--root", str(root), "--json", "--fail-on", "never")
    assert checked.returncode == 0, checked.stderr
    assert docbridge("scan", "--root", str(root)).returncode == 0
    with_file = json.loads((root / ".docbridge" / "snapshot.json").read_text())["config_hash"]
    (root / "doc-bridge.config.json").unlink()
    assert docbridge("scan", "--root", str(root), "--json").returncode == 0
    assert json.loads((root / ".docbridge" / "snapshot.json").read_text())["config_hash"] == with_file


def test_init_never_replaces_a_configuration_without_force(tmp_path: Path) -> None:
    root = _shape(tmp_path)
    mine = '{"check": {"severity": {"AREA_UNDOCUMENTED": "off"}}}\n'
    (root / "doc-bridge.config.json").write_text(mine, encoding="utf-8")
    refused = docbridge("init", "--root", str(root))
    assert refused.returncode == 2 and "already exists" in refused.stderr and "--force" in refused.stderr
    assert (root / "doc-bridge.config.json").read_text(encoding="utf-8") == mine
    preview = docbridge("init", "--root", str(root), "--dry-run")
    assert preview.returncode == 0 and json.loads(preview.stdout)["$comment"]
    assert (root / "doc-bridge.config.json").read_text(encoding="utf-8") == mine
    forced = docbridge_json("init", "--root", str(root), "--force", "--json")
    assert forced["written"] and forced["replaced"]
    assert (root / "doc-bridge.config.json.bak").read_text(encoding="utf-8") == mine
    assert "$comment" in json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))
    assert forced["shape"]["packages"] == [{"name": "@shapes/core", "directory": "packages/core"}]


def test_a_configured_role_comes_before_the_layout(tmp_path: Path) -> None:
    root = _shape(tmp_path)
    before = docbridge_json("init", "--root", str(root), "--dry-run", "--json")["shape"]["roles"]
    assert before == {"source": 3, "test": 2, "example": 1, "docs-site": 1, "script": 1, "generated": 1}
    (root / "doc-bridge.config.json").write_text(json.dumps({
        "$comment": "the release script is part of the library here; the examples are demos",
        "analysis": {"roles": {"scripts/**": "source", "examples/": "demo", "$comment": "first match decides"}},
    }), encoding="utf-8")
    after = docbridge_json("init", "--root", str(root), "--dry-run", "--json")["shape"]
    assert after["roles"] == {"source": 4, "test": 2, "demo": 1, "docs-site": 1, "generated": 1}
    assert {"role": "demo", "where": "files", "reason": "configured in `analysis.roles` (`examples/`)",
            "files": 1, "folders": 0} in after["notLibrary"]
    # the release script is library source now: its export is a name a document can be found by
    assert docbridge("scan", "--root", str(root)).returncode == 0
    snapshot = json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    assert snapshot["coverage"]["roles"]["source"] == 4


def test_a_role_that_is_not_one_is_refused_naming_the_key(tmp_path: Path) -> None:
    root = _shape(tmp_path)
    (root / "doc-bridge.config.json").write_text('{"analysis": {"roles": {"tools/**": "library"}}}',
                                                 encoding="utf-8")
    refused = docbridge("check", "--root", str(root))
    assert refused.returncode == 2 and "analysis.roles.tools/**" in refused.stderr and "library" in refused.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_artifacts_folder_never_shows_in_git_status(tmp_path: Path) -> None:
    root = _shape(tmp_path)
    git = ["git", "-C", str(root), "-c", "user.email=docs@example.com", "-c", "user.name=Docs"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "initial"], check=True)
    for command in (["scan"], ["check", "--fail-on", "never"], ["search", "area"], ["index"], ["doctor"]):
        assert docbridge(*command, "--root", str(root)).returncode == 0, command
    assert (root / ".docbridge" / "snapshot.json").is_file()
    status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=all"], capture_output=True,
                            text=True, check=True)
    assert status.stdout == ""
    # a folder made before it carried its own .gitignore gets one from init
    (root / ".docbridge" / ".gitignore").unlink()
    assert ".docbridge/" in subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True,
                                           check=True).stdout
    assert docbridge("init", "--root", str(root)).returncode == 0
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert status.stdout == "?? doc-bridge.config.json\n"
