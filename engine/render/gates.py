"""The gates: what `docbridge gate run` prints and the MCP tool gate.status answers, read-only (nothing is written).

Which gates run is the configuration's (`gates`): a preset (minimal: index-freshness; standard: and
human-guide-links; strict: and okf-type and docs-style; playbook: index-freshness and okf-type), then `include` adds
and `exclude` removes; `docbridge gate run GATE...` runs the named ones instead. Each gate answers `{id, ok,
message, expected?, actual?, details?}`; the run is `ok` when every gate is.

- `index-freshness`: `.docbridge/index.json` (as `docbridge index` writes it) against the current model: its
  projection's content hash (the index's every other member is derived from the projection and the
  configuration, whose hash the projection carries) is `actual`, the current one `expected`.
- `human-guide-links`: every local `humanDoc` of the ownership records is a document of the model.
- `okf-type`: every agent document (under `corpus.agent.root`, the agent index excepted) has a frontmatter `type`
  (in `corpus.agent.okf.allowedTypes` when given), when `corpus.agent.okf.requireType` or the strict preset asks.
- `docs-style`: every agent document passes a style profile's rules (`gates.options["docs-style"]`: `profile`
  google-dev-docs, playbook-okf, playbook-okf-soft, title-only or custom with `required`).
- `documentation-standard-v1`: the conformance profile of the same name (`standard_report`), its report under
  `details`: nine rules, seven required, each with evidence and a remediation, and approved exceptions
  (`conformance.documentationStandardV1`).

The module sits in the render layer because the profile renders `llms.txt` again to tell whether the file on
disk is current (the same rendering `docbridge index` writes).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.safe_io import UnsafeFileError, read_regular

if TYPE_CHECKING:
    from docbridge.engine.retrieval.project import Projection
    from docbridge.engine.state.model_state import ModelState

SCHEMA_VERSION = 1
GATES = ("index-freshness", "human-guide-links", "okf-type", "docs-style", "documentation-standard-v1")
PRESETS = {"minimal": ("index-freshness",), "standard": ("index-freshness", "human-guide-links"),
           "strict": ("index-freshness", "human-guide-links", "okf-type", "docs-style"),
           "playbook": ("index-freshness", "okf-type")}
NOT_EVALUATED = {
    "index-reproducible": "nothing to enforce here: the scan never reads a path Git ignores (a tracked file a "
                          ".gitignore lists excepted, which a clean checkout has), so a clean checkout indexes the "
                          "same files",
    "link-rot": "reserved by the original, which runs nothing for it either; `docbridge check` reports broken links",
    "routing-currency": "reserved by the original, which runs nothing for it either",
    "bootstrap-size": "reserved by the original, which runs nothing for it either",
}
STANDARD_ID = "documentation-standard-v1"
MAX_TEXT_EVIDENCE_BYTES = 4 * 1024 * 1024
MAX_EVIDENCE = 10  # human documents listed as evidence


class GateError(Exception):
    """A gate that does not exist was asked for (exit 2)."""


# ------------------------------------------------------------------------------------------------ which gates


def selected(state: ModelState, requested: list[str] | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """The gates to evaluate, in GATES order, and the selected ones evaluated nowhere here (with the reason)."""
    known = (*GATES, *NOT_EVALUATED)
    if requested:
        unknown = [g for g in requested if g not in known]
        if unknown:
            raise GateError(f"Unknown gate {unknown[0]!r}; the gates are {', '.join(known)}.")
        wanted = set(requested)
    else:
        settings = state.config.gates
        wanted = {*PRESETS[settings.preset], *settings.include} - set(settings.exclude)
    run = [g for g in GATES if g in wanted]
    skipped = [{"id": g, "reason": NOT_EVALUATED[g]} for g in NOT_EVALUATED if g in wanted]
    return run, skipped


def run_gates(state: ModelState, projection: Projection, requested: list[str] | None = None) -> dict[str, Any]:
    """`{type, schemaVersion, ok, preset, results, notEvaluated}` for the selected gates."""
    gates, skipped = selected(state, requested)
    results = [gate_result(state, projection, gate) for gate in gates]
    return {"type": "gate-status", "schemaVersion": SCHEMA_VERSION, "ok": all(r["ok"] for r in results),
            "preset": state.config.gates.preset, "results": results, "notEvaluated": skipped}


def gate_result(state: ModelState, projection: Projection, gate: str) -> dict[str, Any]:
    if gate == "index-freshness":
        return index_freshness(state, projection)
    if gate == "human-guide-links":
        return human_guide_links(state)
    if gate == "okf-type":
        return okf_type(state)
    if gate == "docs-style":
        return docs_style(state)
    report = standard_report(state, projection)
    summary = report["summary"]["required"]
    return {"id": STANDARD_ID, "ok": report["ok"],
            "message": "Documentation Standard v1 required rules pass" if report["ok"] else
            f"{summary['failed']} Documentation Standard v1 required rule(s) failed",
            "expected": "all required rules pass or have approved exceptions",
            "actual": f"{summary['passed']} passed, {summary['failed']} failed, {summary['excepted']} excepted",
            "details": report}


# ------------------------------------------------------------------------------------------------ the gates


def index_freshness(state: ModelState, projection: Projection) -> dict[str, Any]:
    from docbridge.engine.artifacts.index_file import IndexFileError, build_index, index_path, read_index
    path = index_path(state.root)
    where = path.relative_to(state.root).as_posix()
    if not path.is_file():
        return {"id": "index-freshness", "ok": False, "message": f"No index at {where}. Run: docbridge index"}
    try:
        document, _ = read_index(path)
    except IndexFileError as exc:
        return {"id": "index-freshness", "ok": False, "message": f"{exc} Run: docbridge index"}
    expected = build_index(state, projection)["projection"]["contentHash"]
    actual = (document.get("projection") or {}).get("contentHash")
    if actual != expected:
        return {"id": "index-freshness", "ok": False,
                "message": f"Index is stale: {where} was built from other inputs. Run: docbridge index",
                "expected": expected, "actual": actual}
    return {"id": "index-freshness", "ok": True, "message": "Index is fresh", "expected": expected,
            "actual": actual}


def human_guide_links(state: ModelState) -> dict[str, Any]:
    documents = state.universe.documents
    local: list[str] = []
    for record in state.config.ownership:
        link = (record.human_doc or "").strip()
        if not link or link.lower().startswith(("http://", "https://")):
            continue
        target = link.split("#", 1)[0].removeprefix("./")
        if target not in local:
            local.append(target)
    missing = [target for target in local if target not in documents]
    if missing:
        return {"id": "human-guide-links", "ok": False, "message": f"Broken humanDoc links: {', '.join(missing)}",
                "expected": "all local humanDoc links resolve", "actual": f"{len(missing)} broken"}
    return {"id": "human-guide-links", "ok": True,
            "message": f"Resolved {len(local)} humanDoc link{'s' if len(local) != 1 else ''}"}


def _agent_documents(state: ModelState) -> list[str]:
    """The agent corpus (`llms.txt`'s list) without the agent index."""
    from docbridge.engine.render.views import agent_corpus
    index = (state.config.corpus.agent.index or "").removeprefix("./")
    return [path for path in agent_corpus(state) if path != index]


def _frontmatter(state: ModelState, path: str) -> dict[str, str]:
    facts = state.universe.documents.get(path)
    return {str(k): str(v) for k, v in dict(facts.frontmatter).items()} if facts is not None else {}


def okf_type(state: ModelState) -> dict[str, Any]:
    okf = state.config.corpus.agent.okf
    required = okf.require_type if okf is not None and okf.require_type is not None else \
        state.config.gates.preset == "strict"
    if not required:
        return {"id": "okf-type", "ok": True, "message": "OKF type frontmatter not required"}
    allowed = list(okf.allowed_types) if okf is not None and okf.allowed_types else []
    bad = [path for path in _agent_documents(state)
           if not (kind := _frontmatter(state, path).get("type", "").strip()) or (allowed and kind not in allowed)]
    if bad:
        return {"id": "okf-type", "ok": False, "message": f"Missing or invalid OKF type frontmatter: {', '.join(bad)}",
                "expected": f"type: {' | '.join(allowed)}" if allowed else "type frontmatter",
                "actual": f"{len(bad)} invalid"}
    return {"id": "okf-type", "ok": True, "message": "All agent docs have OKF type frontmatter"}


STYLE_RULES = ("title", "purpose", "audience", "task-orientation", "examples", "owner-source", "no-stale-wording")
STYLE_PROFILES = {
    "google-dev-docs": ("title", "purpose", "audience", "task-orientation", "examples", "no-stale-wording"),
    "playbook-okf": ("title", "purpose", "owner-source", "no-stale-wording"),
    "playbook-okf-soft": ("title", "no-stale-wording"),
    "title-only": ("title",),
}
_STALE_WORDING = re.compile(r"\b(TODO|TBD|coming soon|eventually|placeholder)\b", re.I)


def _style_profile(state: ModelState) -> tuple[str, tuple[str, ...]]:
    options = state.config.gates.options.get("docs-style")
    if not isinstance(options, dict):
        profile = "playbook-okf-soft" if state.config.gates.preset == "playbook" else "playbook-okf"
        return profile, STYLE_PROFILES[profile]
    asked = options.get("profile")
    if asked == "custom":
        required = options.get("required")
        rules = tuple(r for r in STYLE_RULES if isinstance(required, list) and r in required)
        return "custom", rules
    chosen = asked if isinstance(asked, str) and asked in STYLE_PROFILES else "playbook-okf"
    return chosen, STYLE_PROFILES[chosen]


def _style_misses(text: str, rules: tuple[str, ...]) -> list[str]:
    """The rules a document's text (frontmatter included) does not meet."""
    body, head = text, ""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            head, body = text[3:end], text[end + 4:]
    frontmatter = {key: value.strip() for key, value in
                   re.findall(r"^([A-Za-z][\w-]*):[ \t]*['\"]?([^'\"\n#]*)", head, re.M) if value.strip()}
    checks = {
        "title": bool(re.search(r"^#\s+\S", body, re.M)),
        "purpose": bool(frontmatter.get("purpose")) or bool(re.search(r"^##\s+(Purpose|Goal)\b", body, re.M | re.I)),
        "audience": bool(frontmatter.get("audience")) or bool(re.search(r"^##\s+Audience\b", body, re.M | re.I)),
        "task-orientation": bool(re.search(r"^##\s+(How to|Usage|Workflow|Tasks?)\b", body, re.M | re.I)),
        "examples": bool(re.search(r"^##\s+Examples?\b", body, re.M | re.I)) or "```" in body,
        "owner-source": bool(frontmatter.get("owner") or frontmatter.get("source"))
        or bool(re.search(r"^(Owner|Source):\s+\S", body, re.M | re.I)),
        "no-stale-wording": not _STALE_WORDING.search(body),
    }
    return [rule for rule in rules if not checks[rule]]


def docs_style(state: ModelState) -> dict[str, Any]:
    from docbridge.engine.state.text import lines_of
    profile, rules = _style_profile(state)
    if not rules:
        return {"id": "docs-style", "ok": True, "message": "No docs-style rules configured"}
    bad = []
    for path in _agent_documents(state):
        lines = lines_of(state, path) or []
        misses = _style_misses("\n".join(lines), rules)
        if misses:
            bad.append(f"{path} ({', '.join(misses)})")
    if bad:
        return {"id": "docs-style", "ok": False, "message": f"Docs style issues: {'; '.join(bad)}",
                "expected": f"{profile}: {', '.join(rules)}", "actual": f"{len(bad)} file(s) with style issues"}
    return {"id": "docs-style", "ok": True, "message": f"All agent docs pass {profile} docs-style rules"}


# ------------------------------------------------------------------------------------------------ the profile


def _evidence_file(root: Path, path: str, read: bool = True) -> tuple[bool, str, dict[str, str]]:
    """(present and non-empty, its text, evidence) for a declared repository path; a path leaving the root (by
    `..`, an absolute path or a link) is never read."""
    clean = path.replace("\\", "/")
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, clean))
    if clean.startswith("/") or not (real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)):
        return False, "", {"path": path, "detail": "Path escapes the project root."}
    try:
        data = read_regular(Path(real), MAX_TEXT_EVIDENCE_BYTES if read else 1 << 62)
    except FileNotFoundError:
        return False, "", {"path": path, "detail": "File does not exist."}
    except UnsafeFileError as exc:
        if exc.strerror and "larger" in exc.strerror:
            return False, "", {"path": path, "detail": f"Text evidence exceeds {MAX_TEXT_EVIDENCE_BYTES} bytes."}
        return False, "", {"path": path, "detail": "Path is not a regular file."}
    except OSError:
        return False, "", {"path": path, "detail": "File is not readable."}
    if not read:
        ok = len(data) > 0
        return ok, "", {"path": path, "detail": "File exists and is non-empty." if ok else "File is empty."}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False, "", {"path": path, "detail": "File is not UTF-8 text."}
    ok = bool(text.strip())
    return ok, text, {"path": path, "detail": "File exists and is non-empty." if ok else "File is empty."}


