"""`docbridge init`: read a repository's shape from a scan and write a short `doc-bridge.config.json` that
shows what Doc Bridge decided about it (documentation roots, site generator, workspaces, what is not library
source and why, the scope of `check`), so that a new user sees the decisions and knows which key changes one.

The file holds only what a user tunes; the decisions themselves are `$comment` members (JSON has no comments;
the configuration reader skips members of that name), so that a later change of the repository is read afresh
instead of being frozen into the file.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from docbridge.engine.base.config import COMMENT_KEY, CONFIG_FILE
from docbridge.engine.discovery.roles import (
    DEMO,
    DOCS_GENERATOR_CONFIG,
    EXAMPLE,
    GENERATED,
    ROLES,
    SITE_FRAMEWORK_CONFIG,
    SITE_MIN_PAGES,
    SOURCE,
    TEMPLATE,
    TEST,
)

SHOWN_PER_ROLE = 4  # folders named per role in the file; the rest are counted
SHOWN_DOC_ROOTS = 4
_NOT_A_SITE = frozenset({TEST, EXAMPLE, DEMO, TEMPLATE, GENERATED})
_GENERATORS = (("docusaurus.config", "Docusaurus"), ("mkdocs.y", "MkDocs"), (".vitepress/", "VitePress"),
               ("vuepress.config", "VuePress"), (".vuepress/", "VuePress"), ("book.toml", "mdBook"),
               ("mint.json", "Mintlify"), ("theme.config", "Nextra"), ("source.config", "Fumadocs"),
               ("astro.config", "Astro"), ("next.config", "Next.js"), ("nuxt.config", "Nuxt"),
               ("eleventy", "Eleventy"))


@dataclass(frozen=True, slots=True)
class DocumentationRoot:
    folder: str  # "." for the documents at the repository's root
    pages: int
    site: str | None = None  # the site generator's configuration file, when one builds this folder
    generator: str | None = None


@dataclass(frozen=True, slots=True)
class RoleGroup:
    role: str
    where: str  # a folder (`e2e/`), every folder of a name (`**/__tests__/`), or how files were recognised
    reason: str
    files: int
    folders: int = 1


@dataclass(slots=True)
class RepositoryShape:
    documents: int = 0
    modules: int = 0
    documentation: list[DocumentationRoot] = field(default_factory=list)
    packages: list[tuple[str, str]] = field(default_factory=list)  # (name, directory) of the libraries
    all_packages: int = 0  # package.json files, private ones and those of tests, examples... included
    roles: dict[str, int] = field(default_factory=dict)  # modules per role
    groups: list[RoleGroup] = field(default_factory=list)
    scope: str = "library"
    scope_reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents, "modules": self.modules,
            "documentation": [{"folder": d.folder, "pages": d.pages, "site": d.site, "generator": d.generator}
                              for d in self.documentation],
            "packages": [{"name": name, "directory": directory} for name, directory in self.packages],
            "manifests": self.all_packages,
            "roles": self.roles,
            "notLibrary": [{"role": g.role, "where": g.where, "reason": g.reason, "files": g.files,
                            "folders": g.folders} for g in self.groups],
            "check": {"scope": self.scope, "why": self.scope_reason},
        }


def _generator(config_path: str) -> str:
    for needle, name in _GENERATORS:
        if needle in config_path:
            return name
    return "a site generator"


def _documentation(universe: Any) -> list[DocumentationRoot]:
    documents = sorted(universe.documents.keys())
    by_folder: Counter[str] = Counter(path.split("/", 1)[0] if "/" in path else "." for path in documents)
    sites: dict[str, str] = {}
    for path in sorted(universe.paths()):
        generator = DOCS_GENERATOR_CONFIG.search(path)
        if generator is None and SITE_FRAMEWORK_CONFIG.search(path) is None:
            continue
        if universe.role_of(path)[0] in _NOT_A_SITE:
            continue  # a site kept as a test fixture, an example or a template
        folder = str(PurePosixPath(path).parent)
        if folder.endswith((".vitepress", ".vuepress")):
            folder = str(PurePosixPath(folder).parent)
        top = folder.split("/", 1)[0]
        pages = sum(1 for d in documents if folder == "." or d.startswith(folder + "/"))
        if generator is None and pages < SITE_MIN_PAGES:
            continue
        if path.endswith(("mkdocs.yml", "mkdocs.yaml")) and folder == ".":
            top = "docs"  # MkDocs reads docs/ beside its configuration by default
        sites.setdefault(top, path)
    roots = [DocumentationRoot(folder, pages, sites.get(folder), _generator(sites[folder]) if folder in sites else None)
             for folder, pages in by_folder.items() if pages >= 2 or folder in sites or folder == "."]
    roots.sort(key=lambda r: (r.site is None, -r.pages, r.folder))
    return roots[:SHOWN_DOC_ROOTS]


def _deciding_folder(universe: Any, path: str, reason: str) -> str | None:
    """The folder whose name, site or package gave `path` its role; None when the file itself did."""
    parts = path.split("/")
    if reason.startswith("folder `"):
        name = reason[len("folder `"):-1]
        if name in parts[:-1]:
            return "/".join(parts[:parts.index(name) + 1])
    if reason.startswith("in the documentation site of"):
        for folder, _ in universe.doc_sites():
            if path.startswith(folder + "/"):
                return folder
    if reason.startswith("in the private package") and universe.layout is not None:
        package = universe.layout.package_of(path)
        if package is not None:
            return str(package.directory)
    return None


def _loose_reason(reason: str) -> str:
    """How a file that decided its role itself was recognised, said of several files at once."""
    if reason.startswith("marked `"):
        return "a generation marker in the file's header"
    if reason.startswith("committed although"):
        return "committed although a .gitignore lists it"
    return reason


def _folder_patterns(folders: Counter[str]) -> list[tuple[str, int, int]]:
    """(where, files, folders): folders of one name as `**/name/`, siblings named alike as `parent/prefix-*/`,
    the rest one by one."""
    out: list[tuple[str, int, int]] = []
    by_name: dict[str, list[str]] = defaultdict(list)
    for folder in folders:
        by_name[PurePosixPath(folder).name].append(folder)
    rest: list[str] = []
    for name, same in by_name.items():
        if len(same) > 1:
            out.append((f"**/{name}/", sum(folders[f] for f in same), len(same)))
        else:
            rest.extend(same)
    by_stem: dict[tuple[str, str], list[str]] = defaultdict(list)
    for folder in rest:
        path = PurePosixPath(folder)
        stem = path.name.replace("_", "-").split("-", 1)[0]
        by_stem[(str(path.parent), stem)].append(folder)
    for (parent, stem), same in by_stem.items():
        if len(same) > 1:
            where = (f"{parent}/" if parent != "." else "") + f"{stem}*/"
            out.append((where, sum(folders[f] for f in same), len(same)))
        else:
            out.append((same[0] + "/", folders[same[0]], 1))
    return out


def _groups(universe: Any) -> tuple[dict[str, int], list[RoleGroup]]:
    counts: Counter[str] = Counter()
    folders: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (role, kind of reason) -> folder -> files
    loose: Counter[tuple[str, str]] = Counter()  # (role, reason) of files that decided their role themselves
    for path in sorted(universe.modules.keys()):
        role, reason = universe.role_of(path)
        counts[role] += 1
        if role == SOURCE:
            continue
        folder = _deciding_folder(universe, path, reason)
        if folder is None:
            loose[(role, _loose_reason(reason))] += 1
            continue
        # folders named for their role are grouped together; a site's or a package's folder keeps its reason
        kind = "the folder's name" if reason.startswith("folder `") else reason
        folders[(role, kind)][folder] += 1
    groups = [RoleGroup(role, where, kind, files, count)
              for (role, kind), found in folders.items() for where, files, count in _folder_patterns(found)]
    for (role, reason), files in loose.items():
        groups.append(RoleGroup(role, "files", reason, files, 0))
    groups.sort(key=lambda g: (ROLES.index(g.role), -g.files, g.where))
    return dict(sorted(counts.items(), key=lambda item: ROLES.index(item[0]))), groups


def read_shape(state: Any) -> RepositoryShape:
    """What `init` reports of a scanned model state."""
    from docbridge.engine.views.reconcile import check_scope
    universe = state.universe
    shape = RepositoryShape(documents=len(universe.documents), modules=len(universe.modules))
    shape.documentation = _documentation(universe)
    if universe.layout is not None:
        manifests = [p for p in universe.layout.packages.values() if p.manifest]
        shape.all_packages = len(manifests)
        shape.packages = sorted((p.name, p.directory) for p in manifests
                                if universe.role_of(p.manifest)[0] == SOURCE and not (p.facts and p.facts.private))
    shape.roles, shape.groups = _groups(universe)
    shape.scope = check_scope(state)
    if state.config.check.scope is not None:
        shape.scope_reason = "set by check.scope"
    elif state.config.ownership:
        shape.scope_reason = "the configuration declares ownership records"
    elif shape.scope == "all":
        shape.scope_reason = "documents declare relations in their frontmatter"
    else:
        shape.scope_reason = "no ownership records and no relations declared in frontmatter"
    return shape


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _documentation_line(root: DocumentationRoot) -> str:
    where = "the repository's root" if root.folder == "." else f"{root.folder}/"
    line = f"{where}: {_plural(root.pages, 'page')}"
    if root.site:
        line += f", a site built with {root.generator} ({root.site})"
    return line


def _group_line(group: RoleGroup) -> str:
    count = _plural(group.files, "module")
    if group.where == "files":
        return f"{group.role}: {count} ({group.reason})"
    folders = f" in {group.folders} folders" if group.folders > 1 else ""
    return f"{group.role}: {group.where} ({count}{folders}; {group.reason})"


def summary_lines(shape: RepositoryShape) -> list[str]:
    """The decisions, one readable line each (the file's comments and the command's text output)."""
    lines = [f"Scanned {_plural(shape.documents, 'document')} and {_plural(shape.modules, 'module')}."]
    if shape.documentation:
        lines.append("Documentation: " + "; ".join(_documentation_line(d) for d in shape.documentation) + ".")
    if shape.all_packages:
        named = ", ".join(name for name, _ in shape.packages[:6])
        more = f" and {len(shape.packages) - 6} more" if len(shape.packages) > 6 else ""
        libraries = f"{_plural(len(shape.packages), 'library package')}" + (f" ({named}{more})" if named else "")
        others = shape.all_packages - len(shape.packages)
        lines.append(f"Packages: {libraries}" + (f"; {others} more package.json (private, or of tests, examples "
                                                  f"and the like)" if others else "") + ".")
    library = shape.roles.get(SOURCE, 0)
    lines.append(f"Library source: {_plural(library, 'module')}; the other "
                 f"{_plural(shape.modules - library, 'module')} never compete for a mention and make no finding "
                 f"about structure:")
    by_role: dict[str, list[RoleGroup]] = defaultdict(list)
    for group in shape.groups:
        by_role[group.role].append(group)
    for role in ROLES:
        shown = by_role.get(role, [])
        for group in shown[:SHOWN_PER_ROLE]:
            lines.append("  " + _group_line(group))
        if len(shown) > SHOWN_PER_ROLE:
            rest = shown[SHOWN_PER_ROLE:]
            lines.append(f"  {role}: {_plural(sum(g.files for g in rest), 'module')} more in "
                         f"{_plural(len(rest), 'other place')}")
    lines.append(f"check.scope: {shape.scope} ({shape.scope_reason}).")
    return lines


def config_text(shape: RepositoryShape, repository: str) -> str:
    """The `doc-bridge.config.json` init writes: the decisions as comments, and the keys a user tunes."""
    config: dict[str, Any] = {
        COMMENT_KEY: [f"Doc Bridge's configuration for {repository}, written by `docbridge init` from what it "
                      f"found (members named {COMMENT_KEY} are notes; Doc Bridge reads past them).",
                      *summary_lines(shape),
                      "ignore: globs of files Doc Bridge never reads, on top of .gitignore."],
        "schemaVersion": 1,
        "ignore": [],
        "analysis": {
            COMMENT_KEY: "A role per glob, before anything read from the layout, the manifests or a file's header; "
                         "the first glob that matches decides. Roles: " + ", ".join(ROLES) + ". For example "
                         "{\"packages/*/playground/**\": \"demo\", \"tools/codegen/**\": \"source\"}.",
            "roles": {},
        },
        "check": {
            COMMENT_KEY: f"scope: `library` reports areas, imports and names of library source only; `all` reports "
                         f"every area, import and ambiguous name. Unset, it is {shape.scope} here "
                         f"({shape.scope_reason}). `ignore`: globs of documents check does not report on; "
                         f"`severity`: a finding code mapped to error, warning, info, hint or off.",
            "ignore": [],
            "severity": {},
        },
    }
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"


__all__ = ["CONFIG_FILE", "RepositoryShape", "config_text", "read_shape", "summary_lines"]
