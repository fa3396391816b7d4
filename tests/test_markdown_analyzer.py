"""The Markdown analyzer, through its public function: one document's facts with exact positions."""

from __future__ import annotations

import hashlib

from docbridge.engine.discovery.markdown import analyze_markdown, slugify

DOC = """\
---
title: Billing guide
audience: Agent
tier: 1
covers:
  - src/billing
  - area:src/orders
---
# Billing `core` & more

Intro paragraph with `src/billing/tax.ts` and [the guide](./guide.md#set-up) and [[wiki|Wiki page]].

| Symbol | Where |
|--------|-------|
| `total` | `total` [x](y.md) |

- [x] done with `createInvoice()`
> quoted `q1`
lazy `q2`

## Setup
## Setup

```ts
const a = `src/in/fence.ts`;
```

    indented `src/in/indent.ts`

Reference [text][r] and ![logo](./logo.png) and <https://example.test/x>.

[r]: ./ref.md
"""


def _slice(text: str, line: int, start: int, end: int) -> str:
    return text.split("\n")[line][start:end]


def test_headings_get_github_slugs_deduplicated_in_order() -> None:
    facts = analyze_markdown("docs/billing.md", DOC)
    assert [(h.level, h.text, h.slug, h.line) for h in facts.headings] == [
        (1, "Billing core & more", "billing-core--more", 8),
        (2, "Setup", "setup", 20),
        (2, "Setup", "setup-1", 21),
    ]
    assert facts.title == "Billing guide"  # frontmatter title wins over the first heading


def test_slugify_keeps_letters_of_every_script_and_drops_punctuation() -> None:
    assert slugify("Refunds & credit notes") == "refunds--credit-notes"
    assert slugify("Configuração do ambiente") == "configuração-do-ambiente"
    assert slugify("認証と認可") == "認証と認可"
    assert slugify("Why? (really!)") == "why-really"
    assert slugify("snake_case stays") == "snake_case-stays"


def test_links_of_every_form_with_exact_positions() -> None:
    facts = analyze_markdown("docs/billing.md", DOC)
    found = [(link.kind, link.target, link.text, link.line, link.column, link.end_column) for link in facts.links]
    assert found == [
        ("inline", "./guide.md#set-up", "the guide", 10, 46, 76),
        ("wiki", "wiki", "Wiki page", 10, 81, 99),
        ("inline", "y.md", "x", 14, 20, 29),
        ("reference", "./ref.md", "text", 29, 10, 19),
        ("image", "./logo.png", "logo", 29, 24, 43),
        ("autolink", "https://example.test/x", "https://example.test/x", 29, 48, 72),
    ]
    for link in facts.links:
        source = _slice(DOC, link.line, link.column, link.end_column)
        assert source.startswith(("[", "!", "<")), source


def test_inline_code_positions_in_paragraphs_tables_lists_and_quotes() -> None:
    facts = analyze_markdown("docs/billing.md", DOC)
    spans = [(s.text, s.line, s.column, s.end_column) for s in facts.code_spans]
    assert spans == [
        ("core", 8, 10, 16),
        ("src/billing/tax.ts", 10, 21, 41),
        ("total", 14, 2, 9),
        ("total", 14, 12, 19),
        ("createInvoice()", 16, 16, 33),
        ("q1", 17, 9, 13),
        ("q2", 18, 5, 9),
    ]
    for span in facts.code_spans:
        assert _slice(DOC, span.line, span.column, span.end_column) == f"`{span.text}`"


def test_fenced_and_indented_code_yield_no_mentions() -> None:
    facts = analyze_markdown("docs/billing.md", DOC)
    texts = {s.text for s in facts.code_spans}
    assert "src/in/fence.ts" not in texts and "src/in/indent.ts" not in texts


def test_frontmatter_subset_and_covers_declarations_with_lines() -> None:
    facts = analyze_markdown("docs/billing.md", DOC)
    assert dict(facts.frontmatter) == {"title": "Billing guide", "audience": "Agent", "tier": "1"}
    assert [(d.kind, d.ref, d.line, d.column) for d in facts.declarations] == [
        ("covers", "src/billing", 5, 4), ("covers", "area:src/orders", 6, 4)]
    assert facts.issues == ()


