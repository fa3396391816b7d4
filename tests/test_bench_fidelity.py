"""`docbridge bench fidelity` on a corpus of one repository: a git checkout of fixtures/statekit at its commit,
labels for its findings and a mention suite, all written here from reading the fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conftest import FIXTURES, docbridge, docbridge_json


def corpus(tmp_path: Path) -> tuple[Path, Path]:
    checkouts = tmp_path / "checkouts"
    repo = checkouts / "statekit"
    shutil.copytree(FIXTURES / "statekit", repo, ignore=shutil.ignore_patterns(".docbridge"))
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"]):
        subprocess.run(["git", *command], cwd=repo, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    data = tmp_path / "fidelity"
    (data / "statekit").mkdir(parents=True)
    (data / "corpus.json").write_text(json.dumps({"repositories": [
        {"name": "statekit", "repository": "example/statekit", "commit": commit, "layout": "fixture"}]}))
    labels = [
        {"key": "MENTION_UNRESOLVED README.md:11:46", "verdict": "true", "actionable": True, "class": None},
        {"key": "LINK_UNVERIFIED docs/guide/getting-started.md:18:32", "verdict": "true", "actionable": False,
         "class": None},
        {"key": "IMPORT_CYCLE packages/core/src/events/notify.ts:1:29", "verdict": "false", "actionable": False,
         "class": "not-actionable"},
    ]
    (data / "statekit" / "findings.json").write_text(json.dumps({"labels": labels}))
    (data / "statekit" / "mentions.json").write_text(json.dumps({"cases": [
        # README.md line 7: "- `@statekit/core`: the store itself. Create one with `createStore` ..."
        {"document": "README.md", "line": 7, "column": 56, "text": "createStore", "kind": "symbol",
         "expect": {"path": "packages/core/src/store/create.ts", "line": 7}},
        {"document": "docs/guide/react.md", "line": 3, "column": 2, "text": "useStore", "kind": "symbol",
         "expect": {"path": "packages/react/src/index.ts"}},
        # the README does not say which binding: both are offered, and only one is expected
        {"document": "README.md", "line": 15, "column": 25, "text": "useStore", "kind": "symbol",
         "expect": {"path": "packages/react/src/index.ts"}},
        {"document": "docs/guide/getting-started.md", "line": 10, "column": 2, "text": "src/store.ts",
         "kind": "negative", "expect": None},
    ]}))
    return data / "corpus.json", checkouts


def test_precision_mentions_and_the_sample(tmp_path: Path) -> None:
    corpus_file, checkouts = corpus(tmp_path)
    report = docbridge_json("bench", "fidelity", str(corpus_file), "--checkouts", str(checkouts), "--json")
    (result,) = report["repositories"]
    findings = result["findings"]
    assert findings["found"] == 4 and findings["sample"] == 4  # fewer than 30: every finding is sampled
    assert (findings["labelled"], findings["true"], findings["precision"]) == (3, 2, 0.6667)
    assert findings["unlabelled"] == ["AREA_UNDOCUMENTED packages/core/src/utils/clone.ts:1:1"]
    assert findings["false_by_class"] == {"not-actionable": 1}
    assert result["mentions"]["outcomes"] == {"correct": 2, "wrong": 1, "none": 0, "false-link": 0, "no-link": 1}
    (wrong,) = result["mentions"]["failures"]
    assert wrong["got"] == "packages/react/src/index.ts:5, packages/vue/src/index.ts:5"
    # --todo adds a stub for the one unlabelled sampled finding, and nothing else
    assert docbridge("bench", "fidelity", str(corpus_file), "--checkouts", str(checkouts), "--todo").returncode == 0
    stubs = [label for label in json.loads((corpus_file.parent / "statekit" / "findings.json").read_text())["labels"]
             if label["verdict"] is None]
    assert [s["key"] for s in stubs] == ["AREA_UNDOCUMENTED packages/core/src/utils/clone.ts:1:1"]


def test_a_sealed_baseline_catches_a_drop_and_refuses_a_hand_edit(tmp_path: Path) -> None:
    corpus_file, checkouts = corpus(tmp_path)
    baseline = tmp_path / "baseline.json"
    base = ("bench", "fidelity", str(corpus_file), "--checkouts", str(checkouts), "--baseline", str(baseline))
    assert docbridge(*base, "--update-baseline").returncode == 2  # an approver is required
    assert docbridge(*base, "--update-baseline", "--by", "maintainers", "--reason", "first").returncode == 0
    assert docbridge(*base).returncode == 0
    labels_file = corpus_file.parent / "statekit" / "findings.json"
    labels = json.loads(labels_file.read_text())
    labels["labels"][0]["verdict"] = "false"  # a finding judged wrong now: precision falls
    labels_file.write_text(json.dumps(labels))
    result = docbridge(*base)
    assert result.returncode == 1 and "regression: statekit: precision fell from 0.6667 to 0.3333" in result.stdout
    sealed = json.loads(baseline.read_text())
    sealed["repositories"]["statekit"]["precision"] = 0.1
    baseline.write_text(json.dumps(sealed))
    edited = docbridge(*base)
    assert edited.returncode == 2 and "edited by hand" in edited.stderr


def test_a_checkout_at_another_commit_is_reported_and_skipped(tmp_path: Path) -> None:
    corpus_file, checkouts = corpus(tmp_path)
    data = json.loads(corpus_file.read_text())
    data["repositories"][0]["commit"] = "0" * 40
    corpus_file.write_text(json.dumps(data))
    report = docbridge_json("bench", "fidelity", str(corpus_file), "--checkouts", str(checkouts), "--json")
    assert report["repositories"] == [] and "pinned to 000000000000" in report["missing"][0]["reason"]
