"""Templates (Jinja2 in an immutable sandbox, undefined variables are errors) and generated regions.

A template places `{{ region.open }}` and `{{ region.close }}` around the part the generator owns; one printing
neither is wrapped whole. After rendering, the placeholders become the markers

    <!-- doc-bridge:generated hash=H template=NAME key=KEY -->
    ...
    <!-- /doc-bridge:generated -->

H is the hash the Markdown scanner verifies (`engine.base.hashing.region_hash`, first 16 hex of SHA-256 over the
lines strictly between the markers, CRLF as LF). `template` and `key` say which page the region is, so that
`check` and the language server can render it again and tell a stale region from a fresh one.
"""

from __future__ import annotations

import re
import time
import traceback
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from docbridge.engine.base.hashing import region_hash
from docbridge.engine.base.safe_io import MAX_CONFIG_BYTES, read_regular, resolved_inside
from docbridge.engine.discovery.markdown import _CLOSE_RE, _OPEN_RE
from docbridge.engine.render import TEMPLATES
from jinja2 import FunctionLoader, StrictUndefined, TemplateError, TemplateNotFound, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

OPEN = "\x00doc-bridge:region-open\x00"
CLOSE = "\x00doc-bridge:region-close\x00"
_ATTRIBUTE = re.compile(r"\b(template|key)=(\S+)")


class RenderError(Exception):
    """A template or its input cannot be used; one sentence naming the file and line. Exit 2."""


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def builtin_file(name: str) -> str:
    return f"{name}.j2" if name == "llms.txt" else f"{name}.md.j2"


def builtin_source(name: str) -> str:
    templates = resources.files("docbridge.engine.render").joinpath("templates")
    return templates.joinpath(builtin_file(name)).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    source: str
    display: str  # the path errors name: `render.templates["area"] (templates/area.md)` or the built-in file
    compiled: Any


# A template in a repository is code someone else wrote: it runs sandboxed and bounded.
MAX_NUMBER_BITS = 4096  # arithmetic results (10 ** 100000000 would take minutes and gigabytes)
MAX_ITERATIONS = 1_000_000  # all `range()` a rendering asks for, together (loops over the model are bounded by it)
MAX_OUTPUT_CHARS = 8 * 1024 * 1024  # what one rendering may produce
MAX_RENDER_SECONDS = 10.0  # checked as output comes


