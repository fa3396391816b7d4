"""Packages and areas: the units between a repository and a file.

Every `package.json` is a package. Areas are the first directory level(s) under each package's source roots
(`src/`, `lib/`, ...) plus every ownership path that encloses at least one module; each module belongs to
the longest area that encloses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pathspec
from docbridge.engine.base.config import Config
from docbridge.engine.base.model import AREA, PACKAGE, PackageFacts, entity_id
from docbridge.engine.discovery.files import parent_dirs
from docbridge.engine.discovery.roles import path_role


@dataclass(frozen=True, slots=True)
class PackageInfo:
    id: str
    directory: str  # '.' for the repository root
    name: str  # the manifest name, or a directory name when there is none
    manifest: str | None  # path of package.json (None for the implicit root package)
    facts: PackageFacts | None


@dataclass(frozen=True, slots=True)
class AreaInfo:
    id: str
    path: str
    name: str
    package_id: str | None
    parent_id: str | None
    ownership_id: str | None
    modules: tuple[str, ...]


@dataclass(slots=True)
class Layout:
    packages: dict[str, PackageInfo]  # directory -> package
    areas: dict[str, AreaInfo]  # path -> area
    module_area: dict[str, str]  # module path -> area path
    # directories of packages that apply the repository's libraries, not part of them (`applications`)
    applications: frozenset[str] = frozenset()

    def in_application(self, path: str) -> bool:
        """Whether a path lies in a package that applies the repository's libraries (a starter template, an
        integration app): such code and pages show a feature in use, they are not where it lives."""
        return bool(self.applications) and (path in self.applications
                                            or any(d in self.applications for d in parent_dirs(path)))

    def package_of(self, path: str) -> PackageInfo | None:
        """The deepest package enclosing a path: its folders looked up from the path upwards (a scan of every
        package per call took half of an edit's time on a page of 1,400 lines in a repository of 206 packages)."""
        candidate = path
        while True:
            info = self.packages.get(candidate)
            if info is not None:
                return info
            cut = candidate.rfind("/")
            if cut < 0:
                return self.packages.get(".")
            candidate = candidate[:cut]

    def area_of(self, path: str) -> AreaInfo | None:
        """The longest area enclosing a path (module, document or directory)."""
        area = self.module_area.get(path)
        if area is not None:
            return self.areas[area]
        parts = path.split("/")
        for depth in range(len(parts), 0, -1):
            candidate = "/".join(parts[:depth])
            if candidate in self.areas:
                return self.areas[candidate]
        return None

    def package_by_id(self, package_id: str) -> PackageInfo | None:
        for info in self.packages.values():
            if info.id == package_id:
                return info
        return None


def _package_ids(manifests: Iterable[PackageFacts], root_name: str) -> dict[str, PackageInfo]:
    infos: dict[str, PackageInfo] = {}
    used: dict[str, str] = {}
    for facts in sorted(manifests, key=lambda f: f.directory):
        if facts.name:
            name = facts.name
        elif facts.directory == ".":
            name = "root"
        else:
            name = facts.directory.rsplit("/", 1)[-1]
        if name in used and used[name] != facts.directory:
            name = facts.directory  # two unnamed packages share a directory name: the path disambiguates
        used[name] = facts.directory
        infos[facts.directory] = PackageInfo(entity_id(PACKAGE, name), facts.directory, name, facts.path, facts)
    return infos


def applications(packages: dict[str, PackageInfo]) -> frozenset[str]:
    """The directories of packages that apply the repository's libraries rather than make them up: each is
    private, no package of the repository depends on it, it depends on one the repository publishes, and a
    sibling directory holds another such package. Families like these are starter templates
    (`create-vite/template-*`), integration apps (`integrations/react-next-14`) and examples; a lone private
    app is not counted, as a product's own app may be one."""
    published = {info.name for info in packages.values() if info.facts is not None and not info.facts.private}
    needed = {name for info in packages.values() if info.facts is not None
              for name, _field in info.facts.dependencies if name != info.name}
    users = [directory for directory, info in packages.items()
             if directory != "." and info.facts is not None and info.facts.private and info.name not in needed
             and any(name in published for name, _field in info.facts.dependencies)]
    parents: dict[str, int] = {}
    for directory in users:
        parent = directory.rpartition("/")[0]
        parents[parent] = parents.get(parent, 0) + 1
    return frozenset(d for d in users if parents[d.rpartition("/")[0]] >= 2)


UNIT_PAGES = frozenset({"readme.md", "index.md", "index.mdx", "readme.mdx"})
PAGE_SUFFIXES = (".md", ".mdx", ".markdown")


def colocated_units(modules: Iterable[str], documents: Iterable[str]) -> set[str]:
    """Folders that hold code and the page that documents it (`useFetch/index.ts` beside `useFetch/index.md`,
    `Button.tsx` beside `Button.md`, any module beside a README): each is a unit of its own."""
    stems_by_folder: dict[str, set[str]] = {}
    for module in modules:
        folder, _, name = module.rpartition("/")
        stems_by_folder.setdefault(folder, set()).add(name.split(".", 1)[0].lower())
    units = set()
    for document in documents:
        folder, _, name = document.rpartition("/")
        stems = stems_by_folder.get(folder)
        if not folder or not stems:
            continue
        lower = name.lower()
        if lower in UNIT_PAGES or lower.rsplit(".", 1)[0] in stems:
            units.add(folder)
    return units


def build_layout(manifests: Iterable[PackageFacts], modules: Iterable[str], config: Config,
                 root_name: str = "root", documents: Iterable[str] = ()) -> Layout:
    packages = _package_ids(manifests, root_name)
    layout = Layout(packages, {}, {}, applications(packages))
    settings = config.analysis.areas
    roots = set(settings.roots)
    exclude = pathspec.GitIgnoreSpec.from_lines(list(settings.exclude)) if settings.exclude else None
    module_list = sorted(modules)

    candidates: set[str] = set()
    for module in module_list:
        package = layout.package_of(module)
        base = package.directory if package else "."
        relative = module if base == "." else module[len(base) + 1:]
        dirs = relative.split("/")[:-1]
        if len(dirs) < 2 or dirs[0] not in roots:
            continue  # directly in the package or directly in a bare source root: no area
        taken = "/".join(dirs[:1 + min(settings.depth, len(dirs) - 1)])
        candidates.add(taken if base == "." else f"{base}/{taken}")

    # a folder that holds code and its page is a unit (areas inside a package's folder, never a package itself;
    # tests', examples' and the like's folders are not units of the library)
    for unit in colocated_units(module_list, documents):
        if unit not in packages and path_role(unit + "/") is None:
            candidates.add(unit)

    ownership_by_path: dict[str, str] = {}
    module_dirs = {d for m in module_list for d in parent_dirs(m)} | set(module_list)
    for record in config.ownership:
        ownership_by_path.setdefault(record.path, record.id)
        if module_list and (record.path == "." or record.path in module_dirs):
            candidates.add(record.path)
    if exclude is not None:
        candidates = {c for c in candidates if not exclude.match_file(c + "/")}

    # each module belongs to the longest enclosing candidate (parent_dirs walks up from the deepest)
    members: dict[str, list[str]] = {c: [] for c in candidates}
    for module in module_list:
        candidate = next((d for d in parent_dirs(module) if d in candidates), None)
        if candidate is not None:
            members[candidate].append(module)
            layout.module_area[module] = candidate

    for path in sorted(candidates):
        parent = next((d for d in parent_dirs(path) if d in candidates), None)
        package = layout.package_of(path)
        layout.areas[path] = AreaInfo(
            id=entity_id(AREA, path), path=path, name=path.rsplit("/", 1)[-1],
            package_id=package.id if package else None,
            parent_id=entity_id(AREA, parent) if parent else None,
            ownership_id=ownership_by_path.get(path), modules=tuple(members[path]))
    return layout
