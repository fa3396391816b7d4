"""Reading a query before ranking: its words, whether it names one thing, and what kind of answer it asks for.

The patterns and word lists (English and Portuguese) are data, `engine/data/query-shape.toml`; this module
compiles them and applies them to a query. A query's shape is a pure function of its text; whether a module
declares the name it is (`QueryShape.declared`) is the one fact the index adds (docbridge.engine.retrieval.identity).

What a query is read as:
- a *name* (`naming`: at most two words; `whole`: the query as one name or path): identity applies per word;
- *code-shaped* (one word shaped like a symbol or a path), an *identifier* (camelCase, snake_case);
- a *routing question* ("where do I change…", "who owns…"): the words that make it one say what kind of answer
  is wanted, not what it is about, so they set the priors and are not matched as text, and neither are their
  glossary readings;
- a question about an *implementation* ("how does X decide…", "where is X implemented"), a *task* ("how do I…",
  "how to…"), a *sentence* (three or more words that are not stopwords), a *phrase* (two plain words);
- asking for a change, for examples and fixtures, or for a kind of unit ("which package…").

The glossary (`docbridge.engine.base.lexicon.translations`) adds its readings of the query's words at reduced
weights (READING_BOOST), a word with several readings sharing one word's weight among them.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from docbridge.engine.base.lexicon import STOPWORDS, fold, raw_tokens, singularize, tokens, translations
from docbridge.engine.base.model import AREA, PACKAGE
from docbridge.engine.retrieval.project import DIRECTORY

_DATA_FILE = Path(__file__).parent.parent / "data" / "query-shape.toml"  # engine/data
_UNIT_KINDS = frozenset({PACKAGE, AREA, DIRECTORY})

TYPO_BOOST = 0.7
EXCLUDED_WORDS = 3  # an exclusion governs the run of words after it, up to a stopword, at most this many
JOINED_BOOST = 0.5  # two words written as one (`fall back`: fallback): the same words, said apart
_OF_PHRASE = re.compile(r"\b([a-z]{3,}) (de|do|da|dos|das) ([a-z]{3,})\b")  # pt: gerenciador de foco
_PLAIN_WORD = re.compile(r"(?<![\w.@/-])[a-z]+(?![\w.@/-])")  # a word of letters, not part of a name or path
# a word the glossary adds weighs less than one the query said; a related topic (`slow`: performance) as much
# as a typo correction; an English query reaching for Portuguese words weighs least (a translation of the
# page it wants is rarely the page it wants)
READING_BOOST = {"pt-en": 0.9, "abbreviation": 0.9, "related": TYPO_BOOST, "en-pt": 0.3}


# ------------------------------------------------------------------------------------------------ the data

@dataclass(frozen=True, slots=True)
class Vocabulary:
    """engine/data/query-shape.toml, compiled: patterns by name, word sets by name, and the unit kinds a word names."""

    patterns: dict[str, re.Pattern[str]]
    words: dict[str, frozenset[str]]
    kinds: dict[str, frozenset[str]]  # folded word -> the unit kinds it names ("package": {package})


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    data: dict[str, Any] = tomllib.loads(_DATA_FILE.read_text(encoding="utf-8"))
    fragments = {name: "(" + "|".join(parts) + ")" for name, parts in data.get("fragment", {}).items()}
    patterns: dict[str, re.Pattern[str]] = {}
    for name, spec in data["pattern"].items():
        source = "|".join(spec["any"])
        for fragment, text in fragments.items():
            source = source.replace("{" + fragment + "}", text)
        patterns[name] = re.compile(source, re.I if spec.get("ignore_case", True) else 0)
    words = {name: frozenset(spec.get("en", "").split()) | frozenset(spec.get("pt", "").split())
             for name, spec in data["words"].items()}
    kinds: dict[str, frozenset[str]] = {}
    for spec in data["kinds"].values():
        named = frozenset(spec["kinds"])
        if not named <= _UNIT_KINDS:
            raise ValueError(f"{_DATA_FILE}: unknown unit kinds {sorted(named - _UNIT_KINDS)}")
        for word in (spec.get("en", "") + " " + spec.get("pt", "")).split():
            kinds[word] = kinds.get(word, frozenset()) | named
    return Vocabulary(patterns, words, kinds)


def pattern(name: str) -> re.Pattern[str]:
    return vocabulary().patterns[name]


# ------------------------------------------------------------------------------------------------ the shape

@dataclass(frozen=True, slots=True)
class QueryShape:
    """What a query is, read once: its words, whether it names one thing, what kind of answer it asks."""

    query: str
    words: tuple[str, ...]  # folded, singular
    naming: bool  # at most two words: per-word identity applies
    whole: str  # the whole query as a name or path
    routing: bool  # who owns something, where to change it: a unit one edits answers it
    asks_unit: bool  # ...and asks for the unit itself, not where a thing is done (docbridge.engine.retrieval.units)
    asks_change: bool  # asks for a change (a change route answers it)
    code_shaped: bool  # one word shaped like a symbol or a path
    symbol_shaped: bool  # one word shaped like a symbol, not a path
    identifier: bool  # one word written as code (camelCase, snake_case), not a path
    asks_implementation: bool  # how something works, where it is implemented: the mechanism
    asks_task: bool  # "how do I…", "how to…": a page walks through it
    asks_configuration: bool  # ...how to configure something: the option's reference page describes it
    asks_peripheral: bool  # the query asks about examples, fixtures or playgrounds
    asks_news: bool  # the query asks about releases or news: what dated posts tell
    asks_shared: bool  # ...what several units share ("shared by all the adapters", "common to"): what they depend on
    kinds_named: frozenset[str]  # unit kinds the question names ("which package…")
    sentence: bool  # three or more words that are not stopwords, not a routing question
    phrase: bool  # two plain words (no identifier, no path), not a routing question
    compounds: frozenset[str]  # two adjacent words written as one name ("user profile": userprofile)
    form: str  # "name", "implementation", "sentence", "phrase" or "": which decides between a module and a page
    file_words: tuple[str, ...] = ()  # an implementation question's words that may name a module's file
    declared: bool = False  # the index: a module outside tests and examples declares the name the query is
    asks_location: bool = False  # where in the code something is or happens ("which file…", "where are X created")
    asks_where_to_edit: bool = False  # where to change something ("where do I change…"), not in its docs
    says_code: bool = False  # ...and it says so ("in the code", "which file", "no código"), not only by its verb
    excluded: tuple[str, ...] = ()  # the words an exclusion governs ("without X", "sem X"), as written, folded
    excluded_terms: frozenset[str] = frozenset()  # their tokens, and their glossary readings' (`cobertura`: coverage)
    file_name: bool = False  # one word that is a file name with its extension (build.md)

    @property
    def reads_code(self) -> bool:
        """How something works or where the code does it: the names a module's code is written with are evidence
        (engine.retrieval.lexical's code words)."""
        return self.asks_implementation or self.form == "implementation"

    def intents(self) -> list[str]:
        """The reading `--explain` shows: what kind of answer the query asks for, in words."""
        found = []
        if self.file_name:
            found.append("a file name")
        elif self.form == "name":
            found.append("a name (symbol or path)")
        if self.asks_location:
            found.append("where in the code")
        elif self.asks_implementation:
            found.append("how code works")
        if self.asks_task:
            found.append("how to do something")
        if self.asks_unit:
            found.append("the unit that holds it (its code gathered)")
        elif self.routing:
            found.append("who owns it / where to edit")
        if self.kinds_named:
            found.append("a " + "/".join(sorted(self.kinds_named)))
        if self.excluded:
            found.append("excluding " + ", ".join(self.excluded))
        if not found and self.form in ("sentence", "phrase"):
            found.append("a topic")
        return found


@dataclass(frozen=True, slots=True)
class QueryReading:
    """A query read for ranking: its shape, the words it said, the tokens matched as text, and the glossary's
    readings of it."""

    shape: QueryShape
    said: list[str]  # the query's words as written
    terms: list[str]  # the tokens matched as text (a routing question's routing words left out)
    added: dict[str, float] = field(default_factory=dict)  # tokens the glossary adds -> their weight
    protected: set[str] = field(default_factory=set)  # words the glossary knows: not typos
    translated: dict[str, str] = field(default_factory=dict)  # glossary readings: source -> target
    # the query's own tokens weighed below 1: the words of a phrase spelling out an abbreviation share one word's
    # weight, as the phrase names one thing (its abbreviation weighs the other)
    shared: dict[str, float] = field(default_factory=dict)


def read_query(query: str, terms: list[str], known_file: Callable[[str], bool] | None = None,
               known_word: Callable[[str], bool] | None = None) -> QueryReading:
    """Read a query (whose tokens are `terms`) for ranking; `known_file` says whether a file of a name is in the
    index (a query shaped like a file name that no file has, `Node.js`, is read as words), `known_word` whether a
    token is (two words written as one are read as that one only when it is)."""
    stripped = query.strip()
    said = raw_tokens(query)
    function = _function_tokens()
    terms = [t for t in terms if t not in function] or terms
    named = _named_with_its_kind(said)
    if named is not None:
        # "TestSpecification class", "função hashKey": the name, asked for as the declaration its kind says
        kind = [w for w in said if w != named]
        query = stripped = named
        said = [named]
        terms = [t for t in terms if t not in tokens(" ".join(kind))] or terms
    file_name = " " not in stripped and "/" not in stripped and bool(pattern("file_name").match(stripped)) and (
        known_file is None or known_file(fold(stripped)))
    if file_name and len(said) > 1:
        # a file name names one thing: its extension says which kind of file, not a word of what it is about
        extension = said.pop()
        terms = [t for t in terms if t not in tokens(extension)] or terms
    excluded, markers = exclusions(query)
    if excluded and not [w for w in said if fold(w) not in excluded and fold(w) not in markers
                         and fold(w) not in STOPWORDS]:
        excluded = []  # nothing is left to ask for ("sem config"): the words are the question
    if excluded:
        # the words an exclusion governs are not the question's subject, nor are the words that mark it
        said = [w for w in said if fold(w) not in excluded and fold(w) not in markers] or said
        dropped = set(tokens(" ".join([*excluded, *markers])))
        terms = [t for t in terms if t not in dropped] or terms
    one_word = len(said) == 1 or file_name
    path_shaped = bool(pattern("path").search(stripped))
    code_shaped = one_word and bool(pattern("symbol").search(stripped) or path_shaped)
    # an identifier or a path names a thing: it is not read through the glossary
    readings = [] if code_shaped else translations(query)
    excluded_tokens = set(tokens(" ".join(excluded)))
    # a reading of an excluded word is excluded with it, and so is one of a phrase the excluded word begins
    # ("without server-side rendering": ssr)
    excluded_readings = [r for r in readings if excluded_tokens and set(tokens(r.source)) & excluded_tokens]
    excluded_terms = frozenset(tokens(" ".join([*excluded, *(r.target for r in excluded_readings)])))
    readings = [r for r in readings if r not in excluded_readings]
    kind_asked = bool(pattern("kind_asked").search(fold(stripped)))  # which package…, which folder…
    routing = bool(pattern("routing").search(query) or pattern("where_to_change").search(stripped) or kind_asked)
    says_code = bool(pattern("location").search(fold(stripped)))
    location = says_code or bool(pattern("location_verb").search(fold(stripped)))
    words = vocabulary().words
    answer_words: frozenset[str] = frozenset()  # the words that say what kind of answer is wanted
    if routing:
        answer_words = words["routing"] | words["implement"]
    elif pattern("asking").match(stripped):
        answer_words = words["implement"]
    if location:  # "which file…", "no código": the answer is code, whatever it is about
        answer_words |= words["location"]
    answer = set(tokens(" ".join(w for w in said if fold(w) in answer_words)))
    if answer and any(t not in answer for t in terms):
        # they set the priors and are not matched as text, and neither are their readings (`change`: `mudança`,
        # `package`: `pacote`)
        readings = [r for r in readings if not all(fold(w) in answer_words for w in raw_tokens(r.source))]
    translated = {r.source: r.target for r in readings}
    added: dict[str, float] = {}
    shared: dict[str, float] = {}
    for reading in readings:
        # one word of the query reads as one word's weight, shared by its alternatives, so a word with many
        # readings does not outweigh the words around it
        targets = tokens(reading.target, unique=True)
        # ...and an abbreviation read from the phrase it stands for weighs a whole word (the phrase's own words
        # count already)
        spelled = reading.how == "abbreviation" and len(raw_tokens(reading.source)) > 1
        if spelled:
            phrase = tokens(reading.source, unique=True)
            for token in phrase:
                shared[token] = min(shared.get(token, 1.0), 1.0 / len(phrase))
        for token in targets:
            weight = 1.0 if spelled else READING_BOOST[reading.how] / len(targets)
            added[token] = max(added.get(token, 0.0), weight)
    if known_word is not None and not code_shaped:
        english = {fold(r.source): r.target.split() for r in readings if r.how == "pt-en"}
        said_joined = [(words_said, joined, False) for words_said, joined in joined_words(query)]
        translated_joined = [(words_said, joined, True) for words_said, joined in portuguese_compounds(query, english)]
        for words_said, joined, from_portuguese in said_joined + translated_joined:
            if excluded_tokens & set(tokens(words_said)):
                continue  # `…, not in the browser client`: nor is `browserclient` asked for
            # a word is indexed stemmed (`fallback`), an identifier whole as written (`focusmanager`): the English
            # words of a Portuguese compound were not said, so the name they spell is not otherwise read
            for token in dict.fromkeys([*tokens(joined), *([singularize(joined)] if from_portuguese else [])]):
                if token not in terms and token not in added and token not in excluded_terms and known_word(token):
                    added[token] = JOINED_BOOST
                    translated[words_said] = joined
    if answer:
        terms = [t for t in terms if t not in answer] or terms
        added = {t: weight for t, weight in added.items() if t not in answer}
    shape = shape_of(query, said, routing=routing, code_shaped=code_shaped, path_shaped=path_shaped,
                     kind_asked=kind_asked)
    if location or excluded or file_name:
        file_words = shape.file_words or (content_words(shape.words) if location else ())
        if location:  # code is named in English: a reading of the question's word may be the file's name
            file_words += content_words(tuple(singularize(fold(w)) for r in readings if r.how == "pt-en"
                                              for w in raw_tokens(r.target)))
        file_words = tuple(w for w in dict.fromkeys(file_words) if w not in answer_words)
        # a file name names one file: its words are not names on their own (mutations.md is not `Mutation`)
        shape = replace(shape, asks_location=location, says_code=says_code, excluded=tuple(excluded),
                        excluded_terms=excluded_terms, file_name=file_name, file_words=file_words,
                        naming=shape.naming and not file_name,
                        form="implementation" if location and shape.form != "name" else shape.form)
    return QueryReading(shape, said, terms, added, set(tokens(" ".join(translated))), translated, shared)


@lru_cache(maxsize=1)
def _function_tokens() -> frozenset[str]:
    """The function words as the tokenizer writes them (`durante`: `durant`)."""
    return frozenset(tokens(" ".join(sorted(vocabulary().words["function"]))))


def exclusions(query: str) -> tuple[list[str], set[str]]:
    """The words the query's exclusions govern ("without X", "sem o X": the first word after the marker that
    is not a stopword), folded, and the marker words themselves."""
    folded = fold(query)
    excluded: list[str] = []
    markers: set[str] = set()
    for match in pattern("negation").finditer(folded):
        markers.update(raw_tokens(match.group(0)))
        # a word the query also says before the exclusion is its subject, not what it excludes; the excluded
        # phrase is the run of words after it up to a stopword (at most EXCLUDED_WORDS)
        subject = set(tokens(folded[:match.start()]))
        phrase: list[str] = []
        for word in re.split(r"[^\w-]+", folded[match.end():]):
            if not word:
                continue
            if word in STOPWORDS or set(tokens(word)) <= subject:
                if phrase:
                    break
                continue
            phrase.append(word)
            if len(phrase) == EXCLUDED_WORDS:
                break
        excluded.extend(w for part in phrase for w in raw_tokens(part) if w not in excluded)
    return excluded, markers


def joined_words(query: str) -> list[tuple[str, str]]:
    """Each two words of the query, apart by a space only and neither a stopword, with the one word code and docs
    write them as (`fall back`: fallback, `set up`: setup, `inline snapshots`: inlinesnapshots); not the parts of a
    name or a path (`import.meta.glob` is said whole)."""
    folded = fold(query)
    words = list(_PLAIN_WORD.finditer(folded))
    found = []
    for left, right in itertools.pairwise(words):
        first, second = left.group(0), right.group(0)
        if folded[left.end():right.start()].strip() or first in STOPWORDS or second in STOPWORDS:
            continue
        found.append((f"{first} {second}", first + second))
    return found


def portuguese_compounds(query: str, english: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Each Portuguese `A de B` whose two nouns the glossary reads in English, with the English compound it is,
    written as one word: `gerenciador de foco` is the focus manager, `focusManager` in code (`english`: each
    folded Portuguese word and its English words)."""
    found = []
    for match in _OF_PHRASE.finditer(fold(query)):
        noun, before = english.get(match.group(1)), english.get(match.group(3))
        if noun and before:
            found.append((match.group(0), fold(before[0]) + fold(noun[0])))
    return found


def content_words(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(w for w in dict.fromkeys(words) if len(w) >= 3 and w not in STOPWORDS)


def _named_with_its_kind(said: list[str]) -> str | None:
    """The name of a query that is a name written as code (camelCase, snake_case, Capitalized) and the kind of
    declaration it is, in either order ("TestSpecification class", "hashKey function", "classe QueryClient"), else
    None ("storage class" is two words)."""
    if len(said) != 2:
        return None
    kinds = vocabulary().words["declaration"]
    identifier = pattern("identifier")
    for name, kind in (said, said[::-1]):
        if fold(kind) in kinds and fold(name) not in kinds and (identifier.search(name) or name[:1].isupper()):
            return name
    return None


def shape_of(query: str, said: list[str], *, routing: bool, code_shaped: bool, path_shaped: bool,
             kind_asked: bool) -> QueryShape:
    """The shape of a query whose words are `said` (what `read_query` has read of it already: whether it is a
    routing question, one word shaped like code, shaped like a path, whether it asks which unit of a kind)."""
    stripped = query.strip()
    one_word = len(said) == 1
    words = tuple(singularize(fold(w)) for w in said)
    plain = sum(1 for w in words if w not in STOPWORDS)
    sentence = not routing and plain >= 3
    identifier, path = pattern("identifier"), pattern("path")
    implementation = bool(pattern("implementation").search(stripped))
    phrase = not routing and not sentence and plain == 2 and not any(
        identifier.search(w) or path.search(w) for w in said)
    kinds = vocabulary().kinds
    kinds_named = frozenset(k for w in said for k in kinds.get(fold(w), ()))
    task = bool(pattern("task").search(stripped))
    # a unit is asked for: who owns a thing, where one changes it, which package holds it, where its code is; a
    # question asking which unit of a kind, or where things are kept, asks for one whatever its verb ("which
    # package implements…", "where do the built-in environments live")
    kept = bool(pattern("kept_where").search(fold(stripped))) and not pattern("location").search(fold(stripped))
    asks_unit = routing and not task and bool(kind_asked or kept or (not implementation and (
        kinds_named or pattern("unit_asked").search(fold(stripped)) or pattern("where_to_change").search(stripped))))
    return QueryShape(
        query=query, words=words, naming=len(said) <= 2,
        whole=fold(stripped).removesuffix("()").removeprefix("./").rstrip("/"),
        routing=routing, asks_change=bool(pattern("change").search(query)), code_shaped=code_shaped,
        symbol_shaped=code_shaped and not path_shaped,
        identifier=one_word and not path_shaped and bool(identifier.search(stripped)),
        asks_implementation=implementation, asks_task=task, asks_unit=asks_unit,
        asks_where_to_edit=bool(pattern("where_to_edit").search(fold(stripped))),
        asks_configuration=task and bool(pattern("configure").search(fold(stripped))),
        asks_peripheral=any(fold(w) in vocabulary().words["peripheral"] for w in said),
        asks_news=any(fold(w) in vocabulary().words["news"] for w in said),
        asks_shared=routing and any(fold(w) in vocabulary().words["shared"] for w in said),
        kinds_named=kinds_named,
        sentence=sentence, phrase=phrase, compounds=compounds(said),
        form=form(code_shaped, implementation, sentence, phrase),
        file_words=content_words(words) if implementation else ())


def form(code_shaped: bool, implementation: bool, sentence: bool, phrase: bool) -> str:
    """The form that decides between a module and a page, by precedence: "name" (a symbol or a path),
    "implementation" (how something works), "sentence", "phrase", or "" (none of them)."""
    if code_shaped:
        return "name"
    if implementation:
        return "implementation"
    if sentence:
        return "sentence"
    return "phrase" if phrase else ""


COMPOUND_WORDS = 4  # the most adjacent words read as one name


def compounds(words: list[str]) -> frozenset[str]:
    """Each run of two to COMPOUND_WORDS adjacent words of the query, none a stopword, written as one name (the
    last also singular): a name written as one word is said as its words (`user profile` -> userprofile,
    `import.meta.glob` -> importmetaglob)."""
    folded = [fold(w) for w in words]
    plain = [w not in STOPWORDS and w.isalnum() and len(w) >= 2 for w in folded]
    found: set[str] = set()
    for start in range(len(folded) - 1):
        joined = folded[start]
        for last in range(start + 1, min(len(folded), start + COMPOUND_WORDS)):
            if not plain[start] or not plain[last]:
                break
            found.update((joined + folded[last], joined + singularize(folded[last])))
            joined += folded[last]
    return frozenset(found)


def word_shares(words: list[str], corrected: dict[str, str]) -> dict[str, float]:
    """Per query token, the share of its word's weight it carries: 1 for a plain word or a path, 1/n for
    each of the n tokens a compound identifier expands to (the whole and its parts); a corrected word's
    replacement carries what the word did. A word the query says weighs once: its parts do not count it again."""
    shares: dict[str, float] = {}
    for word in words:
        if "/" in word:
            continue  # a path says several names (its folders and its file), each weighing a word
        expanded = tokens(word, unique=True)
        for token in expanded:
            token = corrected.get(token, token)
            shares[token] = max(shares.get(token, 0.0), 1 / len(expanded))
    return shares
