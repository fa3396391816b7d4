"""The agent tools as pure functions of a model state: what the MCP server and the Python API answer.

`knowledge_search`, `knowledge_lookup`, `handoff_resolve`, `doc_search`, `doc_get`, `retriever_query`,
`diagnostics`, `proposals` and `snapshot_summary` each take one `ModelState` (and, for ranking, that state's
retriever) and return a JSON-ready payload. Outputs, excerpts, budgets and their trimming order follow the
original's MCP tools (behaviours §17): budgets drop whole sections in a declared order through
`docbridge.engine.base.budget.compile_budget` and fail closed (`BudgetError`) when the core alone does not fit.

Bad arguments raise `ArgumentError`, whose message names the argument; unknown references raise
`engine.agent.handoff.UnknownReference` with the closest candidates. Nothing here reads outside the repository.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from docbridge.engine.agent.handoff import UnknownReference, _preference, handoff_for_entity, resolve_ref
from docbridge.engine.agent.payloads import _excerpt, lookup, render_lookup_text
from docbridge.engine.base.budget import BudgetError, Extractor, compile_budget, remove_key
from docbridge.engine.base.findings import RULES, SEVERITY_ORDER, Finding
from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE
from docbridge.engine.discovery.files import normalise, read_text
from docbridge.engine.retrieval.project import Entry, Projection
from docbridge.engine.views.reconcile import findings_of
from docbridge.engine.views.snapshot import snapshot_of

if TYPE_CHECKING:
    from docbridge.engine.retrieval.rank import Result, Retriever
    from docbridge.engine.state.model_state import ModelState

SCHEMA_VERSION = 1
KINDS = (DOCUMENT, MODULE, AREA, PACKAGE, INTENT, CHANGE)
MAX_LIMIT = 100
MAX_QUERY_CHARS = 2000
DOC_CHARS, MAX_DOC_CHARS = 20_000, 200_000
MAX_DIAGNOSTICS = 1000
PROPOSALS_NOTE = ("No enrichment overlay (.docbridge/overlay.json, written by `docbridge enrich`): no proposals "
                  "are pending. Search, lookup and handoffs are the deterministic model alone.")
# the ecosystem Finding's severities (behaviours §8.4: never critical)
FINDING_SEVERITY = {"error": "high", "warning": "medium", "info": "low", "hint": "info"}


class ArgumentError(ValueError):
    """An argument a caller got wrong; the message names it."""


__all__ = ["ArgumentError", "BudgetError", "UnknownReference", "diagnostics", "doc_get", "doc_search",
           "handoff_resolve", "knowledge_lookup", "knowledge_search", "proposals", "retrieved_documents",
           "retriever_query", "snapshot_summary"]


# ------------------------------------------------------------------------------------------------ arguments


def _query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ArgumentError("query must be a non-empty string.")
    if len(query) > MAX_QUERY_CHARS:
        raise ArgumentError(f"query is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are accepted.")
    return query


def _limit(limit: int, name: str = "limit", maximum: int = MAX_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise ArgumentError(f"{name} must be an integer between 1 and {maximum}; got {limit!r}.")
    return limit


def _kinds(kinds: list[str] | None) -> list[str] | None:
    if not kinds:
        return None
    unknown = sorted({k for k in kinds if k not in KINDS})
    if unknown:
        raise ArgumentError(f"kinds: unknown kind {unknown[0]!r}; choose from {', '.join(KINDS)}.")
    return sorted(set(kinds))


def repository_path(path: str, name: str = "path") -> str:
    """A repository-relative path, or `ArgumentError` when it is absolute or leaves the repository."""
    if not isinstance(path, str) or not path.strip():
        raise ArgumentError(f"{name} must be a non-empty repository-relative path.")
    raw = path.strip()
    if raw.startswith(("/", "\\")) or (len(raw) > 1 and raw[1] == ":") or "\x00" in raw:
        raise ArgumentError(f"{name} {path!r} is not repository-relative; give a path such as docs/api.md.")
    clean = normalise(raw.removeprefix("./").rstrip("/"))
    if clean is None:
        raise ArgumentError(f"{name} {path!r} leaves the repository; only paths inside it can be read.")
    return clean


# ------------------------------------------------------------------------------------------------ search


def _result(result: Result, explain: bool) -> dict[str, Any]:
    entry = result.entry
    item: dict[str, Any] = {
        "type": "ownership" if entry.ownership_id else entry.kind, "id": entry.ownership_id or entry.id,
        "entityId": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title,
        "score": round(result.score, 6), "provenance": entry.provenance, "confidence": result.confidence,
        "evidence": [{"path": entry.path, "contentHash": entry.content_hash}],
    }
    if entry.summary:
        item["summary"] = entry.summary
    body = entry.fields.get("body", "")
    if body:
        item["excerpt"] = _excerpt(body)
    if explain:
        item["explain"] = {"terms": result.terms, "matched": result.matched,
                           "components": {k: round(v, 6) for k, v in result.components.items()},
                           **({"corrected": result.corrected} if result.corrected else {}),
                           **({"surfacedBy": result.surfaced_by} if result.surfaced_by else {})}
    return item


SEARCH_SECTIONS: list[tuple[str, Extractor]] = [
    ("evidenceExcerpts", remove_key("excerpt", ("results",))),
    ("summaries", remove_key("summary", ("results",))),
]


def knowledge_search(retriever: Retriever, query: str, *, kinds: list[str] | None = None, limit: int = 20,
                     explain: bool = False, budget_tokens: int | None = None) -> dict[str, Any]:
    """Ranked entries with title, excerpt, evidence, provenance and confidence (and every score component with
    `explain`). With `kinds`, the ranking is read `max(4·limit, 40)` deep and filtered."""
    query = _query(query)
    limit = _limit(limit)
    chosen = _kinds(kinds)
    results = retriever.search(query, limit, kinds=chosen)
    payload: dict[str, Any] = {"type": "knowledge-search", "schemaVersion": SCHEMA_VERSION,
                               "source": f"projection:{retriever.projection.content_hash}", "query": query}
    if chosen:
        payload["kinds"] = chosen
    payload.update({"limit": limit, "count": len(results), "results": [_result(r, explain) for r in results]})
    if budget_tokens is None:
        return payload
    return compile_budget(payload, budget_tokens, SEARCH_SECTIONS)


def render_search_text(payload: dict[str, Any]) -> str:
    count = payload["count"]
    lines = [f"Query: {payload['query']} ({count} result{'s' if count != 1 else ''})"]
    if payload.get("budget"):
        lines.append(_budget_line(payload["budget"]))
    for number, item in enumerate(payload["results"], start=1):
        lines.append(f"{number}. [{item['type']}] {item['id']} — {item['title']} (score {item['score']:.2f}, "
                     f"{item['confidence']})")
        lines.append(f"   {item['path']}")
        if item.get("summary"):
            lines.append(f"   {item['summary']}")
        if item.get("excerpt"):
            lines.append(f"   > {item['excerpt']}")
    return "\n".join(lines) + "\n"


def _budget_line(report: dict[str, Any]) -> str:
    return (f"Budget: {report['tokens']['total']}/{report['budgetTokens']} tokens ({report['tokenMethod']}), "
            f"fits: {'yes' if report['fits'] else 'no'}, dropped: {', '.join(report['dropped']) or 'nothing'}")


def doc_search(retriever: Retriever, query: str, *, limit: int = 10) -> dict[str, Any]:
    """Documents only: id, path, title, summary, excerpt and score."""
    query = _query(query)
    limit = _limit(limit)
    results = retriever.search(query, limit, kinds=[DOCUMENT])
    documents = []
    for result in results:
        entry = result.entry
        item: dict[str, Any] = {"id": entry.id, "path": entry.path, "title": entry.title,
                                "score": round(result.score, 6), "contentHash": entry.content_hash}
        if entry.summary:
            item["summary"] = entry.summary
        if entry.fields.get("body"):
            item["excerpt"] = _excerpt(entry.fields["body"])
        documents.append(item)
    return {"type": "doc-search", "schemaVersion": SCHEMA_VERSION, "query": query, "limit": limit,
            "count": len(documents), "documents": documents}


# ------------------------------------------------------------------------------------------------ retriever


def retrieved_content(entry: Entry) -> str:
    """What a RAG pipeline embeds or shows: title, summary and body."""
    parts = [entry.title, entry.summary or "", entry.fields.get("body", "")]
    return "\n\n".join(part for part in parts if part)


def retrieved_documents(retriever: Retriever, query: str, *, limit: int = 8,
                        kinds: list[str] | None = None) -> list[dict[str, Any]]:
    """The ecosystem `RetrievedDocument` shape: `{id, content, score, source, metadata}` with metadata
    `kind, path, title, evidence, explain, confidence, provenance`."""
    query = _query(query)
    limit = _limit(limit)
    out = []
    for result in retriever.search(query, limit, kinds=_kinds(kinds)):
        entry = result.entry
        out.append({
            "id": entry.id, "content": retrieved_content(entry), "score": round(result.score, 6),
            "source": entry.path,
            "metadata": {"kind": entry.kind, "path": entry.path, "title": entry.title,
                         "evidence": [{"path": entry.path, "contentHash": entry.content_hash}],
                         "explain": {"components": {k: round(v, 6) for k, v in result.components.items()},
                                     "matched": result.matched},
                         "confidence": result.confidence, "provenance": entry.provenance,
                         **({"ownershipId": entry.ownership_id} if entry.ownership_id else {})},
        })
    return out


def retriever_query(retriever: Retriever, query: str, *, limit: int = 8,
                    kinds: list[str] | None = None) -> dict[str, Any]:
    documents = retrieved_documents(retriever, query, limit=limit, kinds=kinds)
    return {"type": "retriever-query", "schemaVersion": SCHEMA_VERSION, "query": query, "count": len(documents),
            "documents": documents}


# ------------------------------------------------------------------------------------------------ lookup


def _resolve(projection: Projection, ref: str | None, path: str | None) -> Entry:
    if (ref is None) == (path is None):
        raise ArgumentError("give exactly one of id or path.")
    if path is not None:
        clean = repository_path(path)
        exact = [e for e in projection.entries if e.path == clean and not e.id.startswith("ownership:")]
        if exact:
            return sorted(exact, key=_preference)[0]
        return resolve_ref(projection, clean)
    assert ref is not None
    if not ref.strip():
        raise ArgumentError("id must be a non-empty entity id, ownership id, alias or path.")
    return resolve_ref(projection, ref)


def _source(entry: Entry) -> str:
    if entry.kind in (INTENT, CHANGE):
        return "configuration"
    if entry.kind == DOCUMENT:
        return "documentation"
    if entry.kind == MODULE:
        return "code"
    return "derived"


def _drop_neighbours(payload: dict[str, Any]) -> list[Any]:
    held = payload.get("neighbours") or {}
    payload["neighbours"] = {}
    return [held] if held else []


def _drop_summaries(payload: dict[str, Any]) -> list[Any]:
    removed = remove_key("summary", ("entity",), ("documents", "covering"), ("documents", "mentioning"))(payload)
    for items in (payload.get("neighbours") or {}).values():
        for item in items:
            if "summary" in item:
                removed.append(item.pop("summary"))
    return removed


LOOKUP_SECTIONS: list[tuple[str, Extractor]] = [
    ("evidenceExcerpts", remove_key("excerpt", ("evidence",))),
    ("related", remove_key("related", ("handoff",))),
    ("neighbours", _drop_neighbours),
    ("summaries", _drop_summaries),
]


def knowledge_lookup(state: ModelState, projection: Projection, *, ref: str | None = None,
                     path: str | None = None, depth: int = 1, budget_tokens: int | None = None) -> dict[str, Any]:
    """The entity, its neighbours by relation kind (to `depth`, clamped to 1–3), the documents covering and
    mentioning it, its handoff, its open diagnostics and its evidence: the one call before editing."""
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise ArgumentError(f"depth must be an integer from 1 to 3; got {depth!r}.")
    entry = _resolve(projection, ref, path)
    payload = lookup(state, entry.id, max(1, min(3, depth)), None, projection)
    for item in payload["evidence"]:
        item["source"] = _source(entry) if item["path"] == entry.path else "documentation"
    findings = sorted(payload.pop("findings"), key=lambda f: (SEVERITY_ORDER.get(f["severity"], 9), f["id"]))
    out = {"type": "knowledge-lookup", "schemaVersion": SCHEMA_VERSION, "entity": payload["entity"],
           "neighbours": payload["neighbours"], "documents": payload["documents"], "handoff": payload["handoff"],
           "diagnostics": {"reportHash": None, "open": findings}, "evidence": payload["evidence"]}
    if budget_tokens is None:
        return out
    return compile_budget(out, budget_tokens, LOOKUP_SECTIONS)


def render_lookup_knowledge_text(payload: dict[str, Any]) -> str:
    shaped = {**payload, "findings": payload["diagnostics"]["open"], "budget": None}
    text = render_lookup_text(shaped)
    return text + (_budget_line(payload["budget"]) + "\n" if payload.get("budget") else "")


# ------------------------------------------------------------------------------------------------ handoff


def handoff_resolve(state: ModelState, projection: Projection, ref: str, *,
                    budget_tokens: int | None = None, include_caveats: bool = False) -> dict[str, Any]:
    """The handoff for a package, area, module, document or route (with `caveats` only when asked for); under a
    budget its related units go first, then the notes that repeat the target's summary."""
    if not isinstance(ref, str) or not ref.strip():
        raise ArgumentError("ref must be a non-empty entity id, ownership id, alias or path.")
    if not isinstance(include_caveats, bool):
        raise ArgumentError(f"includeCaveats must be true or false; got {include_caveats!r}.")
    entry = resolve_ref(projection, ref)
    handoff = {"type": "handoff", **handoff_for_entity(state, entry.id, projection, include_caveats=include_caveats)}
    if budget_tokens is None:
        return handoff
    summary = entry.summary

    def repeated_notes(payload: dict[str, Any]) -> list[Any]:
        notes = payload.get("notes") or []
        removed = [n for n in notes if n == summary]
        if removed:
            payload["notes"] = [n for n in notes if n != summary]
        return removed

    return compile_budget(handoff, budget_tokens, [("related", remove_key("related", ())),
                                                   ("summaries", repeated_notes)])


