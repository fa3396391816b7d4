"""JS/TS analyzer: one module's exports, imports and what it says about itself, a pure function of its path and text.

tree-sitter with the TypeScript grammar for `.ts/.mts/.cts` and the TSX grammar for `.tsx/.jsx/.js/.mjs/.cjs`
(plain JavaScript often carries JSX, which the TypeScript grammar rejects). tree-sitter columns are UTF-8
byte offsets; they are converted to code points here, once.
"""

from __future__ import annotations

import re
from typing import Any

import regex
import tree_sitter_typescript as tst
from docbridge.engine.base.hashing import sha256_bytes
from docbridge.engine.base.model import Export, Import, ModuleFacts
from docbridge.engine.discovery import versions
from docbridge.engine.discovery.roles import DOCUSAURUS_CONFIG, generated_marker
from tree_sitter import Language, Node, Parser, Query, QueryCursor

ANALYZER_VERSION = versions.TYPESCRIPT
PROSE_LIMIT = 3000  # characters of comments and message strings kept per module
SUMMARY_LIMIT = 200
CODE_WORDS_LIMIT = 6000  # characters of a module's distinct identifiers kept for search
OUTLINE_LIMIT = 64  # member names kept per module
_MEMBERS = frozenset({"method_definition", "public_field_definition", "method_signature", "abstract_method_signature",
                      "property_signature"})

_DECLARATION_KINDS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_signature": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
}
_PROSE = "(comment) @comment (string) @string (template_string) @string"
# a name in code: outside comments and strings, these are identifiers, keywords and members (`#private` ones too)
_NAME = re.compile(rb"#?[A-Za-z_$][\w$]{2,}")
_KEYWORDS = frozenset(b"""abstract accessor any as assert asserts async await bigint boolean break case catch class
const constructor continue debugger declare default delete else enum export extends false finally for from function
get global implements import infer instanceof interface is keyof let module namespace never new null number object
of out override package private protected public readonly require return satisfies set static string super switch
symbol this throw true try type typeof undefined unique unknown var void while with yield""".split())
_COMMENT_SYNTAX = regex.compile(r"^\s*(?:/\*+!?|\*+/|\*|//+)\s?|\s*\*+/\s*$", regex.M)
# lines that speak to tools, not to readers
_DIRECTIVE = regex.compile(r"^\s*(?:eslint|@ts-|prettier-ignore|istanbul|c8 |v8 |biome-|#region|#endregion|"
                           r"@vitest-environment|@jest-environment|@license|@refresh|@jsx|webpack)", regex.I)
_JSDOC_TAG = regex.compile(r"(?<![\w@])@[a-zA-Z]+\b")
_SENTENCE_END = regex.compile(r"(?<=[.!?])\s|\n\s*\n")
# registration calls whose arguments wire another module in at run time (`app.use(router)`, `fastify.register(x)`)
WIRING_METHODS = ("register", "use", "mount", "attach")
_CALLS = f"""
(call_expression function: (import) arguments: (arguments . (_) @dynamic))
(call_expression function: (identifier) @_fn arguments: (arguments . (_) @require) (#eq? @_fn "require"))
(call_expression function: (member_expression property: (property_identifier) @wiring_method)
  arguments: (arguments) @wired (#any-of? @wiring_method {" ".join(f'"{m}"' for m in WIRING_METHODS)}))
"""
MAX_WIRING = 256  # wiring calls kept per module
# what source text the calls above need: a module without any of it is not queried for them (most modules have no
# dynamic import, require or registration call, and the query walks the whole tree: a tenth of a module's analysis)
_MAY_CALL = re.compile(rb"\bimport\s*[(/]|\brequire\b|\b(?:" + "|".join(WIRING_METHODS).encode() + rb")\b")


class _Grammar:
    def __init__(self, language: Any) -> None:
        self.language = Language(language)
        self.parser = Parser(self.language)
        self.calls = Query(self.language, _CALLS)
        self.prose = Query(self.language, _PROSE)


_GRAMMARS: dict[str, _Grammar] = {}


def forget_grammars() -> None:
    """Drop the parsers and queries made so far: a process forked from one that parsed builds its own instead of
    using copies of the parent's native objects (a scan worker's initializer calls it)."""
    _GRAMMARS.clear()


