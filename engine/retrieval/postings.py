"""Key -> entry numbers, for the retriever's lookups (by identifier, path, file name, symbol).

Nearly every key names one entry: a list per key (88 bytes with its first append) held 30 MB of the lookups of a
20,000-file tree, five times that at 100,000 files. Here a key naming one entry holds that entry's number, and a
key naming several a tuple of them, in the order they were added."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from docbridge.engine.base.heap import add_alone_or_listed


class Postings:
    __slots__ = ("_table",)

    def __init__(self, pairs: Iterable[tuple[str, int]] = ()) -> None:
        table: dict[str, int | list[int] | tuple[int, ...]] = {}
        for key, number in pairs:
            add_alone_or_listed(table, key, number)
        for key, found in table.items():
            if type(found) is list:
                table[key] = tuple(found)
        self._table: dict[str, int | tuple[int, ...]] = table  # type: ignore[assignment]  # lists made tuples

    def get(self, key: str, default: tuple[int, ...] = ()) -> tuple[int, ...]:
        found = self._table.get(key)
        if found is None:
            return default
        return (found,) if type(found) is int else found  # type: ignore[return-value]  # int or tuple

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def replaced(self, changes: dict[str, tuple[int, ...]]) -> Postings:
        """A copy with the entry numbers of the keys in `changes` replaced (a key with none removed)."""
        new = Postings()
        table = dict(self._table)
        for key, numbers in changes.items():
            if not numbers:
                table.pop(key, None)
            else:
                table[key] = numbers[0] if len(numbers) == 1 else numbers
        new._table = table
        return new


__all__ = ["Postings"]