# ------------------------------------------------------------------------------------------------ documents


def _document(state: ModelState, ref: str | None, path: str | None) -> str:
    if (ref is None) == (path is None):
        raise ArgumentError("give exactly one of id or path.")
    documents = state.universe.documents
    if ref is not None:
        if not ref.strip():
            raise ArgumentError("id must be a document id such as document:docs/api.md.")
        wanted = ref.strip().removeprefix("document:")
        name = "id"
    else:
        wanted, name = path or "", "path"
    clean = repository_path(wanted, name)
    if clean in documents:
        return clean
    from rapidfuzz import process
    from rapidfuzz.distance import JaroWinkler
    closest = [c for c, _, _ in process.extract(clean, list(documents.keys()),
                                                scorer=JaroWinkler.normalized_similarity, limit=3)]
    raise UnknownReference(f"{wanted}", closest)


def doc_get(state: ModelState, *, ref: str | None = None, path: str | None = None,
            max_chars: int = DOC_CHARS) -> dict[str, Any]:
    """A document's text (at most `max_chars` characters), title, headings and content hash. Only documents
    of the model are read, through the same checks as the scan (no symlink out of the repository)."""
    max_chars = _limit(max_chars, "maxChars", MAX_DOC_CHARS)
    clean = _document(state, ref, path)
    facts = state.universe.documents[clean]
    text = state.text_of(clean)
    changed = False
    if text is None:
        read = read_text(state.root, clean, state.config.limits.max_file_bytes)
        if read.text is None or read.data is None:
            raise ArgumentError(f"path {clean} cannot be read ({read.reason or 'gone'}).")
        text = read.text
        changed = sha256_bytes(read.data) != facts.content_hash
    return {"type": "document", "schemaVersion": SCHEMA_VERSION, "id": f"{DOCUMENT}:{clean}", "path": clean,
            "title": facts.title or clean.rsplit("/", 1)[-1], "contentHash": facts.content_hash,
            "headings": [{"level": h.level, "text": h.text, "slug": h.slug, "line": h.line} for h in facts.headings],
            "chars": len(text), "truncated": len(text) > max_chars, "text": text[:max_chars],
            **({"changedSinceModel": True} if changed else {})}


