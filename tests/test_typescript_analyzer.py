"""The JS/TS analyzer on the acme fixture's modules: every export and import form, with positions."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES
from docbridge.engine.discovery.typescript import analyze_typescript

ACME = FIXTURES / "acme"


def facts(path: str):  # type: ignore[no-untyped-def]
    return analyze_typescript(path, (ACME / path).read_text(encoding="utf-8"))


def exports(path: str) -> list[tuple[str, str, int, str | None]]:
    return [(e.name, e.kind, e.line, e.source) for e in facts(path).exports]


def test_barrel_reexports_every_form() -> None:
    # billing/index.ts: `export { a, b } from`, `export type { ... } from`, `export * from`, `export * as ns from`
    assert exports("src/billing/index.ts") == [
        ("createInvoice", "re-export", 2, "./invoice.js"),
        ("formatInvoiceNumber", "re-export", 2, "./invoice.js"),
        ("Invoice", "re-export", 3, "./invoice.js"),
        ("InvoiceInput", "re-export", 3, "./invoice.js"),
        ("InvoiceLine", "re-export", 3, "./invoice.js"),
        ("*", "re-export", 4, "./tax.js"),
        ("payments", "namespace", 5, "./payments.js"),
    ]
    imports = [(i.specifier, i.kind, i.line) for i in facts("src/billing/index.ts").imports]
    # `export type { ... } from` is erased at run time: a type-only re-export (no runtime edge, no import cycle)
    assert imports == [("./invoice.js", "re-export", 2), ("./invoice.js", "re-export-type", 3),
                       ("./tax.js", "re-export", 4), ("./payments.js", "re-export", 5)]


def test_declaration_forms() -> None:
    def find(path: str, name: str) -> tuple[str, int]:
        for export in facts(path).exports:
            if export.name == name:
                return export.kind, export.line
        raise AssertionError(f"{name} not exported by {path}")

    assert find("src/billing/tax.ts", "calculateTax") == ("function", 20)  # export function
    assert find("src/billing/tax.ts", "TaxRates") == ("namespace", 2)  # export namespace
    assert find("src/billing/tax.ts", "TaxCategory") == ("type", 0)  # export type X =
    assert find("src/billing/payments.ts", "createPaymentIntent") == ("function", 20)  # export async function
    assert find("src/storage/migrations.ts", "pendingMigrations") == ("function", 42)  # export function*
    assert find("src/storage/cache.ts", "MemoryCache") == ("class", 9)  # export class
    assert find("src/api/errors.ts", "HttpError") == ("class", 0)  # export abstract class
    assert find("src/catalog/pricing.ts", "DEFAULT_CURRENCY") == ("const", 2)  # two declarators
    assert find("src/catalog/pricing.ts", "MAX_DISCOUNT_PERCENT") == ("const", 2)
    assert find("src/util/logger.ts", "logLevel") == ("let", 7)  # export let
    assert find("src/util/logger.ts", "__SERVICE_VERSION__") == ("const", 5)  # export declare const
    assert find("src/util/ids.ts", "ID_ALPHABET") == ("var", 4)  # export var
    assert find("src/catalog/products.ts", "Product") == ("interface", 0)  # export interface
    assert find("src/orders/status.ts", "OrderStatus") == ("type", 0)
    assert find("src/auth/permissions.ts", "Permission") == ("enum", 0)  # export enum
    # export default function Named / class Named: the name, not `default`
    assert find("src/notifications/EmailLayout.tsx", "EmailLayout") == ("function", 8)
    assert find("src/catalog/inventory.ts", "InventoryLedger") == ("class", 17)
    assert find("src/notifications/sms.ts", "default") == ("default", 22)  # export default { ... }
    # `export { sign as signAccessToken }` (line 31) is found where `sign` is declared (line 15): where a reader
    # of the mention wants to land
    assert find("src/auth/tokens.ts", "signAccessToken") == ("function", 14)


def test_local_export_clause_of_an_imported_binding_is_a_reexport() -> None:
    names = {(e.name, e.kind, e.source) for e in facts("src/api/index.ts").exports}
    assert ("buildServer", "re-export", "./server.js") in names
    assert ("ServerOptions", "re-export", "./server.js") in names
    assert ("errors", "namespace", "./errors.js") in names
    assert all(not e.declared for e in facts("src/api/index.ts").exports)


def test_import_forms() -> None:
    def kinds(path: str) -> list[tuple[str, str, int]]:
        return [(i.specifier, i.kind, i.line) for i in facts(path).imports]

    assert kinds("src/index.ts")[:6] == [
        ("./util/shutdown.js", "side-effect", 0), ("./api/index.js", "static", 1),
        ("./catalog/products.js", "type", 2), ("./orders/checkout.js", "static", 3),
        ("./storage/db.js", "static", 4), ("./util/logger.js", "static", 5)]
    assert ("./storage/migrations.js", "dynamic", 11) in kinds("src/index.ts")
    assert kinds("src/storage/legacy-config.cjs") == [("./pool-defaults.cjs", "require", 6)]
    assert ("zod", "static", 1) in kinds("src/api/routes.ts")
    session = facts("src/auth/session.ts").imports[0]
    assert session.names == ("sign", "verifyToken")  # `import { a as b }` binds the alias
    invoice = facts("src/billing/invoice.ts").imports[0]
    assert (invoice.specifier, invoice.names) == ("./tax.js", ("tax",))  # import * as tax


def test_commonjs_module_exports() -> None:
    assert exports("src/storage/legacy-config.cjs") == [("connectionString", "const", 9, None),
                                                        ("pool", "const", 10, None)]


def test_columns_are_code_points_not_utf8_bytes(tmp_path: Path) -> None:
    source = "const s = 'ação 日本'; export const valor = 1; import x from './é.js';\n"
    result = analyze_typescript("src/a.ts", source)
    (export,) = result.exports
    assert source[export.column:export.end_column] == "valor"
    (imp,) = result.imports
    assert source[imp.column:imp.end_column] == "'./é.js'"


def test_syntax_errors_are_counted_not_raised() -> None:
    source = "export const ok = 1;\nexport function broken( {\n  return [;\n}\n"
    result = analyze_typescript("src/broken.ts", source)
    assert result.parse_errors >= 1
    assert "ok" in {e.name for e in result.exports}


def test_jsx_in_tsx_and_js_files_parses_cleanly() -> None:
    tsx = facts("src/notifications/EmailLayout.tsx")
    assert tsx.parse_errors == 0
    js = analyze_typescript("src/App.js", "import React from 'react';\nexport const App = () => <div>hi</div>;\n")
    assert js.parse_errors == 0 and [e.name for e in js.exports] == ["App"]


def test_what_a_module_says_about_itself() -> None:
    text = ("// eslint-disable-next-line no-console\n/**\n * Decides when entries expire. Runs on a timer.\n */\n"
            "import { x } from './x'\n"
            "export class Cache {\n  /** @param key the key */\n  get(key: string) { return x }\n"
            "  private evict() {}\n  #secret = 1\n  size = 0\n}\n"
            "export function load() {\n  // retry once before giving up\n"
            "  throw new Error('The cache could not be loaded')\n  return 'a' + 'ok'\n}\n")
    module = analyze_typescript("src/cache.ts", text)
    assert module.summary == "Decides when entries expire."
    assert module.outline == ("get", "size")  # public members of exported classes, no private ones
    lines = module.prose.split("\n")
    assert "Decides when entries expire. Runs on a timer." in lines
    assert "retry once before giving up" in lines and "The cache could not be loaded" in lines
    assert "key the key" in lines  # a JSDoc tag's text stays, the tag goes
    assert not any("eslint" in line or "./x" in line or line == "ok" for line in lines)
    # a file without a leading comment has no summary; prose is bounded
    long = "export const a = 1\n" + "".join(f"// note number {i} about the cache\n" for i in range(2000))
    module = analyze_typescript("src/long.ts", long)
    assert module.summary is None and 0 < len(module.prose) <= 3000


def test_a_module_keeps_the_names_its_code_is_written_with() -> None:
    words = facts("src/storage/cache.ts").code_words.split(" ")
    # the names of the code, each once, in order: types, members, parameters, locals, calls
    assert words[:3] == ["CacheEntry", "value", "expiresAt"]
    assert {"MemoryCache", "entries", "defaultTtlMs", "now", "Date", "key", "entry", "sweep", "removed",
            "ttlMs"} <= set(words)
    assert len(words) == len(set(words))
    # keywords and one- or two-letter names are not names of the code; the comments are its prose, not its code
    assert not {"export", "interface", "class", "private", "readonly", "const", "return", "for", "of", "let",
                "new", "this", "T"} & set(words)
    assert not {"replica", "reload", "stale", "Drop", "expired"} & set(words)
    text = ("import { fetchAll } from './remote'\nconst { readLater } = require('./later')\n"
            "// retry once before giving up\nconst ignored = ['**/.git/**', 'index.html']\n"
            "export function load() { fetchAll(readLater); return fail('The cache could not be loaded') }\n")
    words = analyze_typescript("src/load.ts", text).code_words.split(" ")
    # a literal without a space is a name, a path or a key; a message is prose
    assert {"ignored", "git", "index", "html", "load", "fail"} <= set(words)
    assert not {"retry", "once", "giving", "cache", "loaded"} & set(words)
    # what it imports is another module's: neither the import nor the names it binds, wherever they are used
    assert not {"fetchAll", "remote", "readLater"} & set(words)
    # bounded: a generated table of names keeps its first names up to the limit
    many = "".join(f"export const name{i} = {i}\n" for i in range(5000))
    assert 0 < len(analyze_typescript("src/table.ts", many).code_words) <= 6000


def test_a_module_says_whether_its_text_is_ascii_throughout() -> None:
    assert analyze_typescript("src/a.ts", "export const a = 1;\n").ascii
    assert not analyze_typescript("src/b.ts", "export const café = 'olá';\n").ascii
