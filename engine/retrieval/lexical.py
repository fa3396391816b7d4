"""The lexical index: tantivy in RAM over the lexicon's tokens.

Text is tokenized in Python (`engine.lexicon`), indexed with tantivy's whitespace tokenizer and queried with
term queries, so one tokenizer governs both sides and no user text reaches tantivy's query parser.

Two scoring layouts are supported:
- `combined` (the default): one extra field in which each field's tokens are repeated `weight` times. Term
  frequencies are weighted before BM25 saturates them, as in BM25F, so a term in a short title keeps its
  advantage over the same term repeated in a long body.
- `fields`: one BM25 per field, boosted by its weight and summed (tantivy's per-field boosts).
`docbridge bench retrieval --lexical fields` compares the two on a suite (see the README for the figures).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import tantivy

from engine.lexicon import tokens
from engine.retrieval.project import FIELDS, Entry

K1, B = 1.2, 0.75  # fixed inside tantivy; recorded in the index header
SCORE_SCALE = 50 / (K1 + 1)  # tantivy's BM25 carries (k1 + 1); the ranking's scale expects it without
WHITESPACE = "ws"


@dataclass(slots=True)
class Hit:
    entry: int
    bm25: float


class LexicalIndex:
    def __init__(self, entries: list[Entry], weights: dict[str, float], mode: str = "combined") -> None:
        if mode not in ("combined", "fields"):
            raise ValueError(f"unknown lexical mode {mode!r}")
        self.mode = mode
        self.weights = {f: float(weights.get(f, 0.0)) for f in FIELDS if weights.get(f, 0.0) > 0}
        self.count = len(entries)
        # per entry: token -> bit mask of the fields containing it (interned tokens; one small dict per entry
        # instead of a set per field keeps a large repository's index in memory cheaply)
        self.field_masks: list[dict[str, int]] = []
        bits = {name: 1 << index for index, name in enumerate(FIELDS)}
        builder = tantivy.SchemaBuilder()
        builder.add_unsigned_field("n", stored=True)
        names = ["all"] if mode == "combined" else list(self.weights)
        for name in names:
            builder.add_text_field(name, stored=False, tokenizer_name=WHITESPACE)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.index.register_tokenizer(WHITESPACE, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        for number, entry in enumerate(entries):
            per_field = {name: tokens(entry.fields.get(name, "")) for name in FIELDS}
            masks: dict[str, int] = {}
            for name, values in per_field.items():
                for value in values:
                    token = sys.intern(value)
                    masks[token] = masks.get(token, 0) | bits[name]
            self.field_masks.append(masks)
            document = tantivy.Document(n=number)
            if mode == "combined":
                parts = []
                for name, weight in self.weights.items():
                    repeat = max(1, round(weight))
                    text = " ".join(per_field[name])
                    if text:
                        parts.extend([text] * repeat)
                document.add_text("all", " ".join(parts))
            else:
                for name in self.weights:
                    document.add_text(name, " ".join(per_field[name]))
            writer.add_document(document)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self._df: dict[str, int] = {}
        self._vocabulary: list[str] | None = None

    def vocabulary(self) -> list[str]:
        """Every indexed token (for typo-tolerant expansion of a query term that matches nothing)."""
        if self._vocabulary is None:
            self._vocabulary = sorted({t for masks in self.field_masks for t in masks})
        return self._vocabulary

    def doc_freq(self, token: str) -> int:
        """How many entries contain `token` in any indexed field."""
        cached = self._df.get(token)
        if cached is None:
            if self.mode == "combined":
                cached = self.searcher.doc_freq("all", token)
            else:
                cached = sum(1 for masks in self.field_masks if token in masks)
            self._df[token] = cached
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

    def search(self, query_tokens: list[str], limit: int, boosts: dict[str, float] | None = None) -> list[Hit]:
        if not query_tokens or self.count == 0:
            return []
        result = self.searcher.search(self._query(query_tokens, boosts or {}), limit)
        hits = []
        for score, address in result.hits:
            number = self.searcher.doc(address)["n"][0]
            hits.append(Hit(int(number), round(score * SCORE_SCALE, 6)))
        return hits

    def matched(self, entry: int, query_tokens: list[str]) -> dict[str, list[str]]:
        """Which query terms each field of an entry contains (for explanations)."""
        out = {}
        masks = self.field_masks[entry]
        for index, name in enumerate(FIELDS):
            if name not in self.weights:
                continue
            bit = 1 << index
            found = sorted({t for t in query_tokens if masks.get(t, 0) & bit})
            if found:
                out[name] = found
        return out
