"""The live model against a rebuild: after random edits made through the protocol (buffer edits, saves,
closes, files created, changed and deleted on disk with watched-file events), the server's diagnostics for
every file equal what a fresh `docbridge check` reports for the edited tree."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from conftest import copy_fixture, docbridge_json
from lsp_client import Session, session
from lsprotocol import types as T
from support.wait import wait_until_async


def _docs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if ".docbridge" not in p.parts)


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.ts") if ".docbridge" not in p.parts)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


async def _step(s: Session, root: Path, rng: random.Random, step: int, opened: set[Path]) -> str:
    docs, modules = _docs(root), _modules(root)
    choice = rng.random()
    if choice < 0.35:  # type in an open document (the buffer and the disk agree afterwards, as after a save)
        path = rng.choice(sorted(opened)) if opened and rng.random() < 0.7 else rng.choice(docs)
        if path not in opened:
            s.open(path)
            opened.add(path)
        text = path.read_text(encoding="utf-8")
        target = rng.choice(docs + modules)
        addition = rng.choice([
            f"\nSee [this]({'/' + _rel(root, target)}).\n",
            f"\nAlso `{_rel(root, target)}`.\n",
            f"\nBroken: [gone](./missing-{step}.md) and `src/missing/thing{step}.ts`.\n",
            "\n## Another heading\n",
            f"\nRead [billing](/docs/billing.md#{rng.choice(['taxes', 'nope', 'payments'])}).\n",
        ])
        where = rng.random()
        if where < 0.3 and "](" in text:  # break an existing link instead
            text = text.replace("](", "](x", 1)
        elif where < 0.55:  # between two lines in the middle: the blocks after it move
            lines = text.split("\n")
            at = rng.randrange(len(lines) + 1)
            text = "\n".join([*lines[:at], addition.strip("\n"), *lines[at:]])
        else:
            text += addition
        path.write_text(text, encoding="utf-8")
        s.replace_all(path, text)
        return f"typed in {_rel(root, path)}"
    if choice < 0.5 and opened:  # close: the server falls back to the file on disk
        path = rng.choice(sorted(opened))
        opened.discard(path)
        s.close(path)
        return f"closed {_rel(root, path)}"
    if choice < 0.65:  # a change on disk, outside the editor
        path = rng.choice([m for m in modules if m not in opened] or modules)
        text = path.read_text(encoding="utf-8")
        text = text + f"\nexport const outside{step} = {step};\n" if rng.random() < 0.6 else "\n".join(
            line for line in text.split("\n") if not line.startswith("import"))
        path.write_text(text, encoding="utf-8")
        s.watched((path, T.FileChangeType.Changed))
        return f"changed {_rel(root, path)} on disk"
    if choice < 0.8:  # created on disk
        if rng.random() < 0.5:
            path = root / f"docs/created-{step}.md"
            path.write_text(f"# Created {step}\n\nAbout `{_rel(root, rng.choice(modules))}` and "
                            f"[the config](configuration.md#environment-variables).\n", encoding="utf-8")
        else:
            path = root / f"src/orders/created{step}.ts"
            path.write_text(f"import {{ placeOrder }} from './checkout.js';\nexport const made{step} = placeOrder;\n",
                            encoding="utf-8")
        s.watched((path, T.FileChangeType.Created))
        return f"created {_rel(root, path)}"
    candidates = [p for p in docs + modules if p not in opened and p.name != "README.md"]
    path = rng.choice(candidates)
    path.unlink()
    s.watched((path, T.FileChangeType.Deleted))
    return f"deleted {_rel(root, path)}"


QUIET = 0.5  # seconds without a new diagnostic: the edits' last publish has arrived


async def _settle(s: Session) -> None:
    """Until every earlier message was handled (a round trip) and diagnostics stopped arriving.

    The quiet period is kept on purpose: no message marks the last publish of a batch of edits, and what this
    oracle must catch includes a stale publish arriving after the right one, so "they were equal once" is not
    enough: they must have stopped changing."""
    await s.command("docbridge.search", "settle", 1)
    loop = asyncio.get_running_loop()
    quiet_since, last = loop.time(), None

    def quiet() -> bool:
        nonlocal quiet_since, last
        current = {uri: tuple((str(d.code), d.range.start.line, d.range.start.character) for d in items)
                   for uri, items in s.client.diagnostics.items()}
        if current != last:
            quiet_since, last = loop.time(), current
        return loop.time() - quiet_since >= QUIET

    await wait_until_async(quiet, 30, interval=0.05, what=f"diagnostics to stop changing for {QUIET} s")


def _live(s: Session, root: Path) -> set[tuple[str, str, int, int]]:
    found = set()
    for uri, diagnostics in s.client.diagnostics.items():
        path = Path(uri.removeprefix("file://"))
        for d in diagnostics:
            found.add((str(d.code), _rel(root, path), d.range.start.line, d.range.start.character))
    return found


def _rebuilt(root: Path) -> set[tuple[str, str, int, int]]:
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never", "--no-cache")
    return {(f["code"], f["path"], f["range"]["start"]["line"], f["range"]["start"]["character"])
            for f in report["findings"]}


async def test_diagnostics_after_random_protocol_edits_equal_a_fresh_check(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    rng = random.Random(1129)
    opened: set[Path] = set()
    # UTF-32 positions are code points, the unit `docbridge check` reports in
    async with session(root, encodings=["utf-32"]) as s:
        for index in range(3):
            path = _docs(root)[index]
            s.open(path)
            opened.add(path)
        history = []
        for step in range(40):
            history.append(await _step(s, root, rng, step, opened))
            if step % 10 == 9:
                await _settle(s)
                live, rebuilt = _live(s, root), _rebuilt(root)
                assert live == rebuilt, (f"after: {history[-10:]}\nonly live: {sorted(live - rebuilt)}\n"
                                         f"only rebuilt: {sorted(rebuilt - live)}")
