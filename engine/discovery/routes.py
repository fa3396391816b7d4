"""How documentation sites serve a repository's pages: the routes a site-style link can name.

A link written for a site names a route, not a file: `configuration#paths`, `/guide/app`, `packaging`,
`/blog/2021/05/25/jest-27`. Sites derive routes from files by shared conventions, which this index models once
for every generator:

- a page is served under its file name without the extension, lower-cased, and without an ordering prefix
  (`10-routing.md` and `1.guide/3.handler.md` serve `routing` and `guide/handler`: SvelteKit's docs, Nuxt
  Content, Docusaurus);
- a folder is served under its name, also without an ordering prefix, and its `index`/`README` page is the
  folder's own page;
- frontmatter can rename a page: `id` (Docusaurus: the file `GettingStarted.md` with `id: getting-started`),
  a relative `slug`, an absolute `slug` or `permalink` (`/docs/intro`, `/index.html`);
- a blog post named `2021-05-25-jest-27.md` is served at `2021/05/25/jest-27`.

The index is a pure function of the documents (their paths and route frontmatter) and folders; the universe
keeps it until a document or folder comes or goes, or a document's route frontmatter changes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from docbridge.engine.discovery.files import normalise
from docbridge.engine.discovery.markdown import ROUTE_FRONTMATTER

if TYPE_CHECKING:
    from docbridge.engine.discovery.universe import Universe

ORDER_PREFIX = re.compile(r"^\d+[.\-_](?=[^\d])")  # `10-routing`, `1.guide`, `01_intro` (never `2021-05-25`)
DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-(.+)$")
PAGE_EXTENSIONS = (".mdx", ".markdown", ".md")
INDEX_STEMS = frozenset({"index", "readme", "_index"})


def route_name(name: str) -> str:
    """A file or folder name as a site serves it: no page extension, no ordering prefix, lower-cased."""
    lower = name.lower()
    for extension in PAGE_EXTENSIONS:
        if lower.endswith(extension):
            lower = lower[:-len(extension)]
            break
    return ORDER_PREFIX.sub("", lower)


def clean_route(route: str) -> str:
    """`/Guide/App.html/` -> `guide/app`: the comparable form of a route."""
    route = route.strip().strip("/").lower()
    for suffix in (".html", ".htm", *PAGE_EXTENSIONS):
        if route.endswith(suffix):
            route = route[:-len(suffix)]
            break
    if route.endswith("/index") or route == "index":
        route = route[:-5].rstrip("/")
    return route


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


@dataclass(slots=True)
class RouteIndex:
    pages: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # folder -> name -> page
    folders: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # folder -> name -> child
    folder_pages: dict[str, str] = field(default_factory=dict)  # folder -> its index page
    dated: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # folder -> y/m/d/slug -> page
    absolute: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # absolute slug -> pages
    names: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # route name -> pages
    # route base -> the folders a site's configuration serves under it, longest base first (`rules` ->
    # `packages/eslint-plugin/docs/rules`, '' -> `docs`)
    mounts: list[tuple[str, str]] = field(default_factory=list)

    def mounted(self, route: str) -> str | None:
        """The page a site's configuration serves at `route` (cleaned, without its leading slash)."""
        for base, folder in self.mounts:
            if not base or route == base or route.startswith(base + "/"):
                rest = route[len(base):].strip("/")
                page = self.page(folder, [s for s in rest.split("/") if s])
                if page is None:  # a page of that folder whose absolute `slug` is the rest (`slug: /context`)
                    page = next((p for p in self.absolute.get(rest, ()) if p.startswith(folder + "/")), None)
                if page is not None:
                    return page
        return None

    def page(self, folder: str, segments: list[str]) -> str | None:
        """The page a route (as segments) names, read from `folder`."""
        current = folder
        for index, segment in enumerate(segments):
            name = segment.lower()
            if index == len(segments) - 1:
                found = self.pages.get(current, {}).get(name) or self.pages.get(current, {}).get(route_name(name))
                if found is not None:
                    return found
                child = self._child(current, name)
                return self.folder_pages.get(child) if child is not None else None
            child = self._child(current, name)
            if child is None:
                return self.dated.get(current, {}).get("/".join(segments[index:]).lower())
            current = child
        return self.folder_pages.get(current)

    def folder(self, folder: str, segments: list[str]) -> str | None:
        """The folder a route's segments name, read from `folder` (None when one of them names none)."""
        current = folder
        for segment in segments:
            child = self._child(current, segment.lower())
            if child is None:
                return None
            current = child
        return current

    def _child(self, folder: str, name: str) -> str | None:
        children = self.folders.get(folder, {})
        return children.get(name) or children.get(route_name(name))


