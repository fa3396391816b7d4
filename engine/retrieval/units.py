"""A routing question's answer is a unit: the package, area or directory whose code holds the evidence.

"Where do I change how assertion diffs are printed" matches three modules of `packages/utils/src/diff` best; the
directory itself says little (its name, perhaps its README), so by its own text it ranks below its files, or is
not a candidate at all. A routing question asks where to edit, and the place is the unit that encloses the
strongest matching modules. So each unit gathers the scores of its modules among the MEMBERS strongest results
but its best, the second in full and each next one at DECAY times the one before, and adds what it gathered to
its own score (`memberEvidence`): what a unit is called and what its code holds are two kinds of evidence. Leaving
out the best module is what keeps a unit from passing its one standout module by that module's score alone: the
unit passes it when the others together weigh enough.

- Only a unit with two or more such members gathers, and only when its share of their summed scores is at
  least SPECIFIC times its share of the repository's modules: a unit that holds much of the code holds much of
  any question's matches by its size alone (`packages/vite/src/node`), and says nothing about where to edit. A
  folder that holds more than BROAD of the code gathers nothing at all: it is not a place to edit, whatever the
  matches ("where do I change the html transform" is not answered by half of Vite). A package may: in a
  repository of three packages, each holds a third of the code, and "which package…" asks for one.
- A unit that holds another package (a workspace folder such as `packages/`, the repository's root) is a
  container of units, not one: it gathers nothing.
- The evidence belongs to the smallest unit that holds most of it: a unit one of whose sub-units holds at
  least CONCENTRATED of the sum of its members' scores gathers nothing.
- A package's source root (`src`, `lib`, `source`) is the package: it gathers nothing of its own.
- Units on the periphery (examples, playgrounds, starter templates) gather nothing unless the query asks for
  them; their modules lend nothing either.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from docbridge.engine.base.model import AREA, MODULE, PACKAGE
from docbridge.engine.retrieval.priors import UNITS
from docbridge.engine.retrieval.project import DIRECTORY

if TYPE_CHECKING:
    from docbridge.engine.retrieval.query_shape import QueryShape
    from docbridge.engine.retrieval.rank import Result, Retriever

MEMBERS = 30  # the strongest module results whose units gather their scores
DECAY = 0.5  # each next member of a unit counts this much of the one before
BROAD = 0.25  # a folder (not a package) holding more than this share of the repository's code gathers nothing
SPECIFIC = 1.5  # a unit gathers when its share of the members' scores is this many times its share of the code
CONCENTRATED = 0.8  # a unit whose sub-unit holds this share of its members' scores gathers nothing
SOURCE_ROOTS = frozenset({"src", "lib", "source", "sources"})
_PREFERENCE = {PACKAGE: 0, AREA: 1, DIRECTORY: 2}  # of two units of one folder, the one that gathers


def gather(index: Retriever, results: list[Result], shape: QueryShape,
           make: Callable[[int, float, str], Result]) -> list[Result]:
    """The results with each unit's gathered evidence applied (units not yet among them added by `make`, from
    their index, score and reason)."""
    members = sorted((r for r in results if r.entry.kind == MODULE
                      and (r.entry.surface != "peripheral" or shape.asks_peripheral)),
                     key=lambda r: (-r.score, r.entry.id))[:MEMBERS]
    scores: dict[int, list[float]] = defaultdict(list)
    for member in members:
        for unit in _enclosing_units(index, member.entry.path, shape):
            scores[unit].append(member.score)
    # (the examples' modules are not code a unit's share is taken of: with none else, every unit's share is 0)
    code, weight = max(index.module_count(""), 1), sum(m.score for m in members)
    evidence = {unit: sum(s * DECAY ** k for k, s in enumerate(sorted(found, reverse=True)[1:]))
                for unit, found in scores.items() if len(found) >= 2
                and ((share := index.module_count(index.paths[unit]) / code) <= BROAD
                     or index.entries[unit].kind == PACKAGE)
                and sum(found) / weight >= SPECIFIC * share}
    if not evidence:
        return results
    mass = {unit: sum(scores[unit]) for unit in evidence}
    gathered = dict(evidence)
    for unit in evidence:  # the evidence belongs to the smallest unit that holds most of it
        if any(mass[u] >= CONCENTRATED * mass[unit] for u in evidence
               if u != unit and _encloses(index.paths[unit], index.paths[u])):
            del gathered[unit]
    by_entry = {index.index_of[r.entry.id]: r for r in results}
    out = list(results)
    for unit, value in sorted(gathered.items()):
        count = len(scores[unit])
        reason = (f"memberEvidence: the {'unit' if index.entries[unit].kind != PACKAGE else 'package'} holding "
                  f"{count} of the strongest matching modules, for a routing question")
        result = by_entry.get(unit)
        if result is None:
            out.append(make(unit, round(value, 6), reason))
        else:
            result.components["memberEvidence"] = round(value, 6)
            result.score = round(result.score + value, 6)
            result.reasons.append(reason)
    return out


def _enclosing_units(index: Retriever, path: str, shape: QueryShape) -> list[int]:
    """The units (package, area, directory) enclosing a module's path, nearest first, one per folder (of the kind
    the question names, else a package before an area); a package's source root stands for the package, and
    peripheral units count only when the query asks for them."""
    out = []
    parts = path.lower().split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        found = [unit for unit in index.by_path.get("/".join(parts[:depth]), ())
                 if index.entries[unit].kind in UNITS and not index.holds_packages(unit)
                 and (index.entries[unit].surface != "peripheral" or shape.asks_peripheral)]
        if not found or (parts[depth - 1] in SOURCE_ROOTS and any(
                index.entries[u].kind == PACKAGE for u in index.by_path.get("/".join(parts[:depth - 1]), ()))):
            continue
        out.append(min(found, key=lambda u: (index.entries[u].kind not in shape.kinds_named,
                                             _PREFERENCE[index.entries[u].kind], u)))
    return out


def _encloses(outer: str, inner: str) -> bool:
    return inner.startswith(outer + "/")
