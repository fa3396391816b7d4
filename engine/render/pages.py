"""Which pages a template produces, rendered and sealed, and how each lands in its file.

`render_pages` renders every page in memory first: a template error stops the command before any file is
written. `plan` then says, for each page, what the file should hold (the whole page for a new file or for
`llms.txt`; the file with only its region replaced when it exists) and whether that differs from what it holds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docbridge.engine.base.findings import Finding
from docbridge.engine.base.hashing import canonical_hash, sha256_bytes
from docbridge.engine.base.model import DOCUMENT
from docbridge.engine.base.safe_io import MAX_ARTIFACT_BYTES, UnsafeFileError, WriteRefused, read_regular, write_target
from docbridge.engine.render import DEFAULT_OUTPUT, views
from docbridge.engine.render.templating import (
    RenderError,
    Sealed,
    Template,
    load_template,
    merge,
    render_template,
    seal,
)
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.views.reconcile import findings_index_of
from docbridge.engine.views.snapshot import snapshot_of

MULTI_PAGE = ("area", "ownership")
MODEL_TEMPLATES = ("area", "ownership")  # regions `check` can render again from the model alone
SINGLE_NAMES = {"llms.txt": "llms.txt", "change-digest": "change-digest.md", "overlay-review": "overlay-review.md"}
OVERLAY_FILE = ".docbridge/overlay.json"
SNAPSHOT_FILE = ".docbridge/snapshot.json"


@dataclass(frozen=True, slots=True)
class Page:
    name: str  # file name relative to the output directory (multi-page) or the default file name
    key: str | None  # the area path or ownership id a multi-page template's page is for
    view: dict[str, Any]
    sealed: Sealed

    @property
    def hash(self) -> str:
        return self.sealed.hash or sha256_bytes(self.sealed.text.encode("utf-8"))[:16]


def overrides(state: ModelState) -> dict[str, str]:
    return dict(state.config.render.templates)


def base_findings(state: ModelState) -> list[Finding]:
    """The findings an area page lists: every finding but the generated-region ones, with configured severities
    and ignores applied."""
    from docbridge.engine.views.reconcile import apply_config
    index = findings_index_of(state)
    return apply_config(state, list(index.base_findings()))


def _page(template: Template, name: str, key: str | None, view: dict[str, Any]) -> Page:
    output = render_template(template, view)
    if template.name == "llms.txt":
        return Page(name, key, view, Sealed(output, "", None))
    return Page(name, key, view, seal(output, template.name, key, template.display))


def model_views(state: ModelState, name: str, key: str | None = None,
                findings: list[Finding] | None = None) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(page name, key, view) for a template that reads only the model: llms.txt, area, ownership."""
    if name == "llms.txt":
        return [(SINGLE_NAMES[name], None, views.llms_view(state))]
    if name == "area":
        keys = [key] if key is not None else views.area_keys(state)
        listed = findings if findings is not None else base_findings(state)
        return [(views.page_file_name(k), k, views.area_view(state, k, listed)) for k in keys]
    if name == "ownership":
        keys = [key] if key is not None else views.ownership_keys(state)
        return [(views.page_file_name(k), k, views.ownership_view(state, k)) for k in keys]
    raise RenderError(f"{name} is not rendered from the model alone.")


