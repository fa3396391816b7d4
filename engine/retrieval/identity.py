"""Identity: the query names the thing. exactId, exactPath and exactSymbol are points added to a score when the
query is an entry's id, alias or ownership id, its path (or the path's last segments, or its file name), or a name
it declares or re-exports; on the 0–50-per-term scale of the lexical component, a name outweighs the text around
it.

- The whole query is read as one name; a query of at most two words (`QueryShape.naming`) also word by word: a
  sentence does not name a thing by containing one of its words. Two adjacent words of any query that together
  spell a file name or a declared name earn COMPOUND: a name written as one word is said as two.
- The module that declares a name earns more than a barrel that re-exports it; a declaration on its package's
  public surface, in a package that other packages depend on, or imported by the other declarations of the name,
  earns more (it is the one the name most likely means); a page named after an identifier earns less than the
  identifier's declaration; anything under a test, fixture, example or playground directory earns half.
- A routing question names a unit (package, area, directory) by its subject: a unit whose name carries most of the
  question's weight earns exactId in proportion (UNIT_NAMED).
- A directory named by its path or its last segments outranks the files inside it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import compress, repeat
from typing import TYPE_CHECKING

from docbridge.engine.base.model import DOCUMENT, MODULE
from docbridge.engine.retrieval.project import Entry
from docbridge.engine.retrieval.query_shape import QueryShape

if TYPE_CHECKING:
    from docbridge.engine.retrieval.rank import Retriever

# the whole query
ID = 200  # exactId: it is the entry's id, alias, ownership id or route id
PATH = 150  # exactPath: it is the entry's path, or its file name (without extensions)
PAGE_NAMED = 100  # exactPath: a page whose file name is the identifier (the identifier's declaration comes first)
PATH_TAIL = 140  # exactPath: it is the last segments of the entry's path
INSIDE = 60  # exactPath: the entry is inside the directory it names
DECLARES = 150  # exactSymbol: the entry declares the name
RE_EXPORTS = 60  # exactSymbol: the entry exports the name without declaring it (a barrel that re-exports it)
# each word of a name (a query of at most two words)
WORD_ID = 120  # exactId per word that is the entry's id or alias
SHORT_WORD = 40  # exactId + (SHORT_WORD − the shortest such word's length)
WORD_FILE = 100  # exactPath: a word is the entry's file name
WORD_DECLARES = 90  # exactSymbol: a word is a name the entry declares
WORD_RE_EXPORTS = 30  # exactSymbol: a word is a name the entry exports without declaring it
COMPOUND = 60  # adjacent query words that together spell a file name or a declared name
# which of several declarations of a name (× 0.5 for a word of the query, 1 for the whole query)
PUBLIC = 30  # declared on its package's public surface
DEPENDED_ON, DEPENDED_ON_MAX = 8, 24.0  # 8 × log2(1 + the packages that depend on its package), at most 24
BASE_DECLARATION = 40  # the declaration the other declarations of the name import
# a unit a routing question names
UNIT_NAMED = 160  # exactId for a unit whose name carries all of a routing question's weight (× its share)
UNIT_SHARE = 0.3  # ...when it carries at least this share
PERIPHERAL = 0.5  # identity of an entry under a test, fixture, example or playground directory
_NAMED = ("exactId", "exactPath", "exactSymbol")


def file_base(path: str) -> str:
    """A path's file name without its extensions."""
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if "." in name else name


def squash(name: str) -> str:
    return name.replace("-", "").replace("_", "")


