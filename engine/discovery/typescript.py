"""JS/TS analyzer: one module's exports, imports and what it says about itself, a pure function of its path and text.

tree-sitter with the TypeScript grammar for `.ts/.mts/.cts` and the TSX grammar for `.tsx/.jsx/.js/.mjs/.cjs`
(plain JavaScript often carries JSX, which the TypeScript grammar rejects). tree-sitter columns are UTF-8
byte offsets; they are converted to code points here, once.
"""

from __future__ import annotations

from typing import Any

import regex
import tree_sitter_typescript as tst
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from engine.discovery import versions
from engine.hashing import sha256_bytes
from engine.model import Export, Import, ModuleFacts

ANALYZER_VERSION = versions.TYPESCRIPT
PROSE_LIMIT = 3000  # characters of comments and message strings kept per module
SUMMARY_LIMIT = 200
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
_COMMENT_SYNTAX = regex.compile(r"^\s*(?:/\*+!?|\*+/|\*|//+)\s?|\s*\*+/\s*$", regex.M)
# lines that speak to tools, not to readers
_DIRECTIVE = regex.compile(r"^\s*(?:eslint|@ts-|prettier-ignore|istanbul|c8 |v8 |biome-|#region|#endregion|"
                           r"@vitest-environment|@jest-environment|@license|@refresh|@jsx|webpack)", regex.I)
_JSDOC_TAG = regex.compile(r"(?<![\w@])@[a-zA-Z]+\b")
_SENTENCE_END = regex.compile(r"(?<=[.!?])\s|\n\s*\n")
_CALLS = """
(call_expression function: (import) arguments: (arguments . (_) @dynamic))
(call_expression function: (identifier) @_fn arguments: (arguments . (_) @require) (#eq? @_fn "require"))
"""


class _Grammar:
    def __init__(self, language: Any) -> None:
        self.language = Language(language)
        self.parser = Parser(self.language)
        self.calls = Query(self.language, _CALLS)
        self.prose = Query(self.language, _PROSE)


_GRAMMARS: dict[str, _Grammar] = {}


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
        self.columns = _Columns(data)
        self.exports: list[Export] = []
        self.imports: list[Import] = []
        self.local_kinds: dict[str, str] = {}
        self.imported: dict[str, str] = {}  # local binding -> specifier
        self.pending_clauses: list[tuple[Node, Node]] = []
        self.outline: list[str] = []
        self.dynamic_unanalyzed = 0

    def point(self, node: Node) -> tuple[int, int]:
        return node.start_point.row, self.columns.col(node.start_point.row, node.start_point.column)

    def end(self, node: Node) -> tuple[int, int]:
        return node.end_point.row, self.columns.col(node.end_point.row, node.end_point.column)

    def export(self, name: str, kind: str, node: Node, source: str | None = None) -> None:
        line, column = self.point(node)
        end_line, end_column = self.end(node)
        if end_line != line:
            end_column = column + len(name)
        self.exports.append(Export(name, kind, line, column, end_column, source))

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
        elif kind in _DECLARATION_KINDS:
            name = node.child_by_field_name("name")
            if name is not None:
                self.local_kinds[_text(name)] = _DECLARATION_KINDS[kind]
        elif kind in ("lexical_declaration", "variable_declaration"):
            keyword = _text(node.children[0]) if node.children else "const"
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    name = declarator.child_by_field_name("name")
                    if name is not None and name.type == "identifier":
                        self.local_kinds[_text(name)] = keyword if keyword in ("let", "var") else "const"
        elif kind == "ambient_declaration":
            for child in node.named_children:
                self.statement(child)
        elif kind == "expression_statement":
            self.commonjs(node)

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
        type_only = any(c.type == "type" for c in node.children)
        names: list[str] = []
        if clause is not None:
            for child in clause.named_children:
                if child.type == "identifier":
                    names.append(_text(child))
                elif child.type == "namespace_import":
                    names.extend(_text(c) for c in child.named_children if c.type == "identifier")
                elif child.type == "named_imports":
                    for spec in child.named_children:
                        if spec.type == "import_specifier":
                            alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                            names.append(_text(alias))
        for name in names:
            self.imported[name] = value
        kind = "type" if type_only else ("static" if clause is not None else "side-effect")
        self.import_(source, value, kind, tuple(names))

    def export_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        source_value = _string_value(source) if source is not None else None
        is_default = any(c.type == "default" for c in node.children)
        if source is not None and source_value is not None:
            self.import_(source, source_value, "re-export")
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            self.exported_declaration(declaration, is_default)
            return
        for child in node.named_children:
            if child.type == "export_clause":
                if source_value is not None:
                    for spec in child.named_children:
                        if spec.type == "export_specifier":
                            alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                            self.export(_text(alias), "re-export", alias, source_value)
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
                    if key is not None and key.type in ("property_identifier", "shorthand_property_identifier"):
                        self.export(_text(key), "const", key)
            else:
                self.export("default", "default", left)
        elif target.startswith(("module.exports.", "exports.")):
            prop = left.child_by_field_name("property")
            if prop is not None:
                self.export(_text(prop), "const", prop)

    def finish_clauses(self) -> None:
        """`export { a as b }` without `from`: declared here, or a re-export of an imported binding."""
        for clause, _statement in self.pending_clauses:
            for spec in clause.named_children:
                if spec.type != "export_specifier":
                    continue
                local = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias") or local
                local_name = _text(local)
                if local_name in self.imported:
                    self.export(_text(alias), "re-export", alias, self.imported[local_name])
                elif _text(alias) == "default":
                    self.export("default", "default", alias)
                else:
                    self.export(_text(alias), self.local_kinds.get(local_name, "binding"), alias)

    def calls(self, grammar: _Grammar, root: Node) -> None:
        for _pattern, captures in QueryCursor(grammar.calls).matches(root):
            for name in ("dynamic", "require"):
                for arg in captures.get(name, []):
                    value = _string_value(arg)
                    if value is None:
                        self.dynamic_unanalyzed += 1
                    else:
                        self.import_(arg, value, name)


