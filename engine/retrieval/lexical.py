"""The lexical index: tantivy over the lexicon's tokens, in memory or on disk.

Text is tokenized in Python (`engine.base.lexicon`), indexed with tantivy's whitespace tokenizer and queried with
term queries, so one tokenizer governs both sides and no user text reaches tantivy's query parser.

Two scoring layouts are supported:
- `combined` (the default): one extra field in which each field's tokens are repeated `weight` times. Term
  frequencies are weighted before BM25 saturates them, as in BM25F, so a term in a short title keeps its
  advantage over the same term repeated in a long body.
- `fields`: one BM25 per field, boosted by its weight and summed (tantivy's per-field boosts).
`docbridge bench retrieval --lexical fields` compares the two on a suite (see the README for the figures).

A module's code words (the names its code is written with, `Entry.code`) are a field of their own in the combined
layout, outside the combined field: a search asks for them (`code=True`) only for a question about how something
is implemented, where their BM25, weighted CODE_WEIGHT, is added to the combined field's. For a name, a task or a
topic, a name a module merely uses would pull it ahead of the module that declares it or the page that explains
it; for a mechanism, the module written with the question's words is the one that does it.

BM25's parameters: tantivy fixes k1 = 1.2 and b = 0.75, and the default ranking is its score. Other values
(`retrieval.params`, `tune`) rescore: the hits are gathered by tantivy as usual (twice as many as asked for),
then each one's score is recomputed from what tantivy's explanation of it records (every matched term's idf,
frequency, field length and the average length, with its boosts) with the configured k1 and b, and the hits
are ordered by that score. A hit tantivy would only rank beyond twice the depth asked for is not considered.

A combined index can be written to a directory and opened again (`docbridge.engine.retrieval.store` keeps it under
`.docbridge/index/`): opening costs milliseconds where building costs seconds. Which fields of an entry hold
a query term (for `aboutness` and `--explain`) is worked out per entry when first asked, from the entry's
own text, so an index opened from disk answers exactly like one just built.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import math
import re
import struct
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import tantivy
from docbridge.engine.base.heap import release_free_memory, remember
from docbridge.engine.base.lexicon import forget_memos, tokens
from docbridge.engine.retrieval.project import FIELDS, Entry

K1, B = 1.2, 0.75  # fixed inside tantivy; recorded in the index header
SCORE_SCALE = 50 / (K1 + 1)  # tantivy's BM25 carries (k1 + 1); the ranking's scale expects it without
RESCORE_DEPTH = 2  # with other parameters, this many times the hits asked for are gathered and rescored
WHITESPACE = "ws"
# tantivy's writer fills an arena of this size before it writes a segment: its least. A 64 MB arena added 12 MB
# to the build's peak on a 20,000-file tree (a second of several segments merged costs about 4 % of the build)
WRITER_HEAP = 15_000_000
BODY = "body"
CODE = "code"
KIND = "kind"
CODE_WEIGHT = 1.0  # the code words' BM25 beside the combined field's (whose weights are the body's 1 and up)
_CODE_FIELD = 2  # the code field's number in the combined schema (after `n` and `all`), as explanations name it
_BITS = {name: 1 << index for index, name in enumerate(FIELDS)}
_NAMING = _BITS["title"] | _BITS["headings"] | _BITS["path"]
_TITLING = _BITS["title"] | _BITS["path"]


@dataclass(slots=True)
class Hit:
    entry: int
    bm25: float
    code: float = 0.0  # the part of `bm25` the entry's code words earned (a search with `code`)


def _pack(per_field: dict[str, list[str]]) -> str:
    masks: dict[str, int] = {}
    for name, values in per_field.items():
        if name == BODY:
            continue
        bit = _BITS[name]
        for value in values:
            masks[value] = masks.get(value, 0) | bit
    return " ".join(f"{token}:{mask}" for token, mask in masks.items())  # tokens hold no space and no colon


def _split_words(joined: str) -> list[str]:
    return joined.split("\n") if joined else []


# the most words a build holds as a set at once: every word of a 100,000-file tree, about 700,000, was 65 MB of
# its peak as one set; in runs of this many, sorted and joined, they cost a tenth of that
VOCABULARY_RUN = 65_536


_LINE = re.compile(r"[^\n]+")


def _lines(joined: str) -> Iterator[str]:
    """The words of a joined vocabulary, one at a time (never a list of them all)."""
    return (match.group() for match in _LINE.finditer(joined))


def _merged_runs(runs: list[str]) -> str:
    """The words of sorted runs (each one joined by line breaks), sorted, each once, joined by line breaks."""
    runs = [run for run in runs if run]
    if len(runs) <= 1:
        return runs[0] if runs else ""
    return _joined_once(heapq.merge(*(_lines(run) for run in runs)))


def _joined_once(words: Iterable[str]) -> str:
    """Sorted words, each once, joined by line breaks, written as they come."""
    out = io.StringIO()
    previous = None
    for word in words:
        if word != previous:
            if previous is not None:
                out.write("\n")
            out.write(word)
            previous = word
    return out.getvalue()


def _schema(names: list[str]) -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("n", stored=True, indexed=True)
    for name in names:
        # term queries only: frequencies, no positions
        builder.add_text_field(name, stored=False, tokenizer_name=WHITESPACE, index_option="freq")
    # the entry's kind, last (the fields before it keep their numbers), to filter a search by kind (`search(kinds=)`)
    builder.add_text_field(KIND, stored=False, tokenizer_name=WHITESPACE, index_option="basic")
    return builder.build()


class LexicalIndex:
    # every indexed token, sorted, as one string (a line each): listed from disk or from patches when first asked;
    # a list of them, kept, was 50 MB of a 100,000-file tree's server once a query had a word to correct
    _vocabulary: str | None
    _load_vocabulary: Callable[[], list[str]] | None  # what lists it when first asked
    _packed: list[str] | None  # per entry, its tokens packed (loaded from disk when first asked)
    _lengths: list[int] | None  # per entry, its combined field's length in tokens (built here, not read from disk)

    def __init__(self, entries: list[Entry], weights: dict[str, float], mode: str = "combined",
                 path: Path | None = None, packed: list[str] | None = None, vocabulary: str | None = None) -> None:
        """Build the index (in memory, or in the empty directory `path`); `packed`, `vocabulary`: these entries'
        packed masks and joined words, known (an index of the same entries built again), shared instead of made
        again (a set of every word was most of what a rebuild held beside the index it replaces)."""
        if mode not in ("combined", "fields"):
            raise ValueError(f"unknown lexical mode {mode!r}")
        if path is not None and mode != "combined":
            raise ValueError("only the combined layout is written to disk")
        self._setup(entries, weights, mode)
        self.schema = _schema(["all", CODE] if mode == "combined" else list(self.weights))
        self.index = tantivy.Index(self.schema, path=str(path)) if path is not None else tantivy.Index(self.schema)
        self.index.register_tokenizer(WHITESPACE, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        words: set[str] = set()
        runs: list[str] = []  # the words seen, sorted and joined a run at a time (`_merged_runs`)
        if packed is not None and len(packed) != len(entries):
            raise ValueError("the packed masks are not of these entries")
        self._packed = packed if packed is not None else []
        lengths: list[int] = []
        code_tokens = 0
        for number, entry in enumerate(entries):
            per_field = {name: tokens(entry.fields.get(name, "")) for name in FIELDS}
            if vocabulary is None:
                for values in per_field.values():
                    words.update(values)
                if len(words) >= VOCABULARY_RUN:
                    runs.append("\n".join(sorted(words)))
                    words = set()
            if packed is None:
                self._packed.append(_pack(per_field))
            document, length, code_length = self._document(number, per_field, entry.code, entry.kind)
            lengths.append(length)
            code_tokens += code_length
            writer.add_document(document)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        # one string, never split whole once built (`words_starting`): a list of 140,000 strings held 9 MB of a
        # 20,000-file tree's index, the string 1 MB
        if vocabulary is None:
            runs.append("\n".join(sorted(words)))
            del words
            vocabulary = _merged_runs(runs)
        self._vocabulary = vocabulary
        self._lengths, self._tokens, self._code_tokens = lengths, sum(lengths), code_tokens
        self._shared = _Shared(self)
        forget_memos()

    def patched_since_built(self) -> bool:
        """Whether this index was patched (`patched`): it then rescores every hit, and a build is exact."""
        return self._stale

    def _document(self, number: int, per_field: dict[str, list[str]], code: str, kind: str) -> tuple[Any, int, int]:
        """The index's document for entry `number` (of this kind), and the lengths of its combined field and its
        code words in tokens."""
        document = tantivy.Document()
        document.add_unsigned("n", number)
        document.add_text(KIND, kind)
        length = code_length = 0
        if self.mode == "combined":
            parts = []
            for name, weight in self.weights.items():
                repeat = max(1, round(weight))
                text = " ".join(per_field[name])
                if text:
                    parts.extend([text] * repeat)
                    length += len(per_field[name]) * repeat
            document.add_text("all", " ".join(parts))
            if code:
                code_tokens = tokens(code)
                code_length = len(code_tokens)
                document.add_text(CODE, " ".join(code_tokens))
        else:
            for name in self.weights:
                document.add_text(name, " ".join(per_field[name]))
        return document, length, code_length

    def patched(self, entries: list[Entry], changed: tuple[int, ...]) -> LexicalIndex | None:
        """This index with the entries at the positions `changed` replaced by `entries`' (the same positions, the
        same weights): their documents are deleted and added again in place, which costs milliseconds where a
        build costs seconds. None when this index cannot be patched (read from disk, per-field, or no longer
        the newest version of its tantivy index: a patch is made from the newest only).

        tantivy keeps counting a deleted document in its BM25 statistics until segments merge, so a patched
        index scores its hits again with the statistics of the documents alive (`_rescored` with `_Statistics`):
        a fresh build's statistics, the arithmetic in double precision rounded to single, so results whose fresh
        scores are a unit in the last place apart may swap (tantivy sums in an order of its own)."""
        shared = getattr(self, "_shared", None)
        if shared is None or self.mode != "combined" or self._lengths is None or len(entries) != self.count:
            return None
        if set(self.weights) != set(FIELDS):
            return None  # a field weighted 0 is in the vocabulary but not in the index, which the patch reads
        new = LexicalIndex.__new__(LexicalIndex)
        new._setup(entries, self.weights, self.mode)
        new.k1, new.b = self.k1, self.b
        new.index, new.schema, new._shared = self.index, self.schema, shared
        packed = list(self.packed_masks())
        lengths = list(self._lengths)
        code_tokens = self._code_tokens
        added: set[str] = set()
        removed: set[str] = set()
        with shared.lock:
            if shared.newest() is not self:
                return None
            shared.head = None  # until this patch is complete: a failure leaves nothing to patch from
            writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
            try:
                for number in changed:
                    removed |= self._all_tokens(number)
                    per_field = {name: tokens(entries[number].fields.get(name, "")) for name in FIELDS}
                    for values in per_field.values():
                        added.update(values)
                    packed[number] = _pack(per_field)
                    code_tokens -= len(tokens(self.entries[number].code))
                    document, lengths[number], code_length = new._document(number, per_field, entries[number].code,
                                                                           entries[number].kind)
                    code_tokens += code_length
                    writer.delete_documents_by_query(tantivy.Query.term_query(self.schema, "n", number))
                    writer.add_document(document)
                writer.commit()
            except BaseException:
                with contextlib.suppress(Exception):
                    writer.rollback()
                raise
            finally:
                with contextlib.suppress(Exception):
                    writer.wait_merging_threads()  # the writer is released (it holds the index's lock)
            self.index.reload()
            new.searcher = self.index.searcher()
            shared.head = weakref.ref(new)
        # the writer's arena and the segments merged away, freed, given back: glibc kept them, and a server's
        # first patches grew it by 28 MB on a 20,000-file tree (then 8 MB, trimmed; a trim takes about a millisecond)
        release_free_memory()
        new._packed, new._lengths, new._tokens, new._code_tokens = packed, lengths, sum(lengths), code_tokens
        new._stale = True
        # the vocabulary: the last one listed, with the words of every patch since checked when first asked
        if self._vocabulary is not None:
            new._words = (self._vocabulary, frozenset(added | removed))
        elif self._stale:  # itself a patch: the words of the index it was patched from, and every word moved since
            new._words = (self._words[0], self._words[1] | added | removed)
        else:
            new._words = (self._load_vocabulary or list, frozenset(added | removed))
        # (`vocabulary` lists it from `_words`: a closure here over `new` made a cycle, and each patched index
        # waited for a full collection to be freed, 3 MB a patch on a 100,042-file tree)
        new._body_masks.update((k, v) for k, v in self._body_masks.items() if k not in changed)
        return new

    @classmethod
    def open(cls, path: Path, entries: list[Entry], weights: dict[str, float],
             vocabulary: Callable[[], list[str]], packed: Callable[[], list[str]],
             bodies: Callable[[], list[str]] | None = None) -> LexicalIndex:
        """A combined index written earlier to `path` for exactly these entries and weights; `vocabulary`
        loads its words when a query first needs them (typo correction), `packed` the field masks of every
        entry (`packed_masks`) when a query first asks which fields hold its terms, and `bodies` the body
        text of every entry, when the entries came without it, once an explanation asks for it."""
        self = cls.__new__(cls)
        self._setup(entries, weights, "combined")
        self._load_packed = packed
        self._load_bodies = bodies
        self.index = tantivy.Index.open(str(path))
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        if self.searcher.num_docs != len(entries):
            raise ValueError(f"the index at {path} holds {self.searcher.num_docs} entries, not {len(entries)}")
        self._load_vocabulary = vocabulary
        return self

    def _setup(self, entries: list[Entry], weights: dict[str, float], mode: str) -> None:
        self.mode = mode
        self.entries = entries
        self.weights = {f: float(weights.get(f, 0.0)) for f in FIELDS if weights.get(f, 0.0) > 0}
        self.count = len(entries)
        self.k1, self.b = K1, B  # BM25's parameters (`tune`)
        # per entry, the tokens of its body, for the entries searches reached last (`remember`)
        self._body_masks: dict[int, frozenset[str]] = {}
        self._df: dict[str, int] = {}
        self._vocabulary = None
        self._load_vocabulary = None
        self._packed = None
        self._load_packed: Callable[[], list[str]] | None = None
        self._load_bodies: Callable[[], list[str]] | None = None
        self._bodies: list[str] | None = None
        self._stale = False  # patched: tantivy's statistics still count deleted documents (`patched`)
        # patched: the vocabulary of the index patched first (joined, or how to list it), and the words moved since
        self._words: tuple[str | Callable[[], list[str]], frozenset[str]] = ("", frozenset())
        self._lengths = None
        self._tokens = 0  # the sum of `_lengths`
        self._code_tokens = 0  # the code words' tokens, all entries together
        self._code_df: dict[str, int] = {}
        # the tokens `masks_of` was last asked and their needles (`token:`), swapped whole (threads may search)
        self._needles: tuple[list[str] | None, list[str]] = (None, [])

    def vocabulary(self) -> list[str]:
        """Every indexed token, sorted (written beside an index kept on disk)."""
        return _split_words(self.joined_vocabulary())

    def words_starting(self, initial: str) -> list[str]:
        """The indexed tokens that begin with `initial`, sorted (for typo-tolerant expansion of a query term that
        matches nothing: a correction keeps a word's first letter). They are one run of the sorted vocabulary."""
        joined = self.joined_vocabulary()
        if joined.startswith(initial):
            start = 0
        else:
            found = joined.find("\n" + initial)
            if found < 0:
                return []
            start = found + 1
        after = re.compile("\n[^" + re.escape(initial) + "]").search(joined, start)
        return _split_words(joined[start:after.start() if after is not None else len(joined)])

    def joined_vocabulary(self) -> str:
        """Every indexed token, sorted, one a line."""
        if self._vocabulary is None:
            if self._stale:  # a patch: the words of the index patched first, those of every patch since checked
                # read one at a time: a list and a set of every word of a 100,000-file tree were 100 MB at once
                source, moved = self._words
                kept = (t for t in (_lines(source) if isinstance(source, str) else source()) if t not in moved)
                self._vocabulary = _joined_once(heapq.merge(kept, sorted(t for t in moved if self.doc_freq(t))))
            elif self._load_vocabulary is not None:
                self._vocabulary = "\n".join(self._load_vocabulary())
            else:
                self._vocabulary = "\n".join(sorted({t for i in range(self.count) for t in self._all_tokens(i)}))
        return self._vocabulary

    def _all_tokens(self, entry: int) -> set[str]:
        return set(self.masks(entry)) | self.body_tokens(entry)

    def doc_freq(self, token: str) -> int:
        """How many entries contain `token` in any indexed field."""
        cached = self._df.get(token)
        if cached is None:
            if self._stale:  # documents alive only (tantivy's count still holds deleted ones)
                found: Any = self.searcher.search(tantivy.Query.term_query(self.schema, "all", token), 1, count=True)
                cached = int(found.count)
            elif self.mode == "combined":
                cached = self.searcher.doc_freq("all", token)
            else:
                cached = sum(1 for i in range(self.count) if token in self._all_tokens(i))
            self._df[token] = cached
        return cached

    def code_doc_freq(self, token: str) -> int:
        """How many entries' code words hold `token` (documents alive only: a patched index's tantivy still
        counts deleted ones)."""
        if self.mode != "combined":
            return 0  # the per-field layout has no code words
        cached = self._code_df.get(token)
        if cached is None:
            found: Any = self.searcher.search(tantivy.Query.term_query(self.schema, CODE, token), 1, count=True)
            cached = self._code_df[token] = int(found.count)
        return cached

    def idf(self, token: str) -> float:
        df = self.doc_freq(token)
        return max(0.0, math.log(1 + (self.count - df + 0.5) / (df + 0.5))) if df else 0.0

    def _query(self, query_tokens: list[str], boosts: dict[str, float]) -> Any:
        clauses = []
        for token in query_tokens:
            factor = boosts.get(token, 1.0)
            if self.mode == "combined":
                term = tantivy.Query.term_query(self.schema, "all", token)
                clauses.append((tantivy.Occur.Should, term if factor == 1.0 else tantivy.Query.boost_query(
                    term, factor)))
            else:
                for name, weight in self.weights.items():
                    term = tantivy.Query.term_query(self.schema, name, token)
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(term, weight * factor)))
        return tantivy.Query.boolean_query(clauses)

    def tune(self, params: dict[str, float]) -> None:
        """BM25 with these `k1` and `b` (each defaulting to tantivy's) from now on; see the module's note."""
        self.k1, self.b = float(params.get("k1", K1)), float(params.get("b", B))

    def search(self, query_tokens: list[str], limit: int, boosts: dict[str, float] | None = None,
               code: bool = False, kinds: tuple[str, ...] = ()) -> list[Hit]:
        """The best `limit` entries for the tokens (each weighted by its boost, 1 unless given); with `code`, the
        modules' code words count too (a question about how something is implemented); with `kinds`, only the
        entries of these kinds, each scored as without it."""
        if not query_tokens or self.count == 0:
            return []
        query = self._query(query_tokens, boosts or {})
        code_query = None
        if code and self.mode == "combined":
            code_query = tantivy.Query.boolean_query([
                (tantivy.Occur.Should, tantivy.Query.boost_query(tantivy.Query.term_query(self.schema, CODE, token),
                                                                 CODE_WEIGHT * (boosts or {}).get(token, 1.0)))
                for token in query_tokens])
            query = tantivy.Query.boolean_query([(tantivy.Occur.Should, query), (tantivy.Occur.Should, code_query)])
        if kinds:  # a filter that adds nothing to the score: a term per kind (a set of entry numbers took 5 ms)
            only = tantivy.Query.boost_query(tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, KIND, kind)) for kind in kinds]), 0.0)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)])
        hits = self._hits(query, limit, None)
        if code_query is not None and hits:
            # what the code words earned of each hit's score: shown, and not counted by the ranking's floor
            earned = {hit.entry: hit.bm25 for hit in self._hits(code_query, len(hits), [h.entry for h in hits])}
            for hit in hits:
                hit.code = min(hit.bm25, earned.get(hit.entry, 0.0))
        return hits

    def _hits(self, query: Any, limit: int, among: list[int] | None) -> list[Hit]:
        """The best `limit` entries for a tantivy query (among these entries only, when given), scored as the
        search's BM25 parameters and statistics say."""
        if among is not None:  # a filter that adds nothing to the score
            only = tantivy.Query.boost_query(tantivy.Query.term_set_query(self.schema, "n", among), 0.0)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)])
        tuned = (self.k1, self.b) != (K1, B) or self._stale
        result = self.searcher.search(query, limit * RESCORE_DEPTH if tuned else limit)
        statistics = _Statistics(self.count, self.doc_freq, self._tokens / self.count, self.code_doc_freq,
                                 self._code_tokens / self.count) if self._stale else None
        hits = []
        for score, address in result.hits:
            number = self.searcher.doc(address)["n"][0]
            if tuned:
                rescored = _rescored(orjson.loads(query.explain(self.searcher, address).to_json()), self.k1, self.b,
                                     statistics)
                if rescored is None:
                    value = score * SCORE_SCALE
                elif self._stale and (self.k1, self.b) == (K1, B):
                    # in tantivy's single precision, as a fresh build's score is: scores a hair apart there tie
                    value = _single(rescored * (K1 + 1)) * SCORE_SCALE
                else:
                    value = 50 * rescored
            else:
                value = score * SCORE_SCALE
            hits.append(Hit(int(number), round(value, 6)))
        if tuned:  # a stable sort: tantivy's order breaks ties (a patched index's, by entry, as a fresh build's)
            hits = sorted(hits, key=(lambda hit: (-hit.bm25, hit.entry)) if self._stale else (lambda hit: -hit.bm25))
            hits = hits[:limit]
        return hits

    def code_held(self, entry: int, query_tokens: list[str]) -> list[str]:
        """The query terms an entry's code words hold, asked of the index (for an explanation)."""
        if self.mode != "combined":
            return []
        only = tantivy.Query.term_query(self.schema, "n", entry)
        held = []
        for token in dict.fromkeys(query_tokens):
            term = tantivy.Query.term_query(self.schema, CODE, token)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, term), (tantivy.Occur.Must, only)])
            if self.searcher.search(query, 1).hits:
                held.append(token)
        return sorted(held)

    def packed_masks(self) -> list[str]:
        """Per entry, the fields other than the body that hold each of its tokens, as `token:mask` words: what
        an index written to disk keeps so that opening it tokenizes nothing."""
        if self._packed is None:
            self._packed = self._load_packed() if self._load_packed is not None else [
                _pack({name: tokens(e.fields.get(name, "")) for name in FIELDS if name != BODY}) for e in self.entries]
        return self._packed

    def containing(self, entries: list[int], query_tokens: list[str]) -> dict[int, set[str]]:
        """Which of the query's terms each of `entries` holds in any field, asked of the index itself (the
        combined field holds every weighted field), so no entry's text is tokenized again."""
        held: dict[int, set[str]] = {e: set() for e in entries}
        if not entries:
            return held
        if self.mode != "combined":
            for entry in entries:
                held[entry] = set(self.masks(entry)) & set(query_tokens) | (self.body_tokens(entry) & set(query_tokens))
            return held
        only = tantivy.Query.term_set_query(self.schema, "n", list(entries))
        for token in dict.fromkeys(query_tokens):
            term = tantivy.Query.term_query(self.schema, "all", token)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, term), (tantivy.Occur.Must, only)])
            for _score, address in self.searcher.search(query, len(entries)).hits:
                held[int(self.searcher.doc(address)["n"][0])].add(token)
        return held

    def masks(self, entry: int) -> dict[str, int]:
        """Token -> bit mask of the fields other than the body that hold it."""
        found = {}
        for word in self.packed_masks()[entry].split():
            token, _, mask = word.rpartition(":")
            found[token] = int(mask)
        return found

    def masks_of(self, entry: int, query_tokens: list[str]) -> list[int]:
        """The bit masks of the fields other than the body that hold each of `query_tokens`, read from the
        entry's packed masks where they stand (a dictionary per entry a search had reached was 3.7 KB an entry,
        and grew with a long session's searches to most of the index: 370 MB on a 100,000-file tree)."""
        packed = self.packed_masks()[entry]
        asked, needles = self._needles
        if asked is not query_tokens:  # a search asks of every candidate with one list of tokens
            needles = [token + ":" for token in query_tokens]
            self._needles = (query_tokens, needles)
        out = []
        for needle in needles:
            at = packed.find(needle)
            while at > 0 and packed[at - 1] != " ":  # inside another token: the whole one (no space, no colon)
                at = packed.find(needle, at + 1)
            if at < 0:
                out.append(0)
                continue
            start = at + len(needle)
            end = packed.find(" ", start)
            out.append(int(packed[start:] if end < 0 else packed[start:end]))
        return out

    def body_tokens(self, entry: int) -> frozenset[str]:
        found = self._body_masks.get(entry)
        if found is None:
            if self._load_bodies is not None and self._bodies is None:
                self._bodies = self._load_bodies()
            text = self._bodies[entry] if self._bodies is not None else self.entries[entry].fields.get(BODY, "")
            found = remember(self._body_masks, entry, frozenset(tokens(text)))
        return found

    def naming_weight(self, entry: int, query_tokens: list[str], weight: dict[str, float]) -> tuple[float, float]:
        """The summed weight of the query terms an entry's title, headings or path hold (what `aboutness` reads),
        and of those its title or path holds, the packed masks read once."""
        named = titled = 0.0
        for token, mask in zip(query_tokens, self.masks_of(entry, query_tokens)):
            if mask & _NAMING:
                named += weight[token]
            if mask & _TITLING:
                titled += weight[token]
        return named, titled

    def titled(self, entry: int, query_tokens: list[str]) -> list[str]:
        """The query terms an entry's title or path holds (what it is called, not what its sections are)."""
        return [t for t, mask in zip(query_tokens, self.masks_of(entry, query_tokens)) if mask & _TITLING]

    def matched(self, entry: int, query_tokens: list[str], body: bool = True, code: bool = False) -> dict[
            str, list[str]]:
        """Which query terms each field of an entry contains (for aboutness and explanations); the body,
        the longest field, only when asked, and its code words when the search read them (`code`)."""
        out = {}
        unique = list(dict.fromkeys(query_tokens))
        masks = dict(zip(unique, self.masks_of(entry, unique)))
        for name in FIELDS:
            if name not in self.weights:
                continue
            if name == BODY:
                if body:
                    held = self.body_tokens(entry)
                    found = sorted({t for t in query_tokens if t in held})
                else:
                    found = []
            else:
                bit = _BITS[name]
                found = sorted({t for t in query_tokens if masks.get(t, 0) & bit})
            if found:
                out[name] = found
        if code and (in_code := self.code_held(entry, query_tokens)):
            out[CODE] = in_code
        return out