def candidates(index: Retriever, shape: QueryShape) -> set[int]:
    """The entries the query names (by id, path, file name or symbol; the files inside a directory it names),
    whether or not the lexical index found them."""
    found: set[int] = set()
    whole = shape.whole
    for table in (index.by_identifier, index.by_path, index.by_base, index.by_symbol):
        found.update(table.get(whole, ()))
    if whole:  # inside the directory the query names
        inside = whole + "/"
        order, paths = index.path_order, index.paths
        position = bisect_left(order, inside, key=paths.__getitem__)
        while position < len(order) and paths[order[position]].startswith(inside):
            found.add(order[position])
            position += 1
    if "/" in whole and (index.spaced_paths or " " not in whole):  # named by the query's last segments
        tail = "/" + whole
        # compared in C, without a Python frame per path (a loop over babel's 23,622 paths was 3 ms a query)
        found.update(compress(range(len(index.paths)), map(str.endswith, index.paths, repeat(tail))))
    if shape.file_name:  # a file name with its extension: the files of that name
        found.update(index.files_named(whole))
    if shape.naming:
        for token in shape.words:
            found.update(index.by_identifier.get(token, ()))
            found.update(index.by_base.get(token, ()))
            found.update(index.by_symbol.get(token, ()))
    return found


def declared(index: Retriever, shape: QueryShape) -> bool:
    """The query is one symbol-shaped word that a module outside tests and examples declares."""
    return shape.symbol_shaped and any(
        shape.whole in index.symbol_sets(i)[1] and index.entries[i].surface != "peripheral"
        for i in index.by_symbol.get(shape.whole, ()))


def score(index: Retriever, components: dict[str, float], at: int, shape: QueryShape, reasons: list[str]) -> None:
    """Add the identity points of entry `at` to its components."""
    entry = index.entries[at]
    path = index.paths[at]  # lower-cased
    base = file_base(path) if entry.kind in (DOCUMENT, MODULE) else None
    symbols, declares = index.symbol_sets(at)
    _whole(index, components, entry, at, path, base, symbols, declares, shape, reasons)
    if shape.naming:
        _words(index, components, entry, at, base, symbols, declares, shape, reasons)
    if shape.compounds:
        _compound(index, components, at, base, declares, shape, reasons)
    if entry.surface == "peripheral" and not shape.asks_peripheral and path != shape.whole:
        named = [k for k in _NAMED if components[k]]
        if named:
            for key in named:
                components[key] *= PERIPHERAL
            reasons.append(f"{'/'.join(named)} ×{PERIPHERAL}: under a test, fixture, example or playground directory")


def _whole(index: Retriever, components: dict[str, float], entry: Entry, at: int, path: str, base: str | None,
           symbols: frozenset[str], declares: frozenset[str], shape: QueryShape, reasons: list[str]) -> None:
    """The whole query as the entry's id, path, file name, directory or declared name (`symbols`: the names it
    exports, `declares`: those it declares)."""
    whole = shape.whole
    if whole in index.identifiers[at] or entry.id.lower() == whole:
        components["exactId"] += ID
    if path == whole:
        components["exactPath"] += PATH
    elif base is not None and shape.file_name and path.rsplit("/", 1)[-1] == whole:
        components["exactPath"] += PATH  # its file name, extension and all
    elif base is not None and base == whole:
        # a page named after an identifier comes after the identifier's declaration
        named_page = entry.kind == DOCUMENT and shape.identifier
        components["exactPath"] += PAGE_NAMED if named_page else PATH
        if named_page:
            reasons.append(f"exactPath {PAGE_NAMED}: a page named after the identifier, not its declaration")
    elif "/" in whole and path.endswith("/" + whole):
        components["exactPath"] += PATH_TAIL  # the query names it by its last segments
    elif path.startswith(whole + "/") or f"/{whole}/" in path:
        components["exactPath"] += INSIDE  # inside the directory the query names
    if whole in declares:
        components["exactSymbol"] += DECLARES
        _declaration(index, components, entry, reasons)
    elif whole in symbols:
        components["exactSymbol"] += RE_EXPORTS


def _words(index: Retriever, components: dict[str, float], entry: Entry, at: int, base: str | None,
           symbols: frozenset[str], declares: frozenset[str], shape: QueryShape, reasons: list[str]) -> None:
    """Each word of a name (a query of at most two words) as the entry's id, file name or declared name."""
    equal_ids = [t for t in shape.words if t in index.identifiers[at]]
    components["exactId"] += WORD_ID * len(equal_ids)
    if equal_ids:
        components["exactId"] += max(0, SHORT_WORD - min(len(t) for t in equal_ids))
    if base is not None and base in shape.words and base != shape.whole:
        components["exactPath"] += WORD_FILE
    for token in shape.words:
        if token == shape.whole:
            continue
        if token in declares:
            components["exactSymbol"] += WORD_DECLARES
            _declaration(index, components, entry, reasons, 0.5)
        elif token in symbols:
            components["exactSymbol"] += WORD_RE_EXPORTS


