"""The lexicon: one tokenizer for documents and queries (cases from the original's test suite, §21)."""

from __future__ import annotations

import pytest
from docbridge.engine.base.lexicon import LEXICON_VERSION, expand, fold, is_stopword, singularize, tokens


def test_stopword_only_text_has_no_tokens() -> None:
    assert tokens("and") == []
    assert tokens("and the of that") == []
    assert tokens("de para com que") == []
    assert tokens("search and") == tokens("search")
    assert is_stopword("não") and is_stopword("NÃO") and not is_stopword("reconciliation")


def test_identifiers_are_kept_whole_and_split() -> None:
    assert expand("reconcileKnowledge") == ("reconcileknowledge", "reconcile", "knowledge")
    assert expand("HTMLParser") == ("htmlparser", "html", "parser")
    assert expand("snake_case_name") == ("snake_case_name", "snake", "case", "name")
    assert expand("kebab-case") == ("kebab-case", "kebab", "case")
    assert expand("@acme/orders-api") == ("@acme/orders-api", "acme", "orders", "api")
    # whole tokens survive the tokenizer; parts are stemmed like words
    assert tokens("reconcileKnowledge")[0] == "reconcileknowledge"
    assert {"reconcil", "knowledg"} <= set(tokens("reconcileKnowledge"))


def test_paths_keep_their_segments_and_dots_split() -> None:
    assert expand("src/mcp/server") == ("src/mcp/server", "src", "mcp", "server")
    assert tokens("src/mcp/server.ts") == ["src/mcp/server", "src", "mcp", "server", "ts"]
    assert tokens("docs/guias") == ["docs/guia", "doc", "guia"]  # path tokens collapse plurals too


def test_accents_fold() -> None:
    assert fold("reconciliação") == "reconciliacao"
    assert tokens("Reconciliação") == tokens("reconciliacao")
    assert fold("が") == "か"  # the Diacritic property, not only combining marks


def test_plurals_collapse_and_status_stays() -> None:
    assert [singularize(w) for w in ("schemas", "dependencies", "classes", "status", "boxes", "bus")] == [
        "schema", "dependency", "class", "status", "box", "bus"]
    assert tokens("schema") == tokens("schemas")
    assert tokens("dependency") == tokens("dependencies")
    assert tokens("class") == tokens("classes")
    assert tokens("status") == ["status"]
    assert tokens("others") == ["other"]  # the plural of a stopword survives, as in the original


def test_english_words_are_stemmed_alike() -> None:
    assert tokens("calculated") == tokens("calculates") == tokens("calculate")
    assert tokens("persisted") == tokens("persist")
    assert tokens("transitions") == tokens("transition")


def test_portuguese_cognates_meet_their_english_words() -> None:
    assert tokens("configuração") == tokens("configuration")
    assert tokens("sessões") == tokens("sessions")
    assert tokens("variáveis") == tokens("variables")
    assert tokens("validação") == tokens("validation")
    # -eção and -unção keep their c in English
    assert tokens("seleção") == tokens("selection") and tokens("proteções") == tokens("protections")
    assert tokens("função") == tokens("function") and tokens("injeção") == tokens("injection")


def test_cjk_by_character_and_bigram() -> None:
    assert "認証" in tokens("認証")
    assert "認証" in tokens("認証と認可の境界")
    assert "境界" in tokens("認証と認可の境界") and "の" in tokens("認証と認可の境界")
    assert tokens("認") == ["認"]


def test_one_tokenizer_for_both_sides_is_deterministic() -> None:
    text = "The `searchIndex` ranks documents; see src/query/search.ts and Reconciliação."
    assert tokens(text) == tokens(text)
    assert LEXICON_VERSION == 1