def _grammar(path: str) -> _Grammar:
    name = "ts" if path.endswith((".ts", ".mts", ".cts")) and not path.endswith(".d.tsx") else "tsx"
    grammar = _GRAMMARS.get(name)
    if grammar is None:
        grammar = _Grammar(tst.language_typescript() if name == "ts" else tst.language_tsx())
        _GRAMMARS[name] = grammar
    return grammar


class _Columns:
    """UTF-8 byte column -> code point column, computed only for lines that are not ASCII."""

    def __init__(self, data: bytes) -> None:
        self.lines = data.split(b"\n")
        self.cache: dict[int, bool] = {}

    def col(self, row: int, byte_col: int) -> int:
        if row >= len(self.lines):
            return byte_col
        line = self.lines[row]
        ascii_line = self.cache.get(row)
        if ascii_line is None:
            ascii_line = line.isascii()
            self.cache[row] = ascii_line
        if ascii_line:
            return byte_col
        return len(line[:byte_col].decode("utf-8", errors="replace"))


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _string_value(node: Node) -> str | None:
    """The value of a string literal, or of a template literal without substitutions."""
    if node.type == "string":
        return "".join(_text(c) for c in node.named_children if c.type in ("string_fragment", "escape_sequence"))
    if node.type == "template_string":
        if any(c.type == "template_substitution" for c in node.named_children):
            return None
        return _text(node)[1:-1]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        inner = node.named_children[0]
        return _string_value(inner) if inner is not None else None
    return None