class TemplateBudget(Exception):
    """A rendering went past one of the bounds above."""


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with arithmetic, repetition and `range` bounded."""

    intercepted_binops = frozenset({"**", "*"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.iterations = 0
        self.globals["range"] = self._range

    def _range(self, *args: int) -> range:
        numbers = range(*args)
        self.iterations += len(numbers)
        if self.iterations > MAX_ITERATIONS:
            raise TemplateBudget(f"the template asks for more than {MAX_ITERATIONS} loop iterations")
        return numbers

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and \
                right > 0 and right * abs(left).bit_length() > MAX_NUMBER_BITS:
            raise TemplateBudget(f"{left} ** {right} is a number of more than {MAX_NUMBER_BITS} bits")
        if operator == "*":
            count, item = (right, left) if isinstance(right, int) else (left, right)
            if isinstance(count, int) and isinstance(item, (str, list, tuple)) and count * len(item) > MAX_OUTPUT_CHARS:
                raise TemplateBudget(f"a repetition of more than {MAX_OUTPUT_CHARS} items")
            if isinstance(left, int) and isinstance(right, int) and \
                    left.bit_length() + right.bit_length() > MAX_NUMBER_BITS:
                raise TemplateBudget(f"a product of more than {MAX_NUMBER_BITS} bits")
        return super().call_binop(context, operator, left, right)


def _environment(source: str, display: str, name: str) -> _BoundedSandbox:
    def load(wanted: str) -> tuple[str, str, Any] | None:
        # only the template itself: an include, import or extends names nothing (no file is read for it)
        return (source, display, lambda: True) if wanted == name else None
    return _BoundedSandbox(
        loader=FunctionLoader(load), undefined=StrictUndefined,
        autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def load_template(name: str, root: Path, overrides: dict[str, str]) -> Template:
    """The project's override for `name` (`render.templates.<name>`, relative to the root) or the built-in one,
    compiled; a missing file or a syntax error raises RenderError before anything is rendered."""
    if name not in TEMPLATES:
        raise RenderError(f"Unknown template {name!r}; the templates are {', '.join(TEMPLATES)}.")
    override = overrides.get(name)
    if override:
        path = resolved_inside(root, override)
        display = override
        try:
            if path is None:
                raise RenderError(f'render.templates["{name}"] ({override}) points outside the repository.')
            source = read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")  # resolved: a FIFO or huge file refused
        except FileNotFoundError:
            raise RenderError(f'render.templates["{name}"] names {override}, which does not exist.') from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RenderError(f'render.templates["{name}"] ({override}) cannot be read: {exc}.') from None
    else:
        display = f"engine/render/templates/{builtin_file(name)}"
        source = builtin_source(name)
    env = _environment(source, display, name)
    try:
        compiled = env.get_template(name)
    except TemplateSyntaxError as exc:
        raise RenderError(_sentence(f"{display}:{exc.lineno}: syntax error: {exc.message}")) from None
    return Template(name, source, display, compiled)


def _template_line(exc: BaseException, display: str) -> int | None:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == display:
            line = frame.lineno
    return line


def _bounded_render(template: Template, variables: dict[str, Any]) -> str:
    environment = template.compiled.environment
    environment.iterations = 0
    deadline = time.monotonic() + MAX_RENDER_SECONDS
    pieces, size = [], 0
    for piece in template.compiled.generate(**variables, region={"open": OPEN, "close": CLOSE}):
        size += len(piece)
        if size > MAX_OUTPUT_CHARS:
            raise TemplateBudget(f"the template produces more than {MAX_OUTPUT_CHARS} characters")
        if time.monotonic() > deadline:
            raise TemplateBudget(f"the template takes more than {MAX_RENDER_SECONDS:g} s")
        pieces.append(piece)
    return "".join(pieces)


def render_template(template: Template, variables: dict[str, Any]) -> str:
    """The template's output for `variables` (plain data only), placeholders still in."""
    try:
        return _bounded_render(template, variables)
    except TemplateBudget as exc:
        line = _template_line(exc, template.display)
        raise RenderError(_sentence(f"{template.display}:{line or '?'}: the sandbox refused it: {exc}")) from None
    except TemplateNotFound as exc:
        line = _template_line(exc, template.display)
        raise RenderError(_sentence(f"{template.display}:{line or '?'}: a template cannot include, import or "
                                    f"extend another ({exc.name!r})")) from None
    except RecursionError:
        raise RenderError(_sentence(f"{template.display}: the template calls itself without end")) from None
    except SecurityError as exc:
        line = _template_line(exc, template.display)
        raise RenderError(_sentence(f"{template.display}:{line or '?'}: the sandbox refused it: {exc}")) from None
    except TemplateError as exc:
        line = getattr(exc, "lineno", None) or _template_line(exc, template.display)
        raise RenderError(_sentence(f"{template.display}:{line or '?'}: {exc.message or type(exc).__name__}")) from None
    except (ArithmeticError, LookupError, TypeError, ValueError, OverflowError) as exc:
        line = _template_line(exc, template.display)
        raise RenderError(_sentence(f"{template.display}:{line or '?'}: {type(exc).__name__}: {exc}")) from None


# ------------------------------------------------------------------------------------------ regions


def open_marker(hash_: str, template: str, key: str | None) -> str:
    attributes = f" template={template}" + (f" key={quote(key, safe='/@._-:+')}" if key else "")
    return f"<!-- doc-bridge:generated hash={hash_}{attributes} -->"


CLOSE_MARKER = "<!-- /doc-bridge:generated -->"


