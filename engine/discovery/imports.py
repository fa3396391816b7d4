"""Resolving one module's imports against the universe: relative paths with extension and `index` probing,
`.js` written for a `.ts` source, workspace package names, `tsconfig.json` `paths`/`baseUrl`, and anything
else to an `external:` entity. A pure function of the module's facts and the universe.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from docbridge.engine.base.heap import OneCopy
from docbridge.engine.base.model import EXTERNAL, MODULE, Evidence, Import, ModuleFacts, Positional, Relation, entity_id
from docbridge.engine.discovery.files import normalise
from docbridge.engine.discovery.universe import Key, Universe, dirname, shared_keys

MAX_EVIDENCE = 8

_PROBE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}


def probe_module(universe: Universe, path: str) -> str | None:
    """The module a specifier's path names: as written, with an extension or `/index.*` added, or the `.ts`
    source of a `.js` name."""
    modules = universe.modules
    if path in modules:
        return path
    for ext in _PROBE_EXTENSIONS:
        if path + ext in modules:
            return path + ext
    for ext in _PROBE_EXTENSIONS:
        if f"{path}/index{ext}" in modules:
            return f"{path}/index{ext}"
    stem, dot, ext = path.rpartition(".")
    if dot and "." + ext in _JS_TO_TS:
        for replacement in _JS_TO_TS["." + ext]:
            if stem + replacement in modules:
                return stem + replacement
    return None


BUILD_FOLDERS = ("dist/", "build/", "lib/", "out/", "esm/", "cjs/", "types/")
BUILD_FLAVOURS = frozenset({"types", "esm", "cjs", "es", "mjs", "node", "browser", "src"})
_DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


def manifest_file_module(universe: Universe, directory: str, target: str) -> str | None:
    """The module behind a file a manifest names (`./dist/node/index.js`): the file itself, else its source
    under `src/` (built output mirrors the source tree), with declaration and JS extensions tried as sources."""
    prefix = "" if directory in ("", ".") else f"{directory}/"
    entry = target.removeprefix("./")
    candidates = [f"{prefix}{entry}"]
    for built in BUILD_FOLDERS:
        if entry.startswith(built):
            rest = entry[len(built):]
            candidates.append(f"{prefix}src/{rest}")
            flavour, _, inner = rest.partition("/")
            if inner and flavour in BUILD_FLAVOURS:  # `dist/types/x.d.ts`, `dist/esm/x.js` -> `src/x`
                candidates.append(f"{prefix}src/{inner}")
    for candidate in candidates:
        path = normalise(candidate)
        if not path:
            continue
        for suffix in _DECLARATION_SUFFIXES:
            if path.endswith(suffix) and path not in universe.modules:
                path = path[:-len(suffix)]
                break
        found = probe_module(universe, path)
        if found is None and "." in path.rsplit("/", 1)[-1]:
            found = probe_module(universe, path.rsplit(".", 1)[0])
        if found is not None:
            return found
    return None


@dataclass(slots=True)
class ImportOutcome(Positional):
    imp: Import
    target: str | None
    status: str  # resolved | package | external | unresolved


@dataclass(slots=True)
class ModuleResolution(Positional):
    path: str
    imports: tuple[ImportOutcome, ...]
    deps: tuple[Key, ...]  # sorted
    # `runtime-wiring` relations (an imported binding handed to `use`, `register`, `mount` or `attach`): kept apart
    # from `relations`, which the structural findings read, since each repeats an import already there
    wiring: tuple[Relation, ...] = ()

    @property
    def relations(self) -> tuple[Relation, ...]:
        """Its `imports` and `re-exports` relations, derived from its import outcomes on each read (6 us a module):
        kept, a relation, its evidence and the tuple holding them were 216 bytes an import (33 MB on a 100,000-file
        tree), and only the snapshot and the repository's findings read them all."""
        return import_relations(self.path, self.imports)

    def external_targets(self) -> Iterator[str]:
        """The external packages it imports or wires in, without its import relations made."""
        for target in (*(o.target for o in self.imports), *(r.target for r in self.wiring)):
            if target is not None and target.startswith(EXTERNAL_PREFIX):
                yield target


EXTERNAL_PREFIX = f"{EXTERNAL}:"


def import_relations(path: str, outcomes: tuple[ImportOutcome, ...]) -> tuple[Relation, ...]:
    """One relation per (kind, target) a module's imports resolve to (none to itself), each import its evidence."""
    source = entity_id(MODULE, path)
    groups: dict[tuple[str, str], list[Import]] = {}
    for outcome in outcomes:
        target = outcome.target
        if target is None or target == source:
            continue
        imp = outcome.imp
        kind = "re-exports" if imp.kind in ("re-export", "re-export-type") else "imports"
        groups.setdefault((kind, target), []).append(imp)
    relations = []
    for (kind, target), imports in sorted(groups.items()):
        evidence = tuple(Evidence(path, i.line, i.column, i.end_line, i.end_column) for i in imports[:MAX_EVIDENCE])
        detections = tuple(sorted({i.kind for i in imports}))
        # a handful of distinct values, one copy each (three tuples a relation otherwise)
        metadata = _METADATA.same((("detection", detections),))
        relations.append(Relation(source, target, kind, evidence, "observed", "observed", metadata))
    return tuple(relations)



# --------------------------------------------------------------------------------------------------
# Modules