# ------------------------------------------------------------------------------------------------ diagnostics


def finding_record(finding: Finding) -> dict[str, Any]:
    """The ecosystem's canonical Finding: severity high/medium/low/info, a location, evidence and remediation."""
    rule = RULES.get(finding.code)
    location: dict[str, Any] = {"path": finding.path}
    if finding.range is not None:
        location.update({"startLine": finding.range.start.line + 1, "startColumn": finding.range.start.character + 1,
                         "endLine": finding.range.end.line + 1, "endColumn": finding.range.end.character + 1})
    return {"id": f"finding:{finding.fingerprint}", "source": "docbridge", "ruleId": finding.code,
            "category": finding.code.lower().replace("_", "-"), "severity": FINDING_SEVERITY[finding.severity],
            "title": rule.title if rule else finding.code, "message": finding.message, "location": location,
            "evidence": [{"path": e.path, "startLine": e.range.start.line + 1, **(
                {"contentHash": e.content_hash} if e.content_hash else {})} for e in finding.evidence],
            "remediation": finding.remediation, "fingerprint": finding.fingerprint,
            **({"entity": finding.entity} if finding.entity else {})}


def diagnostics(state: ModelState, *, path: str | None = None, code: str | None = None, format: str = "native",
                limit: int = 200) -> dict[str, Any]:
    """Open findings, optionally of one file or directory and of one code; `format: finding` gives the ecosystem
    Finding shape (most severe first), `native` Doc Bridge's own (by file and position)."""
    if format not in ("native", "finding"):
        raise ArgumentError(f"format must be 'native' or 'finding'; got {format!r}.")
    limit = _limit(limit, "limit", MAX_DIAGNOSTICS)
    prefix = repository_path(path) if path is not None else None
    wanted = code.strip().upper() if code else None
    if wanted is not None and wanted not in RULES:
        raise ArgumentError(f"code {code!r} is not a finding code; choose from {', '.join(sorted(RULES))}.")
    selected = [f for f in findings_of(state)
                if (prefix is None or (f.path is not None and (f.path == prefix or f.path.startswith(prefix + "/"))))
                and (wanted is None or f.code == wanted)]
    if format == "finding":
        records = sorted((finding_record(f) for f in selected),
                         key=lambda r: (list(FINDING_SEVERITY.values()).index(r["severity"]), r["id"]))
    else:
        records = [f.model_dump(mode="json") for f in selected]
    return {"type": "diagnostics", "schemaVersion": SCHEMA_VERSION, "format": format,
            **({"path": prefix} if prefix is not None else {}), **({"code": wanted} if wanted else {}),
            "total": len(records), "count": min(limit, len(records)), "truncated": len(records) > limit,
            "bySeverity": dict(sorted(Counter(f.severity for f in selected).items())), "findings": records[:limit]}