def _rule(rule: str, level: str, passed: bool, message: str, evidence: list[dict[str, str]], command: str,
          detail: str) -> dict[str, Any]:
    return {"id": rule, "level": level, "passed": passed, "message": message, "evidence": evidence,
            "remediation": {"command": command, "detail": detail}}


def _human_docs(state: ModelState) -> dict[str, Any]:
    from docbridge.engine.views.snapshot import classification
    agent_root = state.config.corpus.agent.root
    agent_index = (state.config.corpus.agent.index or "").removeprefix("./")
    human = state.config.corpus.human
    human_root = human.options.get("root") if human is not None else None
    root = human_root.strip().removeprefix("./").strip("/") if isinstance(human_root, str) else ""
    docs = [path for path in sorted(state.universe.documents)
            if classification(path, _frontmatter(state, path), agent_root) in ("human", "human-and-agent")
            and (root in ("", ".") or path.startswith(root + "/")) and path != agent_index]
    return _rule("human-docs", "required", bool(docs),
                 f"Found {len(docs)} human document(s)." if docs else "No human documentation was discovered.",
                 [{"path": path, "detail": "Human document."} for path in docs[:MAX_EVIDENCE]],
                 "edit doc-bridge.config.json",
                 "Write documentation for people (under docs/, or audience: human in its frontmatter) and name its "
                 "folder in corpus.human.options.root.")


