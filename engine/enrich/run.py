"""`docbridge enrich`: context packs, batches by area, the agent command over stdin/stdout
(`doc-bridge.registry-agent.v2`), the persistent cache, validation and the new overlay.

A timeout, a crash, output that is not JSON or is too large, or a reply without a `proposals` array is a
counted rejection of that batch; when any batch failed the overlay is not rewritten at all (never a
partial overlay). Proposals are validated one by one (docbridge.engine.enrich.validate); the previous overlay's
decisions stand, its accepted entries whose target moved become rejected `expired`.

This is the only module that runs the agent command: search, query, render and the language server never
import it.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shlex
import signal
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, read_sealed, write_sealed
from docbridge.engine.base.hashing import canonical_bytes, canonical_hash
from docbridge.engine.base.overlay import (
    Overlay,
    entity_hash,
    expired_reason,
    overlay_lock,
    read_overlay,
    write_overlay,
)
from docbridge.engine.enrich.proposals import KINDS, PROTOCOL, ROLE_KINDS, ROLE_TASKS
from docbridge.engine.enrich.validate import Context, Partition, redact, rejection, validate
from docbridge.engine.retrieval.project import projection_of
from docbridge.engine.views.reconcile import findings_of
from docbridge.engine.views.snapshot import snapshot_of

MAX_NEIGHBOURS = 32
BATCH_PACKS = 16
EXCERPT_LINES = 60
CACHE_KIND = "enrich-cache"
MAX_PROPOSALS_PER_PACK = 64  # an agent's reply beyond this many proposals per pack it was sent is refused
MAX_REJECTED = 2_000  # rejected entries kept from run to run, the newest first (people's rejections always)


class EnrichError(Exception):
    """A problem with how enrichment was asked for (not enabled, no agent command): exit 2."""


@dataclass(slots=True)
class Role:
    name: str
    task: str
    agent_id: str
    agent_version: str
    prompt_version: str
    command: list[str]


# The reference's closed list of rejection reasons that name something the repository does not contain
# (`inventedReferences` counts exactly these; entity-outside-pack names a real entity, and a bad evidence range
# is counted under its own reason in `rejectionReasons`)
INVENTED_REFERENCE_REASONS = ("unknown-endpoint", "unknown-entity", "unknown-scope", "unknown-directory",
                              "unknown-diagnostic")


@dataclass(slots=True)
class Usage:
    """What an agent reported it spent on one call (the optional `usage` of its reply)."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(slots=True)
class RunStats:
    agent_runs: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    cache_hits: int = 0
    packs: int = 0
    packs_run: list[str] = field(default_factory=list)
    batches: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    usages: list[tuple[int, int, Usage]] = field(default_factory=list)  # bytes sent, bytes received, reported

    def record(self, sent: int, received: int, usage: Usage) -> None:
        self.bytes_sent += sent
        self.bytes_received += received
        self.usages.append((sent, received, usage))


def _roles(config: Any, command: str | None, only: list[str] | None) -> list[Role]:
    registry = config.intelligence.registry
    names = sorted(only or registry.roles.keys(), key=lambda n: list(ROLE_TASKS).index(n))
    roles = []
    for name in names:
        own = registry.roles.get(name)
        line = command or (own.command if own and own.command else None) or registry.command
        if not line and registry.refused:
            raise EnrichError(registry.refused)
        if not line:
            raise EnrichError("no agent command: pass --agent-command CMD, or set intelligence.registry.command "
                              "in your user settings (docbridge reads them from $DOCBRIDGE_USER_CONFIG, else "
                              "~/.config/docbridge/config.json).")
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise EnrichError(f"the agent command {line!r} cannot be parsed ({exc}).") from exc
        roles.append(Role(name, ROLE_TASKS[name], (own.agent_id if own and own.agent_id else None)
                          or registry.agent_id, registry.agent_version, registry.prompt_version, argv))
    return roles


# --------------------------------------------------------------------------------------------- packs


