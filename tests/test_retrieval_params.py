"""`retrieval.params` (BM25's k1 and b) change the lexical ranking, through the CLI; unset, it ranks as before.

The repository is written here so that the expectations follow from BM25's formula: the query word occurs only
in each page's last paragraph (never in a title, heading, path or summary), so an entry's term frequency is the
number of times the paragraph says it. With b = 0 a field's length does not count, and the lexical score is
`50 · idf · tf / (tf + k1)`: two pages holding the word 3 times and once score in the ratio
`3·(1 + k1) / (3 + k1)`, whatever their lengths."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import docbridge, docbridge_json, make_repo

FILLER = "Gardening notes about soil, seasons and the weather in the hills. " * 30
OPENING = "A short opening paragraph that says nothing of the subject.\n\n"
PAGES = {
    "docs/thrice.md": f"# Alpha\n\n{OPENING}{FILLER}\n\nThe zephyrine, the zephyrine and the zephyrine.\n",
    "docs/once.md": f"# Beta\n\n{OPENING}{FILLER}\n\nThe zephyrine and two other words.\n",
    "docs/short.md": f"# Gamma\n\n{OPENING}The zephyrine is here.\n",
}


def _repo(tmp_path: Path, params: dict[str, float] | None) -> Path:
    root = make_repo(tmp_path / "repo", {**PAGES, "package.json": json.dumps({"name": "params-demo"})})
    config: dict[str, Any] = {} if params is None else {"retrieval": {"params": params}}
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    return root


def _lexical(root: Path, query: str = "zephyrine", source: str | None = None) -> dict[str, float]:
    payload = docbridge_json("search", query, "--explain", "--json", "--root", str(root))
    assert source is None or payload["index"]["source"] == source
    return {r["path"]: r["explain"]["components"]["lexical"] for r in payload["results"]}


def _configure(root: Path, params: dict[str, float] | None) -> None:
    (root / "doc-bridge.config.json").write_text(json.dumps({} if params is None else
                                                            {"retrieval": {"params": params}}))


def _quiet(root: Path) -> None:
    """Every file an hour old: a search then records the tree's stamp, and the next one opens the stored index
    without scanning or reading the configuration."""
    past = time.time() - 3600
    for path in root.rglob("*"):
        os.utime(path, (past, past))


@pytest.mark.parametrize("k1", [0.5, 3.0])
def test_k1_saturates_term_frequency_as_bm25_says(tmp_path: Path, k1: float) -> None:
    root = _repo(tmp_path, {"k1": k1, "b": 0})
    _quiet(root)
    lexical = _lexical(root)
    assert lexical["docs/thrice.md"] / lexical["docs/once.md"] == pytest.approx(3 * (1 + k1) / (3 + k1), rel=1e-4)
    # without length normalisation, pages saying the word once score alike however long they are
    assert lexical["docs/short.md"] == pytest.approx(lexical["docs/once.md"], rel=1e-5)
    # the next search opens the stored index (the tree unchanged, no configuration read): the same parameters
    assert _lexical(root, source="current") == lexical


def test_b_normalises_length(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"b": 1.0})
    full = _lexical(root)
    assert full["docs/short.md"] > 1.5 * full["docs/once.md"]  # the long page is penalised for its length
    _configure(root, {"b": 0.0})
    flat = _lexical(root)
    assert flat["docs/short.md"] == pytest.approx(flat["docs/once.md"], rel=1e-5)
    # and the order follows: b = 1 puts the short page first, b = 0 the page that says the word three times
    _configure(root, {"k1": 0.05, "b": 1.0})
    first = docbridge_json("search", "zephyrine", "--json", "--root", str(root))["results"][0]["path"]
    _configure(root, {"k1": 10.0, "b": 0.0})
    second = docbridge_json("search", "zephyrine", "--json", "--root", str(root))["results"][0]["path"]
    assert (first, second) == ("docs/short.md", "docs/thrice.md")


def test_the_default_values_rank_exactly_as_no_params(tmp_path: Path) -> None:
    root = _repo(tmp_path, None)
    plain = docbridge_json("search", "zephyrine gardening", "--explain", "--json", "--root", str(root))
    _configure(root, {"k1": 1.2, "b": 0.75})
    explicit = docbridge_json("search", "zephyrine gardening", "--explain", "--json", "--root", str(root))
    assert explicit["results"] == plain["results"]
    # nor does an index file change: the header records the defaults, and no `params` travels with it
    index = docbridge_json("index", "--root", str(root), "--json")
    assert index["params"] == {"k1": 1.2, "b": 0.75}


def test_an_index_file_ranks_with_the_params_it_records(tmp_path: Path) -> None:
    # k1 = 10 and b = 0: the page saying the word three times first (by default the short page is)
    root = _repo(tmp_path, {"k1": 10.0, "b": 0.0})
    suite = root / "suite.json"
    suite.write_text(json.dumps({"version": 1, "name": "params", "cases": [
        {"id": "z", "input": "zephyrine", "expected": {"anyOf": ["document:docs/thrice.md"]}}]}))
    docbridge_json("index", "--root", str(root), "--json")
    from_repo = docbridge_json("bench", "retrieval", str(suite), "--root", str(root), "--json")
    from_index = docbridge_json("bench", "retrieval", str(suite), "--index", str(root / ".docbridge/index.json"),
                                "--json")
    assert from_repo["cases"][0]["rank"] == from_index["cases"][0]["rank"] == 1
    assert from_index["cases"][0]["top"] == from_repo["cases"][0]["top"]


def test_bad_params_are_a_usage_error(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"k1": 0})
    result = docbridge("search", "zephyrine", "--root", str(root))
    assert result.returncode == 2 and "retrieval.params.k1" in result.stderr