def _llms(state: ModelState, options: Any) -> dict[str, Any]:
    from docbridge.engine.render import DEFAULT_OUTPUT
    from docbridge.engine.render.pages import render_pages
    from docbridge.engine.render.templating import RenderError
    llms = DEFAULT_OUTPUT["llms.txt"]
    sources = list(dict.fromkeys(p for p in options.raw_sources if p.removeprefix("./") != llms))
    present, text, evidence = _evidence_file(state.root, llms)
    try:
        pages, _ = render_pages(state, "llms.txt")
        expected: str | None = pages[0].sealed.text
    except RenderError as exc:  # a broken override of the template: nothing can be current
        expected = None
        evidence = {"path": llms, "detail": f"llms.txt cannot be rendered: {exc}"}
    fresh = present and text == expected
    if present and expected is not None:
        evidence["detail"] = "File matches the current `docbridge index` output." if fresh else \
            "File is stale or was not written from the current inputs."
    raw = [_evidence_file(state.root, path) for path in sources]
    passed = fresh and bool(sources) and all(ok for ok, _, _ in raw)
    return _rule("llms-and-raw-source", "required", passed,
                 f"Resolved llms.txt and {len(sources)} raw source(s)." if passed else
                 "llms.txt must be current and accompanied by at least one readable raw source.",
                 [evidence, *(item for _, _, item in raw)], "docbridge index",
                 "Write llms.txt and declare conformance.documentationStandardV1.rawSources.")