class _Collector:
    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.source = data
        self.columns = _Columns(data)
        self.exports: list[Export] = []
        self.imports: list[Import] = []
        self.local_kinds: dict[str, str] = {}
        self.local_nodes: dict[str, Node] = {}  # a local declaration's name: where `export { name }` points
        self.default_names: list[Node] = []  # identifiers exported as the default
        self.documented = 0  # exported declarations carrying a doc comment
        self.imported: dict[str, str] = {}  # local binding -> specifier
        self.imported_names: dict[str, str] = {}  # local binding -> its name in that module (`*`, `default`)
        self.pending_clauses: list[tuple[Node, Node]] = []
        self.outline: list[str] = []
        self.dynamic_unanalyzed = 0
        self.wiring: list[Import] = []

    def point(self, node: Node) -> tuple[int, int]:
        return node.start_point.row, self.columns.col(node.start_point.row, node.start_point.column)

    def end(self, node: Node) -> tuple[int, int]:
        return node.end_point.row, self.columns.col(node.end_point.row, node.end_point.column)

    def export(self, name: str, kind: str, node: Node, source: str | None = None, original: str = "") -> None:
        line, column = self.point(node)
        end_line, end_column = self.end(node)
        if end_line != line:
            end_column = column + len(name)
        self.exports.append(Export(name, kind, line, column, end_column, source,
                                   original if original != name else ""))

    def import_(self, specifier_node: Node, specifier: str, kind: str, names: tuple[str, ...] = ()) -> None:
        line, column = self.point(specifier_node)
        end_line, end_column = self.end(specifier_node)
        self.imports.append(Import(specifier, kind, line, column, end_line, end_column, names))

    # ---- top-level statements

    def statement(self, node: Node) -> None:
        kind = node.type
        if kind == "import_statement":
            self.import_statement(node)
        elif kind == "export_statement":
            self.export_statement(node)
            previous = node.prev_named_sibling
            if previous is not None and previous.type == "comment" and _text(previous).startswith("/**") and \
                    node.child_by_field_name("declaration") is not None:
                self.documented += 1  # a doc comment an API reference is generated from
        elif kind in _DECLARATION_KINDS:
            name = node.child_by_field_name("name")
            if name is not None:
                self.local_kinds[_text(name)] = _DECLARATION_KINDS[kind]
                self.local_nodes.setdefault(_text(name), name)
        elif kind in ("lexical_declaration", "variable_declaration"):
            keyword = _text(node.children[0]) if node.children else "const"
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    name = declarator.child_by_field_name("name")
                    source = self.bound_source(declarator.child_by_field_name("value"))
                    if name is not None and name.type == "identifier":
                        if source is not None:  # `const x = require('./x')`: a binding of another module's
                            self.imported[_text(name)] = source
                        else:
                            self.local_kinds[_text(name)] = keyword if keyword in ("let", "var") else "const"
                            self.local_nodes.setdefault(_text(name), name)
                    elif name is not None and name.type == "object_pattern" and source is not None:
                        for bound in _pattern_names(name):  # `const { a, b } = require('./x')` or `= imported`
                            self.imported[bound] = source
        elif kind == "ambient_declaration":
            for child in node.named_children:
                self.statement(child)
        elif kind == "expression_statement":
            self.commonjs(node)

    def bound_source(self, value: Node | None) -> str | None:
        """The module a declaration's value comes from: `require('./x')` (also `require('./x').y`), or a binding
        imported from one."""
        while value is not None and value.type in ("member_expression", "parenthesized_expression", "await_expression"):
            value = value.child_by_field_name("object") if value.type == "member_expression" else (
                value.named_children[0] if value.named_children else None)
        if value is None:
            return None
        if value.type == "identifier":
            return self.imported.get(_text(value))
        if value.type == "call_expression" and _text(value.child_by_field_name("function")) == "require":
            arguments = value.child_by_field_name("arguments")
            first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
            return _string_value(first) if first is not None else None
        return None

    def import_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            # `import x = require('y')`
            for child in node.named_children:
                if child.type == "import_require_clause":
                    spec = child.child_by_field_name("source")
                    if spec is not None:
                        value = _string_value(spec)
                        if value is not None:
                            self.import_(spec, value, "require")
            return
        value = _string_value(source)
        if value is None:
            return
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        type_only = any(c.type == "type" for c in node.children) or _only_type_specifiers(clause)
        names: list[str] = []
        renamed: list[tuple[str, str]] = []  # (name in the source, local name) of `import { a as b }`
        if clause is not None:
            for child in clause.named_children:
                if child.type == "identifier":
                    names.append(_text(child))
                    renamed.append(("default", _text(child)))
                elif child.type == "namespace_import":
                    names.extend(_text(c) for c in child.named_children if c.type == "identifier")
                    renamed.extend(("*", _text(c)) for c in child.named_children if c.type == "identifier")
                elif child.type == "named_imports":
                    for spec in child.named_children:
                        if spec.type == "import_specifier":
                            alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                            names.append(_text(alias))
                            renamed.append((_text(spec.child_by_field_name("name")), _text(alias)))
        for name in names:
            self.imported[name] = value
        for original, local in renamed:
            self.imported_names[local] = original
        kind = "type" if type_only else ("static" if clause is not None else "side-effect")
        self.import_(source, value, kind, tuple(names))

    def export_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        source_value = _string_value(source) if source is not None else None
        is_default = any(c.type == "default" for c in node.children)
        if source is not None and source_value is not None:
            # `export type { A } from`, `export { type A, type B } from`: erased at run time
            clause = next((c for c in node.named_children if c.type == "export_clause"), None)
            type_only = any(c.type == "type" for c in node.children) or _only_type_specifiers(clause)
            self.import_(source, source_value, "re-export-type" if type_only else "re-export")
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            self.exported_declaration(declaration, is_default)
            return
        for child in node.named_children:
            if child.type == "export_clause":
                if source_value is not None:
                    for spec in child.named_children:
                        alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                        if spec.type == "export_specifier" and alias is not None:  # the grammar requires a name
                            self.export(_text(alias), "re-export", alias, source_value,
                                        _text(spec.child_by_field_name("name")))
                else:
                    self.pending_clauses.append((child, node))
                return
            if child.type == "namespace_export" and source_value is not None:
                alias = next((c for c in child.named_children), None)
                if alias is not None:
                    self.export(_text(alias), "namespace", alias, source_value)
                return
        if source_value is not None and any(c.type == "*" for c in node.children):
            self.export("*", "re-export", source or node, source_value)
            return
        value = node.child_by_field_name("value")
        if is_default or any(c.type == "=" for c in node.children):
            target = value if value is not None else node
            self.export("default", "default", target)
            self.named_default(value)

    def members(self, declaration: Node) -> None:
        """The public member names of an exported class: what one calls on it."""
        body = declaration.child_by_field_name("body")
        for member in body.named_children if body is not None else ():
            if member.type not in _MEMBERS or any(c.type == "accessibility_modifier" and _text(c) in ("private",
                                                                                                   "protected")
                                                  for c in member.children):
                continue
            name = _text(member.child_by_field_name("name"))
            if name and name != "constructor" and name[0] not in "#_[" and len(self.outline) < OUTLINE_LIMIT \
                    and name not in self.outline:
                self.outline.append(name)

    def named_default(self, value: Node | None) -> None:
        """`export default AxiosHeaders` / `module.exports = CodePath` of a local declaration: documents name it
        by its own name, so the module declares that name too (pending until every declaration is known)."""
        if value is not None and value.type == "identifier":
            self.default_names.append(value)

    def exported_declaration(self, declaration: Node, is_default: bool) -> None:
        kind = declaration.type
        if kind in ("class_declaration", "abstract_class_declaration", "class"):
            self.members(declaration)
        if kind in _DECLARATION_KINDS:
            name = declaration.child_by_field_name("name")
            if name is not None:
                self.local_kinds[_text(name)] = _DECLARATION_KINDS[kind]
                self.export(_text(name), _DECLARATION_KINDS[kind], name)
            elif is_default:
                self.export("default", "default", declaration)
            return
        if kind in ("lexical_declaration", "variable_declaration"):
            keyword = _text(declaration.children[0]) if declaration.children else "const"
            kind_name = keyword if keyword in ("let", "var") else "const"
            for declarator in declaration.named_children:
                if declarator.type == "variable_declarator":
                    name = declarator.child_by_field_name("name")
                    if name is not None and name.type == "identifier":
                        self.local_kinds[_text(name)] = kind_name
                        self.export(_text(name), kind_name, name)
            return
        if kind == "ambient_declaration":
            for child in declaration.named_children:
                self.exported_declaration(child, is_default)
            return
        if is_default:
            self.export("default", "default", declaration)

    def commonjs(self, node: Node) -> None:
        """`module.exports = { a, b }`, `module.exports.x = ...` and `exports.x = ...`."""
        expression = node.named_children[0] if node.named_children else None
        if expression is None or expression.type != "assignment_expression":
            return
        left = expression.child_by_field_name("left")
        right = expression.child_by_field_name("right")
        if left is None or left.type != "member_expression":
            return
        target = _text(left)
        if target == "module.exports":
            if right is not None and right.type == "object":
                for pair in right.named_children:
                    key = pair.child_by_field_name("key") if pair.type == "pair" else pair
                    if key is None or key.type not in ("property_identifier", "shorthand_property_identifier"):
                        continue
                    value = pair.child_by_field_name("value") if pair.type == "pair" else key
                    local = _text(value) if value is not None and value.type in (
                        "identifier", "shorthand_property_identifier") else ""
                    if local in self.imported:  # `module.exports = { ESLint }` of a required binding
                        self.export(_text(key), "re-export", key, self.imported[local])
                    else:
                        self.export(_text(key), self.local_kinds.get(local, "const"), self.local_nodes.get(local, key))
            else:
                self.export("default", "default", left)
                self.named_default(right)
        elif target.startswith(("module.exports.", "exports.")):
            prop = left.child_by_field_name("property")
            if prop is not None:
                self.export(_text(prop), "const", prop)

    def finish_defaults(self) -> None:
        named = {e.name for e in self.exports}
        for value in self.default_names:
            local = _text(value)
            node = self.local_nodes.get(local)
            if node is not None and local not in named:
                self.export(local, self.local_kinds.get(local, "binding"), node)
                named.add(local)

    def finish_clauses(self) -> None:
        """`export { a as b }` without `from`: declared here, or a re-export of an imported binding."""
        for clause, _statement in self.pending_clauses:
            for spec in clause.named_children:
                if spec.type != "export_specifier":
                    continue
                local = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias") or local
                if alias is None:  # the grammar requires a name: never taken
                    continue
                local_name = _text(local)
                if local_name in self.imported:
                    self.export(_text(alias), "re-export", alias, self.imported[local_name],
                                self.imported_names.get(local_name, local_name))
                elif _text(alias) == "default":
                    self.export("default", "default", alias)
                else:  # declared in this module: the export is found at the declaration
                    self.export(_text(alias), self.local_kinds.get(local_name, "binding"),
                                self.local_nodes.get(local_name, alias))

    def calls(self, grammar: _Grammar, root: Node) -> None:
        if not _MAY_CALL.search(self.source):
            return
        for _pattern, captures in QueryCursor(grammar.calls).matches(root):
            for name in ("dynamic", "require"):
                for arg in captures.get(name, []):
                    value = _string_value(arg)
                    if value is None:
                        self.dynamic_unanalyzed += 1
                    else:
                        self.import_(arg, value, name)
            for arguments in captures.get("wired", []):
                method = _text(captures["wiring_method"][0])
                for argument in arguments.named_children:
                    self.wired(method, argument)

    def wired(self, method: str, argument: Node) -> None:
        """An argument of a registration call that is an imported binding, or reached from one (`router`,
        `router.routes()`, `plugins.auth`): the module it comes from is wired in here."""
        node: Node | None = argument
        while node is not None and node.type != "identifier":
            if node.type == "member_expression":
                node = node.child_by_field_name("object")
            elif node.type == "call_expression":
                node = node.child_by_field_name("function")
            elif node.type in ("non_null_expression", "parenthesized_expression") and node.named_children:
                node = node.named_children[0]
            else:
                return
        if node is None or node.type != "identifier" or len(self.wiring) >= MAX_WIRING:
            return
        binding = _text(node)
        specifier = self.imported.get(binding)
        if specifier is None:
            return
        line, column = self.point(argument)
        end_line, end_column = self.end(argument)
        self.wiring.append(Import(specifier, "wiring", line, column, end_line, end_column, (method, binding)))


