"""`package.json` and `tsconfig.json` facts (pure, per file)."""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.model import Issue, NavigationFacts, PackageFacts, TsconfigFacts
from docbridge.engine.discovery import versions

ANALYZER_VERSION = versions.MANIFESTS
DEPENDENCY_FIELDS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")


def _issue(code: str, message: str, line: int = 0) -> Issue:
    return Issue(code, message, line, 0, line, 0)


def _unreadable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it nests too deeply"
    return str(exc).rstrip(".") or type(exc).__name__


def _line_of(text: str, pattern: str) -> int:
    match = re.search(pattern, text)
    return text.count("\n", 0, match.start()) if match else 0


def analyze_package_json(path: str, text: str, data: bytes | None = None) -> PackageFacts:
    content_hash = sha256_bytes(data if data is not None else text.encode("utf-8"))
    directory = path.rsplit("/", 1)[0] if "/" in path else "."
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        return PackageFacts(path, content_hash, directory, None, 0, (), (), (), (), None,
                            (_issue("MANIFEST_INVALID", f"package.json is not valid JSON: {exc.msg}.",
                                    exc.lineno - 1),))
    except (ValueError, RecursionError) as exc:  # nesting too deep, a number too long to convert
        return PackageFacts(path, content_hash, directory, None, 0, (), (), (), (), None,
                            (_issue("MANIFEST_INVALID", f"package.json cannot be read: {_unreadable(exc)}."),))
    if not isinstance(manifest, dict):
        return PackageFacts(path, content_hash, directory, None, 0, (), (), (), (), None,
                            (_issue("MANIFEST_INVALID", "package.json must be a JSON object."),))
    name = manifest.get("name") if isinstance(manifest.get("name"), str) and manifest["name"].strip() else None
    workspaces_raw = manifest.get("workspaces")
    if isinstance(workspaces_raw, dict):
        workspaces_raw = workspaces_raw.get("packages")
    workspaces = tuple(w for w in workspaces_raw if isinstance(w, str)) if isinstance(workspaces_raw, list) else ()
    scripts_raw = manifest.get("scripts")
    scripts = tuple(sorted((k, v) for k, v in scripts_raw.items() if isinstance(v, str))) if isinstance(
        scripts_raw, dict) else ()
    dependencies: dict[str, str] = {}
    for field in DEPENDENCY_FIELDS:
        value = manifest.get(field)
        if isinstance(value, dict):
            for dep in value:
                dependencies.setdefault(dep, field)
    entries = _entry_points(manifest)
    package_manager = manifest.get("packageManager") if isinstance(manifest.get("packageManager"), str) else None
    return PackageFacts(path, content_hash, directory, name.strip() if name else None,
                        _line_of(text, r'"name"\s*:') if name else 0, workspaces, scripts,
                        tuple(sorted(dependencies.items())), entries, package_manager, (),
                        manifest.get("private") is True, _subpaths(manifest), _repository(manifest),
                        _dependency_lines(manifest, text), _description(manifest))


MAX_DESCRIPTION = 300


def _description(manifest: dict[str, Any]) -> str:
    value = manifest.get("description")
    return " ".join(value.split())[:MAX_DESCRIPTION] if isinstance(value, str) else ""


MAX_DEPENDENCY_LINES = 1024


def _dependency_lines(manifest: dict[str, Any], text: str) -> tuple[tuple[str, str, int, int, int], ...]:
    """(field, name, line, column, end column) of every entry of every dependency field, in field order then
    written order: where each dependency's key is written (the field's own key when it cannot be found as
    written). Columns count code points."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    found: list[tuple[str, str, int, int, int]] = []

    def at(start: int, end: int) -> tuple[int, int, int]:
        line = bisect.bisect_right(starts, start) - 1
        return line, start - starts[line], end - starts[line]

    for field in DEPENDENCY_FIELDS:
        value = manifest.get(field)
        if not isinstance(value, dict) or not value:
            continue
        opening = re.search(rf'"{field}"\s*:\s*{{', text)
        cursor = opening.end() if opening else 0
        field_at = at(opening.start(), opening.start() + len(field) + 2) if opening else (0, 0, 0)
        for dependency in value:
            if not isinstance(dependency, str):
                continue
            written = json.dumps(dependency, ensure_ascii=False)
            match = re.compile(re.escape(written) + r"\s*:").search(text, cursor)
            if match is None:
                found.append((field, dependency, *field_at))
                continue
            cursor = match.end()
            found.append((field, dependency, *at(match.start(), match.start() + len(written))))
            if len(found) >= MAX_DEPENDENCY_LINES:
                return tuple(found)
    return tuple(found)


def _entry_points(manifest: dict[str, Any]) -> tuple[str, ...]:
    """Candidate entry files, most specific first: `exports["."]`, `types`, `module`, `main`."""
    found: list[str] = []
    exports = manifest.get("exports")
    if isinstance(exports, dict):
        _add_entry_point(found, exports.get(".", exports if not any(k.startswith(".") for k in exports) else None))
    else:
        _add_entry_point(found, exports)
    for key in ("source", "types", "typings", "module", "main"):
        _add_entry_point(found, manifest.get(key))
    return tuple(found)


def _add_entry_point(found: list[str], value: Any) -> None:
    # a function of the module: a nested one calling itself is a reference cycle, never collected once frozen
    if isinstance(value, str) and value not in found:
        found.append(value)
    elif isinstance(value, dict):
        for key in ("types", "import", "default", "require", "node"):
            _add_entry_point(found, value.get(key))


MAX_SUBPATHS = 256
_REPOSITORY = re.compile(r"(?:github:|github\.com[/:]|gitlab\.com[/:]|^)([\w.-]+/[\w.-]+?)(?:\.git)?(?:#.*)?/?$", re.I)


def _repository(manifest: dict[str, Any]) -> str:
    """`owner/name` of `repository` (a string or `{url}`), lowercase: which repository the package is kept in."""
    value = manifest.get("repository")
    url = value.get("url") if isinstance(value, dict) else value
    match = _REPOSITORY.search(url.strip()) if isinstance(url, str) else None
    return match.group(1).lower() if match else ""


def _first_file(value: Any) -> str | None:
    """The file a conditional export names first (types, then import, default, require, node)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        # a condition that names the source (`source`, `@scope/source`) is the file itself, before built output
        sources = [k for k in value if isinstance(k, str) and k.rsplit("/", 1)[-1] == "source"]
        for key in (*sources, "import", "default", "require", "node", "types", *value.keys()):
            found = _first_file(value.get(key)) if key in value else None
            if found:
                return found
    return None