def _handoffs(state: ModelState, projection: Projection) -> dict[str, Any]:
    from docbridge.engine.agent.handoff import INDEX_SOURCE
    from docbridge.engine.agent.index_members import index_members
    _lookup, handoffs = index_members(state, projection, INDEX_SOURCE)
    # what the configuration hands off: the ownership records' handoffs (the index also hands off every workspace
    # package no record claims, examples' and fixtures' included, which no record can give a human guide)
    records = {record.id for record in state.config.ownership}
    if records:
        handoffs = {key: handoff for key, handoff in handoffs.items() if key in records}
    ready, evidence = 0, []
    for _key, handoff in sorted(handoffs.items()):
        bridge = (handoff.get("bridge") or {}).get("humanDoc")
        if handoff.get("startHere") and handoff.get("editRoots") and handoff.get("checks") and \
                bridge in ("linked", "external"):
            ready += 1
        evidence.append({"path": str(handoff.get("startHere") or "."),
                         "detail": f"{handoff['target']['id']}: {len(handoff.get('editRoots') or [])} edit root(s), "
                                   f"{len(handoff.get('checks') or [])} check(s), bridge={bridge or 'none'}"})
    passed = ready > 0 and ready == len(handoffs)
    return _rule("agent-handoffs", "required", passed,
                 f"{ready} handoff(s) are action-ready and human-linked." if passed else
                 f"{ready}/{len(handoffs)} handoff(s) are action-ready and human-linked.", evidence,
                 "edit doc-bridge.config.json",
                 "Give every ownership record (or, without records, every package) checks and a humanDoc (a "
                 "document or an https address), then run docbridge index.")