_LONE_CR = regex.compile(rb"\r(?!\n)")


def analyze_typescript(path: str, text: str, data: bytes | None = None) -> ModuleFacts:
    """Facts of one JS/TS module. A syntax error never raises: the tree is partial and `parse_errors` counts."""
    raw = data if data is not None else text.encode("utf-8")
    content_hash = sha256_bytes(raw)
    source = text.removeprefix("\ufeff").encode("utf-8")
    if b"\r" in source:  # a lone CR ends a line for editors, not for tree-sitter's rows (same length: no offset moves)
        source = _LONE_CR.sub(b"\n", source)
    grammar = _grammar(path)
    tree = grammar.parser.parse(source)
    if tree.root_node.has_error:
        source, tree = _repair_member_separators(grammar, source, tree)
    collector = _Collector(path, source)
    root = tree.root_node
    for node in root.named_children:
        if node.type == "ERROR":  # what the parser could not place: the statements it still recognised inside
            for child in node.named_children:
                collector.statement(child)
        else:
            collector.statement(node)
    collector.finish_clauses()
    collector.finish_defaults()
    collector.calls(grammar, root)
    errors = 0
    if root.has_error:
        errors = max(1, sum(1 for n in _error_nodes(root)))
    exports = tuple(sorted(set(collector.exports), key=lambda e: (e.line, e.column, e.name)))
    imports = tuple(sorted(set(collector.imports), key=lambda i: (i.line, i.column, i.specifier)))
    summary, prose, said = _self_description(grammar, root)
    # another module's names: an import statement, and the bindings it (or a `require`) makes
    said += [(node.start_byte, node.end_byte) for node in root.named_children if node.type == "import_statement"]
    code_words = _code_words(source, sorted(said), frozenset(n.encode() for n in collector.imported))
    wiring = tuple(sorted(set(collector.wiring), key=lambda i: (i.line, i.column, i.specifier, i.names)))
    mounts, sidebars = _site_mounts(root) if DOCUSAURUS_CONFIG.search(path) else ((), ())
    return ModuleFacts(path, content_hash, exports, imports, errors, collector.dynamic_unanalyzed,
                       source.count(b"\n") + 1, summary, prose, tuple(collector.outline), generated_marker(text),
                       collector.documented, wiring, text.isascii(), mounts, sidebars, code_words)