class _ModuleResolver:
    def __init__(self, universe: Universe, facts: ModuleFacts) -> None:
        self.u = universe
        self.facts = facts
        self.deps: set[Key] = set()

    def probe(self, path: str) -> str | None:
        """Extension and `index` probing, and `.js` written for a `.ts` source."""
        self.deps.add(("dir-files", dirname(path)))
        self.deps.add(("dir-files", path))
        return probe_module(self.u, path)

    def resolve(self, specifier: str) -> tuple[str | None, str]:
        if specifier.startswith((".", "/")):
            base = dirname(self.facts.path) if specifier.startswith(".") else ""
            joined = normalise(f"{base}/{specifier}" if base else specifier.lstrip("/"))
            if joined is None:
                return None, "unresolved"
            found = self.probe(joined)
            return (entity_id(MODULE, found), "resolved") if found else (None, "unresolved")
        package = self.workspace_package(specifier)
        if package is not None:
            return package
        aliased = self.tsconfig_paths(specifier)
        if aliased is not None:
            return entity_id(MODULE, aliased), "resolved"
        name = specifier.split("/")
        external = "/".join(name[:2]) if specifier.startswith("@") and len(name) > 1 else name[0]
        return entity_id(EXTERNAL, external), "external"

    def workspace_package(self, specifier: str) -> tuple[str | None, str] | None:
        self.deps.add(("all",))
        full, _ = self.u.package_names()
        best = None
        for name in full:
            if (specifier == name or specifier.startswith(name + "/")) and (best is None or len(name) > len(best)):
                best = name
        if best is None:
            return None
        assert self.u.layout is not None
        info = self.u.layout.packages[full[best]]
        directory = "" if info.directory == "." else info.directory
        prefix = f"{directory}/" if directory else ""
        subpath = specifier[len(best):].lstrip("/")
        candidates: list[str] = []
        if subpath:
            candidates += [f"{prefix}{subpath}", f"{prefix}src/{subpath}"]
        else:
            for entry in info.facts.entry_points if info.facts else ():
                entry = entry.removeprefix("./")
                candidates.append(f"{prefix}{entry}")
                for built in ("dist/", "build/", "lib/", "out/"):
                    if entry.startswith(built):
                        candidates.append(f"{prefix}src/{entry[len(built):]}")
            candidates += [f"{prefix}src/index", f"{prefix}index"]
        for candidate in candidates:
            normalised = normalise(candidate)
            if normalised:
                for guess in (normalised, normalised.rsplit(".", 1)[0] if "." in normalised.rsplit("/", 1)[-1]
                              else normalised):
                    found = self.probe(guess)
                    if found:
                        return entity_id(MODULE, found), "resolved"
        return info.id, "package"

    def tsconfig_paths(self, specifier: str) -> str | None:
        self.deps.add(("all",))
        tsconfig = self.u.tsconfig_for(dirname(self.facts.path))
        if tsconfig is None:
            return None
        config_dir = dirname(tsconfig.path)
        base = normalise(f"{config_dir}/{tsconfig.base_url}" if config_dir else tsconfig.base_url or ".") \
            if tsconfig.base_url else config_dir
        base = base or ""
        for pattern, targets in tsconfig.paths:
            if "*" in pattern:
                prefix, _, suffix = pattern.partition("*")
                if not (specifier.startswith(prefix) and specifier.endswith(suffix)
                        and len(specifier) >= len(prefix) + len(suffix)):
                    continue
                star = specifier[len(prefix):len(specifier) - len(suffix)]
            elif pattern == specifier:
                star = ""
            else:
                continue
            for target in targets:
                joined = normalise(f"{base}/{target.replace('*', star)}" if base else target.replace("*", star))
                if joined:
                    found = self.probe(joined)
                    if found:
                        return found
        if tsconfig.base_url:
            joined = normalise(f"{base}/{specifier}" if base else specifier)
            if joined:
                return self.probe(joined)
        return None


def resolve_module(universe: Universe, facts: ModuleFacts) -> ModuleResolution:
    resolver = _ModuleResolver(universe, facts)
    source = entity_id(MODULE, facts.path)
    outcomes = []
    for imp in facts.imports:
        target, status = resolver.resolve(imp.specifier)
        outcomes.append(ImportOutcome(imp, target, status))
    return ModuleResolution(facts.path, tuple(outcomes), shared_keys(sorted(resolver.deps)),
                            _wiring(resolver, facts, source))


_METADATA: OneCopy[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]] = OneCopy(1024)


def _wiring(resolver: _ModuleResolver, facts: ModuleFacts, source: str) -> tuple[Relation, ...]:
    """One `runtime-wiring` relation per module (or package, or external) wired in, with each call's argument as
    evidence and the methods and bindings that wire it."""
    wired: dict[str, list[Import]] = {}
    for call in facts.wiring:
        target, _status = resolver.resolve(call.specifier)
        if target is not None and target != source:
            wired.setdefault(target, []).append(call)
    return tuple(
        Relation(source, target, "runtime-wiring",
                 tuple(Evidence(facts.path, c.line, c.column, c.end_line, c.end_column) for c in calls[:MAX_EVIDENCE]),
                 "observed", "observed",
                 (("detection", "runtime-wiring-static"), ("methods", tuple(sorted({c.names[0] for c in calls}))),
                  ("bindings", tuple(sorted({c.names[1] for c in calls})))))
        for target, calls in sorted(wired.items()))