def test_the_glossary_reads_portuguese_software_terms_both_ways() -> None:
    from docbridge.engine.base.lexicon import GLOSSARY_VERSION, glossary, translations
    assert GLOSSARY_VERSION == 8
    book = glossary()
    assert len(book.phrases) > 200 and len(book.abbreviations) >= 20
    readings = {(r.source, r.target, r.how) for r in translations("como invalidar consultas no navegador")}
    assert {("invalidar", "invalidate", "pt-en"), ("consulta", "query", "pt-en"),
            ("navegador", "browser", "pt-en")} <= readings
    # words with no English cognate: keyboard shortcuts
    assert {("atalho", "shortcut", "pt-en"), ("teclado", "keyboard", "pt-en")} <= {
        (r.source, r.target, r.how) for r in translations("atalhos de teclado")}
    # a phrase wins over its words; English words read back to Portuguese; abbreviations expand
    assert [(r.source, r.target) for r in translations("solução de problemas")] == [
        ("solução de problemas", "troubleshooting")]
    assert ("browser", "navegador", "en-pt") in {(r.source, r.target, r.how) for r in translations("browser mode")}
    assert ("ts", "typescript", "abbreviation") in {(r.source, r.target, r.how) for r in translations("ts config")}
    # an abbreviation with two spellings: it expands to the first, and each reads as the abbreviation
    assert [(r.target, r.how) for r in translations("hmr")] == [("hot module replacement", "abbreviation")]
    assert ("hot update", "hmr", "abbreviation") in {
        (r.source, r.target, r.how) for r in translations("how are hot updates applied")}
    # code names what runs on the server `ssr` (ssrTransform, ssr.external), rendering or not
    assert ("server side", "ssr", "abbreviation") in {
        (r.source, r.target, r.how) for r in translations("imports rewritten for server-side execution")}
    # words a question about behaviour uses (`descarta a query mais antiga quando o armazenamento enche`)
    assert {("descarta", "discard remove", "pt-en"), ("antiga", "old oldest", "pt-en"), ("enche", "full", "pt-en")} <= {
        (r.source, r.target, r.how) for r in translations("descarta a mais antiga quando enche")}
    assert {("vários", "multiple several various", "pt-en"), ("diferente", "different", "pt-en")} <= {
        (r.source, r.target, r.how) for r in translations("em vários navegadores diferentes")}
    assert ("escopo", "scope", "pt-en") in {(r.source, r.target, r.how) for r in translations("o mesmo escopo")}
    # a Portuguese word that is already the English one adds nothing
    assert not any(r.how == "pt-en" for r in translations("test cache plugin"))
    # a symptom reads as the topic documentation files it under, unless the query names the topic itself
    assert ("slow", "performance", "related") in {(r.source, r.target, r.how)
                                                  for r in translations("why are my tests slow")}
    assert not any(r.how == "related" for r in translations("slow performance"))
    # upgrading is what migration guides are filed under
    assert ("upgrade", "migration", "related") in {(r.source, r.target, r.how)
                                                   for r in translations("how do I upgrade from version 7")}
    # doing something programmatically is what a tool's API pages are about
    assert ("programmatically", "api", "related") in {(r.source, r.target, r.how)
                                                      for r in translations("start the server programmatically")}


@pytest.mark.parametrize(("query", "word", "english"), [
    ("a fila que executa as mutações", "executa", "run execute"),  # executar
    ("os testes executados", "executado", "run execute"),  # a participle, plural
    ("renderizando a lista", "renderizando", "render"),  # a gerund
    ("onde as regras são divididas", "dividida", "split"),  # an -ir verb's participle: dividir
])
def test_a_form_of_a_listed_portuguese_verb_reads_as_the_verb(query: str, word: str, english: str) -> None:
    from docbridge.engine.base.lexicon import translations
    assert (word, english, "pt-en") in {(r.source, r.target, r.how) for r in translations(query)}


def test_a_word_that_only_looks_like_a_verb_form_reads_as_nothing() -> None:
    from docbridge.engine.base.lexicon import translations
    # `casa` would be a form of `casar`, which the glossary does not list; `livro` ends like no verb form
    assert translations("a casa e o livro") == []


def test_every_glossary_line_is_well_formed() -> None:
    from docbridge.engine.base.lexicon import _GLOSSARY_FILE
    sections = set()
    for number, line in enumerate(_GLOSSARY_FILE.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            sections.add(line)
            continue
        source, tab, target = line.partition("\t")
        assert tab and source.strip() and target.strip(), f"glossary line {number}: {line!r}"
        assert tokens(source) != tokens(target), f"glossary line {number} maps a word to itself"
    assert sections == {"[pt-en]", "[abbreviations]", "[related]"}