def _compound(index: Retriever, components: dict[str, float], at: int, base: str | None, declares: frozenset[str],
              shape: QueryShape, reasons: list[str]) -> None:
    """Adjacent words of the query that together spell the entry's file name or a name it declares: a name
    written as one word is said as its words."""
    if base is not None and index.file_name(at) in shape.compounds:
        components["exactPath"] += COMPOUND
        reasons.append(f"exactPath +{COMPOUND}: adjacent query words spell its file name")
    elif declares and not declares.isdisjoint(shape.compounds):
        components["exactSymbol"] += COMPOUND
        reasons.append(f"exactSymbol +{COMPOUND}: adjacent query words spell a name it declares "
                       f"({min(shape.compounds & declares)})")


def _declaration(index: Retriever, components: dict[str, float], entry: Entry, reasons: list[str],
                 weight: float = 1.0) -> None:
    """A declaration that a package exports, in a package others build on, is the one a name most likely means
    when several modules declare it."""
    if entry.surface == "public":
        components["exactSymbol"] += PUBLIC * weight
        reasons.append(f"exactSymbol +{PUBLIC * weight:g}: declared on its package's public surface")
    dependents = index.dependents.get(entry.package_id or "", 0)
    if dependents:
        bonus = round(weight * min(DEPENDED_ON_MAX, DEPENDED_ON * math.log2(1 + dependents)), 6)
        components["exactSymbol"] += bonus
        reasons.append(f"exactSymbol +{bonus:g}: declared in a package {dependents} other packages depend on")


def base_declarations(index: Retriever, scored: dict[int, tuple[dict[str, float], list[str]]], whole: str) -> None:
    """When several modules declare the name the query is, the declaration the others import (directly or through
    a barrel that re-exports it) is the one they build on: the base class, the core function."""
    declarers = [i for i in scored if whole in index.symbol_sets(i)[1]]
    if len(declarers) < 2:
        return
    wanted = set(declarers)
    for at in declarers:
        reached: set[int] = set()
        frontier = [at]
        for _hop in range(3):  # an import, then up to two re-exporting barrels
            following = []
            for node in frontier:
                for edge in index.edges_of(node):
                    if edge.direction == "out" and edge.kind in ("imports", "re-exports"):
                        other = index.index_of.get(edge.other)
                        if other is not None and other not in reached:
                            reached.add(other)
                            following.append(other)
            frontier = following
        for base in (reached & wanted) - {at}:
            components, reasons = scored[base]
            if not any(r.startswith(f"exactSymbol +{BASE_DECLARATION}") for r in reasons):
                components["exactSymbol"] += BASE_DECLARATION
                reasons.append(f"exactSymbol +{BASE_DECLARATION}: the declaration other declarations of the name "
                               "import")


def unit_named(index: Retriever, components: dict[str, float], at: int, terms: list[str], weight: dict[str, float],
               total: float, shape: QueryShape, reasons: list[str]) -> None:
    """A routing question names the unit it wants by its subject: a unit whose name holds at least UNIT_SHARE of
    the question's weight (IDF) is named by it, at up to UNIT_NAMED (a name is what a routing question is answered
    by, more than a unit's README prose that happens to hold another of its words). A unit under a test, fixture,
    example or playground directory earns half, as for every other identity."""
    name = index.unit_name(at)
    share = sum(weight[t] for t in terms if t in name) / total
    if share >= UNIT_SHARE:
        bonus = round(UNIT_NAMED * share, 6)
        why = f"its name carries {share:.0%} of the question's weight"
        if index.entries[at].surface == "peripheral" and not shape.asks_peripheral:
            bonus = round(bonus / 2, 6)
            why += ", under a test, fixture, example or playground directory (×0.5)"
        components["exactId"] += bonus
        reasons.append(f"exactId +{bonus:g}: {why}")