def _contribution(state: ModelState, options: Any) -> dict[str, Any]:
    files = [_evidence_file(state.root, path) for path in (options.contribution_paths or ("CONTRIBUTING.md",))]
    passed = any(ok for ok, _, _ in files)
    return _rule("contribution", "required", passed,
                 "Contribution guidance is available." if passed else "Contribution guidance is missing.",
                 [item for _, _, item in files], "edit CONTRIBUTING.md",
                 "Document setup, validation commands and the pull-request workflow.")


def _markers(state: ModelState, declared: Any, rule: str, level: str, what: str) -> dict[str, Any]:
    passed, evidence = bool(declared), []
    for item in declared:
        ok, text, found = _evidence_file(state.root, item.path)
        missing = [marker for marker in item.contains if marker not in text]
        passed = passed and ok and not missing
        evidence.append({"path": item.path, "detail": found["detail"] if not ok else
                         f"Missing marker(s): {', '.join(missing)}" if missing else
                         f"Found marker(s): {', '.join(item.contains)}"})
    return _rule(rule, level, passed, f"{what} evidence is complete." if passed else f"{what} evidence is incomplete.",
                 evidence, "edit doc-bridge.config.json",
                 f"Declare {what} evidence paths and markers that exist in the repository "
                 f"(conformance.documentationStandardV1.{'metadata' if rule == 'metadata' else 'diagrams'}).")


def _cross_links(state: ModelState, options: Any) -> dict[str, Any]:
    passed, evidence = bool(options.links), []
    for link in options.links:
        found = [path for path in link.paths if link.url in _evidence_file(state.root, path)[1]]
        passed = passed and bool(found)
        evidence.append({"path": ", ".join(link.paths),
                         "detail": f"Found {link.url}" if found else f"Missing {link.url}"})
    contract = options.ecosystem_contract
    if contract is not None:
        evidence.append({"path": f"{contract.manifest}, {contract.claims}",
                         "detail": "Not read: the AgentsKit ecosystem manifest and claims ledger are that "
                                   "ecosystem's; each declared URL is checked in its sources only."})
    return _rule("cross-links", "required", passed,
                 f"{len(options.links)} required link(s) resolve in source." if passed else
                 "One or more required links are missing from source.", evidence, "edit README.md",
                 "Add each declared URL (conformance.documentationStandardV1.links) to one of its declared files.")


def _quickstarts(state: ModelState, options: Any) -> dict[str, Any]:
    passed, evidence = bool(options.quickstarts), []
    for quickstart in options.quickstarts:
        doc_ok, _, doc = _evidence_file(state.root, quickstart.doc)
        test_ok, test_text, test = _evidence_file(state.root, quickstart.test)
        missing = [marker for marker in quickstart.test_contains if marker not in test_text]
        passed = passed and doc_ok and test_ok and not missing and bool(quickstart.command.strip())
        evidence.append({"path": quickstart.doc, "detail": f"{quickstart.id}: {doc['detail']}"})
        evidence.append({"path": quickstart.test, "detail": f"{quickstart.id}: {test['detail']}" if not test_ok else
                         f"{quickstart.id}: missing test marker(s): {', '.join(missing)}" if missing else
                         f"{quickstart.id}: test evidence; CI command: {quickstart.command}"})
    return _rule("tested-quickstarts", "required", passed,
                 f"{len(options.quickstarts)} quickstart(s) have test evidence." if passed else
                 "Quickstart test evidence is incomplete.", evidence, "edit doc-bridge.config.json",
                 "Map every quickstart to its document, a test file, markers that identify the test and the CI "
                 "command that runs it (the profile runs nothing).")


