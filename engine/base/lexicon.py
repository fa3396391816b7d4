"""The one tokenizer for indexed text and for queries (versioned: changing it is a new index).

- split on runs of characters that are not a letter, a number, `@`, `/`, `_` or `-` (so `@scope/pkg`,
  `src/mcp/server`, `snake_case` and `kebab-case` survive whole; `.` splits `server.ts`);
- lowercase and fold accents (`reconciliação` = `reconciliacao`; the Unicode `Diacritic` property, so
  Japanese sound marks fold too);
- keep code identifiers whole and add their parts: camelCase, PascalCase, snake_case, kebab-case and path
  segments (`reconcileKnowledge` → `reconcileknowledge`, `reconcile`, `knowledge`);
- drop English and Portuguese stopwords (checked before singularising, so `search and` finds nothing);
- collapse plurals (`schemas` ~ `schema`, `dependencies` ~ `dependency`, `classes` ~ `class`, `status`
  stays), then stem English words (Snowball: `calculated` ~ `calculates`, `persisted` ~ `persist`);
- map Portuguese cognate endings onto their English forms before stemming (`configuração` ~
  `configuration`, `sessões` ~ `sessions`, `variáveis` ~ `variables`), so a Portuguese question finds
  English documentation through the words the two languages share, and the other way round;
- index CJK text by character and by character bigram.
Queries are also read through a small versioned glossary (`engine/data/glossary.tsv`, `translations`):
Portuguese software terms that share no cognate with English (`consulta` ~ `query`, `navegador` ~
`browser`; a verb's inflected forms read as its infinitive: `executa` ~ `executar`) in both directions, and
common abbreviations (`ts` ~ `typescript`).
Identifiers and paths are stemmed part by part on both sides alike; exact-identity checks in the ranking
compare unstemmed words.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import regex
import snowballstemmer

LEXICON_VERSION = 1  # the contract's lexiconVersion (DocBridgeIndexV1): the original's lexicon rules
# how text is tokenized beyond them (stems, cognates): a stored index built with another revision is rebuilt
TOKENIZER_REVISION = 2
_STEMMER = snowballstemmer.stemmer("english")
_WORD = regex.compile(r"^\p{L}+$")
# Portuguese endings and the English endings of the same Latin words (longest first)
# (-eção from Latin -ectio keeps its c in English: seleção, proteção, coleção, direção, injeção; and -unção:
# função, junção)
_COGNATES = (("uncoes", "unctions"), ("ecoes", "ections"), ("uncao", "unction"), ("ecao", "ection"),
             ("coes", "tions"), ("soes", "sions"), ("aveis", "ables"), ("iveis", "ibles"), ("cao", "tion"),
             ("sao", "sion"), ("avel", "able"), ("ivel", "ible"), ("dades", "ties"), ("dade", "ty"))

_SEPARATOR = regex.compile(r"[^\p{L}\p{N}@/_\-]+")
_DIACRITIC = regex.compile(r"\p{Diacritic}")
_CAMEL_LOWER_UPPER = regex.compile(r"(?<=[\p{Ll}\p{N}])(?=\p{Lu})")
_CAMEL_UPPER_RUN = regex.compile(r"(?<=\p{Lu})(?=\p{Lu}\p{Ll})")
_NOT_ALNUM = regex.compile(r"[^\p{L}\p{N}]+")
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
_CJK_RUN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+")

_ENGLISH = """about after again all also an and any are as at be been before being between both but by can could
did do does doing done during each either else for from had has have he her here hers him his how if in into is it
its just me more most much must my no nor not of off on once only or other our out over own same she should so some
such than that the their them then there these they this those through to too under until up us very was we were
what when where which while who whom why will with would you your"""
_PORTUGUESE = """ainda ao aos aquela aquelas aquele aqueles aquilo as até com como da das de dela delas dele deles
depois do dos ela elas ele eles em entre era eram essa essas esse esses esta estas este estes está estão eu fica ficam
foi foram isso isto já lhe lhes mais mas me menos mesmo meu minha muito na nas nem no nos nossa nosso num numa não onde
os ou para pela pelas pelo pelos per por porque pra qual quais quando que quem se sem ser seu seus sobre sua suas são
também tem ter teu toda todas todo todos tua têm um uma umas uns vira você vocês o a e é"""


def fold(text: str) -> str:
    """Lowercase without accents: NFD, drop every Diacritic, NFC (ASCII text has nothing to fold)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", _DIACRITIC.sub("", unicodedata.normalize("NFD", text.lower())))


STOPWORDS = frozenset(fold(word) for word in (_ENGLISH + " " + _PORTUGUESE).split())


def is_stopword(token: str) -> bool:
    return fold(token) in STOPWORDS


def is_cjk(token: str) -> bool:
    return bool(_CJK.search(token))


def singularize(token: str) -> str:
    """Plural collapsing, first matching rule wins; short words and -ss/-us/-is/-os words stay."""
    if len(token) <= 3:
        return token
    if token.endswith("ies"):
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes", "zes")):
        return token[:-2]
    if token.endswith(("ss", "us", "is", "os")):
        return token
    if token.endswith("es") and len(token) > 4:
        return token[:-1]
    if token.endswith("s"):
        return token[:-1]
    return token