def proposals(state: ModelState | None = None) -> dict[str, Any]:
    """The enrichment overlay's pending proposals (a person decides them with `docbridge fix`)."""
    from docbridge.engine.base.overlay import read_overlay
    overlay = read_overlay(state.root) if state is not None else None
    if overlay is None:
        return {"type": "proposals", "schemaVersion": SCHEMA_VERSION, "pending": [], "note": PROPOSALS_NOTE}
    return {"type": "proposals", "schemaVersion": SCHEMA_VERSION, "pending": overlay.pending,
            "note": f"{len(overlay.pending)} pending in the enrichment overlay; a person decides each with "
                    "`docbridge fix approve|reject PROPOSAL_ID --by NAME`."}


# ------------------------------------------------------------------------------------------------ summary


def snapshot_summary(state: ModelState) -> dict[str, Any]:
    """What the model holds: entity and relation counts, files, skipped files, findings by severity."""
    snapshot = snapshot_of(state)
    entities, relations = snapshot.counts()
    findings = findings_of(state)
    layout = state.universe.layout
    return {"type": "snapshot-summary", "schemaVersion": SCHEMA_VERSION, "revision": state.revision,
            "contentHash": snapshot.content_hash, "entities": dict(sorted(entities.items())),
            "relations": dict(sorted(relations.items())), "files": snapshot.coverage["files"],
            "skipped": snapshot.coverage["skipped_by_reason"],
            "findings": {s: n for s, n in sorted(Counter(f.severity for f in findings).items(),
                                                  key=lambda item: SEVERITY_ORDER[item[0]])},
            "areas": sorted(layout.areas) if layout is not None else []}