# the route a Docusaurus content plugin serves its folder under when its options name none (`docs: {path}`)
_DEFAULT_ROUTE_BASE = {"docs": "docs", "blog": "blog"}
MAX_SITE_MOUNTS = 32


def _site_mounts(root: Node) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(route base, folder as written) of each content folder a Docusaurus configuration serves: an object with
    a string `path` and `routeBasePath` (a plugin instance: `routeBasePath: 'rules'` serves
    `../eslint-plugin/docs/rules` at `/rules`), or `docs: {path}` / `blog: {path}` served at their defaults;
    and (folder as written, sidebar as written) of each such folder whose object names its `sidebarPath`
    (a string, or `require.resolve('./sidebars/rules.js')`)."""
    found: set[tuple[str, str]] = set()
    sidebars: set[tuple[str, str]] = set()
    stack = [root]
    while stack and len(found) < MAX_SITE_MOUNTS:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "object":
            continue
        properties = _properties(node)
        holder = node.parent.child_by_field_name("key") if node.parent is not None and \
            node.parent.type == "pair" else None
        base = _string_property(properties, "routeBasePath")
        if base is None and holder is not None:
            base = _DEFAULT_ROUTE_BASE.get(_text(holder))
        path = _string_property(properties, "path")
        if path is not None and base is not None:
            found.add((base.strip("/"), path))
            sidebar = properties.get("sidebarPath")
            if sidebar is not None and sidebar.type == "call_expression":
                arguments = sidebar.child_by_field_name("arguments")
                sidebar = arguments.named_children[0] if arguments is not None and arguments.named_children \
                    else None
            written = _string_value(sidebar) if sidebar is not None and sidebar.type == "string" else None
            if written:
                sidebars.add((path, written))
        versions = properties.get("versions")
        if base is not None and versions is not None and versions.type == "object":
            # `versions: {'10.x': {path: 'v10'}}`: a version kept in `versioned_docs/version-10.x`, served at
            # `/docs/v10` (at `/docs/10.x` without a path); `current` is the docs folder itself
            plugin = _string_property(properties, "id")
            folder = "versioned_docs" if plugin in (None, "default") else f"{plugin}_versioned_docs"
            for name, value in _properties(versions).items():
                if name and name != "current":
                    written = _string_property(_properties(value), "path")
                    found.add((f"{base.strip('/')}/{(written or name).strip('/')}".strip("/"),
                               f"{folder}/version-{name}"))
    return tuple(sorted(found)), tuple(sorted(sidebars))


def _properties(node: Node) -> dict[str, Node]:
    """An object literal's property values by name (`path: 'x'`, `'10.x': {...}`); the first of a name wins."""
    found: dict[str, Node] = {}
    for pair in node.named_children if node.type == "object" else ():
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        if pair.type == "pair" and key is not None and value is not None:
            found.setdefault((_string_value(key) if key.type == "string" else _text(key)) or "", value)
    return found