def test_malformed_yaml_is_an_issue_at_the_line_where_the_construct_starts() -> None:
    text = "---\ntitle: Deploy\ntags: [deploy, operations\nowner: ops\n---\n# Deploy\n\nBody.\n"
    facts = analyze_markdown("docs/deploy.md", text)
    # the original's distinct code (check reports it as DOCBRIDGE_BLOCK_INVALID with data.declarationCode)
    assert [(i.code, i.line) for i in facts.issues] == [("DOCBRIDGE_FRONTMATTER_MALFORMED", 2)]
    assert "flow sequence" in facts.issues[0].message
    assert facts.frontmatter == () and facts.declarations == ()  # never a half-parsed guess
    assert [h.text for h in facts.headings] == ["Deploy"]


def test_frontmatter_that_fails_validation_names_the_key_and_its_line() -> None:
    facts = analyze_markdown("d.md", "---\ntitle: ok\ncovers: 5\n---\n# T\n")
    assert [(i.line, "covers" in i.message) for i in facts.issues] == [(2, True)]
    facts = analyze_markdown("d.md", "---\n- a\n- b\n---\n# T\n")
    assert facts.issues[0].message == "Frontmatter must be a YAML mapping of keys to values."
    facts = analyze_markdown("d.md", "---\ndocbridge:\n  covers: [src/a]\n  colour: red\n---\n# T\n")
    assert [(i.line, "docbridge.colour" in i.message) for i in facts.issues] == [(3, True)]


def _h(lines: list[str]) -> str:
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()[:16]


def test_generated_regions_record_and_recompute_their_hash() -> None:
    inner = ["| a | `src/gen.ts` |", "see [generated](gen.md)"]
    good = _h(inner)
    text = "\n".join(["# Doc", "", f"<!-- doc-bridge:generated hash={good} -->", *inner,
                      "<!-- /doc-bridge:generated -->", "", "<!-- doc-bridge:generated hash=0000000000000000 -->",
                      "edited by hand", "<!-- /doc-bridge:generated -->", "", "after `src/after.ts`", ""])
    facts = analyze_markdown("docs/x.md", text)
    assert [(r.start_line, r.end_line, r.recorded_hash, r.computed_hash, r.edited) for r in facts.regions] == [
        (2, 5, good, good, False), (7, 9, "0000000000000000", _h(["edited by hand"]), True)]
    # nothing inside a generated region is evidence
    assert [s.text for s in facts.code_spans] == ["src/after.ts"]
    assert facts.links == ()


def test_region_hash_ignores_crlf() -> None:
    lf = "<!-- doc-bridge:generated hash=x -->\na\nb\n<!-- /doc-bridge:generated -->\n"
    crlf = lf.replace("\n", "\r\n")
    assert analyze_markdown("a.md", lf).regions[0].computed_hash == _h(["a", "b"])
    assert analyze_markdown("a.md", crlf).regions[0].computed_hash == _h(["a", "b"])


def test_markers_inside_fenced_code_are_not_regions() -> None:
    text = "# Doc\n\n```md\n<!-- doc-bridge:generated hash=abc -->\n```\n\nText `src/a.ts`.\n"
    facts = analyze_markdown("a.md", text)
    assert facts.regions == ()
    assert [s.text for s in facts.code_spans] == ["src/a.ts"]


def test_summary_skips_lone_links_and_cuts_at_a_sentence() -> None:
    text = "# T\n\n[Back to index](README.md)\n\n" + "First sentence is here. " * 30 + "\n"
    facts = analyze_markdown("a.md", text)
    assert facts.summary is not None
    assert facts.summary.startswith("First sentence is here.") and facts.summary.endswith(".")
    assert len(facts.summary) <= 400


def test_language_hint_for_portuguese_and_cjk() -> None:
    pt = "# Guia\n\nEste documento explica como a reconciliação funciona quando não há uma fatura para o pedido.\n"
    assert analyze_markdown("a.md", pt).language == "pt"
    assert analyze_markdown("b.md", "# 認証\n\n認証と認可の境界を確認する。トークンは短命です。\n").language == "cjk"
    assert analyze_markdown("c.md", "# Guide\n\nThis is how the service handles the orders.\n").language == "en"


