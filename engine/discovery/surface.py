"""A package's public surface: the declarations its entry points export, following re-exports.

The entry points are the files the manifest names (`exports`, its subpaths, `types`, `module`, `main`), mapped
from built output back to the source that produces it, else the conventional `src/index`, `index` or `mod`.
From each, `export * from`, `export { a } from` and `export * as ns from` are followed to the modules that
declare the names. When several library modules declare a name a document mentions, the one a package
exports is the API the document means; the others are internals that happen to share the name.

Computed once per universe, on first use; the universe drops it when an export or a re-export changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docbridge.engine.base.model import MODULE, split_id
from docbridge.engine.discovery.imports import _ModuleResolver, manifest_file_module, probe_module

if TYPE_CHECKING:
    from docbridge.engine.discovery.universe import Universe

CONVENTIONAL_ENTRIES = ("src/index", "index", "mod", "src/mod", "lib/index", "src/main")
MAX_VISITS = 200_000  # (module, name) visits per universe: a bound on pathological re-export webs


def entry_modules(universe: Universe, main: bool = True) -> list[str]:
    """Every package's main entry modules (`exports["."]`, `types`, `module`, `main`, else the conventional
    ones), or with `main=False` the modules of its other `exports` subpaths; sorted."""
    layout = universe.layout
    if layout is None:
        return []
    found: set[str] = set()
    for info in layout.packages.values():
        facts = info.facts
        targets = (facts.entry_points if main else tuple(t for _, t in facts.subpaths)) if facts else ()
        resolved = {m for m in (manifest_file_module(universe, info.directory, t) for t in targets) if m}
        if not resolved and main:
            prefix = "" if info.directory == "." else f"{info.directory}/"
            resolved = {m for m in (probe_module(universe, prefix + c) for c in CONVENTIONAL_ENTRIES) if m}
        found |= resolved
    return sorted(found)


def public_declarations(universe: Universe) -> dict[tuple[str, str], int]:
    """(module, name) of every declaration some package's entry points export, with 0 when a main entry exports
    it and 1 when only another `exports` subpath does (`prettier` over `prettier/standalone`)."""
    cached = universe._surface.get("public")
    if cached is not None:
        return cached
    value: dict[tuple[str, str], int] = {}
    for rank, main in ((1, False), (0, True)):
        for found in _reachable(universe, entry_modules(universe, main)):
            value[found] = rank
    universe._surface["public"] = value
    return value


def _reachable(universe: Universe, entries: list[str]) -> set[tuple[str, str]]:
    public: set[tuple[str, str]] = set()
    seen_all: set[str] = set()  # modules whose every export was followed
    seen: set[tuple[str, str]] = set()
    stack: list[tuple[str, str | None]] = [(entry, None) for entry in entries]
    visits = 0
    while stack and visits < MAX_VISITS:
        module, name = stack.pop()
        visits += 1
        if name is None:
            if module in seen_all:
                continue
            seen_all.add(module)
        elif module in seen_all or (module, name) in seen:
            continue
        else:
            seen.add((module, name))
        facts = universe.modules.get(module)
        if facts is None:
            continue
        resolver = None
        for export in facts.exports:
            if export.source is None:
                if export.name != "*" and (name is None or export.name == name):
                    public.add((module, export.name))
                continue
            if name is not None and export.name not in ("*", name):
                continue
            resolver = resolver or _ModuleResolver(universe, facts)
            target, status = resolver.resolve(export.source)
            if status != "resolved" or target is None:
                continue
            target_module = split_id(target)[1] if target.startswith(f"{MODULE}:") else None
            if target_module is None:
                continue
            if export.name == "*":
                stack.append((target_module, name))
            elif export.kind == "namespace" or export.original == "*":
                stack.append((target_module, None))
            else:  # `export { a as b } from`: `a` in the source
                stack.append((target_module, export.original or export.name))
    return public


MAX_CHAIN = 16  # re-exports followed from a barrel to a declaration


def declaration_of(universe: Universe, module: str, name: str) -> tuple[str, str] | None:
    """Where a name a module re-exports is declared: (module, name there), following `export { a as b } from`,
    `import { a }; export { a }` and `export * from` through the repository (None when the chain leaves it, for
    an external package, or loops)."""
    seen: set[tuple[str, str]] = set()
    current, wanted = module, name
    for _ in range(MAX_CHAIN):
        if (current, wanted) in seen:
            return None
        seen.add((current, wanted))
        facts = universe.modules.get(current)
        if facts is None:
            return None
        if any(e.name == wanted and e.source is None for e in facts.exports):
            return current, wanted
        named = next((e for e in facts.exports if e.name == wanted and e.source), None)
        resolver = _ModuleResolver(universe, facts)
        if named is not None:
            target, status = resolver.resolve(named.source or "")
            if status != "resolved" or not target or named.original in ("*", "default"):
                return None
            current, wanted = split_id(target)[1], named.original or wanted
            continue
        for star in (e for e in facts.exports if e.name == "*" and e.source):
            target, status = resolver.resolve(star.source or "")
            if status == "resolved" and target:
                found = declaration_of(universe, split_id(target)[1], wanted) if len(seen) < MAX_CHAIN else None
                if found is not None:
                    return found
        return None
    return None


__all__ = ["CONVENTIONAL_ENTRIES", "declaration_of", "entry_modules", "public_declarations"]