def raw_tokens(text: str) -> list[str]:
    return [t for t in _SEPARATOR.split(text) if t]


# The tokenizer's memos are small: a search index's words are mostly seen once, and what a memo holds is refilled
# by every build, the index the server rebuilds after edits included (its peak). 8,192 entries each: an index built
# as fast as with 32,768 (babel, Vitest, Vite, TanStack Query, the 20,042-file tree), the rebuild's peak 16 MB
# lower on that tree; 2,048 took Vitest's build 0.7 -> 1.2 s, none 3 -> 36 s on the tree. `expand` has none: only
# `_raw_to_tokens`, memoised, calls it.
MEMO_ENTRIES = 8192


def expand(raw: str) -> tuple[str, ...]:
    """The whole token, its identifier parts, and CJK unigrams and bigrams; unique, in that order."""
    whole = fold(raw)
    out = [whole]
    spaced = _CAMEL_UPPER_RUN.sub(" ", _CAMEL_LOWER_UPPER.sub(" ", raw))
    for part in _NOT_ALNUM.split(fold(spaced)):
        if len(part) >= 2 and part != whole and part not in out:
            out.append(part)
    if is_cjk(raw):
        for run in _CJK_RUN.findall(whole):
            for char in run:
                if char not in out:
                    out.append(char)
            for i in range(len(run) - 1):
                pair = run[i:i + 2]
                if pair not in out:
                    out.append(pair)
    return tuple(out)


def cognate(token: str) -> str:
    """A folded Portuguese word with its English cognate ending (`configuracao` -> `configuration`)."""
    if len(token) >= 6 and _WORD.match(token):
        for ending, english in _COGNATES:
            if token.endswith(ending):
                return token[: -len(ending)] + english
    return token


def stem(token: str) -> str:
    """English Snowball stem of a plain word; identifiers with digits, paths and scopes stay whole."""
    if len(token) < 4 or not _WORD.match(token):
        return token
    return _STEMMER.stemWord(token)


@lru_cache(maxsize=MEMO_ENTRIES)
def _normalised(token: str) -> str | None:
    """One expanded token as it is indexed: None when it is dropped."""
    cjk = is_cjk(token)
    if len(token) < 2 and not cjk:
        return None
    if token in STOPWORDS:
        return None
    if cjk:
        return token
    return stem(singularize(cognate(token)))


@lru_cache(maxsize=MEMO_ENTRIES)
def _raw_to_tokens(raw: str, expand_parts: bool) -> tuple[str, ...]:
    out = []
    expanded = expand(raw) if expand_parts else (fold(raw),)
    for position, token in enumerate(expanded):
        if position == 0 and len(expanded) > 1 and not is_cjk(token):
            # a compound identifier stays whole (its parts are stemmed): `createInvoice` -> createinvoice
            if len(token) >= 2 and token not in STOPWORDS:
                out.append(singularize(token))
            continue
        normalised = _normalised(token)
        if normalised is not None:
            out.append(normalised)
    return tuple(out)


def forget_memos() -> None:
    """Empty the tokenizer's memos: after a search index is built they hold that build's words, most never
    asked again, and a search or a patch tokenizes a few words (about 5 MB once full, at `MEMO_ENTRIES` each)."""
    _raw_to_tokens.cache_clear()
    _normalised.cache_clear()


def tokens(text: str, *, expand_parts: bool = True, unique: bool = False) -> list[str]:
    """The index and query tokens of `text` (the same function for both sides)."""
    out: list[str] = []
    for raw in _SEPARATOR.split(text):
        if raw:
            out.extend(_raw_to_tokens(raw, expand_parts))
    if unique:
        return list(dict.fromkeys(out))
    return out


def has_token(haystack: str, token: str) -> bool:
    """Whether `token` occurs in `haystack` as a word (or any substring, for CJK)."""
    hay = fold(haystack)
    needle = fold(token)
    if is_cjk(needle):
        return needle in hay
    pattern = regex.compile(rf"(?<![\p{{L}}\p{{N}}]){regex.escape(needle)}(?:e?s)?(?![\p{{L}}\p{{N}}])")
    return bool(pattern.search(hay))


# ------------------------------------------------------------------------------------------------ glossary

GLOSSARY_VERSION = 8
_GLOSSARY_FILE = Path(__file__).parent.parent / "data" / "glossary.tsv"  # engine/data


@dataclass(frozen=True, slots=True)
class Glossary:
    """Query-side translations: Portuguese software terms to English and back, and abbreviations.

    Entries are keyed by their normalised tokens (the same `tokens` as indexed text), so `consultas`,
    `Consulta` and `consulta` find the same line; a source of several words matches as a phrase of
    consecutive query tokens."""

    phrases: dict[tuple[str, ...], tuple[str, str]]  # source tokens -> (source, target words)
    reverse: dict[str, list[tuple[str, str]]]  # English word (folded, singular) -> [(word, Portuguese source)]
    abbreviations: dict[str, str]  # folded abbreviation -> the words it stands for
    longest: int
    related: dict[str, str] = field(default_factory=dict)  # folded, singular word -> the topic documents name
    # abbreviation, the tokens of the phrase it stands for (2+ words), the phrase
    spelled_out: tuple[tuple[str, tuple[str, ...], str], ...] = ()