def analyze_typescript(path: str, text: str, data: bytes | None = None) -> ModuleFacts:
    """Facts of one JS/TS module. A syntax error never raises: the tree is partial and `parse_errors` counts."""
    raw = data if data is not None else text.encode("utf-8")
    content_hash = sha256_bytes(raw)
    source = text.removeprefix("\ufeff").encode("utf-8")
    grammar = _grammar(path)
    tree = grammar.parser.parse(source)
    collector = _Collector(path, source)
    root = tree.root_node
    for node in root.named_children:
        collector.statement(node)
    collector.finish_clauses()
    collector.calls(grammar, root)
    errors = 0
    if root.has_error:
        errors = max(1, sum(1 for n in _error_nodes(root)))
    exports = tuple(sorted(set(collector.exports), key=lambda e: (e.line, e.column, e.name)))
    imports = tuple(sorted(set(collector.imports), key=lambda i: (i.line, i.column, i.specifier)))
    summary, prose = _self_description(grammar, root)
    return ModuleFacts(path, content_hash, exports, imports, errors, collector.dynamic_unanalyzed,
                       source.count(b"\n") + 1, summary, prose, tuple(collector.outline))


def _comment_text(raw: str) -> str:
    lines = [line for line in _COMMENT_SYNTAX.sub("", raw).split("\n") if not _DIRECTIVE.match(line)]
    return _JSDOC_TAG.sub("", "\n".join(lines)).strip()


def _self_description(grammar: _Grammar, root: Node) -> tuple[str | None, str]:
    """What a module says about itself, for search: its comments (JSDoc included, tool directives left out)
    and its message strings (literals with a space in them: errors, warnings, log lines, test names), in
    order, each once, up to PROSE_LIMIT characters; and the first sentence of a comment that opens the file
    as its summary."""
    found = []
    for name, nodes in QueryCursor(grammar.prose).captures(root).items():
        found.extend((node.start_byte, name, node) for node in nodes)
    found.sort(key=lambda item: item[0])
    first_statement = next((c.start_byte for c in root.named_children if c.type != "comment"), None)
    summary: str | None = None
    parts: list[str] = []
    seen: set[str] = set()
    size = 0
    for start, name, node in found:
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
        if not text or text in seen:
            continue
        seen.add(text)
        parts.append(text)
        size += len(text) + 1
        if size >= PROSE_LIMIT:
            break
    return summary, "\n".join(parts)[:PROSE_LIMIT]


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