def _string_property(properties: dict[str, Node], name: str) -> str | None:
    value = properties.get(name)
    return _string_value(value) if value is not None else None


def _comment_text(raw: str) -> str:
    lines = [line for line in _COMMENT_SYNTAX.sub("", raw).split("\n") if not _DIRECTIVE.match(line)]
    return _JSDOC_TAG.sub("", "\n".join(lines)).strip()


def _self_description(grammar: _Grammar, root: Node) -> tuple[str | None, str, list[tuple[int, int]]]:
    """What a module says about itself, for search: its comments (JSDoc included, tool directives left out)
    and its message strings (literals with a space in them: errors, warnings, log lines, test names), in
    order, each once, up to PROSE_LIMIT characters; the first sentence of a comment that opens the file
    as its summary; and where its comments and message strings are, in order (byte ranges)."""
    found: list[tuple[int, str, Node]] = []
    for name, nodes in QueryCursor(grammar.prose).captures(root).items():
        found.extend((node.start_byte, name, node) for node in nodes)
    found.sort(key=lambda item: item[0])
    said: list[tuple[int, int]] = []
    first_statement = next((c.start_byte for c in root.named_children if c.type != "comment"), None)
    summary: str | None = None
    parts: list[str] = []
    seen: set[str] = set()
    size = 0
    full = False
    for start, name, node in found:
        if full:  # the prose is complete: only where the rest is said (a string without a space is code)
            if name == "comment" or b" " in (node.text or b""):
                said.append((start, node.end_byte))
            continue
        if name == "comment":
            text = _comment_text(_text(node))
            if summary is None and text and (first_statement is None or start < first_statement):
                summary = _SENTENCE_END.split(text, 1)[0].replace("\n", " ").strip()[:SUMMARY_LIMIT] or None
        else:
            parent = node.parent
            if parent is not None and parent.type in ("import_statement", "export_statement", "import_require_clause"):
                continue
            value = _string_value(node)
            text = value.strip() if value and " " in value.strip() and any(c.isalpha() for c in value) else ""
            if not text:  # a name, a path or a key as a literal ('**/.git/**', 'index.html'): part of the code
                continue
        said.append((node.start_byte, node.end_byte))
        if not text or text in seen:
            continue
        seen.add(text)
        parts.append(text)
        size += len(text) + 1
        full = size >= PROSE_LIMIT
    return summary, "\n".join(parts)[:PROSE_LIMIT], said