def _subpaths(manifest: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """`exports` subpaths other than `.` (`./tiny` -> `./dist/preset/tiny.js`), wildcard patterns left out."""
    exports = manifest.get("exports")
    if not isinstance(exports, dict):
        return ()
    found = []
    for key, value in exports.items():
        if not isinstance(key, str) or not key.startswith("./") or "*" in key or key == "./package.json":
            continue
        target = _first_file(value)
        if target and "*" not in target:
            found.append((key, target))
        if len(found) >= MAX_SUBPATHS:
            break
    return tuple(sorted(found))


MAX_ROUTES = 5000
_ROUTE_VALUE = re.compile(r"^/?[\w@$][\w@$.~-]*(?:/[\w@$.~*-]+)*/?$")


def analyze_navigation(path: str, text: str, data: bytes | None = None) -> NavigationFacts:
    """The routes and page paths a navigation file names: every string value (and mapping key, for redirect
    tables) shaped like a route, in order, each once. A file that does not parse names none."""
    content_hash = sha256_bytes(data if data is not None else text.encode("utf-8"))
    try:
        if path.lower().endswith((".yml", ".yaml")):
            from docbridge.engine.discovery.markdown import yaml_load
            value = yaml_load(text)
        else:
            value = parse_jsonc(text)
    except Exception:  # malformed navigation is the site's to report; it names no route here
        return NavigationFacts(path, content_hash, ())
    found: dict[str, None] = {}
    stack = [value]
    while stack and len(found) < MAX_ROUTES:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and key.startswith("/") and _ROUTE_VALUE.match(key.replace("**", "x")):
                    found.setdefault(key, None)
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str) and "://" not in item and any(c.isalpha() for c in item) and \
                _ROUTE_VALUE.match(item) and len(item) > 1:  # a route, a page path, or a page id (`getting-started`)
            found.setdefault(item, None)
    return NavigationFacts(path, content_hash, tuple(found))


_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def parse_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as tsconfig files are written."""
    without_comments = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    cleaned = []
    for part in re.split(r'("(?:\\.|[^"\\])*")', without_comments):
        cleaned.append(part if part.startswith('"') else _TRAILING_COMMA.sub(r"\1", part))
    return json.loads("".join(cleaned))


def analyze_tsconfig(path: str, text: str, data: bytes | None = None) -> TsconfigFacts:
    content_hash = sha256_bytes(data if data is not None else text.encode("utf-8"))
    try:
        config = parse_jsonc(text)
    except json.JSONDecodeError as exc:
        return TsconfigFacts(path, content_hash, None, (), None,
                             (_issue("TSCONFIG_INVALID", f"{path} is not valid JSON: {exc.msg}.", exc.lineno - 1),))
    except (ValueError, RecursionError) as exc:
        return TsconfigFacts(path, content_hash, None, (), None,
                             (_issue("TSCONFIG_INVALID", f"{path} cannot be read: {_unreadable(exc)}."),))
    if not isinstance(config, dict):
        return TsconfigFacts(path, content_hash, None, (), None,
                             (_issue("TSCONFIG_INVALID", f"{path} must be a JSON object."),))
    compiler_options = config.get("compilerOptions")
    options = compiler_options if isinstance(compiler_options, dict) else {}
    base_url = options.get("baseUrl") if isinstance(options.get("baseUrl"), str) else None
    paths_option = options.get("paths")
    paths_raw = paths_option if isinstance(paths_option, dict) else {}
    paths = tuple(sorted(
        (pattern, tuple(t for t in targets if isinstance(t, str)))
        for pattern, targets in paths_raw.items() if isinstance(targets, list)))
    extends = config.get("extends") if isinstance(config.get("extends"), str) else None
    return TsconfigFacts(path, content_hash, base_url, paths, extends, ())
