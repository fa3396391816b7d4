"""Property-based fuzzing of every input Doc Bridge parses, through the public CLI entry (`docbridge.cli.main.main`,
in-process so that a few hundred examples stay fast; a subprocess smoke run checks the console script too).

For any `doc-bridge.config.json`, `.gitignore`, `package.json`, `tsconfig.json`, Markdown frontmatter
(YAML with anchors, aliases and tags), Markdown body and TypeScript source: no traceback, exit code 0, 1 or
2, an error (exit 2) that names the file, and bounded time.

The default run is short and deterministic (derandomized); `DOCBRIDGE_FUZZ_EXAMPLES=N` runs N examples per
input kind.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from conftest import docbridge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docbridge.cli.main import main

EXAMPLES = int(os.environ.get("DOCBRIDGE_FUZZ_EXAMPLES", "80"))
PER_EXAMPLE_SECONDS = 20.0
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

BASE = {
    "package.json": '{"name": "fuzz", "workspaces": ["packages/*"]}\n',
    "tsconfig.json": '{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["src/*"]}}}\n',
    "doc-bridge.config.json": '{"routing": {"options": {"ownership": {"core": {"path": "src/core"}}}}}\n',
    ".gitignore": "*.log\n",
    "docs/guide.md": "---\ntitle: Guide\ncovers: [src/core]\n---\n# Guide\n\nSee [core](../src/core/a.ts) "
                     "and `searchIndex`.\n",
    "src/core/a.ts": "export function searchIndex(q: string): string[] { return [q]; }\n",
    "src/core/b.ts": "import { searchIndex } from './a';\nexport const b = searchIndex('x');\n",
}


def run_cli(files: dict[str, str], *commands: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """Write the base repository with `files` replaced, run each command through the CLI entry, and check
    the invariants every run must keep; returns (code, stdout, stderr) per command."""
    root = Path(tempfile.mkdtemp(prefix="docbridge-fuzz-"))
    try:
        for path, text in {**BASE, **files}.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", errors="surrogatepass")
        results = []
        for command in commands:
            out, err = io.StringIO(), io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*command, "--root", str(root)])  # an unexpected exception fails the example
            elapsed = time.perf_counter() - started
            stdout, stderr = out.getvalue(), err.getvalue()
            assert elapsed < PER_EXAMPLE_SECONDS, f"{command} took {elapsed:.1f}s"
            assert code in (0, 1, 2), (command, code, stderr)
            assert "Traceback" not in stderr, stderr
            if code == 2:
                lines = [line for line in stderr.split("\n") if line.strip()]
                assert lines and lines[0].startswith("error: "), stderr
                assert all("doc-bridge.config.json" in line or ".docbridge" in line for line in lines), stderr
            elif command[0] == "check" and "--format" in command:
                json.loads(stdout)
            results.append((code, stdout, stderr))
        return results
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ strategies

NUMBERS = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, 100, 1e999, -1e999, 10**400]), st.booleans())
GLOB_CHARS = "![]*?/\\-az.# ^{},"
GLOBS = st.text(alphabet=GLOB_CHARS, min_size=0, max_size=12)
SCALARS = st.one_of(st.none(), NUMBERS, st.text(max_size=12), GLOBS)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def _deep(depth: int, open_: str, close: str, leaf: str = "1") -> str:
    return open_ * depth + leaf + close * depth


def _config_value(key: str) -> st.SearchStrategy:
    if key == "retrieval":
        return st.fixed_dictionaries({}, optional={
            "weights": st.dictionaries(st.sampled_from(["title", "body", "path", "other"]), NUMBERS | SCALARS,
                                       max_size=3),
            "params": st.dictionaries(st.sampled_from(["k1", "b"]), NUMBERS, max_size=2),
            "hybrid": st.booleans() | SCALARS})
    if key == "limits":
        return st.dictionaries(st.sampled_from(["maxFileBytes", "maxTotalBytes", "maxFiles",
                                                "relationsPerDocument"]), NUMBERS | SCALARS, max_size=3)
    if key in ("ignore",):
        return st.lists(GLOBS, max_size=4) | SCALARS
    if key == "check":
        return st.fixed_dictionaries({}, optional={"ignore": st.lists(GLOBS, max_size=3),
                                                   "severity": st.dictionaries(st.text(max_size=6), SCALARS,
                                                                               max_size=2)})
    if key == "rules":
        return st.fixed_dictionaries({}, optional={"criticalPaths": st.lists(GLOBS, max_size=3),
                                                   "centralityThreshold": NUMBERS,
                                                   "mode": st.sampled_from(["default", "strict", "x"])})
    if key == "audit":
        return st.fixed_dictionaries({}, optional={"requiredSections": st.dictionaries(
            GLOBS, st.lists(st.text(max_size=6), max_size=2), max_size=2), "minWords": NUMBERS})
    if key == "analysis":
        return st.fixed_dictionaries({"areas": st.fixed_dictionaries({}, optional={
            "depth": NUMBERS, "exclude": st.lists(GLOBS, max_size=3), "roots": st.lists(st.text(max_size=5))})})
    if key == "routing":
        return st.fixed_dictionaries({"options": st.fixed_dictionaries({}, optional={
            "ownership": st.dictionaries(st.text(min_size=1, max_size=6), st.fixed_dictionaries(
                {"path": st.text(alphabet="ab/.\\ ", max_size=8)}) | JSON_VALUES, max_size=2),
            "intents": JSON_VALUES, "changes": JSON_VALUES})})
    return JSON_VALUES


CONFIG_KEYS = ["retrieval", "limits", "ignore", "check", "rules", "audit", "analysis", "routing", "corpus",
               "schemaVersion", "index", "intelligence", "render", "reconciliation", "doctor", "unknown"]
CONFIG_OBJECTS = st.lists(st.sampled_from(CONFIG_KEYS), max_size=4, unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({k: _config_value(k) for k in keys}))
CONFIG_TEXTS = st.one_of(
    CONFIG_OBJECTS.map(lambda value: json.dumps(value, allow_nan=True)),
    CONFIG_OBJECTS.map(lambda value: json.dumps(value, allow_nan=True)[:-1]),  # truncated
    st.integers(900, 20_000).map(lambda n: _deep(n, '{"a":', "}")),
    st.integers(900, 20_000).map(lambda n: '{"corpus": {"human": {"options": ' + _deep(n, "[", "]") + "}}}"),
    JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True)),
    st.text(max_size=40))

GITIGNORES = st.lists(st.one_of(GLOBS, st.sampled_from(["!", "[z-a]", "\\", "**", "!**/", "[!]", "#x", " ", "a/**/b"])),
                      max_size=8).map("\n".join)

MANIFEST_TEXTS = st.one_of(
    JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True)),
    st.fixed_dictionaries({}, optional={k: JSON_VALUES for k in ("name", "workspaces", "exports", "main",
                                                                 "dependencies", "scripts", "compilerOptions",
                                                                 "extends")}).map(json.dumps),
    st.integers(900, 20_000).map(lambda n: _deep(n, "[", "]")),
    st.integers(900, 20_000).map(lambda n: _deep(n, '{"compilerOptions":', "}")),
    st.integers(4300, 6000).map(lambda n: '{"name": ' + "9" * n + "}"),
    st.text(alphabet='{}[]",:/*\n tn1ab\\', max_size=40))

YAML_PIECES = [
    "title: Guide", "title: !!int", "0: !!int", "title: !!float abc", "title: !!bool maybe",
    "title: !!timestamp 2020-13-45", "when: !!timestamp 2001-12-14t21:59:43.10-05:00", "x: !!binary aGk=",
    "x: !!binary ~~~", "x: !!set {a, b}", "x: !!omap [a: 1]", "x: !!python/object:os.system x", "x: !!str 1",
    "x: !!null", "covers: [src/core]", "covers: *a", "covers: [*a, *b]", "a: &a [x, x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]", "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]", "e: *zz", "<<: *a", "? [a]\n: b", "- a", "[a, b",
    "docbridge:\n  relations:\n    - {from: src/core, to: src/x, kind: imports, detection: static}",
    "docbridge: {covers: [1, 2]}", "docbridge: !!int 1", "title: .nan", "title: 1e999", "%YAML 1.1",
    "x: |\n  block", "x: >-\n  folded", "\t", "key: 'unterminated", "&x", "*x", "!tag x",
]
FRONTMATTERS = st.one_of(
    st.lists(st.sampled_from(YAML_PIECES), min_size=1, max_size=6).map("\n".join),
    st.integers(50, 3000).map(lambda n: "x: " + _deep(n, "[", "]", "")),
    st.integers(50, 300).map(lambda n: "".join(" " * i + "k:\n" for i in range(n)) + " " * n + "v"),
    st.text(alphabet="&*!:-[]{}?|>'\"\n #ab1", max_size=40))

MD_PIECES = ["# Title", "## Heading {#id}", "[link](../src/core/a.ts)", "[anchor](#missing)", "[[Wiki Link]]",
             "[[wiki|label]]", "`searchIndex`", "`src/core/zzz.ts`", "```ts\ncode\n```", "```", "    indented",
             "<!-- doc-bridge:generated hash=abc -->", "<!-- /doc-bridge:generated -->", "---", "* item", "> q",
             "| a | b |\n|---|---|\n| 1 | 2 |", "[^1]\n\n[^1]: note", "<https://x.test>", "www.x.test", "![i](x.png)",
             "[ref]: ../docs/guide.md", "\\", "[", "](", "`", "\u202e", "\x00", "\r"]
BODIES = st.one_of(st.lists(st.sampled_from(MD_PIECES) | st.text(max_size=10), max_size=10).map("\n".join),
                   st.text(max_size=60))

TS_PIECES = ["import { a } from './a';", "import * as x from '../core/a';", "export * from './a';",
             "export { searchIndex as s } from './a';", "export default function () {}", "const m = await import(x);",
             "import('./b')", "export const z = 1;", "/* unterminated", "`template ${", "'str", "export class C {}",
             "export type T = {a: 1};", "declare module 'x' { export const y: number; }", "@decorator", "\u2028", "{"]
SOURCES = st.one_of(st.lists(st.sampled_from(TS_PIECES) | st.text(max_size=10), max_size=10).map("\n".join),
                    st.integers(500, 5000).map(lambda n: "const x = " + _deep(n, "[", "]", "") + ";"),
                    st.text(max_size=60))


# ------------------------------------------------------------------------------------------------ properties

CHECK = ("check", "--format", "json", "--no-cache")


@FUZZ
@given(text=CONFIG_TEXTS)
def test_fuzz_configuration(text: str) -> None:
    for code, _out, err in run_cli({"doc-bridge.config.json": text}, CHECK, ("search", "tax", "--no-cache")):
        if code == 2:
            assert "doc-bridge.config.json" in err


@FUZZ
@given(text=GITIGNORES, nested=st.booleans())
def test_fuzz_gitignore(text: str, nested: bool) -> None:
    for code, _out, err in run_cli({"src/.gitignore" if nested else ".gitignore": text}, CHECK):
        assert code in (0, 1), err


@FUZZ
@given(text=MANIFEST_TEXTS, which=st.sampled_from(["package.json", "tsconfig.json", "src/core/package.json"]))
def test_fuzz_package_json_and_tsconfig(text: str, which: str) -> None:
    for code, _out, err in run_cli({which: text}, CHECK):
        assert code in (0, 1), err


@FUZZ
@given(frontmatter=FRONTMATTERS, body=BODIES)
def test_fuzz_markdown_frontmatter_and_body(frontmatter: str, body: str) -> None:
    for code, _out, err in run_cli({"docs/fuzz.md": f"---\n{frontmatter}\n---\n{body}\n"}, CHECK):
        assert code in (0, 1), err


@FUZZ
@given(body=BODIES)
def test_fuzz_markdown_body(body: str) -> None:
    for code, _out, err in run_cli({"docs/guide.md": body}, CHECK):
        assert code in (0, 1), err


@FUZZ
@given(source=SOURCES)
def test_fuzz_typescript(source: str) -> None:
    for code, _out, err in run_cli({"src/core/a.ts": source}, CHECK):
        assert code in (0, 1), err


@pytest.mark.parametrize("name, text", [
    ("doc-bridge.config.json", '{"retrieval": {"weights": {"title": 1e999}}}'),
    (".gitignore", "!\n[z-a]\n"),
    ("docs/guide.md", "---\n0: !!int\n---\n# Guide\n"),
])
def test_fuzz_findings_hold_for_the_console_script(tmp_path: Path, name: str, text: str) -> None:
    """The same invariants through the installed `docbridge` script, as a subprocess."""
    for path, content in {**BASE, name: text}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(content, encoding="utf-8")
    result = docbridge("check", "--root", str(tmp_path), timeout=60)
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1, 2)
    if result.returncode == 2:
        assert result.stderr.startswith("error: ") and name in result.stderr