def load_previous(root: Path, since: str | None) -> tuple[dict[str, Any], str]:
    """The previous snapshot (`--since FILE`, else the last `docbridge scan` under .docbridge/), hash-checked."""
    if since is not None:
        path, shown = Path(since), since
    else:
        path, shown = root / SNAPSHOT_FILE, SNAPSHOT_FILE
    if not path.is_file():
        if since is not None:
            raise RenderError(f"--since {since}: no such file.")
        raise RenderError(f"There is no previous snapshot to compare with: {SNAPSHOT_FILE} does not exist. Run "
                          "`docbridge scan` to keep one, or name one with --since FILE.")
    try:  # the snapshot under .docbridge/ never through a link; a named file is followed to a regular file
        target = Path(os.path.realpath(path)) if since is not None else path
        raw = json.loads(read_regular(target, MAX_ARTIFACT_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RenderError(f"{shown} cannot be read: {exc}.") from None
    except json.JSONDecodeError as exc:
        raise RenderError(f"{shown}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("entities"), list) or \
            not isinstance(raw.get("relations"), list):
        raise RenderError(f"{shown} is not a Doc Bridge snapshot (no `entities` and `relations` arrays).")
    recorded = raw.get("content_hash")
    body = {k: v for k, v in raw.items() if k != "content_hash"}
    if isinstance(body.get("coverage"), dict):
        body["coverage"] = {k: v for k, v in body["coverage"].items() if k != "reuse"}
    if recorded != canonical_hash(body):
        raise RenderError(f"{shown}: its content hash does not match its content (edited or truncated); run "
                          "`docbridge scan` again.")
    return raw, shown


def render_pages(state: ModelState, name: str, *, key: str | None = None, since: str | None = None,
                 overlay: str | None = None) -> tuple[list[Page], str]:
    """Every page of template `name`, rendered in memory, and what it was rendered from."""
    template = load_template(name, state.root, overrides(state))
    if key is not None and name not in MULTI_PAGE:
        raise RenderError(f"{name} renders one page; --area and --record are for area and ownership.")
    if name in ("llms.txt", "area", "ownership"):
        source = "working tree"
        pages = [_page(template, n, k, v) for n, k, v in model_views(state, name, key)]
    elif name == "change-digest":
        previous, shown = load_previous(state.root, since)
        current = snapshot_of(state).to_json_obj()
        source = shown
        pages = [_page(template, SINGLE_NAMES[name], None, views.change_digest_view(previous, current, shown))]
    else:
        path = Path(overlay) if overlay is not None else state.root / OVERLAY_FILE
        shown = overlay if overlay is not None else OVERLAY_FILE
        source = shown
        pages = [_page(template, SINGLE_NAMES[name], None, views.overlay_review_view(path, shown))]
    return pages, source


# ------------------------------------------------------------------------------------------ --data FILE


def read_data(data: str) -> Any:
    """The JSON of a `--data` file (followed to a regular file, at most MAX_ARTIFACT_BYTES)."""
    path = Path(data)
    try:
        raw = read_regular(Path(os.path.realpath(path)), MAX_ARTIFACT_BYTES)
    except FileNotFoundError:
        raise RenderError(f"--data {data}: no such file.") from None
    except UnsafeFileError as exc:
        raise RenderError(f"--data {data} {exc.strerror}; it must be a regular JSON file.") from None
    except OSError as exc:
        raise RenderError(f"--data {data} cannot be read: {exc.strerror or exc}.") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RenderError(f"{data}: the file is not valid UTF-8.") from None
    except json.JSONDecodeError as exc:
        raise RenderError(f"{data}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from None
    except (RecursionError, ValueError):
        raise RenderError(f"{data}: invalid JSON: it nests too deeply or holds a number too long to read.") from None


def data_kind(name: str, raw: Any) -> str:
    """What a `--data` file is for template `name`: the artifact the template is rendered from (`index`: a
    DocBridgeIndex for llms.txt; `snapshot`: the previous snapshot for change-digest; `overlay`: an enrichment
    overlay for overlay-review), else `view`: the view model itself (what `--print-data` prints)."""
    if not isinstance(raw, dict):
        return "view"
    if name == "llms.txt" and raw.get("type") == "docbridge-index":
        return "index"
    if name == "change-digest" and isinstance(raw.get("entities"), list) and isinstance(raw.get("relations"), list):
        return "snapshot"
    if name == "overlay-review" and (raw.get("type") == "enrichment-overlay" or "exists" not in raw):
        return "overlay"
    return "view"


def _view_pages(name: str, raw: Any, key: str | None, data: str) -> tuple[list[tuple[str, str | None,
                                                                                    dict[str, Any]]], bool]:
    """(page name, key, view) of each page a view-model file holds, and whether it is one page: an object is one
    page; for area and ownership a list of objects is one page each (`path` naming its file, as --print-data
    prints them), and a page's key is its area's path or its record's id (or --area/--record)."""
    def key_of(view: dict[str, Any], where: str) -> str:
        field, inner = ("area", "path") if name == "area" else ("record", "id")
        value = view.get(field, {}).get(inner) if isinstance(view.get(field), dict) else None
        if not isinstance(value, str) or not value:
            raise RenderError(f"{data}: {where}has no `{field}.{inner}` to name its page; give --"
                              f"{'area' if name == 'area' else 'record'}.")
        return value

    if isinstance(raw, dict):
        if name not in MULTI_PAGE:
            return [(SINGLE_NAMES[name], None, raw)], True
        chosen = key if key is not None else key_of(raw, "")
        return [(views.page_file_name(chosen), chosen, raw)], True
    if name not in MULTI_PAGE or not isinstance(raw, list) or key is not None:
        raise RenderError(f"{data}: the view model of {name} must be a JSON object"
                          + (" (a list is one page each, without --area or --record)." if name in MULTI_PAGE
                             else "."))
    out: list[tuple[str, str | None, dict[str, Any]]] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RenderError(f"{data}: pages[{index}] must be a JSON object.")
        view = {k: v for k, v in item.items() if k != "path"}
        page_key = key_of(view, f"pages[{index}] ")
        out.append((views.page_file_name(page_key), page_key, view))
    if not out:
        raise RenderError(f"{data}: the list holds no page.")
    return out, False


def _llms_from_index(root: Path, agent_root: str | None, data: str) -> dict[str, Any]:
    """llms.txt's view from a DocBridgeIndex (verified by its content hash): its project name and the documents of
    `knowledge` under the agent root, with their titles and descriptions."""
    from docbridge.engine.artifacts.index_file import IndexFileError, read_index
    try:
        document, _ = read_index(Path(os.path.realpath(data)))
    except IndexFileError as exc:
        raise RenderError(str(exc)) from None
    base = (agent_root or views.DEFAULT_AGENT_ROOT).strip().replace("\\", "/").removeprefix("./").strip("/")
    documents = []
    for item in sorted((k for k in document.get("knowledge", []) if isinstance(k, dict)),
                       key=lambda k: str(k.get("path", ""))):
        path = str(item.get("path", ""))
        if item.get("type") != DOCUMENT or not (base in ("", ".") or path.startswith(base + "/")):
            continue
        title = " ".join(str(item.get("title") or "").split()) or path.rsplit("/", 1)[-1]
        documents.append({"path": path, "title": title,
                          "description": " ".join(str(item.get("description") or "").split()) or None})
    project = document.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return {"project": str(name or root.resolve().name), "documents": documents}


def render_data(root: Path, config: Any, name: str, data: str, *, key: str | None = None,
                state: Any = None) -> tuple[list[Page], str, bool]:
    """`render NAME --data FILE`: every page, what it was rendered from, and whether it is one page. FILE is the
    artifact the template reads (a DocBridgeIndex for llms.txt, the previous snapshot for change-digest, an overlay
    for overlay-review; `data_kind`) or the view model itself, rendered as it is (a template's own checks, with
    every variable required, say what it lacks). `state` (a callable giving the current model) is called only for
    change-digest's snapshot."""
    template = load_template(name, root, dict(config.render.templates))
    raw = read_data(data)
    kind = data_kind(name, raw)
    if kind == "snapshot":
        current_state = state()
        pages, _ = render_pages(current_state, name, since=data)
        return pages, data, True
    if kind == "overlay":
        view = views.overlay_review_view(Path(os.path.realpath(data)), data)
        return [_page(template, SINGLE_NAMES[name], None, view)], data, True
    if kind == "index":
        view = _llms_from_index(root, config.corpus.agent.root, data)
        return [_page(template, SINGLE_NAMES[name], None, view)], data, True
    found, single = _view_pages(name, raw, key, data)
    return [_page(template, page, page_key, view) for page, page_key, view in found], data, single


def render_region(state: ModelState, template_name: str, key: str | None,
                  findings: list[Finding] | None = None) -> Sealed:
    """The region a page of a model template would carry now (what `check` and the editor compare with)."""
    template = load_template(template_name, state.root, overrides(state))
    found = model_views(state, template_name, key, findings)
    _name, _key, view = found[0]
    return seal(render_template(template, view), template_name, key, template.display)


@dataclass(frozen=True, slots=True)
class Planned:
    page: Page
    path: Path
    text: str  # what the file should hold
    status: str  # "new", "unchanged", "differs"


MAX_PAGE_BYTES = 16 * 1024 * 1024  # a page file that holds a generated region; a larger one is refused, not read


def plan(pages: list[Page], target: Path, name: str, single_file: bool, root: Path,
         outside_allowed: bool = False) -> list[Planned]:
    """Where each page goes under `target` (a file when `single_file`, else a directory) and what it holds.
    Every path is checked first (`write_target`: inside the root, through no link; outside it only when
    `outside_allowed`), and an existing page is read only as a regular file of at most MAX_PAGE_BYTES."""
    out = []
    for page in pages:
        try:
            path = write_target(root, target if single_file else target / page.name, outside_allowed=outside_allowed)
        except WriteRefused as exc:
            raise RenderError(str(exc)) from None
        shown = str(path)
        try:
            existing: str | None = read_regular(path, MAX_PAGE_BYTES).decode("utf-8")
        except FileNotFoundError:
            existing = None
        except UnsafeFileError as exc:
            raise RenderError(f"{shown} {exc.strerror}; Doc Bridge rewrites only a regular file.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RenderError(f"{shown} cannot be read: {exc}.") from None
        if existing is None:
            out.append(Planned(page, path, page.sealed.text, "new"))
            continue
        text = page.sealed.text if page.sealed.hash is None else merge(existing, page.sealed, name, page.key, shown)
        out.append(Planned(page, path, text, "unchanged" if text == existing else "differs"))
    return out


def write_file(path: Path, text: str) -> None:
    """Atomically, keeping an existing file's permissions (a new one is readable by everyone: rw-r--r--)."""
    from docbridge.engine.base.cache import write_atomic
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    write_atomic(path, text.encode("utf-8"))
    path.chmod(mode)


def write_pages(state: ModelState, name: str, *, key: str | None = None, output: str | None = None,
                since: str | None = None, overlay: str | None = None) -> dict[str, Any]:
    """Render and write like `docbridge render NAME [--area|--record KEY] --output OUTPUT` (default locations
    when no output is given, relative to the root): `{template, source, pages: [{path, hash, status}]}`."""
    pages, source = render_pages(state, name, key=key, since=since, overlay=overlay)
    single = name not in MULTI_PAGE or key is not None
    target = Path(output or DEFAULT_OUTPUT[name])
    target = target if target.is_absolute() else state.root / target
    if single and (target.is_dir() or (output is None and name in MULTI_PAGE)):
        target = target / pages[0].name
    planned = plan(pages, target, name, single, state.root)
    for p in planned:
        if p.status != "unchanged":
            write_file(p.path, p.text)
    return {"template": name, "source": source, "pages": [
        {"path": str(p.path.relative_to(state.root.resolve())),
         "hash": p.page.hash, "status": "unchanged" if p.status == "unchanged" else "written"} for p in planned]}
