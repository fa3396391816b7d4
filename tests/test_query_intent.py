"""What kind of answer a query asks for, read before ranking (engine/data/query-shape.toml): where in the code,
in English and Portuguese; an exclusion ("without X", "sem X"); one file name with its extension. Each through
the command line on the acme fixture, whose files decide the expected answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, docbridge, docbridge_json, make_repo


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fixture("acme", tmp_path_factory.mktemp("intent"))


def search(root: Path, query: str, limit: int = 5) -> dict[str, Any]:
    return docbridge_json("search", query, "--root", str(root), "--json", "--explain", "--limit", str(limit))


def paths(payload: dict[str, Any]) -> list[str]:
    return [r["path"] for r in payload["results"]]


@pytest.mark.parametrize("query", [
    "where are invoices created",  # only the verb says code: invoice.ts creates them, the guides explain them
    "which file creates invoices",
    "which code creates invoices",
    "onde são criadas as faturas",  # the Portuguese guide (docs/guias/faturamento.md) says `faturas` itself
    "onde ficam as faturas no código",
    "how invoices work internally",  # a guide tells how to use them, the code how they work inside
    "como as faturas funcionam por dentro",
])
def test_a_question_about_where_in_the_code_is_answered_by_the_module(acme: Path, query: str) -> None:
    payload = search(acme, query, limit=10)
    assert paths(payload)[0] == "src/billing/invoice.ts"
    assert "where in the code" in payload["results"][0]["explain"]["reading"]
    # a guide that says the words is lowered; below the modules written with them, it may fall under the floor
    pages = [r for r in payload["results"] if r["kind"] == "document"]
    assert all(any("a page, for a question about where in the code" in reason for reason in r["explain"]["reasons"])
               for r in pages)


def test_a_topic_question_keeps_its_pages(acme: Path) -> None:
    # the same words without asking where in the code: the guides are not lowered
    payload = search(acme, "invoices and faturas")
    assert "where in the code" not in payload["results"][0]["explain"]["reading"]
    assert not any("where in the code" in reason for r in payload["results"] for reason in r["explain"]["reasons"])


@pytest.mark.parametrize(("query", "excluded"), [
    ("email without sms", "sms"), ("email sem sms", "sms"),
    ("send an email, not an sms", "sms"), ("enviar um email, não um sms", "sms"),  # a clause that sets it aside
])
def test_an_excluded_word_is_not_matched_and_lowers_what_is_named_after_it(acme: Path, query: str,
                                                                          excluded: str) -> None:
    assert paths(search(acme, "email sms"))[0] == "src/notifications/sms.ts"  # said plainly, sms.ts leads
    payload = search(acme, query)
    assert paths(payload)[0] == "src/notifications/email.ts"
    first = payload["results"][0]["explain"]
    assert f"excluding {excluded}" in first["reading"] and excluded not in first["terms"]
    lowered = [r for r in payload["results"] if r["path"] == "src/notifications/sms.ts"]
    for result in lowered:  # kept only as a neighbour, never for the excluded word
        assert "its title or path holds a word the question excludes" in " ".join(result["explain"]["reasons"])


def test_a_file_name_with_its_extension_names_that_file(acme: Path) -> None:
    payload = search(acme, "storage.md")
    assert paths(payload)[0] == "docs/storage.md"  # not the storage area, nor a module of it
    assert payload["results"][0]["explain"]["reading"] == ["a file name"]
    assert "md" not in payload["results"][0]["explain"]["terms"]  # the extension is not a word of the query
    assert paths(search(acme, "tokens.ts"))[0] == "src/auth/tokens.ts"


def test_the_reading_is_shown_by_explain_in_text(acme: Path) -> None:
    result = docbridge("search", "onde ficam as faturas no código", "--root", str(acme), "--explain")
    assert result.returncode == 0, result.stderr
    reading = next(line for line in result.stdout.splitlines() if line.startswith("Reading: "))
    assert "where in the code" in reading


@pytest.mark.parametrize("query", [
    "where is this documented",  # a page's verb: the answer may well be a page
    "where is the need for speed",  # a noun ending in -ed
    "onde é o estado global",  # a noun ending in -ado
    "how to format code blocks in the code block",
    "what file format is used",
    "what code style do invoices follow",  # code as the name of a topic, not the answer's kind
])
def test_ordinary_questions_are_not_read_as_asking_for_code(acme: Path, query: str) -> None:
    payload = search(acme, query)
    assert all("where in the code" not in r["explain"]["reading"] for r in payload["results"])


def test_a_name_shaped_like_a_file_that_no_file_has_is_read_as_words(acme: Path) -> None:
    payload = search(acme, "Node.js")  # no file of that name in acme
    assert payload["results"] and "a file name" not in payload["results"][0]["explain"]["reading"]
    assert {"node", "js"} <= set(payload["results"][0]["explain"]["terms"])


@pytest.mark.parametrize("query", ["why does email not send sms", "por que o email não envia sms"])
def test_a_not_inside_a_verb_excludes_nothing(acme: Path, query: str) -> None:
    payload = search(acme, query)
    assert not any(part.startswith("excluding") for part in payload["results"][0]["explain"]["reading"])
    sms = next(r for r in payload["results"] if r["path"] == "src/notifications/sms.ts")  # still a match
    assert "sms" in sms["explain"]["terms"]
    assert not any("excludes" in reason for reason in sms["explain"].get("reasons", []))


def test_an_exclusion_that_would_leave_nothing_is_not_one(acme: Path) -> None:
    payload = search(acme, "sem config")
    assert not any(part.startswith("excluding") for part in payload["results"][0]["explain"]["reading"])


@pytest.mark.parametrize(("query", "task"), [
    ("configure the database connection pool", True),  # a sentence that begins with a verb asks to do something
    ("retry failed webhook deliveries", True),
    ("configurar o pool de conexões", True),  # the same in Portuguese, in the infinitive
    ("create invoice", False),  # two words that spell a name stay a name
    ("server error codes", False),  # a noun first: a topic
    ("test coverage of the billing area", False),  # `test` begins a noun phrase as often as it asks for one
    ("mock the payment gateway in tests", True),
])
def test_a_sentence_that_begins_with_a_verb_is_read_as_a_task(acme: Path, query: str, task: bool) -> None:
    reading = search(acme, query)["results"][0]["explain"]["reading"]
    assert ("how to do something" in reading) is task, reading


# a client that retries: the guide explains the backoff in words, the module that computes it says nothing in prose
# (no comment, no message), and the client only calls it
RETRIES = {
    "package.json": '{"name": "fetchkit", "version": "1.0.0"}\n',
    "docs/retries.md": "# Retries\n\nA failed request is retried with exponential backoff: the wait doubles after each "
                       "attempt, and a random jitter spreads the retries of many clients so that they do not all "
                       "come back at once. Set `retries` to 0 to turn retrying off.\n",
    "src/backoff.ts": "export function waitBefore(attempt: number, base = 100, ceiling = 30_000): number {\n"
                      "  const exponent = Math.min(attempt, 16);\n"
                      "  const jitter = Math.random() * base;\n"
                      "  return Math.min(ceiling, base * 2 ** exponent + jitter);\n}\n",
    "src/client.ts": "import { waitBefore } from './backoff';\n\n"
                     "export async function request(url: string, retries = 3): Promise<Response> {\n"
                     "  for (let attempt = 0; ; attempt++) {\n"
                     "    const response = await fetch(url);\n"
                     "    if (response.ok || attempt >= retries) return response;\n"
                     "    await new Promise((done) => setTimeout(done, waitBefore(attempt)));\n  }\n}\n",
}


@pytest.fixture(scope="module")
def retries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("retries"), RETRIES)


@pytest.mark.parametrize("query", ["where is the random jitter added to the exponent",
                                   "how is the jitter combined with the exponent internally"])
def test_a_question_about_how_code_works_reads_the_names_the_code_is_written_with(retries: Path,
                                                                                 query: str) -> None:
    # only backoff.ts's code says jitter and exponent; the guide says jitter in prose
    payload = search(retries, query)
    first = payload["results"][0]
    assert first["path"] == "src/backoff.ts", paths(payload)
    assert {"jitter", "expon"} <= set(first["explain"]["matched"]["code"])
    assert any("of it from its code words" in reason for reason in first["explain"]["reasons"])
    # what the code words earned does not drop the guide that explains the same thing under the floor
    assert "docs/retries.md" in paths(payload)


def test_a_topic_or_a_name_does_not_read_code_words(retries: Path) -> None:
    # the same words asked as a topic: the guide explains them; a module is not matched for names it uses
    for query in ("retry jitter", "attempt"):
        payload = search(retries, query)
        assert not any("code" in r["explain"]["matched"] for r in payload["results"]), query
    assert paths(search(retries, "retry jitter"))[0] == "docs/retries.md"
    # `attempt` is a parameter of both modules, declared by neither: not a reason to rank them for the word
    assert paths(search(retries, "attempt"))[:1] == ["docs/retries.md"]


@pytest.mark.parametrize("query", ["which area implements invoices", "em que área ficam implementadas as faturas"])
def test_a_question_asking_which_unit_of_a_kind_is_answered_by_that_unit_whatever_its_verb(acme: Path,
                                                                                         query: str) -> None:
    payload = search(acme, query)
    assert paths(payload)[0] == "src/billing", paths(payload)
    assert "the unit that holds it (its code gathered)" in payload["results"][0]["explain"]["reading"]
    # the plural asks for an overview, not for one of them
    overview = search(acme, "which areas are there and what does each hold")
    assert "the unit that holds it (its code gathered)" not in overview["results"][0]["explain"]["reading"]


@pytest.mark.parametrize(("query", "name"), [("MemoryCache class", "MemoryCache"), ("class MemoryCache", "MemoryCache"),
                                             ("função createInvoice", "createInvoice")])
def test_a_name_with_the_kind_of_its_declaration_ranks_as_the_name(acme: Path, query: str, name: str) -> None:
    def ranked(payload: dict[str, Any]) -> list[tuple[str, float]]:
        return [(r["id"], r["score"]) for r in payload["results"]]
    payload = search(acme, query)
    assert ranked(payload) == ranked(search(acme, name))
    assert payload["results"][0]["explain"]["reading"] == ["a name (symbol or path)"]
    # lower-case words and a kind are a topic: "cache class" is not the class named cache
    assert search(acme, "cache class")["results"][0]["explain"]["reading"] != ["a name (symbol or path)"]


def test_a_passive_question_with_a_verb_code_performs_asks_how_code_works(acme: Path) -> None:
    # "how are X applied / counted / validated": the mechanism; the guide that describes discounts comes after
    payload = search(acme, "how are volume discounts applied to prices")
    assert "how code works" in payload["results"][0]["explain"]["reading"]
    assert paths(payload)[:2] == ["src/catalog/pricing.ts", "docs/catalog.md"]


@pytest.mark.parametrize("query", ["where do the email and sms senders live", "onde ficam os envios de email e sms"])
def test_a_question_asking_where_things_are_kept_is_answered_by_the_unit_holding_them(acme: Path,
                                                                                      query: str) -> None:
    # "where do X live" reads like a question about code ("where do…"), yet asks for the place that keeps them:
    # src/notifications holds email.ts and sms.ts
    payload = search(acme, query)
    assert paths(payload)[0] == "src/notifications", paths(payload)
    assert "the unit that holds it (its code gathered)" in payload["results"][0]["explain"]["reading"]
    assert set(paths(payload)[1:3]) == {"src/notifications/email.ts", "src/notifications/sms.ts"}
    # one thing is kept in its file: its folder gathers nothing from a single module
    assert paths(search(acme, "where does the logger live"))[0] == "src/util/logger.ts"


def test_a_question_asking_where_to_change_something_is_answered_by_code_before_the_page(acme: Path) -> None:
    # docs/auth.md describes session tokens at length; src/auth/session.ts is what one edits to change them
    payload = search(acme, "where do I change the session tokens")
    assert paths(payload)[0] == "src/auth/session.ts", paths(payload)
    page = next(r for r in payload["results"] if r["path"] == "docs/auth.md")
    assert "prior ×0.6: a page, for a question that asks where to change something" in page["explain"]["reasons"]
    # unless the question is about the pages themselves
    docs = search(acme, "where do I change the auth docs")
    assert "docs/auth.md" in paths(docs)[:2], paths(docs)
    assert not any("where to change something" in reason for r in docs["results"] for reason in r["explain"]["reasons"])


def test_what_packages_share_is_answered_by_the_package_they_depend_on(tmp_path: Path) -> None:
    # @mono/api and @mono/web both depend on @mono/core (their package.json files): the logic they share is there,
    # though the question names the two that use it
    root = copy_fixture("monorepo", tmp_path)
    payload = search(root, "which package holds the logic shared by the api and the web app")
    first = payload["results"][0]
    assert first["id"] == "package:@mono/core"
    assert any("depend on, for a question about what they share" in r for r in first["explain"]["reasons"])
    # the same question without `shared` asks for no such package
    plain = search(root, "which package holds the logic of the api and the web app")
    assert not any("what they share" in reason for r in plain["results"] for reason in r["explain"].get("reasons", []))


def test_two_words_written_as_one_are_read_as_that_word(tmp_path: Path) -> None:
    # AppError.ts declares `AppError`: "app error" said apart matches the name as text too (title, symbols)
    root = copy_fixture("monorepo", tmp_path)
    payload = search(root, "app error", limit=5)
    app_error = next(r for r in payload["results"] if r["path"] == "packages/core/src/errors/AppError.ts")
    assert app_error["explain"]["translated"]["app error"] == "apperror"
    assert "apperror" in app_error["explain"]["matched"]["symbols"]
    # the parts of one name are said whole already, a word that no entry holds is not added, and words a
    # clause sets aside are not asked for joined either
    for query in ("AppError.code", "app zebra", "the api server's errors, not app error"):
        explain = search(root, query)["results"][0]["explain"]
        assert not any(" " in source for source in explain.get("translated", {})), (query, explain)


def test_a_portuguese_compound_reads_as_the_english_name_it_translates(tmp_path: Path) -> None:
    # `gerenciador de foco` is the focus manager: `focusManager` in code, though the two words are in the other order
    root = make_repo(tmp_path, {
        "package.json": '{"name": "focus-demo", "version": "1.0.0"}',
        "src/focusManager.ts": "export class FocusManager {\n  setFocused(focused: boolean): void {}\n}\n",
        "src/onlineManager.ts": "export class OnlineManager {\n  setOnline(online: boolean): void {}\n}\n",
        "docs/window-focus.md": "# Window focus\n\nRefetch when the window regains focus. The manager of each query "
                                "listens for focus, and a focus event refetches what is stale. Focus focus focus.\n",
    })
    payload = search(root, "onde fica o gerenciador de foco")
    first = payload["results"][0]
    assert first["path"] == "src/focusManager.ts", paths(payload)
    assert first["explain"]["translated"]["gerenciador de foco"] == "focusmanager"
    assert "focusmanager" in first["explain"]["matched"]["symbols"]
