"""Hashes used across the engine: file bytes, canonical JSON, generated regions."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import orjson


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


EXACT_BELOW = 1 << 20  # bytes


def canonical_bytes(value: Any) -> bytes:
    """Sorted keys, no whitespace, non-ASCII kept, as UTF-8: equal values give equal bytes.

    orjson writes it (five times faster: a large repository's snapshot is hundreds of thousands of these); what it
    refuses (keys that are not strings, integers beyond 64 bits) the standard encoder writes; a lone surrogate,
    which UTF-8 cannot hold, is refused by both (text read from files never has one)."""
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        # orjson's bytes keep the capacity of the buffer it wrote into, 4 KB at least: a snapshot's 143,000
        # relations held 560 MB for 80 MB of text, so a short one is copied to its size (a long one wastes less
        # than it would cost to copy)
        return memoryview(encoded).tobytes() if len(encoded) < EXACT_BELOW else encoded
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")


LIST_PIECE_ITEMS = 256  # items a piece of `canonical_list_pieces` holds


def canonical_list_pieces(values: Iterable[Any], per_piece: int = LIST_PIECE_ITEMS) -> list[bytes]:
    """The `canonical_bytes` of the list of `values`, in pieces (commas and brackets pieces of their own), each
    piece `per_piece` items encoded in one call: a snapshot of 100,000 files has 715,000 relations, and a call
    each was a tenth of writing it. What orjson refuses is encoded item by item as `canonical_bytes` does."""
    pieces = [b"["]
    batch: list[Any] = []

    def encode() -> None:
        try:
            encoded = orjson.dumps(batch, option=orjson.OPT_SORT_KEYS)[1:-1]  # its items, without the brackets
        except TypeError:
            encoded = b",".join(canonical_bytes(value) for value in batch)
        if len(pieces) > 1:
            pieces.append(b",")
        pieces.append(encoded)
        batch.clear()

    for value in values:
        batch.append(value)
        if len(batch) >= per_piece:
            encode()
    if batch:
        encode()
    pieces.append(b"]")
    return pieces


def canonical_json(value: Any) -> str:
    """`canonical_bytes` as text."""
    return canonical_bytes(value).decode("utf-8")


def canonical_hash(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def region_hash(lines: list[str]) -> str:
    """Hash of a generated region's body: the lines strictly between its markers, each ending in `\\n`.

    CRLF is normalised to LF, so a region checked out with Windows line endings verifies alike.
    """
    body = "".join(line.rstrip("\r\n") + "\n" for line in lines)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
