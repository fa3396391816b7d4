"""`docbridge parity`: the claims a repository makes in public, held to the facts they stand for (public parity v1).

The registry (default `docs/parity/public-claims-v1.json`) is sealed: `contentHash` is the SHA-256 of its
canonical JSON without that key, and a registry whose hash does not match is refused before anything is
checked. Each claim names its canonical value's evidence (`package-field`, `artifact-field`, `artifact-sum`,
`snapshot-count`, `doctor-metric`, `cli-command`), how prose states it (`template` with one `{value}`, per
surface `templates`, a `transform`), the surfaces that must (`required`) or may (`optional`) state it, a
severity and a remediation. Outcomes:

* `PARITY_STALE` — a surface states another value than the canonical one (blocks at `error`);
* `PARITY_MISSING` — a required surface does not state the claim, or does not exist (blocks at `error`);
* `PARITY_CONTRADICTION` — surfaces state different values for one claim (always blocks; decided over the whole
  claim, it replaces that claim's per-surface stale findings);
* `PARITY_NOT_ANALYZED` — the canonical value could not be resolved (never blocks, never a pass).

An exception (`claimId`, `surface`, `reason` of at least 8 characters, `acceptedBy`) marks that finding
`accepted`: still reported, no longer blocking. The report carries only repository-relative paths, line numbers,
values and an excerpt of the matching line (at most 160 characters, secrets redacted), and no timestamp.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.safe_io import MAX_CONFIG_BYTES, read_config_file, read_regular

DEFAULT_REGISTRY = "docs/parity/public-claims-v1.json"
VALUE_TYPES = ("number", "percent", "semver", "text")
EVIDENCE_KINDS = ("package-field", "artifact-field", "artifact-sum", "snapshot-count", "doctor-metric", "cli-command")
TRANSFORMS = ("round", "percent-1dp", "percent-0dp", "negative-percent-2dp", "negative-seconds-2dp")
DOCTOR_METRICS = ("grade", "score", "reachability", "connectivity", "hitAt3")
EXCERPT_CHARS = 160
_CAPTURE = {"number": r"-?\d+(?:\.\d+)?", "percent": r"-?\d+(?:\.\d+)?", "semver": r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?",
            "text": r"[^\n]{1,80}?"}
_SECRETS = [re.compile(p) for p in (
    r"(?i)\b(api[_-]?key|secret|token|password|passwd)\b(\s*[:=]\s*)(\S+)",
    r"\bsk-[A-Za-z0-9_-]{16,}", r"\bAKIA[0-9A-Z]{16}\b", r"\bgh[pousr]_[A-Za-z0-9]{20,}\b",
    r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b")]


class RegistryError(Exception):
    """A registry that cannot be used (exit 2); the message names the file and the key."""


# ------------------------------------------------------------------------------------------------ registry


def seal(registry: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in registry.items() if k != "contentHash"}
    return {**body, "contentHash": canonical_hash(body)}


def _fail(path: str, key: str, message: str) -> RegistryError:
    return RegistryError(f"{path}: {key}: {message}")


def _surface(path: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, "a surface is a non-empty repository-relative path.")
    posix = PurePosixPath(value)
    if posix.is_absolute() or ".." in posix.parts or re.match(r"^[A-Za-z]:", value) or "\\" in value:
        raise _fail(path, key, f"surface {value!r} must be a repository-relative path inside the repository.")
    return posix.as_posix()


def _template(path: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or value.count("{value}") != 1:
        raise _fail(path, key, "a template holds exactly one `{value}`.")
    return value


def load_registry(file: Path, shown: str) -> dict[str, Any]:  # noqa: C901 (to split)
    try:
        raw = json.loads(read_regular(file, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileNotFoundError as exc:
        raise RegistryError(f"{shown}: the claims registry does not exist (create one with `docbridge parity "
                            f"--init`).") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{shown}: cannot read the claims registry ({exc}).") from exc
    except json.JSONDecodeError as exc:
        raise RegistryError(f"{shown}:{exc.lineno}:{exc.colno}: the claims registry is not valid JSON: "
                            f"{exc.msg}.") from exc
    if not isinstance(raw, dict):
        raise _fail(shown, "(top level)", "the registry is a JSON object.")
    recorded = raw.get("contentHash")
    if not isinstance(recorded, str) or seal(raw)["contentHash"] != recorded:
        raise _fail(shown, "contentHash", "Invalid public claims content hash: the registry was edited without "
                                          "being resealed; refusing to check it.")
    claims = raw.get("claims")
    if not isinstance(claims, list):
        raise _fail(shown, "claims", "a list of claims is required.")
    seen: set[str] = set()
    for index, claim in enumerate(claims):
        where = f"claims[{index}]"
        if not isinstance(claim, dict):
            raise _fail(shown, where, "a claim is a JSON object.")
        ident = claim.get("claimId")
        if not isinstance(ident, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", ident):
            raise _fail(shown, f"{where}.claimId", "a lowercase slug is required.")
        if ident in seen:
            raise _fail(shown, f"{where}.claimId", f"duplicate claim id {ident!r}.")
        seen.add(ident)
        for field in ("statement", "owner", "remediation"):
            if not isinstance(claim.get(field), str) or not claim[field].strip():
                raise _fail(shown, f"{where}.{field}", "a non-empty string is required.")
        evidence = claim.get("evidence")
        if not isinstance(evidence, dict) or evidence.get("kind") not in EVIDENCE_KINDS:
            raise _fail(shown, f"{where}.evidence.kind", f"one of {', '.join(EVIDENCE_KINDS)} is required.")
        presence = evidence["kind"] == "cli-command"
        if presence:
            if "template" in claim or "templates" in claim:
                raise _fail(shown, f"{where}.template", "a presence claim (cli-command) has no template.")
        else:
            if claim.get("valueType") not in VALUE_TYPES:
                raise _fail(shown, f"{where}.valueType", f"one of {', '.join(VALUE_TYPES)} is required.")
            _template(shown, f"{where}.template", claim.get("template"))
            for surface, template in (claim.get("templates") or {}).items():
                _template(shown, f"{where}.templates.{surface}", template)
        if claim.get("transform") is not None and claim["transform"] not in TRANSFORMS:
            raise _fail(shown, f"{where}.transform", f"one of {', '.join(TRANSFORMS)} is required.")
        if claim.get("severity", "error") not in ("error", "warn"):
            raise _fail(shown, f"{where}.severity", "`error` or `warn`.")
        for group in ("required", "optional"):
            values = claim.get(group, [])
            if not isinstance(values, list):
                raise _fail(shown, f"{where}.{group}", "a list of surfaces is required.")
            claim[group] = [_surface(shown, f"{where}.{group}[{i}]", v) for i, v in enumerate(values)]
        if not claim["required"] and not claim["optional"]:
            raise _fail(shown, f"{where}.required", "a claim needs at least one surface.")
    exceptions = raw.get("exceptions", [])
    if not isinstance(exceptions, list):
        raise _fail(shown, "exceptions", "a list is required.")
    for index, exception in enumerate(exceptions):
        where = f"exceptions[{index}]"
        if not isinstance(exception, dict) or exception.get("claimId") not in seen:
            raise _fail(shown, f"{where}.claimId", "an exception names a claim of this registry.")
        _surface(shown, f"{where}.surface", exception.get("surface"))
        if not isinstance(exception.get("reason"), str) or len(exception["reason"].strip()) < 8:
            raise _fail(shown, f"{where}.reason", "an exception needs a reason of at least 8 characters.")
        if not isinstance(exception.get("acceptedBy"), str) or not exception["acceptedBy"].strip():
            raise _fail(shown, f"{where}.acceptedBy", "an exception needs the person who accepted it.")
    return raw


# ------------------------------------------------------------------------------------------------ evidence


class Unresolved(Exception):
    """The canonical value of a claim cannot be resolved (PARITY_NOT_ANALYZED)."""


def _read_json(root: Path, relative: str) -> Any:
    try:
        data = read_config_file(root, _surface("evidence", "path", relative))
        if data is None:
            raise Unresolved(f"`{relative}` does not exist")
        return json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RegistryError) as exc:  # a link out of the repository, a FIFO, huge, not JSON
        raise Unresolved(f"`{relative}` cannot be read as JSON ({exc})") from exc


def _dotted(value: Any, dotted: str, where: str) -> Any:
    for part in str(dotted).split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise Unresolved(f"`{where}` has no `{dotted}`")
    return value


def resolve(evidence: dict[str, Any], root: Path, facts: dict[str, Callable[[], Any]]) -> Any:
    kind = evidence["kind"]
    if kind == "package-field":
        manifest = evidence.get("package", "package.json")
        return _dotted(_read_json(root, manifest), evidence.get("field", ""), manifest)
    if kind == "artifact-field":
        return _dotted(_read_json(root, evidence.get("path", "")), evidence.get("field", ""), evidence.get("path", ""))
    if kind == "artifact-sum":
        items = _dotted(_read_json(root, evidence.get("path", "")), evidence.get("array", ""), evidence.get("path", ""))
        if not isinstance(items, list):
            raise Unresolved(f"`{evidence.get('array')}` is not an array")
        values = [_dotted(item, evidence.get("field", ""), evidence.get("path", "")) for item in items]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise Unresolved(f"`{evidence.get('field')}` is not numeric in every item")
        return sum(values)
    if kind == "snapshot-count":
        counts = facts["counts"]()
        if evidence.get("entityKind") not in counts:
            raise Unresolved(f"no entity kind `{evidence.get('entityKind')}`")
        return counts[evidence["entityKind"]]
    if kind == "doctor-metric":
        metric = evidence.get("metric")
        if metric not in DOCTOR_METRICS:
            raise Unresolved(f"no doctor metric `{metric}`")
        report = facts["doctor"]()
        value = report[metric] if metric in ("grade", "score") else report["dimensions"][metric]["value"]
        if value is None:
            raise Unresolved(f"the doctor did not measure `{metric}`")
        return value
    if kind == "cli-command":
        return evidence.get("command") in facts["commands"]()
    raise Unresolved(f"unknown evidence kind `{kind}`")


def _half_up(value: float, digits: int) -> float:
    scale = 10 ** digits
    return math.floor(value * scale + 0.5) / scale


def render(value: Any, claim: dict[str, Any]) -> str:
    transform = claim.get("transform")
    if transform is None:
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise Unresolved(f"transform `{transform}` needs a number, got {value!r}")
    if transform == "round":
        return str(int(_half_up(value, 0)))
    if transform == "percent-1dp":
        return f"{_half_up(value * 100, 1):.1f}"
    if transform == "percent-0dp":
        return f"{int(_half_up(value * 100, 0))}"
    if value >= 0:  # the signed transforms: the direction lives in a word the checker cannot read
        raise Unresolved(f"transform `{transform}` renders only a negative measurement; got {value}")
    if transform == "negative-percent-2dp":
        return f"{_half_up(-value * 100, 2):.2f}"
    return f"{_half_up(-value, 2):.2f}"


# ------------------------------------------------------------------------------------------------ checking


def redact(line: str) -> str:
    text = line.strip()
    for pattern in _SECRETS:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 1] + "…"


def _pattern(template: str, value_type: str) -> re.Pattern[str]:
    before, after = template.split("{value}")
    return re.compile(re.escape(before) + f"(?P<value>{_CAPTURE[value_type]})" + re.escape(after))


def _finding(code: str, claim: dict[str, Any], surface: str | None, line: int | None, column: int | None,
             message: str, **extra: Any) -> dict[str, Any]:
    severity = "error" if code == "PARITY_CONTRADICTION" else (
        "info" if code == "PARITY_NOT_ANALYZED" else claim.get("severity", "error"))
    return {"code": code, "claimId": claim["claimId"], "owner": claim["owner"], "surface": surface,
            "line": line, "column": column, "severity": severity, "message": message,
            "remediation": claim["remediation"], **extra}


def check(registry: dict[str, Any], root: Path, facts: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    findings: list[dict[str, Any]] = []
    missing_surfaces: set[str] = set()
    for claim in registry["claims"]:
        surfaces = [(s, True) for s in claim["required"]] + [(s, False) for s in claim["optional"]
                                                              if s not in claim["required"]]
        try:
            canonical = resolve(claim["evidence"], root, facts)
            rendered = None if claim["evidence"]["kind"] == "cli-command" else render(canonical, claim)
        except Unresolved as exc:
            findings.append(_finding("PARITY_NOT_ANALYZED", claim, None, None, None,
                                     f"Claim `{claim['claimId']}` ({claim['statement']}) cannot be checked: {exc}."))
            continue
        occurrences: list[dict[str, Any]] = []
        per_claim: list[dict[str, Any]] = []
        for surface, required in surfaces:
            try:  # no link out of the repository, no FIFO, nothing over the configuration file bound
                data = read_config_file(root, surface)
            except ValueError as exc:
                per_claim.append(_finding("PARITY_NOT_ANALYZED", claim, surface, None, None,
                                          f"`{surface}` cannot be read: {exc}."))
                continue
            if data is None:
                missing_surfaces.add(surface)
                if required:
                    per_claim.append(_finding("PARITY_MISSING", claim, surface, None, None,
                                              f"`{surface}` should state {claim['statement']}, and it does not exist."))
                continue
            lines = data.decode("utf-8", errors="replace").split("\n")
            if claim["evidence"]["kind"] == "cli-command":
                mention = claim["evidence"].get("mention") or f"docbridge {claim['evidence'].get('command')}"
                hits = [(n, line.find(mention)) for n, line in enumerate(lines) if mention in line]
                if canonical and not hits and required:
                    per_claim.append(_finding("PARITY_MISSING", claim, surface, None, None,
                                              f"`{surface}` does not mention `{mention}` ({claim['statement']})."))
                elif not canonical:
                    for n, column in hits:
                        per_claim.append(_finding(
                            "PARITY_STALE", claim, surface, n + 1, column + 1,
                            f"`{surface}` offers `{mention}`, which the command line no longer has.",
                            stated=mention, canonical=None, excerpt=redact(lines[n])))
                continue
            template = (claim.get("templates") or {}).get(surface, claim["template"])
            pattern = _pattern(template, claim["valueType"])
            found = False
            for n, line in enumerate(lines):
                for match in pattern.finditer(line):
                    found = True
                    occurrences.append({"surface": surface, "line": n + 1, "column": match.start("value") + 1,
                                        "stated": match.group("value"), "excerpt": redact(line)})
            if not found and required:
                per_claim.append(_finding("PARITY_MISSING", claim, surface, None, None,
                                          f"`{surface}` does not state {claim['statement']} "
                                          f"(expected `{template.replace('{value}', rendered or '')}`)."))
        stated = sorted({o["stated"] for o in occurrences})
        if len({o["surface"] for o in occurrences}) > 1 and len(stated) > 1:
            first = next(o for o in occurrences if o["stated"] != occurrences[0]["stated"])
            per_claim.append(_finding(
                "PARITY_CONTRADICTION", claim, first["surface"], first["line"], first["column"],
                f"Public surfaces disagree on {claim['statement']}: "
                + ", ".join(f"`{o['surface']}:{o['line']}` says {o['stated']}" for o in occurrences)
                + f"; the repository says {rendered}.", canonical=rendered, stated=first["stated"],
                excerpt=first["excerpt"], occurrences=[{k: o[k] for k in ("surface", "line", "column", "stated")}
                                                       for o in occurrences]))
        else:
            for o in occurrences:
                if o["stated"] != rendered:
                    per_claim.append(_finding(
                        "PARITY_STALE", claim, o["surface"], o["line"], o["column"],
                        f"`{o['surface']}` states {o['stated']} for {claim['statement']}; the repository says "
                        f"{rendered}.", stated=o["stated"], canonical=rendered, excerpt=o["excerpt"]))
        findings.extend(per_claim)
    exceptions = {(e["claimId"], e["surface"]): e for e in registry.get("exceptions", [])}
    for finding in findings:
        exception = exceptions.get((finding["claimId"], finding["surface"]))
        if exception is not None and finding["code"] != "PARITY_NOT_ANALYZED":
            finding["accepted"] = {"reason": exception["reason"].strip(), "acceptedBy": exception["acceptedBy"]}
        blocks = finding["code"] == "PARITY_CONTRADICTION" or (
            finding["code"] in ("PARITY_STALE", "PARITY_MISSING") and finding["severity"] == "error")
        finding["blocking"] = blocks and "accepted" not in finding
    findings.sort(key=lambda f: (f["claimId"], f["surface"] or "", f["line"] or 0, f["code"]))
    summary = {"claims": len(registry["claims"]), "findings": len(findings),
               "blocking": sum(1 for f in findings if f["blocking"]),
               "accepted": sum(1 for f in findings if "accepted" in f),
               "notAnalyzed": sum(1 for f in findings if f["code"] == "PARITY_NOT_ANALYZED")}
    parity = {"registryHash": registry["contentHash"], "findings": findings,
              "missingSurfaces": sorted(missing_surfaces), "summary": summary}
    parity["contentHash"] = canonical_hash(parity)
    return {"ok": summary["blocking"] == 0, "parity": parity}


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for f in report["parity"]["findings"]:
        where = f"{f['surface']}:{f['line']}:{f['column']}" if f["line"] else (f["surface"] or "(registry)")
        state = "accepted" if "accepted" in f else ("blocking" if f["blocking"] else "reported")
        lines.append(f"{where}  {f['code']}  [{f['claimId']}, {f['owner']}, {state}]  {f['message']}")
        lines.append(f"      → {f['remediation']}" + (f" (accepted by {f['accepted']['acceptedBy']}: "
                                                      f"{f['accepted']['reason']})" if "accepted" in f else ""))
    summary = report["parity"]["summary"]
    lines.append(f"parity: {'ok' if report['ok'] else 'failing'} ({summary['claims']} claims, {summary['findings']} "
                 f"findings, {summary['blocking']} blocking, {summary['accepted']} accepted)")
    if report["parity"]["missingSurfaces"]:
        lines.append("missing surfaces: " + ", ".join(report["parity"]["missingSurfaces"]))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ --init


def starter_registry(root: Path, readme: str, counts: dict[str, int], commands: set[str]) -> dict[str, Any]:
    """Claims for what the README already states: the package version, entity counts, `docbridge` commands."""
    claims: list[dict[str, Any]] = []
    try:
        manifest = json.loads((read_config_file(root, "package.json") or b"{}").decode("utf-8"))
    except (OSError, ValueError):
        manifest = {}
    version = manifest.get("version") if isinstance(manifest, dict) else None
    if isinstance(version, str):
        match = re.search(r"(\S+ )?" + re.escape(version) + r"\b", readme)
        if match:
            claims.append({"claimId": "package-version", "statement": "the released version", "owner": "maintainers",
                           "valueType": "semver", "template": (match.group(1) or "") + "{value}",
                           "evidence": {"kind": "package-field", "field": "version"}, "required": ["README.md"],
                           "severity": "error", "remediation": "State the version package.json declares."})
    for kind, count in sorted(counts.items()):
        match = re.search(rf"\b\d+ ({kind}s?)\b", readme)
        if match:
            claims.append({"claimId": f"{kind}-count", "statement": f"the number of {kind}s", "owner": "maintainers",
                           "valueType": "number", "template": "{value} " + match.group(1),
                           "evidence": {"kind": "snapshot-count", "entityKind": kind}, "required": ["README.md"],
                           "severity": "warn", "remediation": f"State the number of {kind}s the scan finds ({count} "
                                                              f"today)."})
    for command in sorted(set(re.findall(r"\bdocbridge ([a-z][a-z-]+)", readme)) & commands):
        claims.append({"claimId": f"command-{command}", "statement": f"the `docbridge {command}` command",
                       "owner": "maintainers", "evidence": {"kind": "cli-command", "command": command},
                       "required": ["README.md"], "severity": "error",
                       "remediation": f"Keep `docbridge {command}` documented while the command line offers it."})
    return seal({"schemaVersion": 1, "kind": "public-claims", "claims": claims, "exceptions": []})


__all__ = ["DEFAULT_REGISTRY", "RegistryError", "check", "load_registry", "render_text", "seal", "starter_registry"]
