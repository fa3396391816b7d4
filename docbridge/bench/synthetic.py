"""A deterministic synthetic repository for benchmarks: N Markdown documents and N TypeScript modules.

Documents link to each other (some with anchors, about 3% broken), mention module paths, directories and
exported symbols in inline code, and carry fenced code that must not count. Modules import each other
across areas and export functions, constants, interfaces and classes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("order invoice payment customer catalog product price stock session token permission cache queue "
         "event retry schedule report export import audit policy region tenant account billing ledger refund "
         "shipment carrier label webhook metric alert storage index search ranking graph document module").split()


def _area_count(n: int) -> int:
    return max(4, min(60, n // 100))


def generate(out: Path, n: int, seed: int = 7, packages: int = 0) -> dict[str, int]:
    """Write the repository under `out` and return what was written. With `packages`, a monorepo: the areas
    are spread over that many npm workspaces (`packages/pkgNN`, each with its manifest and a README)."""
    rng = random.Random(seed)
    areas = [f"area{k:02d}" for k in range(_area_count(n))]
    if packages:
        areas = [f"packages/pkg{k % packages:02d}/src/{area}" for k, area in enumerate(areas)]
    else:
        areas = [f"src/{area}" for area in areas]
    sections = [f"section{k:02d}" for k in range(max(4, min(60, n // 100)))]
    modules = [f"{areas[i % len(areas)]}/{WORDS[i % len(WORDS)]}{i:05d}.ts" for i in range(n)]
    docs = [f"docs/{sections[i % len(sections)]}/{WORDS[(i * 7) % len(WORDS)]}-{i:05d}.md" for i in range(n)]
    symbols = [[f"{WORDS[(i + j) % len(WORDS)]}Handler{i}x{j}" for j in range(4)] for i in range(n)]
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, object] = {"name": "synthetic-app", "version": "1.0.0", "scripts": {
        "test": "vitest run", "build": "tsc -p ."}}
    if packages:
        manifest["private"] = True
        manifest["workspaces"] = ["packages/*"]
        for k in range(packages):
            folder = out / "packages" / f"pkg{k:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "package.json").write_text(json.dumps({
                "name": f"@synthetic/pkg{k:02d}", "version": "1.0.0", "main": "src/index.ts",
                "scripts": {"test": "vitest run"}}, indent=2) + "\n")
            (folder / "README.md").write_text(f"# @synthetic/pkg{k:02d}\n\nPackage {k} of the synthetic monorepo: "
                                              f"its areas live under `src/`.\n")
    (out / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (out / "tsconfig.json").write_text('{ "compilerOptions": { "strict": true } }\n')
    for i, path in enumerate(modules):
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for _ in range(rng.randint(1, 3)):
            other = rng.randrange(n)
            if other != i:
                rel = _relative(path, modules[other]).removesuffix(".ts") + ".js"
                lines.append(f"import {{ {symbols[other][0]} }} from '{rel}';")
        lines.append("import { z } from 'zod';")
        lines.append("")
        lines.append(f"export interface {symbols[i][3].capitalize()}Options {{ retries: number; label: string }}")
        lines.append(f"export const {symbols[i][1]} = {i};")
        for j in (0, 2):
            lines.append(f"/** Handles {WORDS[(i + j) % len(WORDS)]} work for area {path.split('/')[-2]}. */")
            lines.append(f"export function {symbols[i][j]}(input: string, attempt = 0): string {{")
            for k in range(rng.randint(3, 12)):
                lines.append(f"  const step{k} = input.length + attempt * {k}; // {rng.choice(WORDS)}")
            lines.append("  return z.string().parse(input);")
            lines.append("}")
            lines.append("")
        lines.append(f"export class {symbols[i][0].capitalize()}Service {{")
        lines.append(f"  run(): string {{ return {symbols[i][0]}('x'); }}")
        lines.append("}")
        target.write_text("\n".join(lines) + "\n")
    broken = 0
    for i, path in enumerate(docs):
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        topic = WORDS[(i * 7) % len(WORDS)]
        lines = []
        if i % 5 == 0:
            lines += ["---", f"title: {topic.capitalize()} guide {i}", "audience: human", "---", ""]
        lines += [f"# {topic.capitalize()} guide {i}", "",
                  f"This page explains how {topic} handling works in {rng.choice(WORDS)} flows. "
                  f"It is maintained next to the code it describes.", ""]
        for h in range(rng.randint(2, 5)):
            lines.append(f"## {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {h}")
            lines.append("")
            sentence = []
            for _ in range(rng.randint(2, 4)):
                kind = rng.random()
                if kind < 0.35:
                    other = rng.randrange(n)
                    link = _relative(path, docs[other])
                    if rng.random() < 0.03:
                        link = link.replace(".md", "-missing.md")
                        broken += 1
                    elif rng.random() < 0.3:
                        link += f"#{rng.choice(WORDS)}-{rng.choice(WORDS)}-0"
                    sentence.append(f"see [{WORDS[other % len(WORDS)]}]({link})")
                elif kind < 0.6:
                    sentence.append(f"the module `{modules[rng.randrange(n)]}`")
                elif kind < 0.8:
                    sentence.append(f"`{symbols[rng.randrange(n)][rng.randrange(3)]}`")
                elif kind < 0.9:
                    sentence.append(f"the `{rng.choice(areas)}` area")
                else:
                    sentence.append(f"`npm run {rng.choice(WORDS)}` with `--{rng.choice(WORDS)}`")
            lines.append(f"When {rng.choice(WORDS)} changes, " + ", ".join(sentence) + ".")
            lines.append("")
            if rng.random() < 0.3:
                lines += ["```ts", f"import {{ x }} from '{modules[rng.randrange(n)]}';", "```", ""]
        target.write_text("\n".join(lines) + "\n")
    return {"documents": n, "modules": n, "broken_links": broken}


def _relative(source: str, target: str) -> str:
    source_dir = source.rsplit("/", 1)[0].split("/")
    target_parts = target.split("/")
    common = 0
    while common < len(source_dir) and common < len(target_parts) - 1 and source_dir[common] == target_parts[common]:
        common += 1
    up = [".."] * (len(source_dir) - common)
    rel = "/".join(up + target_parts[common:])
    return rel if rel.startswith("..") else "./" + rel