@lru_cache(maxsize=1)
def glossary() -> Glossary:
    phrases: dict[tuple[str, ...], tuple[str, str]] = {}
    reverse: dict[str, list[tuple[str, str]]] = {}
    abbreviations: dict[str, str] = {}
    related: dict[str, str] = {}
    spellings: list[tuple[str, str]] = []
    section = ""
    for line in _GLOSSARY_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[] ")
            continue
        source, _, target = line.partition("\t")
        source, target = source.strip(), target.strip()
        if not source or not target:
            continue
        if section == "abbreviations":
            # an abbreviation may have several spellings (`hmr`: hot module replacement, hot update); the first
            # is what it expands to, and each reads as the abbreviation
            abbreviations.setdefault(fold(source), target)
            spellings.append((fold(source), target))
            continue
        if section == "related":
            related[singularize(fold(source))] = target
            continue
        key = tuple(tokens(source))
        if key:
            phrases.setdefault(key, (source, target))
        for word in target.split():
            pairs = reverse.setdefault(singularize(fold(word)), [])
            if (word, source) not in pairs:
                pairs.append((word, source))
    spelled_out = tuple(sorted((short, tuple(tokens(words)), words) for short, words in spellings
                               if len(tokens(words)) >= 2))
    return Glossary(phrases, reverse, abbreviations, max((len(k) for k in phrases), default=1), related, spelled_out)


def _holds_phrase(query_tokens: list[str], phrase: tuple[str, ...]) -> bool:
    width = len(phrase)
    return any(tuple(query_tokens[i:i + width]) == phrase for i in range(len(query_tokens) - width + 1))


@dataclass(frozen=True, slots=True)
class Reading:
    """One glossary reading of a query: what it said, what it also means, and how (`pt-en`, `en-pt`,
    `abbreviation`)."""

    source: str
    target: str
    how: str


# a Portuguese verb's inflected forms and the ending of the infinitive the glossary lists (`executa`, `executam`,
# `executado`, `executando`: executar), longest first
_INFLECTIONS = (("ando", "ar"), ("endo", "er"), ("indo", "ir"), ("ados", "ar"), ("adas", "ar"), ("idos", "er"),
                ("idas", "er"), ("ado", "ar"), ("ada", "ar"), ("ido", "er"), ("ida", "er"), ("am", "ar"),
                ("em", "er"), ("ou", "ar"), ("eu", "er"), ("iu", "ir"), ("a", "ar"), ("e", "er"))


def _conjugated(token: str, book: Glossary) -> tuple[str, str] | None:
    """The word and the English of the verb it is a form of, when the word is not listed itself (`executa`
    reads as `executar`: run execute); a form of an -er verb may be one of an -ir verb."""
    if len(token) < 5 or not token.isalpha():
        return None
    for ending, infinitive in _INFLECTIONS:
        if token.endswith(ending):
            stem = token[:-len(ending)]
            for candidate in (stem + infinitive, stem + "ir") if infinitive == "er" else (stem + infinitive,):
                hit = book.phrases.get(tuple(tokens(candidate)))
                if hit is not None:
                    return token, hit[1]
    return None


def translations(query: str) -> list[Reading]:
    """The glossary readings of a query: every Portuguese phrase in it (longest first, left to right) with
    its English words, every English word with its Portuguese equivalents, and every abbreviation."""
    book = glossary()
    found: list[Reading] = []
    words = raw_tokens(query)
    for word in words:
        expansion = book.abbreviations.get(fold(word))
        if expansion is not None:
            found.append(Reading(word, expansion, "abbreviation"))
        topic = book.related.get(singularize(fold(word)))
        if topic is not None and fold(topic) not in (fold(w) for w in words):
            found.append(Reading(word, topic, "related"))
    for word in words:
        for english, source in book.reverse.get(singularize(fold(word)), ()):
            found.append(Reading(english, source, "en-pt"))
    query_tokens = tokens(query)
    present = set(query_tokens)
    # a phrase an abbreviation stands for reads as the abbreviation too: code and folders are named by the
    # short form (`server-side rendering`: ssr); single words are left alone (`environment` is not `env`)
    for short, spelled, phrase in book.spelled_out:
        if _holds_phrase(query_tokens, spelled) and short not in present:
            found.append(Reading(phrase, short, "abbreviation"))
    position = 0
    while position < len(query_tokens):
        for length in range(min(book.longest, len(query_tokens) - position), 0, -1):
            key = tuple(query_tokens[position:position + length])
            hit = book.phrases.get(key)
            if hit is None and length == 1:
                hit = _conjugated(key[0], book)
            if hit is not None:
                if not set(tokens(hit[1])) <= present:  # `teste` adds nothing to a query that says `test`
                    found.append(Reading(hit[0], hit[1], "pt-en"))
                position += length
                break
        else:
            position += 1
    return list(dict.fromkeys(found))
