"""Stale generated regions: a region whose recorded hash matches its text, but whose text is not what rendering
its template (named in its marker) over the current model gives. Only model templates (`area`, `ownership`)
are checked: a change digest and an overlay review depend on files outside the model."""

from __future__ import annotations

from collections.abc import Iterable

from docbridge.engine.base.findings import RULES, Finding, Range, fingerprint
from docbridge.engine.render.pages import MODEL_TEMPLATES, render_region
from docbridge.engine.render.templating import RenderError, marker_attributes
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import lines_of


def has_template_regions(state: ModelState, path: str) -> bool:
    facts = state.universe.documents.get(path)
    return facts is not None and any(r.closed and r.recorded_hash is not None for r in facts.regions)


def stale_findings(state: ModelState, paths: Iterable[str], listed: list[Finding]) -> list[Finding]:
    """GENERATED_REGION_STALE for the regions of `paths`; `listed` are the findings an area page shows."""
    out: list[Finding] = []
    for path in sorted(paths):
        facts = state.universe.documents.get(path)
        lines = lines_of(state, path) if facts is not None else None
        if facts is None or lines is None:
            continue
        for index, region in enumerate(facts.regions):
            if not region.closed or region.recorded_hash is None or region.edited or region.start_line >= len(lines):
                continue
            attributes = marker_attributes(lines[region.start_line])
            template, key = attributes.get("template"), attributes.get("key")
            if template not in MODEL_TEMPLATES:
                continue
            what = f"`{template}`" + (f" for `{key}`" if key else "")
            try:
                fresh = render_region(state, template, key, listed)
            except RenderError as exc:
                reason = f"it cannot be rendered again: {exc}"
                fresh_hash = None
            else:
                if fresh.hash == region.computed_hash:
                    continue
                reason = "the model has changed since it was rendered"
                fresh_hash = fresh.hash
            command = f"docbridge render {template}" + (
                f" --{'area' if template == 'area' else 'record'} {key}" if key else "") + f" --output {path}"
            out.append(Finding.model_construct(
                code="GENERATED_REGION_STALE", severity=RULES["GENERATED_REGION_STALE"].severity,
                message=f"Generated region (lines {region.start_line + 1}–{region.end_line + 1}, template {what}) "
                        f"is out of date: {reason}.",
                path=path, range=Range.of(region.start_line, 0, region.end_line, 0), entity=None, evidence=[],
                related=[], remediation=f"Regenerate it (`{command}`, or the editor's “Regenerate this region”).",
                fingerprint=fingerprint("GENERATED_REGION_STALE", path, f"region#{index}"),
                data={"template": template, "key": key, "start_line": region.start_line,
                      "end_line": region.end_line, "fresh_hash": fresh_hash}))
    return out