SITE_PAGE_FOLDERS = ("src/pages", "pages")  # where site frameworks keep pages written as components


def _version_key(name: str) -> tuple[int, ...]:
    """`30.4` -> (30, 4): versions compared by their numbers (`10.x` after `9.x`)."""
    return tuple(int(part) for part in re.findall(r"\d+", name))


def build_routes(universe: Universe) -> RouteIndex:
    index = RouteIndex()
    mounts: set[tuple[str, str]] = set()
    fallbacks: list[tuple[str, str]] = []  # tried after every mount
    # a site's component pages (`website/src/pages/help.js` serves `/help`): pages of the site's own folder
    for site, config in universe.doc_sites():
        configuration = universe.modules.get(config)
        own: set[tuple[str, str]] = set()
        for base, written in configuration.site_mounts if configuration is not None else ():
            folder = normalise(f"{site}/{written}")
            if folder is not None:  # a folder outside the repository serves nothing of it
                own.add((clean_route(base), folder))
        mounts |= own
        # the versions a Docusaurus site keeps (`versioned_docs/version-30.4`): each at `/docs/<name>` when the site
        # itself serves `/docs` (another site's `/docs` says nothing of this one's versions); at `/docs` itself the
        # site serves the newest of them or the current folder (`lastVersion`), so a page either holds is found
        # there (the newest is tried after every mount)
        if any(base == "docs" for base, _ in own):
            prefix = f"{site}/versioned_docs/version-"
            kept = [d for d in universe.dir_counts if d.startswith(prefix) and "/" not in d[len(prefix):]]
            for directory in kept:
                mounts.add((f"docs/{clean_route(directory[len(prefix):])}", directory))
            if kept:
                fallbacks.append(("docs", max(kept, key=lambda d: _version_key(d[len(prefix):]))))
    index.mounts = sorted(mounts, key=lambda mount: (-len(mount[0]), mount)) + sorted(set(fallbacks) - mounts)
    for site, _config in universe.doc_sites():
        for folder in SITE_PAGE_FOLDERS:
            prefix = f"{site}/{folder}/"
            for path in universe.sorted_paths("modules"):
                if path.startswith(prefix) and "/" not in path[len(prefix):]:
                    index.pages[site].setdefault(route_name(path[len(prefix):].rsplit(".", 1)[0]), path)
    for directory in sorted(universe.dir_counts.keys()):
        parent, _, name = directory.rpartition("/")
        for variant in (name.lower(), route_name(name)):
            index.folders[parent].setdefault(variant, directory)
    for path in sorted(universe.documents.keys()):
        facts = universe.documents[path]
        folder, _, file_name = path.rpartition("/")
        stem = route_name(file_name)
        frontmatter = dict(facts.frontmatter)
        names = [file_name.lower().rsplit(".", 1)[0], stem]
        if frontmatter.get("id"):
            names.append(route_name(frontmatter["id"]))
        slug = frontmatter.get("slug") or frontmatter.get("permalink")
        if slug and slug.startswith("/"):
            index.absolute[clean_route(slug)].append(path)
        elif slug and "/" not in slug.strip("/"):
            names.append(route_name(slug.strip("/")))
        if stem in INDEX_STEMS:
            index.folder_pages.setdefault(folder, path)
        for name in names:
            index.pages[folder].setdefault(name, path)
            index.names[name].append(path)
        dated = DATED.match(stem)
        if dated:
            year, month, day, rest = dated.groups()
            index.dated[folder].setdefault(f"{year}/{month}/{day}/{rest}", path)
    return index


def routes_of(universe: Universe) -> RouteIndex:
    cached = universe._routes.get("index")
    if cached is None:
        cached = universe._routes["index"] = build_routes(universe)
    return cached


__all__ = ["ORDER_PREFIX", "ROUTE_FRONTMATTER", "RouteIndex", "build_routes", "clean_route", "route_name",
           "routes_of"]
