"""graphProximity: what the strongest lexical hits are linked to. Beside the entries one or two hops from a
strong hit, a strong hit that two or more other strong hits link to or import is what they build on (the
guide the pages about a topic point at, the module the matching modules import) and earns one hop's credit."""

from __future__ import annotations

import json

import pytest
from conftest import make_repo, result_by_id, scanned_retriever
from docbridge.engine.retrieval import rank
from docbridge.engine.retrieval.rank import Retriever

PAGE = "# {title}\n\nWidgets are rendered in frames. {text}\n"
FILES: dict[str, str] = {
    "package.json": json.dumps({"name": "proximity", "private": True}),
    # two pages about widgets link to the widget guide; a page as much about widgets is linked by nobody
    "docs/widgets/layout.md": PAGE.format(title="Widget layout", text="See [the guide](../widget-guide.md)."),
    "docs/widgets/styling.md": PAGE.format(title="Widget styling", text="See [the guide](../widget-guide.md)."),
    "docs/widget-guide.md": PAGE.format(title="Widget guide", text="Frames hold widgets."),
    "docs/widget-notes.md": PAGE.format(title="Widget notes", text="Frames hold widgets."),
    # one page links to the gadget guide: one strong match is not a convergence
    "docs/gadgets/layout.md": "# Gadget layout\n\nGadgets sit in trays. See [the guide](../gadget-guide.md).\n",
    "docs/gadgets/styling.md": "# Gadget styling\n\nGadgets sit in trays.\n",
    "docs/gadget-guide.md": "# Gadget guide\n\nTrays hold gadgets.\n",
    "docs/gadget-notes.md": "# Gadget notes\n\nTrays hold gadgets.\n",
    # two modules about parsing import the tokenizer; another module about parsing is imported by nobody
    "src/parse/expression.ts": "import { tokenize } from './tokens'\n/** Parses an expression. */\n"
                               "export function parseExpression() { return tokenize() }\n",
    "src/parse/statement.ts": "import { tokenize } from './tokens'\n/** Parses a statement. */\n"
                              "export function parseStatement() { return tokenize() }\n",
    "src/parse/tokens.ts": "/** Splits parse input into tokens. */\nexport function tokenize() { return [] }\n",
    "src/parse/spans.ts": "/** Keeps parse spans for tokens. */\nexport function spanOf() { return [] }\n",
    # two tests about lexing import the lexer; two modules about lexing import the cursor
    "test/lex/lex-numbers.test.ts": "import { lex } from '../../src/lex/lexer'\n/** Lex numbers. */\n"
                                    "export function lexNumbersTest() { return lex() }\n",
    "test/lex/lex-strings.test.ts": "import { lex } from '../../src/lex/lexer'\n/** Lex strings. */\n"
                                    "export function lexStringsTest() { return lex() }\n",
    "src/lex/lexer.ts": "/** Lex input. */\nexport function lex() { return [] }\n",
    "src/lex/cursor.ts": "/** A lex cursor. */\nexport function cursor() { return 0 }\n",
    "src/lex/lex-numbers.ts": "import { cursor } from './cursor'\n/** Lex numbers. */\n"
                              "export function lexNumbers() { return cursor() }\n",
    "src/lex/lex-strings.ts": "import { cursor } from './cursor'\n/** Lex strings. */\n"
                              "export function lexStrings() { return cursor() }\n",
    # a guide about sketching links to two pages that say a little less about it
    "docs/sketch/guide.md": "# Guide\n\nSketch shapes with a pen: sketch. See [notes](notes.md), [more](more.md).\n",
    "docs/sketch/notes.md": "# Notes\n\nSketch shapes with a pen, then ink them.\n",
    "docs/sketch/more.md": "# More\n\nSketch shapes with a pen, then colour them.\n",
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    return scanned_retriever(make_repo(tmp_path_factory.mktemp("proximity"), FILES))  # type: ignore[no-any-return]


by_id = result_by_id


def converging(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [r for r in result.reasons if r.startswith("graphProximity") and "strong matches" in r]


def test_a_page_two_strong_matches_link_to_earns_proximity(retriever: Retriever) -> None:
    results = retriever.search("widget frames")
    guide = by_id(results, "document:docs/widget-guide.md")
    notes = by_id(results, "document:docs/widget-notes.md")
    # the same words, the same length: only the links tell them apart
    assert guide.components["lexical"] == pytest.approx(notes.components["lexical"])
    assert guide.components["graphProximity"] > 0
    assert converging(guide) == [f"graphProximity {guide.components['graphProximity']:g}: "
                                 "2 strong matches link to or import it"]
    assert notes.components["graphProximity"] == 0 and not converging(notes)
    assert results.index(guide) < results.index(notes)
    # the pages that link are not lifted by the page they link to
    assert not converging(by_id(results, "document:docs/widgets/layout.md"))


def test_one_strong_match_linking_is_not_a_convergence(retriever: Retriever) -> None:
    results = retriever.search("gadget trays")
    guide = by_id(results, "document:docs/gadget-guide.md")
    assert not converging(guide)
    assert guide.components["graphProximity"] == 0


def test_a_module_two_strong_matches_import_earns_proximity(retriever: Retriever) -> None:
    results = retriever.search("parse tokens")
    tokens = by_id(results, "module:src/parse/tokens.ts")
    assert converging(tokens) and tokens.components["graphProximity"] > 0
    assert not converging(by_id(results, "module:src/parse/spans.ts"))


def test_proximity_credit_is_scaled_by_the_second_strongest_that_reaches_it(retriever: Retriever) -> None:
    hits = retriever.lexical.search([t for t in retriever.search("widget frames")[0].terms], 10)
    best = max(h.bm25 for h in hits)
    share = {retriever.entries[h.entry].id: h.bm25 / best for h in hits}
    linking = sorted((share["document:docs/widgets/layout.md"], share["document:docs/widgets/styling.md"]))
    guide = by_id(retriever.search("widget frames"), "document:docs/widget-guide.md")
    assert guide.components["graphProximity"] == pytest.approx(30 * linking[0], abs=1e-5)


def test_tests_that_import_a_module_are_no_convergence(retriever: Retriever) -> None:
    results = retriever.search("lex")
    assert converging(by_id(results, "module:src/lex/cursor.ts"))
    assert not converging(by_id(results, "module:src/lex/lexer.ts"))


def test_proximity_does_not_lift_an_entry_past_the_strong_hit_it_comes_from(
        retriever: Retriever, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank, "ANCHORS", 1)  # one strong hit lends: the page with the most of the query
    results = retriever.search("sketching shapes with a pen")
    lender = results[0]
    assert lender.entry.id == "document:docs/sketch/more.md"
    # the guide it links from would pass it with a full hop of proximity; it is held just below it
    guide = by_id(results, "document:docs/sketch/guide.md")
    base = guide.score - guide.components["graphProximity"]
    assert base + 30 > lender.score > guide.score == pytest.approx(lender.score - rank.LENT_MARGIN)
    assert f"graphProximity {guide.components['graphProximity']:g}: not past document:docs/sketch/more.md, " \
           "the strong match it comes from" in guide.reasons