def test_pathological_input_does_not_raise() -> None:
    for text in ["[" * 5000, "`" * 3000, "<!-- doc-bridge:generated -->\n" * 50, "---\n" * 100, "\x00\x01", ""]:
        facts = analyze_markdown("p.md", text)
        assert facts.path == "p.md"


def test_a_page_variant_keeps_the_page_it_names() -> None:
    facts = analyze_markdown("docs/vue/caching.md", "---\ntitle: Caching\nref: docs/react/caching.md\n"
                                                    "replace: { 'react': 'vue' }\n---\n# Caching\n")
    assert facts.fm("ref") == "docs/react/caching.md" and not facts.issues
    # a site generator's own shapes of these keys are not errors
    odd = analyze_markdown("docs/a.md", "---\ncanonical: [a, b]\nref: {to: x}\n---\n# A\n")
    assert odd.fm("ref") is None and odd.fm("canonical") is None and not odd.issues


def test_an_explicit_heading_id_is_the_anchor_and_not_part_of_the_text() -> None:
    # `{#id}` after a heading is the anchor in VitePress, MkDocs (attr_list), Docusaurus and Pandoc
    text = "# Guide {#top}\n\n## Config options {#config}\n\n## Config options\n\n## Not an id {# spaced}\n"
    facts = analyze_markdown("docs/guide.md", text)
    assert [(h.text, h.slug) for h in facts.headings] == [
        ("Guide", "top"),
        ("Config options", "config"),
        ("Config options", "config-options"),
        ("Not an id {# spaced}", "not-an-id--spaced"),
    ]
    assert facts.title == "Guide"


def test_the_inline_memo_changes_no_fact() -> None:
    # every fixture document and a few edits of each, analysed with the memo warm, equal the same analysis by a
    # parser without it; a link reference definition that changes re-reads the paragraphs that use it
    import random
    from pathlib import Path

    import docbridge.engine.discovery.markdown as markdown
    from markdown_it.rules_core.inline import inline as plain_inline

    memo = markdown.parser()
    plain = markdown._build_parser()
    plain.core.ruler.at("inline", plain_inline)
    extra = ("See [ref] and [^note], ^[an inline note] and `src/a.ts`.\n\n[ref]: ./a.md\n\n[^note]: Text.\n",
             "See [ref] and [^note], ^[an inline note] and `src/a.ts`.\n\n[ref]: ./b.md#part\n\n[^note]: Text.\n")
    texts = [p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parent.parent.joinpath("fixtures")
                                                           .rglob("*.md"))] + list(extra)
    rng = random.Random(3)
    try:
        for text in texts:
            lines = text.split("\n")
            edits = [text]
            for _ in range(3):
                at = rng.randrange(len(lines))
                lines = [*lines[:at], lines[at] + " `src/x.ts` [y](./y.md)", *lines[at + 1:]]
                edits.append("\n".join(lines))
            for edited in edits:
                markdown._PARSER = memo
                warm = markdown.analyze_markdown("docs/x.md", edited)
                markdown._PARSER = plain
                assert warm == markdown.analyze_markdown("docs/x.md", edited)
    finally:
        markdown._PARSER = memo
    first, second = (analyze_markdown("docs/x.md", text) for text in extra)
    assert [link.target for link in first.links if link.kind == "reference"] == ["./a.md"]
    assert [link.target for link in second.links if link.kind == "reference"] == ["./b.md#part"]


def test_a_document_says_whether_its_text_is_ascii_throughout() -> None:
    # an editor's columns equal the engine's on such a document: the language server converts them without
    # reading it again
    assert analyze_markdown("docs/a.md", "# Title\n\nSee [x](./y.md).\n").ascii
    assert not analyze_markdown("docs/b.md", "# Título\n\nSee [x](./y.md).\n").ascii
    assert not analyze_markdown("docs/c.md", "\ufeff# Title\n").ascii  # a byte-order mark is a character too
