"""`docbridge render TEMPLATE --data FILE`: rendering from a file instead of the working tree — the view model
itself (what `--print-data` prints) or the artifact the template reads (a DocBridgeIndex for llms.txt, the previous
snapshot for change-digest, an overlay for overlay-review). Each is compared with the working tree's rendering
of the same input, which tests/test_render.py holds to golden pages read off the fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import copy_fixture, docbridge, docbridge_json


def render(*args: str, expect: int = 0) -> str:
    result = docbridge("render", *args)
    assert result.returncode == expect, result.stderr + result.stdout
    return result.stdout


def test_the_view_model_printed_renders_the_same_pages_and_an_edit_shows(acme: Path, tmp_path: Path) -> None:
    views = docbridge_json("render", "area", "--root", str(acme), "--print-data")
    # one page per area of the fixture, each naming its file and its area
    assert [v["path"] for v in views] == [f"src-{v['area']['path'].split('/')[1]}.md" for v in views]
    data = tmp_path / "views.json"
    data.write_text(json.dumps(views), encoding="utf-8")
    assert render("area", "--root", str(acme), "--data", str(data)) == render("area", "--root", str(acme))
    billing = next(v for v in views if v["area"]["path"] == "src/billing")
    billing["purpose"] = "Edited purpose, read from the file."
    data.write_text(json.dumps(views), encoding="utf-8")
    out = tmp_path / "pages"
    render("area", "--root", str(acme), "--data", str(data), "--output", str(out))
    assert "Edited purpose, read from the file." in (out / "src-billing.md").read_text(encoding="utf-8")
    assert "Edited purpose" not in (out / "src-orders.md").read_text(encoding="utf-8")
    # one page's view renders that page, its key read from the view (or given with --area)
    one = tmp_path / "one.json"
    one.write_text(json.dumps(docbridge_json("render", "ownership", "--root", str(acme), "--record", "acme-billing",
                                             "--print-data")), encoding="utf-8")
    assert render("ownership", "--root", str(acme), "--data", str(one)) == \
        render("ownership", "--root", str(acme), "--record", "acme-billing")


def test_a_view_model_renders_without_reading_the_working_tree(acme: Path, tmp_path: Path) -> None:
    data = tmp_path / "views.json"
    data.write_text(json.dumps(docbridge_json("render", "area", "--root", str(acme), "--print-data")),
                    encoding="utf-8")
    fresh = copy_fixture("acme", tmp_path / "fresh")
    shutil.rmtree(fresh / "src")  # nothing to scan: the pages come from the file alone
    (fresh / "templates").mkdir()
    (fresh / "templates" / "area.md").write_text("# {{ area.path }}\n\n{{ purpose }}\n", encoding="utf-8")
    config = json.loads((fresh / "doc-bridge.config.json").read_text(encoding="utf-8"))
    config["render"] = {"templates": {"area": "templates/area.md"}}
    (fresh / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
    payload = json.loads(render("area", "--root", str(fresh), "--data", str(data), "--json"))
    billing = next(p for p in payload["pages"] if p["path"] == "src-billing.md")
    # the override's two lines, with the fixture's ownership purpose for acme-billing
    assert "# src/billing\n\nInvoices, VAT calculation and payment-provider webhooks\n" in billing["content"]
    assert payload["source"] == str(data)
    assert not (fresh / ".docbridge").exists()
    # a list holds every page: --area picks none of them
    refused = docbridge("render", "area", "--root", str(fresh), "--data", str(data), "--area", "src/billing")
    assert refused.returncode == 2 and "a list is one page each, without --area or --record" in refused.stderr


def test_llms_txt_from_a_stored_index_is_what_the_working_tree_renders(acme: Path) -> None:
    assert docbridge("index", "--root", str(acme)).returncode == 0
    index = acme / ".docbridge" / "index.json"
    from_index = render("llms.txt", "--root", str(acme), "--data", str(index))
    assert from_index == render("llms.txt", "--root", str(acme))
    # the fixture's agent corpus (docs/for-agents) holds one document
    assert from_index.count("\n- [") == 1 and "(docs/for-agents/billing.md)" in from_index
    index.write_text(index.read_text(encoding="utf-8").replace("docs/for-agents/billing.md", "docs/x.md"),
                     encoding="utf-8")
    result = docbridge("render", "llms.txt", "--root", str(acme), "--data", str(index))
    assert result.returncode == 2 and "contentHash does not match" in result.stderr


def test_change_digest_and_overlay_review_read_their_artifacts(acme: Path, tmp_path: Path) -> None:
    assert docbridge("scan", "--root", str(acme)).returncode == 0
    previous = tmp_path / "previous.json"
    shutil.copy(acme / ".docbridge" / "snapshot.json", previous)
    tax = acme / "src" / "billing" / "tax.ts"
    tax.write_text(tax.read_text(encoding="utf-8") + "// reviewed\n", encoding="utf-8")
    digest = render("change-digest", "--root", str(acme), "--data", str(previous))
    assert digest == render("change-digest", "--root", str(acme), "--since", str(previous))
    assert "1 changed, 0 added, 0 removed" in digest
    view = tmp_path / "digest-view.json"
    view.write_text(render("change-digest", "--root", str(acme), "--data", str(previous), "--print-data"),
                    encoding="utf-8")
    assert json.loads(view.read_text(encoding="utf-8"))["changed"][0]["path"] == "src/billing/tax.ts"
    assert render("change-digest", "--root", str(acme), "--data", str(view)) == digest
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps({"pending": [{"proposalId": "p1", "kind": "add-alias", "entity": "area:src/api",
                                                "evidence": [{"path": "docs/api.md", "lineStart": 4}]}]}),
                       encoding="utf-8")
    review = render("overlay-review", "--root", str(acme), "--data", str(overlay))
    assert review == render("overlay-review", "--root", str(acme), "--overlay", str(overlay))
    assert "[docs/api.md:4](docs/api.md#L4)" in review


@pytest.mark.parametrize(("template", "content", "message"), [
    ("area", None, "--data {data}: no such file."),
    ("area", "[1, 2", "{data}:1:6: invalid JSON"),
    ("area", '{"project": "x", "area": {"path": "src/x"}}', "'purpose' is undefined"),
    ("area", '[{"project": "x"}]', "{data}: pages[0] has no `area.path` to name its page"),
    ("llms.txt", "[]", "{data}: the view model of llms.txt must be a JSON object."),
])
def test_a_file_that_cannot_be_rendered_exits_2_and_writes_nothing(acme: Path, tmp_path: Path, template: str,
                                                                   content: str | None, message: str) -> None:
    data = tmp_path / "data.json"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    result = docbridge("render", template, "--root", str(acme), "--data", str(data), "--output", str(out))
    assert result.returncode == 2 and message.format(data=data) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


def test_data_and_since_together_is_a_usage_error(acme: Path, tmp_path: Path) -> None:
    result = docbridge("render", "change-digest", "--root", str(acme), "--data", str(tmp_path / "a.json"),
                       "--since", str(tmp_path / "b.json"))
    assert result.returncode == 2 and "give one of them" in result.stderr
