"""The canonical JSON every hashed artifact is written in: sorted keys, no whitespace, non-ASCII kept."""

from __future__ import annotations

import json

import pytest
from docbridge.engine.base.hashing import canonical_bytes, canonical_list_pieces


def _standard(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("per_piece", [1, 2, 3, 256])
def test_a_list_written_in_pieces_is_the_lists_canonical_json(per_piece: int) -> None:
    """Pieces of several items each join to the bytes of the whole list, also when an item is one the fast
    encoder refuses (an integer beyond 64 bits): that piece is encoded item by item."""
    values = [{"b": 1, "a": "ünïcode"}, [], {"big": 2**70}, None, {"z": {"y": [1.5, True]}}]
    pieces = canonical_list_pieces(values, per_piece)
    assert b"".join(pieces) == canonical_bytes(values) == _standard(values)
    assert canonical_list_pieces([], per_piece) == [b"[", b"]"]
    assert len(pieces) >= 2 + len(values) // per_piece  # written in pieces, not held as one