def _visuals(state: ModelState, options: Any) -> dict[str, Any]:
    files = [_evidence_file(state.root, path, read=False) for path in options.visuals]
    passed = bool(files) and all(ok for ok, _, _ in files)
    return _rule("visual-explanations", "recommended", passed,
                 f"{len(files)} visual asset(s) found." if passed else "Visual explanation evidence is incomplete.",
                 [item for _, _, item in files], "edit doc-bridge.config.json",
                 "Declare the images or animations that explain the product workflow.")


def standard_report(state: ModelState, projection: Projection) -> dict[str, Any]:
    """The documentation-standard-v1 conformance report: `{schemaVersion, profile, ok, recommendedOk, summary,
    results}`; `ok` when every required rule passes or has an approved exception."""
    options = state.config.conformance.documentation_standard_v1
    drafts = [_human_docs(state), _llms(state, options), _handoffs(state, projection), _contribution(state, options),
              _markers(state, options.metadata, "metadata", "required", "metadata"), _cross_links(state, options),
              _quickstarts(state, options), _visuals(state, options),
              _markers(state, options.diagrams, "structured-diagrams", "recommended", "structured-diagrams")]
    exceptions = {e.rule_id: e for e in options.exceptions}
    results = []
    for draft in drafts:
        passed = draft.pop("passed")
        exception = exceptions.get(draft["id"]) if not passed else None
        status = "pass" if passed else "excepted" if exception is not None else "fail"
        result = {**draft, "status": status, "ok": status != "fail"}
        if exception is not None:
            result["exception"] = {"reason": exception.reason, "approvedBy": exception.approved_by,
                                   "trackingUrl": exception.tracking_url}
        results.append(result)

    def count(level: str) -> dict[str, int]:
        return {status: sum(1 for r in results if r["level"] == level and r["status"] == key)
                for status, key in (("passed", "pass"), ("failed", "fail"), ("excepted", "excepted"))}

    return {"schemaVersion": 1, "profile": {"id": STANDARD_ID, "version": 1, "status": "stable"},
            "ok": all(r["ok"] for r in results if r["level"] == "required"),
            "recommendedOk": all(r["ok"] for r in results if r["level"] == "recommended"),
            "summary": {"required": count("required"), "recommended": count("recommended")}, "results": results}


# ------------------------------------------------------------------------------------------------ text


def render_standard_text(report: dict[str, Any], indent: str = "") -> list[str]:
    required, recommended = report["summary"]["required"], report["summary"]["recommended"]
    lines = [f"Documentation Standard v1 ({report['profile']['status']})",
             f"Required: {required['passed']} passed · {required['failed']} failed · {required['excepted']} excepted",
             f"Recommended: {recommended['passed']} passed · {recommended['failed']} failed · "
             f"{recommended['excepted']} excepted"]
    for result in report["results"]:
        lines.append(f"{result['status'].upper()} [{result['level']}] {result['id']}: {result['message']}")
        lines += [f"  evidence: {item['path']} — {item['detail']}" for item in result["evidence"]]
        if "exception" in result:
            exception = result["exception"]
            lines.append(f"  exception: {exception['reason']} — {exception['approvedBy']} ({exception['trackingUrl']})")
        elif not result["ok"]:
            lines.append(f"  fix: {result['remediation']['command']} — {result['remediation']['detail']}")
    return [indent + line for line in lines]


def render_text(run: dict[str, Any]) -> str:
    lines = []
    for result in run["results"]:
        lines.append(f"{'PASS' if result['ok'] else 'FAIL'} {result['id']}: {result['message']}")
        if not result["ok"] and ("expected" in result or "actual" in result) and "details" not in result:
            lines.append(f"  expected {result.get('expected')}, actual {result.get('actual')}")
        if "details" in result:
            lines += render_standard_text(result["details"], "  ")
    for skipped in run["notEvaluated"]:
        lines.append(f"NOT EVALUATED {skipped['id']}: {skipped['reason']}")
    passed = sum(1 for r in run["results"] if r["ok"])
    lines.append(f"{len(run['results'])} gate(s): {passed} passed, {len(run['results']) - passed} failed.")
    return "\n".join(lines) + "\n"


__all__ = ["GATES", "GateError", "render_text", "run_gates", "selected", "standard_report"]