def _lines(root: Path, path: str) -> list[str] | None:
    try:
        return (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


def build_packs(state: Any, snapshot: Any, role: str, max_bytes: int) -> list[dict[str, Any]]:
    """One pack per target entity of the role (the curator's: documents; the reviewer's: documents, modules
    and areas), in id order: the entity, its depth-one neighbours (≤ 32), the
    open findings on its file, a redacted excerpt of its file; truncated deterministically to `max_bytes`."""
    entities = snapshot.entities
    wanted = ("document",) if role == "curator" else ("document", "module", "area")
    neighbours: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for relation in snapshot.relations:
        if relation.source in entities and relation.target in entities and relation.source != relation.target:
            neighbours[relation.source].add((relation.kind, "out", relation.target))
            neighbours[relation.target].add((relation.kind, "in", relation.source))
    findings: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for finding in findings_of(state):
        if finding.path:
            findings[finding.path].append({"code": finding.code, "message": finding.message[:300],
                                           "line": finding.range.start.line + 1 if finding.range else None,
                                           "fingerprint": finding.fingerprint})
    layout = state.universe.layout
    packs: list[dict[str, Any]] = []
    for entity in sorted(entities.values(), key=lambda e: e.id):
        if entity.kind not in wanted or entity.path is None:
            continue
        near: list[dict[str, Any]] = []
        for kind, direction, other in sorted(neighbours.get(entity.id, ()), key=lambda n: (n[2], n[0], n[1])):
            if len(near) >= MAX_NEIGHBOURS:
                break
            o = entities[other]
            near.append({"id": o.id, "kind": o.kind, "path": o.path, "title": o.title,
                         "contentHash": entity_hash(o), "relation": kind, "direction": direction})
        lines = _lines(state.root, entity.path) or []
        shown = min(len(lines), EXCERPT_LINES)
        area = layout.area_of(entity.path) if layout is not None else None
        pack: dict[str, Any] = {
            "entity": {"id": entity.id, "kind": entity.kind, "path": entity.path, "title": entity.title,
                       "summary": entity.summary, "contentHash": entity_hash(entity)},
            "area": area.id if area is not None else None,
            "neighbours": near,
            "findings": findings.get(entity.path, [])[:32],
            "evidence": [{"source": "snapshot", "path": entity.path, "lineStart": 1, "lineEnd": max(shown, 1),
                          "excerpt": redact("\n".join(lines[:shown]))}] if lines else [],
        }
        _fit(pack, max_bytes)
        pack["packHash"] = canonical_hash({"entity": pack["entity"]["contentHash"],
                                           "neighbours": [[n["id"], n["contentHash"]] for n in pack["neighbours"]],
                                           "findings": [f["fingerprint"] for f in pack["findings"]],
                                           "bytes": max_bytes})
        packs.append(pack)
    return packs


def _size(value: Any) -> int:
    return len(canonical_bytes(value))


def _fit(pack: dict[str, Any], max_bytes: int) -> None:
    """Drop excerpt lines from the end, then findings, then neighbours, until the pack fits."""
    while _size(pack) > max_bytes:
        evidence = pack["evidence"]
        if evidence and evidence[0]["excerpt"]:
            text = evidence[0]["excerpt"].split("\n")
            if len(text) > 1:
                keep = max(1, len(text) // 2)
                evidence[0]["excerpt"] = "\n".join(text[:keep])
                evidence[0]["lineEnd"] = keep
            else:
                evidence[0]["excerpt"] = text[0][: max(0, len(text[0]) // 2)]
            continue
        if pack["findings"]:
            pack["findings"].pop()
        elif pack["neighbours"]:
            pack["neighbours"].pop()
        else:
            break
    pack["truncated"] = _size(pack) > max_bytes


def batches(packs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    by_area: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for pack in packs:
        by_area[pack["area"] or ""].append(pack)
    out: list[list[dict[str, Any]]] = []
    for area in sorted(by_area):
        group = by_area[area]
        out.extend(group[i:i + BATCH_PACKS] for i in range(0, len(group), BATCH_PACKS))
    return out


# --------------------------------------------------------------------------------------------- agent


class AgentFailure(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _usage(reply: dict[str, Any]) -> Usage:
    """The reply's optional `usage` ({inputTokens, outputTokens, costUsd}, each optional): a figure that is not a
    non-negative number is not reported (the run is then costed from its bytes)."""
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return Usage()

    def number(key: str, integral: bool) -> Any:
        value = usage.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            return None
        if integral:
            return int(value) if float(value).is_integer() else None
        return float(value)
    return Usage(number("inputTokens", True), number("outputTokens", True), number("costUsd", False))


def call_agent(role: Role, request: dict[str, Any], root: Path, timeout: float,
               max_output: int, key: str = "proposals") -> tuple[Any, int, int, Usage]:
    """Send one request; the reply's `proposals` (or `key`), bytes sent, bytes received and the usage the agent
    reported. Raises AgentFailure."""
    data = json.dumps(request, ensure_ascii=False, sort_keys=True).encode("utf-8")
    try:
        process = subprocess.Popen(role.command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise AgentFailure("agent-crash", f"cannot start {role.command[0]!r}: {exc.strerror or exc}") from exc
    out, err, too_large = _exchange(process, data, timeout, max_output)
    if too_large:
        raise AgentFailure("agent-output-too-large", f"more than {max_output} bytes of output")
    if process.returncode is None:
        raise AgentFailure("agent-timeout", f"no reply within {timeout:g} s")
    if process.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise AgentFailure("agent-crash", f"exit status {process.returncode}: {tail[0][:200]}")
    try:
        reply = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AgentFailure("agent-invalid-json", f"the reply is not JSON ({exc})") from exc
    except RecursionError:
        raise AgentFailure("agent-invalid-json", "the reply is nested too deeply to read") from None
    if not isinstance(reply, dict) or not isinstance(reply.get(key), list):
        raise AgentFailure("agent-invalid-json", f"the reply has no `{key}` array")
    packs = request.get("packs")
    limit = MAX_PROPOSALS_PER_PACK * max(1, len(packs) if isinstance(packs, list) else 1)
    if len(reply[key]) > limit:
        raise AgentFailure("agent-too-many-proposals", f"{len(reply[key])} proposals for "
                                                       f"{len(packs) if isinstance(packs, list) else 1} pack(s) "
                                                       f"(at most {limit})")
    return reply[key], len(data), len(out), _usage(reply)


def _exchange(process: subprocess.Popen[bytes], data: bytes, timeout: float,
              max_output: int) -> tuple[bytes, bytes, bool]:
    """Write the request, read at most `max_output` bytes of reply (and the last 64 KB of stderr); the agent's
    process group is killed on timeout or on too much output (then `returncode` stays None on timeout)."""
    chunks: list[bytes] = []
    errors: list[bytes] = []
    state = {"size": 0, "too_large": False}

    def kill() -> None:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)

    def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.write(data)
        with contextlib.suppress(OSError):
            process.stdin.close()

    def drain_out() -> None:
        assert isinstance(process.stdout, io.BufferedReader)  # a pipe with Popen's default buffering
        while chunk := process.stdout.read1(65536):
            state["size"] += len(chunk)
            if state["size"] > max_output:
                state["too_large"] = True
                kill()
                return
            chunks.append(chunk)

    def drain_err() -> None:
        assert isinstance(process.stderr, io.BufferedReader)  # as stdout
        while chunk := process.stderr.read1(65536):
            errors.append(chunk)
            while sum(len(c) for c in errors) > 65536 and len(errors) > 1:
                errors.pop(0)

    threads = [threading.Thread(target=t, daemon=True) for t in (feed, drain_out, drain_err)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    threads[1].join(timeout)
    timed_out = False
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        process.wait()
    for thread in threads:
        thread.join(5)
    if timed_out and not state["too_large"]:
        process.returncode = None
    return b"".join(chunks), b"".join(errors), bool(state["too_large"])


def _cache_key(role: Role, pack: dict[str, Any]) -> str:
    return canonical_hash({"task": role.task, "agentId": role.agent_id, "agentVersion": role.agent_version,
                           "promptVersion": role.prompt_version, "packHash": pack["packHash"]})


def _cache_path(root: Path, key: str) -> Path:
    return artifact_dir(root) / "enrich" / "cache" / f"{key}.json"


def collect(root: Path, role: Role, packs: list[dict[str, Any]], snapshot_hash: str, registry: Any,
            stats: RunStats, progress: Callable[[str, int, int], None] | None = None
            ) -> list[tuple[Any, frozenset[str]]]:
    """The role's raw proposals, each with the entities of the batch it came from (from the cache where
    the pack's key is stored; otherwise from the agent, one call per batch of uncached packs)."""
    raws: list[tuple[Any, frozenset[str]]] = []
    groups = batches(packs)
    for done, batch in enumerate(groups, start=1):
        stats.packs += len(batch)
        todo = []
        for pack in batch:
            loaded = read_sealed(_cache_path(root, _cache_key(role, pack)), CACHE_KIND)
            if loaded is not None and isinstance(loaded[1], list):
                stats.cache_hits += 1
                raws.extend((raw, frozenset({pack["entity"]["id"]})) for raw in loaded[1])
            else:
                todo.append(pack)
        if todo:
            stats.batches += 1
            stats.agent_runs += 1
            stats.packs_run.extend(f"{role.name}:{p['entity']['id']}" for p in todo)
            request = {"protocol": PROTOCOL, "task": role.task, "role": role.name,
                       "agent": {"agentId": role.agent_id, "agentVersion": role.agent_version,
                                 "promptVersion": role.prompt_version},
                       "snapshotHash": snapshot_hash, "kinds": list(ROLE_KINDS.get(role.name, KINDS)),
                       "limits": {"maxPackBytes": registry.max_pack_bytes}, "packs": todo}
            try:
                proposals, sent, received, usage = call_agent(role, request, root, registry.timeout_seconds,
                                                              registry.max_output_bytes)
            except AgentFailure as failure:
                stats.failures.append({"role": role.name, "reason": failure.reason, "detail": failure.detail,
                                       "packs": [p["entity"]["id"] for p in todo]})
                continue
            stats.record(sent, received, usage)
            shown = frozenset(p["entity"]["id"] for p in todo)
            per_pack: dict[str, list[Any]] = {p["entity"]["id"]: [] for p in todo}
            for raw in proposals:
                raws.append((raw, shown))
                entity = raw.get("entity") if isinstance(raw, dict) else None
                if entity in per_pack:
                    per_pack[entity].append(raw)
            for pack in todo:
                with contextlib.suppress(OSError):
                    write_sealed(_cache_path(root, _cache_key(role, pack)), CACHE_KIND,
                                 sorted(per_pack[pack["entity"]["id"]], key=canonical_hash))
        if progress is not None:
            progress(role.name, done, len(groups))
    return raws


# --------------------------------------------------------------------------------------------- context


def context_for(state: Any, snapshot: Any) -> Context:
    projection = projection_of(state)
    root: Path = state.root
    entities = snapshot.entities
    counts: dict[str, int | None] = {}
    files = set(snapshot.hashes)

    def line_count(path: str) -> int | None:
        if path not in files:
            return None
        if path not in counts:
            lines = _lines(root, path)
            counts[path] = len(lines) if lines is not None else None
        return counts[path]

    names: set[str] = set()
    for entry in projection.entries:
        names.add(entry.id)
        names.add(entry.id.split(":", 1)[-1])
        names.update(entry.aliases)
        if entry.title:
            names.add(entry.title)
        stem = entry.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if stem:
            names.add(stem)
    directories = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    for d in list(directories):
        parts = d.split("/")
        directories.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return Context(
        snapshot_hash=snapshot.content_hash, entities=entities,
        observed={(r.source, r.kind, r.target) for r in snapshot.relations},
        diagnostics={f.fingerprint for f in findings_of(state)}, line_count=line_count,
        summaries={e.id: e.summary for e in projection.entries},
        names=sorted({n.lower() for n in names if n}),
        area_paths={e.id: e.path for e in entities.values() if e.kind == "area" and e.path},
        directories=directories)


# --------------------------------------------------------------------------------------------- the run


def _adjudicate(judge: Role, root: Path, earlier: Partition, new: Partition, snapshot_hash: str, registry: Any,
                stats: RunStats) -> int:
    """Ask the adjudicator about the pending conflicts (if any); how many adjudications were applied."""
    from docbridge.engine.enrich.adjudicate import apply, conflicts
    found = conflicts(earlier.pending)
    if not found:
        return 0
    request = {"protocol": PROTOCOL, "task": judge.task, "role": judge.name,
               "agent": {"agentId": judge.agent_id, "agentVersion": judge.agent_version,
                         "promptVersion": judge.prompt_version},
               "snapshotHash": snapshot_hash, "conflicts": found}
    stats.agent_runs += 1
    try:
        raws, sent, received, usage = call_agent(judge, request, root, registry.timeout_seconds,
                                                 registry.max_output_bytes, key="adjudications")
    except AgentFailure as failure:
        stats.failures.append({"role": judge.name, "reason": failure.reason, "detail": failure.detail, "packs": []})
        return 0
    stats.record(sent, received, usage)
    refused = apply(raws, earlier.pending, new.rejected)
    new.rejected.extend(refused)
    return len(raws) - len(refused)


def _counts(entries: list[dict[str, Any]], key: str) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for entry in entries:
        out[str(entry.get(key))] += 1
    return dict(sorted(out.items()))


def enrich(workspace: Any, *, command: str | None = None, roles: list[str] | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Run the configured roles and write the new overlay (unless an agent run failed). The report:
    `written`, `overlayHash`, counts, and `stats`."""
    started = time.perf_counter()
    config = workspace.config
    registry = config.intelligence.registry
    if not registry.enabled:
        raise EnrichError("enrichment is off: set intelligence.registry.enabled to true in doc-bridge.config.json "
                          "(nothing is sent to an agent until then).")
    chosen = _roles(config, command, roles)
    judge = next((r for r in chosen if r.name == "adjudicator"), None)
    chosen = [r for r in chosen if r.name != "adjudicator"]
    state = workspace.ensure_resolved()
    snapshot = snapshot_of(state)
    root: Path = workspace.root
    previous = read_overlay(root)
    stats = RunStats()
    raws: list[tuple[Any, frozenset[str]]] = []
    proposer: dict[int, str] = {}  # id(raw) -> the configured agent the tool sent the pack to
    for role in chosen:
        packs = build_packs(state, snapshot, role.name, registry.max_pack_bytes)
        collected = collect(root, role, packs, snapshot.content_hash, registry, stats, progress)
        proposer.update((id(raw), role.agent_id) for raw, _ in collected)
        raws.extend(collected)
    ctx = context_for(state, snapshot)

    # the previous overlay: expired accepted entries move to rejected; every decided id stays decided
    accepted, pending, rejected, expired = [], [], [], []
    if previous is not None:
        for entry in previous.accepted:
            why = expired_reason(entry, snapshot.entities)
            if why is None:
                accepted.append(dict(entry))
            else:
                expired.append({k: v for k, v in entry.items() if k not in ("acceptedAt", "acceptedBy")}
                               | {"reason": "expired", "detail": why})
        pending = [dict(e) for e in previous.pending]
        rejected = [dict(e) for e in previous.rejected]
    earlier = Partition(accepted, pending)
    seen = {str(e.get("proposalId")) for e in (*accepted, *pending, *rejected, *expired)}
    new = Partition()
    skipped = 0
    proposed: dict[str, int] = defaultdict(int)  # every proposal received this run, by kind (decided before too)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for raw, shown in sorted(raws, key=lambda item: canonical_hash(item[0])):
        ctx.pack_entities = set(shown)
        verdict = validate(raw, ctx, earlier)
        proposed[str(verdict.entry.get("kind"))] += 1
        pid = str(verdict.entry["proposalId"])
        if pid in seen:
            skipped += 1
            continue
        seen.add(pid)
        if verdict.status == "accepted":
            verdict.entry["acceptedAt"] = now
        if id(raw) in proposer and verdict.status != "rejected":
            verdict.entry["proposedBy"] = proposer[id(raw)]  # recorded by the tool, whatever `origin` says
        getattr(new, verdict.status).append(verdict.entry)
        if verdict.status != "rejected":
            getattr(earlier, verdict.status).append(verdict.entry)
    adjudications = 0
    if judge is not None:
        adjudications = _adjudicate(judge, root, earlier, new, snapshot.content_hash, registry, stats)
    failures = [rejection({}, f["reason"], f"{f['role']}: {f['detail']}") | {"packs": f["packs"]}
                for f in stats.failures]
    overlay = Overlay(earlier.accepted, earlier.pending, _bounded(rejected + expired + new.rejected), {},
                      snapshot.content_hash)
    document = overlay.document()
    stats_out = _stats(stats, new, proposed, failures, expired, previous, overlay, document["contentHash"])
    stats_out.update({"skippedAlreadyDecided": skipped, "adjudications": adjudications, "proposalsReceived": len(raws),
                      "wallTimeMs": round((time.perf_counter() - started) * 1000, 1)})
    stats_out["cost"]["wallTimeMs"] = stats_out["wallTimeMs"]
    overlay.stats = stats_out
    written = not failures
    if written:
        document = _write_merged(root, overlay, previous)
    return {"written": written, "overlay": str(root / ".docbridge" / "overlay.json"),
            "overlayHash": document["contentHash"] if written else (previous.content_hash if previous else None),
            "accepted": len(new.accepted), "pending": len(new.pending), "rejected": len(new.rejected),
            "totals": {"accepted": len(earlier.accepted), "pending": len(earlier.pending),
                       "rejected": len(rejected) + len(expired) + len(new.rejected)},
            "new": {"accepted": new.accepted, "pending": new.pending, "rejected": new.rejected},
            "stats": stats_out}


def _stats(stats: RunStats, new: Partition, proposed: dict[str, int], failures: list[dict[str, Any]],
           expired: list[dict[str, Any]], previous: Overlay | None, overlay: Overlay, overlay_hash: str
           ) -> dict[str, Any]:
    """The run's `stats` (outside the overlay's content hash): the reference's EnrichmentStats names
    (`inputBytes`/`outputBytes`, `byKind` with `proposed`, `inventedReferences` over the five invented-reference
    reasons), our older names beside them (`bytesSent`/`bytesReceived`), the bill (`cost`) and the stability
    against the previous overlay."""
    reasons = _counts(new.rejected + failures + expired, "reason")
    by_kind: dict[str, dict[str, int]] = {}

    def row(kind: str) -> dict[str, int]:
        return by_kind.setdefault(kind, {"proposed": 0, "accepted": 0, "pending": 0, "rejected": 0})
    for kind, count in proposed.items():
        row(kind)["proposed"] = count
    for status in ("accepted", "pending", "rejected"):
        for entry in getattr(new, status):
            row(str(entry.get("kind")))[status] += 1
    looked_up = stats.packs
    hit_rate = round(stats.cache_hits / looked_up, 6) if looked_up else 0.0
    return {
        "byKind": dict(sorted(by_kind.items())), "rejectionReasons": reasons,
        "inventedReferences": sum(n for r, n in reasons.items() if r in INVENTED_REFERENCE_REASONS),
        "agentRuns": stats.agent_runs, "inputBytes": stats.bytes_sent, "outputBytes": stats.bytes_received,
        "bytesSent": stats.bytes_sent, "bytesReceived": stats.bytes_received,
        "packs": looked_up, "packsRun": sorted(stats.packs_run), "batches": stats.batches,
        "cacheHits": stats.cache_hits, "cacheHitRate": hit_rate, "expired": len(expired),
        "cost": _cost(stats, hit_rate), **_stability(previous, overlay, overlay_hash), "failures": failures,
    }


def _cost(stats: RunStats, hit_rate: float) -> dict[str, Any]:
    """What the agent runs cost: bytes, and the registry agent's tokens and dollars under the study's names
    (`registryAgent*`). Tokens are what each agent reported in its reply's `usage`, else characters / 4 of the
    bytes (`tokenMethod`: provider, approximate, or mixed); dollars only what agents reported (null when none
    did, named in `missingMetrics`)."""
    input_tokens = sum(u.input_tokens if u.input_tokens is not None else math.ceil(sent / 4)
                       for sent, _, u in stats.usages)
    output_tokens = sum(u.output_tokens if u.output_tokens is not None else math.ceil(received / 4)
                        for _, received, u in stats.usages)
    reported = [u for _, _, u in stats.usages if u.input_tokens is not None and u.output_tokens is not None]
    costs = [u.cost_usd for _, _, u in stats.usages if u.cost_usd is not None]
    method = ("provider" if stats.usages and len(reported) == len(stats.usages)
              else "mixed" if reported else "approximate")
    missing = [] if len(costs) == len(stats.usages) else \
        ["registryAgentCostUsd-partial" if costs else "registryAgentCostUsd"]
    total = stats.bytes_sent + stats.bytes_received
    return {"agentRuns": stats.agent_runs, "inputBytes": stats.bytes_sent, "outputBytes": stats.bytes_received,
            "cacheHits": stats.cache_hits, "cacheHitRate": hit_rate,
            "bytes": total, "approxTokens": (total + 3) // 4,
            "registryAgentRuns": stats.agent_runs, "registryAgentInputTokens": input_tokens,
            "registryAgentOutputTokens": output_tokens,
            "registryAgentCostUsd": round(sum(costs), 6) if costs or not stats.usages else None,
            "tokenMethod": method, "missingMetrics": missing}


def _stability(previous: Overlay | None, overlay: Overlay, overlay_hash: str) -> dict[str, Any]:
    """This overlay against the previous one: the same hash (a deterministic agent over an unchanged repository),
    else the share of proposal ids in both, over the union of the two overlays' ids (so proposing fewer things
    does not read as more stable), with the counts it is made of."""
    ids = overlay.ids()
    before = previous.ids() if previous is not None else set()
    union = ids | before
    share = 0.0 if previous is None else round(len(ids & before) / len(union), 6) if union else 1.0
    out: dict[str, Any] = {
        "overlayHashIdentical": previous is not None and previous.content_hash == overlay_hash,
        "proposalIdShare": share, "sharedProposalIds": len(ids & before), "proposalIds": len(ids),
        "previousProposalIds": len(before)}
    if previous is not None:
        out["previousOverlayHash"] = previous.content_hash
    return out


def _bounded(rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """People's rejections, and the newest MAX_REJECTED others (the list is oldest first)."""
    people = [e for e in rejected if e.get("reason") == "human-rejected"]
    others = [e for e in rejected if e.get("reason") != "human-rejected"]
    return people + others[-MAX_REJECTED:]


def _write_merged(root: Path, overlay: Overlay, previous: Overlay | None) -> dict[str, Any]:
    """Write `overlay`, computed from `previous`, keeping what people decided since `previous` was read (an
    approval made while the agents ran): under the overlay's lock, from the read to the write."""
    with overlay_lock(root):
        current = read_overlay(root, warn=False)
        if current is not None and (previous is None or current.content_hash != previous.content_hash):
            before = previous.ids() if previous is not None else set()
            decided = {str(e.get("proposalId")): ("accepted", e) for e in current.accepted if e.get("acceptedBy")}
            decided.update({str(e.get("proposalId")): ("rejected", e) for e in current.rejected
                            if e.get("reason") == "human-rejected"})
            for pid, (where, entry) in decided.items():
                if previous is not None and pid in before \
                        and any(str(e.get("proposalId")) == pid for e in previous.accepted + previous.rejected):
                    continue  # decided before this run began: already in what it computed
                overlay.pending = [e for e in overlay.pending if str(e.get("proposalId")) != pid]
                overlay.accepted = [e for e in overlay.accepted if str(e.get("proposalId")) != pid]
                overlay.rejected = [e for e in overlay.rejected if str(e.get("proposalId")) != pid]
                getattr(overlay, where).append(entry)
        return write_overlay(root, overlay)