@dataclass(slots=True)
class _Statistics:
    """BM25's statistics over the documents alive: their number, a term's document frequency, the average length."""

    count: int
    doc_freq: Callable[[str], int]
    average: float
    code_doc_freq: Callable[[str], int]  # the same two of the code words' field
    code_average: float


def _field(node: dict[str, Any]) -> int | None:
    """The field number of a TermQuery's explanation (`Term(field=1, ...)`)."""
    for context in node.get("context") or ():
        text = str(context)
        start = text.find("Term(field=")
        if start >= 0:
            digits = text[start + len("Term(field="):].split(",", 1)[0]
            return int(digits) if digits.isdigit() else None
    return None


def _term(node: dict[str, Any]) -> str | None:
    """The term of a TermQuery's explanation (its context reads `Term=Term(field=1, type=Str, "word")`)."""
    for context in node.get("context") or ():
        text = str(context)
        start = text.find('type=Str, "')
        if start >= 0 and text.endswith('")'):
            return text[start + len('type=Str, "'):-2]
    return None


def _single(value: float) -> float:
    """`value` rounded to single precision."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


class _Shared:
    """One tantivy index shared by the versions of a lexical index patched from one another: which of them its
    newest commit holds (only that one may be patched), and a lock for writing."""

    __slots__ = ("head", "lock")

    def __init__(self, head: LexicalIndex) -> None:
        # weakly: the index holds this, and a cycle between them outlived the index when it was replaced (what a
        # build leaves is frozen, never collected: every rebuild after a pause kept the old index in the process)
        self.head: weakref.ref[LexicalIndex] | None = weakref.ref(head)
        self.lock = threading.Lock()

    def newest(self) -> LexicalIndex | None:
        return self.head() if self.head is not None else None


def _rescored(node: dict[str, Any], k1: float, b: float, statistics: _Statistics | None = None) -> float | None:
    """The score tantivy explained in `node` recomputed with `k1` and `b` (and, when given, the idf and average
    length of `statistics`), without tantivy's (k1 + 1) factor (the ranking's scale has none); None when the
    explanation has a shape this does not know."""
    description = str(node.get("description", ""))
    details = node.get("details") or []
    if description.startswith("TermQuery"):
        idf = norm = None
        for detail in details:
            text = str(detail.get("description", ""))
            if text.startswith("idf"):
                idf = float(detail["value"])
            elif text.startswith("freq / (freq"):
                norm = {str(d.get("description", "")).split(",")[0]: float(d["value"])
                        for d in detail.get("details", [])}
        if idf is None or norm is None or not {"freq", "dl", "avgdl"} <= norm.keys():
            return None
        freq, length, average = norm["freq"], norm["dl"], norm["avgdl"]
        if statistics is not None:
            term = _term(node)
            if term is None:
                return None
            on_code = _field(node) == _CODE_FIELD
            df = (statistics.code_doc_freq if on_code else statistics.doc_freq)(term)
            idf = math.log(1 + (statistics.count - df + 0.5) / (df + 0.5))
            average = statistics.code_average if on_code else statistics.average
        scale = 1 - b + b * length / average if average > 0 else 1.0
        return idf * freq / (freq + k1 * scale)
    if description.startswith("Boost x") and len(details) == 1:
        try:
            factor = float(description[len("Boost x"):].split(" ", 1)[0])
        except ValueError:
            return None
        if factor == 0:  # a filter (`search(kinds=...)`, `_hits(among=...)`)
            return 0.0
        inner = _rescored(details[0], k1, b, statistics)
        return None if inner is None else factor * inner
    if description.startswith("BooleanClause"):
        total = 0.0
        for detail in details:
            part = _rescored(detail, k1, b, statistics)
            if part is None:
                return None
            total += part
        return total
    return None