def marker_attributes(line: str) -> dict[str, str]:
    """`template` and `key` of an open marker line (empty when it is a plain marker)."""
    match = _OPEN_RE.match(line.rstrip("\r"))
    if match is None:
        return {}
    return {k: unquote(v) for k, v in _ATTRIBUTE.findall(match.group(1))}


def _trim_blank(text: str) -> str:
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Sealed:
    text: str  # the whole page
    body: str  # the region's lines (no trailing newline), "" when empty
    hash: str | None  # None when the page carries no region (llms.txt)


def seal(output: str, template: str, key: str | None, display: str) -> Sealed:
    """Replace the placeholders with markers (or wrap the output whole when it prints neither)."""
    opens, closes = output.count(OPEN), output.count(CLOSE)
    if opens == 0 and closes == 0:
        before, body, after = "", _trim_blank(output), "\n"
    elif opens == 1 and closes == 1 and output.index(OPEN) < output.index(CLOSE):
        before, rest = output.split(OPEN, 1)
        inner, after = rest.split(CLOSE, 1)
        body = _trim_blank(inner)
        if before and not before.endswith("\n"):
            before += "\n"
        after = after if after.startswith("\n") else "\n" + after
    elif opens > 1 or closes > 1:
        raise RenderError(f"{display}: the template places more than one generated region; place one.")
    elif opens == 0:
        raise RenderError(f"{display}: the template prints region.close without region.open.")
    else:
        raise RenderError(f"{display}: the template prints region.open without region.close.")
    lines = body.split("\n") if body else []
    hash_ = region_hash(lines)
    text = before + open_marker(hash_, template, key) + "\n" + (body + "\n" if body else "") + CLOSE_MARKER + after
    return Sealed(text, body, hash_)


@dataclass(frozen=True, slots=True)
class FileRegion:
    start: int  # line of the open marker
    end: int  # line of the close marker
    attributes: dict[str, str]


def file_regions(lines: list[str]) -> list[FileRegion]:
    """Closed generated regions of a file's lines (fenced code is not special here: a marker is a whole line)."""
    out: list[FileRegion] = []
    start: int | None = None
    for number, line in enumerate(lines):
        clean = line.rstrip("\r")
        if _OPEN_RE.match(clean):
            start = number
        elif _CLOSE_RE.match(clean) and start is not None:
            out.append(FileRegion(start, number, marker_attributes(lines[start])))
            start = None
    return out


def target_region(regions: list[FileRegion], template: str, key: str | None) -> FileRegion | None:
    """The region a page goes into: the one naming this template and key, else the first plain one."""
    for region in regions:
        if region.attributes.get("template") == template and region.attributes.get("key") == key:
            return region
    for region in regions:
        if "template" not in region.attributes:
            return region
    return None


def region_lines(sealed: Sealed, template: str, key: str | None) -> list[str]:
    """The marker lines and body of a sealed page's region, as lines."""
    assert sealed.hash is not None
    return [open_marker(sealed.hash, template, key), *(sealed.body.split("\n") if sealed.body else []), CLOSE_MARKER]


def merge(existing: str, sealed: Sealed, template: str, key: str | None, path: str) -> str:
    """`existing` with its region for this page replaced by the sealed region; every byte outside it kept."""
    lines = existing.split("\n")
    region = target_region(file_regions(lines), template, key)
    if region is None:
        raise RenderError(f"{path} exists and has no generated region for {template}"
                          f"{' ' + key if key else ''}: add the markers `<!-- doc-bridge:generated -->` and "
                          f"`{CLOSE_MARKER}` where the page belongs, or remove the file.")
    crlf = lines[region.start].endswith("\r")
    new = [line + "\r" if crlf else line for line in region_lines(sealed, template, key)]
    if lines[region.end].endswith("\r") and not crlf:
        new[-1] += "\r"
    elif crlf and not lines[region.end].endswith("\r"):
        new[-1] = new[-1].rstrip("\r")
    return "\n".join(lines[:region.start] + new + lines[region.end + 1:])
