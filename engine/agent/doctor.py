"""`docbridge doctor`: how ready a repository's documentation is for agents, in three measured dimensions.

* **reachability** (15 points): the share of documents that are in the retrieval projection *and* can be
  reached by following links from an entry document (every Markdown file at the repository root,
  `docs/README.md`, `docs/index.md`, a documentation site's home and navigation, the agent corpus index when
  configured, and the files agent tools load by their name wherever they are: `AGENTS.md`, `CLAUDE.md`,
  `SKILL.md`). A document nothing links to is found only by a lucky search.

  The reference defines reachability as the share of documents present in the projection alone. Here every
  document is projected by construction, so that share cannot fall and would grade nothing: it is reported
  beside the figure (`inProjection`), and the grade keeps the stricter one, which falls while a document cannot
  be reached.
* **connectivity** (15 points): the share of areas with at least one covering or mentioning document, together
  with the share of documents with at least one edge to code (a mention of, or coverage of, a module, area or
  package) — one figure over both populations.
* **hit@3** (10 points): the retrieval benchmark on the golden suite (`--suite`, else `doctor.suite`);
  `not-analyzed` without one, and its points leave the total.

Score = points earned / points measured × 100 (one decimal). Grade A needs reachability 100 %, connectivity
≥ 80 % and hit@3 ≥ 80 % (so not without a suite) and a score ≥ 90; otherwise B ≥ 80, C ≥ 65, D ≥ 50, else F.
The top actions are the changes that would earn the most points, each naming the files to change.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE, entity_id, split_id
from docbridge.engine.views.reverse import documented_by_of

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

WEIGHTS = {"reachability": 15, "connectivity": 15, "hitAt3": 10}
GRADE_A = {"reachability": 1.0, "connectivity": 0.8, "hitAt3": 0.8}
MAX_ACTION_FILES = 5
CODE_KINDS = (MODULE, AREA, PACKAGE)


def entry_documents(ws: ModelState) -> list[str]:
    """Where a reader starts: every document at the repository root, `docs/README.md` or `docs/index.md`, each
    documentation site's home page, each workspace package's README (what its registry page shows) and the other
    documents at its root (its changelog: the package's folder lists them as the repository's root lists its own),
    and the agent corpus index when configured."""
    documents = ws.universe.documents
    entries = {p for p in documents if "/" not in p}
    entries |= {p for p in ("docs/README.md", "docs/index.md") if p in documents}
    for folder, _config in ws.universe.doc_sites():
        entries |= {f"{folder}/{name}" for name in HOME_PAGES if f"{folder}/{name}" in documents}
    layout = ws.universe.layout
    for info in layout.packages.values() if layout is not None else ():
        readme = f"{info.directory}/README.md" if info.directory != "." else "README.md"
        if readme in documents and ws.universe.is_library(info.manifest or readme):
            prefix = f"{info.directory}/"
            entries |= {p for p in documents if p.startswith(prefix) and "/" not in p[len(prefix):]}
    index = ws.config.corpus.agent.index
    if index and index.removeprefix("./") in documents:
        entries.add(index.removeprefix("./"))
    entries |= {p for p in documents if p.rsplit("/", 1)[-1] in AGENT_ENTRY_FILES}
    return sorted(entries)


# files an agent tool loads by their name where they are (nested instructions, skills), never through a link
AGENT_ENTRY_FILES = frozenset({"AGENTS.md", "CLAUDE.md", "SKILL.md"})


HOME_PAGES = ("index.md", "index.mdx", "README.md", "src/content/docs/index.mdx", "src/content/docs/index.md",
              "docs/index.md", "content/index.mdx", "content/index.md")
# files that hold a documentation site's navigation (sidebars, nav, meta files)
# (a site with several docs plugin instances names a sidebar per instance: `sidebar.base.js`, `sidebars.rules.ts`)
NAVIGATION_FILES = re.compile(r"(^|/)(sidebars?(\.[\w-]+)?\.[cm]?[jt]s|sidebars?\.json|_?meta\.json|_meta\.[jt]sx?|"
                              r"mkdocs\.ya?ml|config\.json|docs\.ya?ml|\.vitepress/config\.[cm]?[jt]s|"
                              r"astro\.config\.[cm]?[jt]s|docusaurus\.config\.[cm]?[jt]s|source\.config\.[cm]?[jt]s|"
                              r"[\w-]*sidebars\.json)$")
_SCRIPT_NAVIGATION = re.compile(r"(^|/)(config|sidebars?(\.[\w-]+)?|nav|navigation|toc)\.[cm]?[jt]s$")
# a sidebar item whose id is computed (`{type: 'doc', id: rule.name}`, one per rule a plugin exports): which pages
# such a sidebar lists cannot be read, so the folder whose sidebar it is (`sidebarPath`) counts as listed
_COMPUTED_ID = re.compile(r"\bid:\s*[A-Za-z_$][\w$]*(\.[\w$]+)*\s*[,}\n]")
_NAV_STRING = re.compile(r"""["'`](/?[\w@$.\-]+(?:/[\w@$.\-]+)*/?)(?:#[^"'`]*)?["'`]""")
_ORDERED = re.compile(r"^\d+[.\-_][^\d]")
MAX_NAVIGATION_BYTES = 2 << 20


def navigation_documents(ws: ModelState) -> set[str]:
    """Documents a reader reaches through a documentation site's navigation rather than through links: every page
    a navigation file names (by route, id or path), every page under a folder the site lists on its own
    (`autogenerate`, `autogenerated` sidebars, meta files), every page of a site that declares no navigation
    (the generator builds it from the folders), and every page of a folder ordered by number prefixes (the order
    a generated sidebar follows)."""
    from docbridge.engine.discovery.files import normalise
    from docbridge.engine.discovery.routes import clean_route, route_name, routes_of
    universe = ws.universe
    documents = sorted(universe.documents.keys())
    routes = routes_of(universe)
    found: set[str] = set()

    def named(route: str) -> None:  # a route or page path a navigation names: the pages of that name
        cleaned = clean_route(route)
        found.update(routes.names.get(route_name(cleaned.rsplit("/", 1)[-1]), ()))

    for facts in universe.navigation.values():  # navigation kept as data (sidebars.json, config.json, mkdocs.yml)
        for route in facts.routes:
            named(route)
    sites = [folder for folder, _ in universe.doc_sites()]
    for folder, config in universe.doc_sites():
        navigation = [p for p in universe.paths() if p.startswith(folder + "/") and NAVIGATION_FILES.search(p)]
        read = {path: _read(ws.root, path) for path in sorted({*navigation, config})}
        texts = list(read.values())
        listed = any(re.search(r"\b(sidebar|nav|navigation|pages)\b", text) for text in texts)
        if not listed or any("autogenerat" in text for text in texts):
            found |= {d for d in documents if d.startswith(folder + "/")}
        configuration = universe.modules.get(config)
        for written, sidebar in configuration.site_sidebars if configuration is not None else ():
            served, sidebar_path = normalise(f"{folder}/{written}"), normalise(f"{folder}/{sidebar}")
            if served is not None and sidebar_path is not None and \
                    _COMPUTED_ID.search(read.get(sidebar_path, "")):
                found |= {d for d in documents if d.startswith(served + "/")}
        for text in texts:
            for match in _NAV_STRING.finditer(text):
                named(match.group(1))
        # a blog's posts are listed by the blog's own index pages
        found |= {d for d in documents if d.startswith(folder + "/") and "/blog/" in d[len(folder):]}
    for path in universe.sorted_paths("modules"):  # navigation written as code in a docs folder of no known site
        if _SCRIPT_NAVIGATION.search(path) and universe.role_of(path)[0] == "docs-site" and \
                not any(path.startswith(site + "/") for site in sites):
            for match in _NAV_STRING.finditer(_read(ws.root, path)):
                named(match.group(1))
    found |= {path for path, facts in universe.documents.items() if facts.fm("navigation")}
    for path in universe.paths():  # meta files of file-system navigation (Nextra, Fumadocs)
        if path.rsplit("/", 1)[-1] in ("_meta.json", "meta.json", "_meta.js", "_meta.ts"):
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            found |= {d for d in documents if d.startswith(folder + "/")}
    by_folder: dict[str, list[str]] = {}
    for document in documents:
        by_folder.setdefault(document.rsplit("/", 1)[0] if "/" in document else "", []).append(document)
    for path, page in universe.documents.items():
        # an index page that is nothing but a title in its frontmatter names a category of a navigation the site
        # builds from its folders (`docs/api/index.md`: `title: API`, `order: 3`): the folder's pages are listed
        folder, _, name = path.rpartition("/")
        if name.lower() in ("index.md", "index.mdx") and page.fm("title") and not page.headings and \
                not page.body.strip():
            found.update(by_folder.get(folder, ()))
    for folder, pages in by_folder.items():
        names = [p.rsplit("/", 1)[-1] for p in pages]
        if folder and 2 * sum(1 for n in names if _ORDERED.match(n)) >= len(names) >= 2:
            found.update(pages)
            parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
            if _ORDERED.match(folder.rsplit("/", 1)[-1]):  # ordered folders of an ordered tree: the whole tree
                found |= {d for d in documents if d.startswith(parent + "/")}
    return found


def _read(root: Path, path: str) -> str:
    try:
        with open(root / path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_NAVIGATION_BYTES)
    except OSError:
        return ""


def counted_documents(ws: ModelState) -> list[str]:
    """The documentation a reader is meant to find: every document but test inputs, templates, generated output,
    examples' and demos' own notes."""
    return sorted(d for d in ws.universe.documents if ws.universe.role_of(d)[0] not in NOT_DOCUMENTATION)


NOT_DOCUMENTATION = frozenset({"test", "template", "generated", "example", "demo"})


def reachability(ws: ModelState, projection: Any) -> dict[str, Any]:
    documents = counted_documents(ws)
    links: dict[str, set[str]] = {}
    for path, resolution in ws.documents.items():
        links[path] = {split_id(target)[1] for kind, target, _symbol in resolution.relation_keys
                       if kind == "links-to" and split_id(target)[0] == DOCUMENT}
    entries = entry_documents(ws)
    navigation = navigation_documents(ws)
    seen = set(entries) | navigation
    queue = deque(sorted(seen))
    while queue:
        for target in sorted(links.get(queue.popleft(), ())):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    in_projection = {e.path for e in projection.entries if e.kind == DOCUMENT}
    reachable = [d for d in documents if d in seen and d in in_projection] if entries else \
        [d for d in documents if d in in_projection]
    unreachable = [d for d in documents if d not in set(reachable)]
    projected = sum(1 for d in documents if d in in_projection)
    return {"value": _share(len(reachable), len(documents)), "reachable": len(reachable), "total": len(documents),
            "inProjection": projected, "entryDocuments": entries, "navigation": len(navigation),
            "unreachable": unreachable}


COMMUNITY_DOCUMENTS = re.compile(r"(^|/)(code[_-]of[_-]conduct|security|support|governance|license|licence|funding|"
                                  r"backers|sponsors|authors|maintainers|codeowners)(\.[\w.]+)?$", re.I)


def about_code(ws: ModelState, path: str) -> bool:
    """Whether a document is expected to name code: not a changelog, release note, migration guide or blog post
    (they name what changed), nor a community file (conduct, security, support, licence)."""
    from docbridge.engine.views.reconcile import describes_history
    return not describes_history(ws, path) and not COMMUNITY_DOCUMENTS.search(path)


def documented_in_code(ws: ModelState, modules: tuple[str, ...]) -> bool:
    """Whether most of what an area exports carries doc comments: an API reference generated from the code (TSDoc,
    TypeDoc, JSDoc) documents it."""
    exported = documented = 0
    for module in modules:
        facts = ws.universe.modules.get(module)
        if facts is None or not ws.universe.is_library(module):
            continue
        exported += sum(1 for e in facts.exports if e.declared and e.name != "default")
        documented += facts.documented
    return exported > 0 and 2 * documented >= exported


def connectivity(ws: ModelState) -> dict[str, Any]:
    """The share of library areas that some document describes, and of the documents expected to name code that
    do name some, together."""
    from docbridge.engine.views.reconcile import library_areas
    layout = ws.universe.layout
    assert layout is not None
    documented = documented_by_of(ws)
    areas = sorted(library_areas(ws))
    undocumented_areas = [a for a in areas if not documented.get(entity_id(AREA, a))
                          and not any(documented.get(entity_id(MODULE, m)) for m in layout.areas[a].modules)
                          and not documented_in_code(ws, layout.areas[a].modules)]
    documents = [d for d in counted_documents(ws) if d in ws.documents and about_code(ws, d)]
    isolated = [d for d in documents
                if not any(split_id(target)[0] in CODE_KINDS for _, target, _ in ws.documents[d].relation_keys)]
    total = len(areas) + len(documents)
    linked = total - len(undocumented_areas) - len(isolated)
    return {"value": _share(linked, total), "areas": len(areas), "documentedAreas": len(areas) - len(
        undocumented_areas), "documents": len(documents), "linkedDocuments": len(documents) - len(isolated),
        "undocumentedAreas": undocumented_areas, "documentsWithoutCode": isolated}


def hit_at_3(retriever: Any, suite_path: Path | None, root: Path) -> dict[str, Any]:
    from docbridge.engine.agent import suites
    if suite_path is None:
        return {"value": None, "status": "not-analyzed", "reason": "no golden suite (--suite or doctor.suite)"}
    suite = suites.load_suite(suite_path)
    result = suites.run_retrieval_suite(retriever, suite)
    misses = [c for c in result["_cases"] if c["rank"] is None or c["rank"] > 3]
    expected = {c["id"]: c["expected"]["anyOf"] for c in suite["cases"]}
    return {"value": result["metrics"]["hitAt3"], "status": "analyzed", "suite": _relative(suite_path, root),
            "caseCount": result["suite"]["caseCount"],
            "misses": [{"id": c["id"], "input": c["input"], "rank": c["rank"], "expected": expected[c["id"]]}
                       for c in misses]}


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 1.0


def grade(dimensions: dict[str, dict[str, Any]]) -> tuple[float, str]:
    earned = measured = 0.0
    for name, weight in WEIGHTS.items():
        value = dimensions[name]["value"]
        if value is None:
            continue
        earned += weight * value
        measured += weight
    score = round(100 * earned / measured, 1) if measured else 0.0
    meets_a = all(dimensions[n]["value"] is not None and dimensions[n]["value"] >= bar for n, bar in GRADE_A.items())
    if meets_a and score >= 90:
        return score, "A"
    for bar, letter in ((80, "B"), (65, "C"), (50, "D")):
        if score >= bar:
            return score, letter
    return score, "F"


def actions(dimensions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    reach, conn, hit = dimensions["reachability"], dimensions["connectivity"], dimensions["hitAt3"]
    for folder, pages in _unreachable_groups(reach["unreachable"]):
        gain = WEIGHTS["reachability"] * len(pages) / max(reach["total"], 1)
        where = f"`{folder}/`" if folder else "the repository root"
        action = (f"Give the {len(pages)} pages of {where} a place in the site's navigation, or an index page "
                  f"there that links them." if len(pages) >= FOLDER_ACTION else
                  f"Link {', '.join(f'`{p}`' for p in pages)} from a page readers already reach, near {where}.")
        out.append({"dimension": "reachability", "points": round(gain, 1), "action": action,
                    "files": pages[:MAX_ACTION_FILES]})
    total = max(conn["areas"] + conn["documents"], 1)
    if conn["undocumentedAreas"]:
        out.append({"dimension": "connectivity",
                    "points": round(WEIGHTS["connectivity"] * len(conn["undocumentedAreas"]) / total, 1),
                    "action": "Mention these areas (or their modules) in the document that describes them.",
                    "files": conn["undocumentedAreas"][:MAX_ACTION_FILES]})
    if conn["documentsWithoutCode"]:
        out.append({"dimension": "connectivity",
                    "points": round(WEIGHTS["connectivity"] * len(conn["documentsWithoutCode"]) / total, 1),
                    "action": "Name the code these documents describe (a path in backticks, or `covers:`).",
                    "files": conn["documentsWithoutCode"][:MAX_ACTION_FILES]})
    if hit["status"] == "not-analyzed":
        out.append({"dimension": "hitAt3", "points": float(WEIGHTS["hitAt3"]),
                    "action": "Add a golden retrieval suite and name it in `doctor.suite` (grade A needs hit@3).",
                    "files": ["doc-bridge.config.json"]})
    elif hit["misses"]:
        files = sorted({t for miss in hit["misses"] for t in miss["expected"]})
        out.append({"dimension": "hitAt3",
                    "points": round(WEIGHTS["hitAt3"] * len(hit["misses"]) / max(hit["caseCount"], 1), 1),
                    "action": f"{len(hit['misses'])} case(s) of {hit['suite']} miss the top 3 "
                              f"({', '.join(m['id'] for m in hit['misses'][:5])}): describe the expected targets in "
                              f"words people search for.", "files": files[:MAX_ACTION_FILES]})
    out.sort(key=lambda a: (-a["points"], a["dimension"], a["action"]))
    return out


FOLDER_ACTION = 3  # unreachable pages of one folder from which the advice is the folder's navigation
MAX_FOLDER_ACTIONS = 3


def _unreachable_groups(unreachable: list[str]) -> list[tuple[str, list[str]]]:
    """Unreachable documents by folder (the two top segments), the largest groups first, at most a few groups:
    what to fix is where the navigation misses pages, never one entry document linking hundreds."""
    groups: dict[str, list[str]] = {}
    for path in unreachable:
        parts = path.split("/")[:-1]
        groups.setdefault("/".join(parts[:2]), []).append(path)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return ordered[:MAX_FOLDER_ACTIONS]


def run_doctor(ws: ModelState, projection: Any, retriever: Any, suite_path: Path | None, root: Path) -> dict[str, Any]:
    dimensions = {"reachability": reachability(ws, projection), "connectivity": connectivity(ws),
                  "hitAt3": hit_at_3(retriever, suite_path, root)}
    score, letter = grade(dimensions)
    return {"grade": letter, "score": score, "weights": WEIGHTS, "dimensions": dimensions,
            "actions": actions(dimensions)}


MAX_ENTRIES_SHOWN = 8


def _entries_text(entries: list[str]) -> str:
    if not entries:
        return "no entry document"
    more = len(entries) - MAX_ENTRIES_SHOWN
    return ", ".join(entries[:MAX_ENTRIES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def render_text(report: dict[str, Any]) -> str:
    dims = report["dimensions"]
    reach, conn, hit = dims["reachability"], dims["connectivity"], dims["hitAt3"]
    lines = [f"grade {report['grade']}  (score {report['score']}/100)",
             f"  reachability  {reach['value'] * 100:.1f}%  ({reach['reachable']}/{reach['total']} documents reachable "
             f"from {_entries_text(reach['entryDocuments'])}; {reach['inProjection']}/{reach['total']} in the "
             f"projection)",
             f"  connectivity  {conn['value'] * 100:.1f}%  ({conn['documentedAreas']}/{conn['areas']} areas "
             f"documented, {conn['linkedDocuments']}/{conn['documents']} documents linked to code)"]
    if hit["status"] == "not-analyzed":
        lines.append(f"  hit@3         not-analyzed ({hit['reason']})")
    else:
        lines.append(f"  hit@3         {hit['value'] * 100:.1f}%  ({hit['caseCount']} cases in {hit['suite']})")
    if report["actions"]:
        lines.append("top actions:")
        for action in report["actions"][:5]:
            lines.append(f"  +{action['points']:<5} {action['action']}")
            for file in action["files"]:
                lines.append(f"          {file}")
    return "\n".join(lines) + "\n"


__all__ = ["GRADE_A", "WEIGHTS", "grade", "render_text", "run_doctor"]
