"""The semantic index's lexical side: BM25 over its chunks, kept beside the vectors as `bm25.json`.

Each chunk is indexed by its heading trail (or the declaration a doc comment documents) and its passage, with the
lexicon's tokens (docbridge.engine.base.lexicon: the same words the lexical ranking matches). Hybrid search ranks
entities with the projection's BM25 and the chunks' cosines (docbridge.engine.semantic.hybrid); what this index
ranks is passages: the chunk a result points at is the one of its chunks that fuses best its BM25 rank and its
cosine rank over every chunk (Reciprocal Rank Fusion, as the reference's hybrid search ranks chunks), so a passage
that holds the query's words wins over one that is only near it in meaning.

Scores are Okapi BM25, `idf · tf·(k1 + 1) / (tf + k1·(1 − b + b·length/average))` with
`idf = ln(1 + (N − df + 0.5)/(df + 0.5))`; k1 and b are `retrieval.params` (1.2 and 0.75 unless configured).

`bm25.json` is `{"version": 1, "tokenizer": N, "lengths": "n n …", "postings": {term: "row row:tf …"}}`: the
tokenizer's revision (terms cut by another are cut again), each chunk's token count, and per term (sorted) the
rows holding it, ascending, with `:tf` when it occurs more than once. Loading it is one `json.loads` of strings; a
search decodes the postings of its own terms only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from docbridge.engine.base.lexicon import TOKENIZER_REVISION, tokens
from docbridge.engine.semantic.chunks import Chunk

BM25_VERSION = 1
K1, B = 1.2, 0.75


def chunk_terms(chunk: Chunk) -> dict[str, int]:
    """The tokens of a chunk's heading and passage, with their counts."""
    counts: dict[str, int] = {}
    for token in tokens(f"{chunk.heading}\n{chunk.text}"):
        counts[token] = counts.get(token, 0) + 1
    return counts


class ChunkBM25:
    """An inverted index of the chunks' terms (row numbers are the semantic index's rows)."""

    def __init__(self, lengths: list[int], postings: dict[str, str]) -> None:
        self.lengths = lengths
        self.postings = postings
        self._rows: list[dict[str, int]] | None = None
        self._decoded: dict[str, tuple[Any, Any]] = {}
        self._length_array: Any = None

    @classmethod
    def build(cls, rows: list[dict[str, int]]) -> ChunkBM25:
        """The index of chunks whose terms are `rows` (one count map per chunk, in row order)."""
        lists: dict[str, list[str]] = {}
        for row, counts in enumerate(rows):
            for term, count in counts.items():
                lists.setdefault(term, []).append(f"{row}:{count}" if count > 1 else str(row))
        index = cls([sum(counts.values()) for counts in rows], {term: " ".join(lists[term]) for term in sorted(lists)})
        index._rows = rows
        return index

    def rows(self) -> list[dict[str, int]]:
        """Each chunk's terms with their counts (what a later update reuses for the chunks it keeps)."""
        if self._rows is None:
            rows: list[dict[str, int]] = [{} for _ in self.lengths]
            for term, packed in self.postings.items():
                for item in packed.split():
                    row, _, count = item.partition(":")
                    rows[int(row)][term] = int(count) if count else 1
            self._rows = rows
        return self._rows

    # ------------------------------------------------------------------ disk

    def to_bytes(self) -> bytes:
        return json.dumps({"version": BM25_VERSION, "tokenizer": TOKENIZER_REVISION,
                           "lengths": " ".join(map(str, self.lengths)), "postings": self.postings},
                          ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, count: int) -> ChunkBM25 | None:
        """The index `to_bytes` wrote for `count` chunks; None when its terms were cut by another revision of the
        tokenizer (they are cut again from the chunks' text; the vectors stay); ValueError when it is not one."""
        loaded = json.loads(data.decode("utf-8"))
        if not isinstance(loaded, dict) or loaded.get("version") != BM25_VERSION:
            raise ValueError("not a chunk BM25 index of this version")
        if loaded.get("tokenizer", 1) != TOKENIZER_REVISION:
            return None
        lengths_text, postings = loaded.get("lengths"), loaded.get("postings")
        if not isinstance(lengths_text, str) or not isinstance(postings, dict) or \
                not all(isinstance(k, str) and isinstance(v, str) for k, v in postings.items()):
            raise ValueError("malformed chunk BM25 index")
        lengths = [int(n) for n in lengths_text.split()]
        if len(lengths) != count:
            raise ValueError(f"the chunk BM25 index holds {len(lengths)} chunks, not {count}")
        return cls(lengths, postings)

    # ------------------------------------------------------------------ scoring

    def _postings(self, term: str) -> tuple[Any, Any] | None:
        import numpy as np
        found = self._decoded.get(term)
        if found is None:
            packed = self.postings.get(term)
            if not packed:
                return None
            rows, counts = [], []
            for item in packed.split():
                row, _, count = item.partition(":")
                rows.append(int(row))
                counts.append(int(count) if count else 1)
            found = self._decoded[term] = (np.asarray(rows, dtype=np.int64), np.asarray(counts, dtype=np.float64))
        return found

    def scores(self, terms: Iterable[str], k1: float = K1, b: float = B) -> Any:
        """Every chunk's BM25 for `terms` (a float64 array, one value per row; 0 where no term occurs)."""
        import numpy as np
        count = len(self.lengths)
        out = np.zeros(count, dtype=np.float64)
        if not count:
            return out
        if self._length_array is None:
            self._length_array = np.asarray(self.lengths, dtype=np.float64)
        lengths = self._length_array
        average = float(lengths.mean())
        scale = k1 * (1 - b + b * lengths / average) if average > 0 else np.full(count, k1)
        for term in dict.fromkeys(terms):
            found = self._postings(term)
            if found is None:
                continue
            rows, tf = found
            if len(rows) and (int(rows.max()) >= count or int(rows.min()) < 0):
                raise ValueError(f"the chunk BM25 index names a row beyond its {count} chunks")
            df = len(rows)
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            out[rows] += idf * tf * (k1 + 1) / (tf + scale[rows])
        return out