def _code_words(source: bytes, said: list[tuple[int, int]], imported: frozenset[bytes] = frozenset()) -> str:
    """The names the module's code is written with, each once, in order, up to CODE_WORDS_LIMIT characters: what
    its code is about, for a question about how something is implemented. Read outside its comments and message
    strings and its imports (`said`; a literal without a space is a name, a path or a key, part of the code);
    keywords, names of one or two characters and the names it imports (`imported`: another module declares them,
    and a question naming them is about that module) left out. A regular expression between the ranges the tree
    already found costs a quarter of what visiting every identifier node did."""
    names: dict[bytes, None] = {}
    start = 0
    for said_start, said_end in [*said, (len(source), len(source))]:
        if said_start > start:
            names.update(dict.fromkeys(_NAME.findall(source, start, said_start)))
        start = max(start, said_end)
    out = []
    size = 0
    for name in names:
        if name in _KEYWORDS or name in imported:
            continue
        size += len(name) + 1
        if size > CODE_WORDS_LIMIT + 1:
            break
        out.append(name)
    return b" ".join(out).decode("utf-8", errors="replace")


def _pattern_names(pattern: Node) -> list[str]:
    """The names an object destructuring pattern binds (`{ a, b: c, ...d }` -> a, c, d)."""
    names = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            names.append(_text(child))
        elif child.type == "pair_pattern":
            value = child.child_by_field_name("value")
            if value is not None and value.type == "identifier":
                names.append(_text(value))
        elif child.type == "rest_pattern" and child.named_children:
            names.append(_text(child.named_children[0]))
    return names


def _only_type_specifiers(clause: Node | None) -> bool:
    """`{ type A, type B }`: every named specifier is type-only (an empty or default clause is not)."""
    if clause is None:
        return False
    named = clause if clause.type == "export_clause" else next(
        (c for c in clause.named_children if c.type == "named_imports"), None)
    if named is None or any(c.type != "named_imports" for c in clause.named_children if clause.type != "export_clause"):
        return False
    specifiers = [c for c in named.named_children if c.type in ("import_specifier", "export_specifier")]
    return bool(specifiers) and all(any(t.type == "type" for t in spec.children) for spec in specifiers)


_ENDS_MEMBER = (b")", b"]", b">", b"'", b'"', b"`", b"?")
REPAIR_ROUNDS = 3


def _repair_member_separators(grammar: _Grammar, source: bytes, tree: Any) -> tuple[bytes, Any]:
    """TypeScript ends a member of an interface or type literal at a line break, but the grammar reads a call
    or construct signature that starts the next line (`(a: A): R` or `<T>(a: T): R` after a member written
    without `;`) as the continuation of the previous member's type, and recovers by dropping most of the file
    into an ERROR node. Where an error covers such a line, a `;` is appended to the line before it and the file
    parsed again; the change keeps every line and every column before it where they were, and is kept only
    when it leaves fewer errors."""
    errors = len(_error_nodes(tree.root_node))
    for _ in range(REPAIR_ROUNDS):
        lines = source.split(b"\n")
        rows: set[int] = set()
        for node in _error_nodes(tree.root_node):
            for row in range(max(node.start_point.row, 1), min(node.end_point.row + 2, len(lines))):
                if lines[row].lstrip()[:1] not in (b"(", b"<"):
                    continue
                previous = row - 1  # the code line before it: blank lines and line comments do not count
                while previous > 0 and (not lines[previous].strip() or lines[previous].lstrip().startswith(b"//")):
                    previous -= 1
                before = lines[previous].rstrip()
                if before and b"//" not in before and \
                        (before.endswith(_ENDS_MEMBER) or before[-1:].isalnum() or before.endswith(b"_")):
                    rows.add(previous)
        if not rows:
            break
        for row in rows:
            lines[row] = lines[row].rstrip(b" \t\r") + b";" + lines[row][len(lines[row].rstrip(b" \t\r")):]
        patched = b"\n".join(lines)
        candidate = grammar.parser.parse(patched)
        remaining = len(_error_nodes(candidate.root_node)) if candidate.root_node.has_error else 0
        if remaining >= errors:
            break
        source, tree, errors = patched, candidate, remaining
        if not remaining:
            break
    return source, tree


def _error_nodes(root: Node) -> list[Node]:
    found: list[Node] = []
    stack = [root]
    while stack and len(found) < 100:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(node.children)
    return found
