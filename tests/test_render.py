"""`docbridge render`: golden pages read off the fixtures, determinism, overrides, template errors, generated
regions in hand-written files, the stale-region finding, the change digest and the overlay review."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.conftest import copy_fixture, docbridge, docbridge_json

GOLDEN = Path(__file__).parent / "golden" / "render"
OPEN = "<!-- doc-bridge:generated hash={hash} template={template}{key} -->"
CLOSE = "<!-- /doc-bridge:generated -->"


def region_hash(body: str) -> str:
    """First 16 hex of SHA-256 over the lines between the markers, each ending in a newline."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def sealed(body: str, template: str, key: str | None) -> str:
    marker = OPEN.format(hash=region_hash(body), template=template, key=f" key={key}" if key else "")
    return f"{marker}\n{body}{CLOSE}\n"


def render(*args: str, expect: int = 0) -> str:
    result = docbridge("render", *args)
    assert result.returncode == expect, result.stderr + result.stdout
    return result.stdout


def findings(root: Path) -> list[dict]:
    return docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never")["findings"]


# ------------------------------------------------------------------------------------------ golden pages


@pytest.mark.parametrize(("fixture", "template", "option", "key", "golden"), [
    ("acme", "area", "--area", "src/billing", "acme-area-src-billing.md"),
    ("monorepo", "area", "--area", "packages/core/src/models", "monorepo-area-packages-core-src-models.md"),
    ("acme", "ownership", "--record", "acme-billing", "acme-ownership-acme-billing.md"),
    ("acme", "ownership", "--record", "acme-shipping", "acme-ownership-acme-shipping.md"),
    ("monorepo", "ownership", "--record", "mono-core", "monorepo-ownership-mono-core.md"),
])
def test_model_page_matches_golden(fixture: str, template: str, option: str, key: str, golden: str,
                                   tmp_path: Path) -> None:
    root = copy_fixture(fixture, tmp_path)
    body = (GOLDEN / golden).read_text(encoding="utf-8")
    assert render(template, "--root", str(root), option, key) == sealed(body, template, key)


def test_llms_txt_matches_golden_and_carries_no_marker(monorepo: Path, acme: Path) -> None:
    # the agent reading list: the documents under corpus.agent.root (default docs/for-agents); monorepo has none
    text = render("llms.txt", "--root", str(monorepo))
    assert text == (GOLDEN / "monorepo-llms.txt").read_text(encoding="utf-8")
    assert not [line for line in text.splitlines() if line.startswith("- [")]
    acme_text = render("llms.txt", "--root", str(acme))
    assert "doc-bridge:generated" not in acme_text
    assert acme_text.startswith("# @acme/orders-api\n\n")
    agent_root = json.loads((acme / "doc-bridge.config.json").read_text())["corpus"]["agent"]["root"]
    corpus = sorted(p.relative_to(acme).as_posix() for p in (acme / agent_root).rglob("*.md"))
    lines = [line for line in acme_text.splitlines() if line.startswith("- [")]
    assert [line.split("](", 1)[1].split(")", 1)[0] for line in lines] == corpus == ["docs/for-agents/billing.md"]
    assert lines == ["- [Billing — rules for coding agents](docs/for-agents/billing.md): Read the human billing "
                     "guide first. These rules are stricter than the guide."]


def test_every_area_and_record_gets_a_page(acme: Path, monorepo: Path) -> None:
    pages = docbridge_json("render", "area", "--root", str(monorepo), "--json")["pages"]
    assert [p["path"] for p in pages] == [
        "packages-api-src-routes.md", "packages-api-src-server.md", "packages-core.md",
        "packages-core-src-errors.md", "packages-core-src-models.md", "packages-web-src-components.md",
        "packages-web-src-pages.md"]
    out = tmp = acme / "generated"
    result = docbridge("render", "ownership", "--root", str(acme), "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp.iterdir()) == ["acme-api.md", "acme-billing.md", "acme-orders.md",
                                                    "acme-shipping.md"]
    assert (out / "acme-billing.md").read_text(encoding="utf-8") == sealed(
        (GOLDEN / "acme-ownership-acme-billing.md").read_text(encoding="utf-8"), "ownership", "acme-billing")


def test_rendering_twice_is_byte_equal(acme: Path) -> None:
    for template in ("llms.txt", "area", "ownership"):
        first = docbridge("render", template, "--root", str(acme), "--json")
        second = docbridge("render", template, "--root", str(acme), "--json")
        assert first.returncode == 0 and first.stdout == second.stdout
    a, b = acme / "a", acme / "b"
    assert docbridge("render", "area", "--root", str(acme), "--output", str(a)).returncode == 0
    assert docbridge("render", "area", "--root", str(acme), "--output", str(b)).returncode == 0
    assert {p.name: p.read_bytes() for p in a.iterdir()} == {p.name: p.read_bytes() for p in b.iterdir()}


def test_data_and_print_template(acme: Path) -> None:
    view = docbridge_json("render", "area", "--root", str(acme), "--area", "src/orders", "--print-data")
    assert view["purpose"] == "Carts, checkout and the order status state machine"
    assert [m["path"] for m in view["modules"]] == ["src/orders/cart.ts", "src/orders/checkout.ts",
                                                   "src/orders/fulfillment.ts", "src/orders/status.ts"]
    source = render("area", "--print-template")
    assert "{% for m in modules %}" in source


# ------------------------------------------------------------------------------------------ overrides and errors


def _configure(root: Path, templates: dict[str, str]) -> None:
    config_path = root / "doc-bridge.config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["render"] = {"templates": templates}
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def test_project_override_replaces_the_template(acme: Path) -> None:
    (acme / "templates").mkdir()
    (acme / "templates" / "area.md").write_text(
        "Intro kept outside.\n{{ region.open }}\n\n## {{ area.path }} ({{ modules|length }} modules)\n\n"
        "{{ region.close }}\nAfter.\n", encoding="utf-8")
    _configure(acme, {"area": "templates/area.md"})
    text = render("area", "--root", str(acme), "--area", "src/util")
    # src/util holds ids.ts, logger.ts, money.ts, shutdown.ts
    body = "## src/util (4 modules)\n"
    assert text == "Intro kept outside.\n" + sealed(body, "area", "src/util") + "After.\n"


@pytest.mark.parametrize(("source", "expected"), [
    (None, 'render.templates["area"] names templates/area.md, which does not exist.'),
    ("# {{ area.path }}\n\n{% for m in modules %}{{ m.path }\n", "templates/area.md:3: syntax error:"),
    ("# {{ area.path }}\n{% for m in modules %}\n", "templates/area.md:2: syntax error: Unexpected end of template."),
    ("# {{ area.path }}\n\n{{ nothing_here }}\n", "templates/area.md:3: 'nothing_here' is undefined."),
    ('# ok\n{{ "".__class__.__mro__ }}\n', "templates/area.md:2: the sandbox refused it: access to attribute "
                                          "'__class__' of 'str' object is unsafe."),
    ("{{ region.close }}\n", "the template prints region.close without region.open."),
    # a template is code someone else wrote: bounded in arithmetic, loops, output and recursion, and alone
    ("# x\n{{ (10 ** 100000000) % 7 }}\n", "templates/area.md:2: the sandbox refused it: 10 ** 100000000 is a "
                                          "number of more than 4096 bits."),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
     "the sandbox refused it: the template asks for more than 1000000 loop iterations."),
    ('{{ "x" * 100000000 }}\n', "the sandbox refused it: a repetition of more than"),
    ('{% for i in range(100000) %}{{ "y" * 1000 }}{% endfor %}\n',
     "the sandbox refused it: the template produces more than"),
    ('{% include "templates/area.md" %}\n', "a template cannot include, import or extend another"),
    ('{% include "/etc/passwd" %}\n', "a template cannot include, import or extend another ('/etc/passwd')."),
    ('{% extends "../../../etc/hosts" %}\n', "a template cannot include, import or extend another"),
    ("{% macro again(n) %}{{ again(n) }}{% endmacro %}{{ again(1) }}\n", "the template calls itself without end."),
])
@pytest.mark.attack("templates")
def test_template_errors_exit_2_and_write_nothing(acme: Path, source: str | None, expected: str) -> None:
    if source is not None:
        (acme / "templates").mkdir()
        (acme / "templates" / "area.md").write_text(source, encoding="utf-8")
    _configure(acme, {"area": "templates/area.md"})
    existing = acme / "docs" / "areas"
    existing.mkdir(parents=True)
    page = existing / "src-billing.md"
    page.write_text(f"kept\n<!-- doc-bridge:generated -->\n{CLOSE}\n", encoding="utf-8")
    result = docbridge("render", "area", "--root", str(acme), "--output", str(existing))
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr
    assert sorted(p.name for p in existing.iterdir()) == ["src-billing.md"]
    assert page.read_text(encoding="utf-8") == f"kept\n<!-- doc-bridge:generated -->\n{CLOSE}\n"
    # --check reports the same error, also exit 2
    assert docbridge("render", "area", "--root", str(acme), "--check").returncode == 2


@pytest.mark.attack("templates")
def test_a_template_override_that_is_a_fifo_is_refused_without_waiting(acme: Path) -> None:
    (acme / "templates").mkdir()
    os.mkfifo(acme / "templates" / "area.md")  # a read would wait forever for a writer
    _configure(acme, {"area": "templates/area.md"})
    result = docbridge("render", "area", "--root", str(acme), "--check", timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'render.templates["area"] (templates/area.md) cannot be read' in result.stderr
    assert "is not a regular file" in result.stderr


def test_unknown_template_and_area_are_usage_errors(acme: Path) -> None:
    result = docbridge("render", "nope", "--root", str(acme))
    assert result.returncode == 2 and "Unknown template 'nope'" in result.stderr
    result = docbridge("render", "area", "--root", str(acme), "--area", "src/nowhere")
    assert result.returncode == 2 and "There is no area 'src/nowhere'" in result.stderr


# ------------------------------------------------------------------------------------------ regions


HAND = "# Billing, by hand\n\nIntro written by a person.\n\n<!-- doc-bridge:generated -->\n{close}\n\nOutro.\n"


def test_region_in_a_hand_written_file_edit_stale_and_regenerate(acme: Path) -> None:
    doc = acme / "docs" / "billing-area.md"
    doc.write_text(HAND.format(close=CLOSE), encoding="utf-8")
    target = ("--root", str(acme), "--area", "src/billing", "--output", str(doc))
    render("area", *target)
    text = doc.read_text(encoding="utf-8")
    golden = (GOLDEN / "acme-area-src-billing.md").read_text(encoding="utf-8")
    assert text == "# Billing, by hand\n\nIntro written by a person.\n\n" + sealed(golden, "area", "src/billing") + \
        "\nOutro.\n"
    assert render("area", *target, "--check").startswith("1 of 1 page(s) of area are up to date.")
    codes = {f["code"] for f in findings(acme) if f["path"] == "docs/billing-area.md"}
    assert not codes & {"GENERATED_REGION_EDITED", "GENERATED_REGION_STALE"}

    # edits around the region are kept by a re-render; an edit inside is a hand edit
    text = text.replace("Intro written by a person.", "Intro, edited.").replace("Outro.", "Outro, edited.")
    text = text.replace("## Checks", "## Checks (hand edit)")
    doc.write_text(text, encoding="utf-8")
    region = [f for f in findings(acme) if f["path"] == "docs/billing-area.md"]
    assert [f["code"] for f in region] == ["GENERATED_REGION_EDITED"]
    result = docbridge("render", "area", *target, "--check")
    assert result.returncode == 1 and "docs/billing-area.md: differs from a fresh rendering" in result.stdout
    render("area", *target)
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Billing, by hand\n\nIntro, edited.\n\n") and text.endswith(f"{CLOSE}\n\nOutro, edited.\n")
    assert "(hand edit)" not in text
    assert [f["code"] for f in findings(acme) if f["path"] == "docs/billing-area.md"] == []

    # a code change the page describes makes the region stale
    tax = acme / "src" / "billing" / "tax.ts"
    tax.write_text(tax.read_text(encoding="utf-8") + "\nexport const VAT_REVIEWED = true;\n", encoding="utf-8")
    stale = [f for f in findings(acme) if f["path"] == "docs/billing-area.md"]
    assert [(f["code"], f["severity"]) for f in stale] == [("GENERATED_REGION_STALE", "warning")]
    assert "template `area` for `src/billing`" in stale[0]["message"]
    assert docbridge("render", "area", *target, "--check").returncode == 1
    render("area", *target)
    assert "`VAT_REVIEWED`" in doc.read_text(encoding="utf-8")
    assert [f["code"] for f in findings(acme) if f["path"] == "docs/billing-area.md"] == []
    assert docbridge("render", "area", *target, "--check").returncode == 0


def test_crlf_file_keeps_its_line_ends_outside_and_verifies(acme: Path) -> None:
    doc = acme / "docs" / "crlf.md"
    doc.write_bytes(b"# CRLF\r\n\r\n<!-- doc-bridge:generated -->\r\n" + CLOSE.encode() + b"\r\nend\r\n")
    render("area", "--root", str(acme), "--area", "src/util", "--output", str(doc))
    data = doc.read_bytes()
    assert data.startswith(b"# CRLF\r\n\r\n<!-- doc-bridge:generated hash=") and data.endswith(
        CLOSE.encode() + b"\r\nend\r\n")
    assert [f["code"] for f in findings(acme) if f["path"] == "docs/crlf.md"] == []
    assert docbridge("render", "area", "--root", str(acme), "--area", "src/util", "--output", str(doc),
                     "--check").returncode == 0


def test_existing_file_without_a_region_is_refused(acme: Path) -> None:
    doc = acme / "docs" / "plain.md"
    doc.write_text("# Plain\n", encoding="utf-8")
    result = docbridge("render", "area", "--root", str(acme), "--area", "src/util", "--output", str(doc))
    assert result.returncode == 2 and "has no generated region" in result.stderr
    assert doc.read_text(encoding="utf-8") == "# Plain\n"


# ------------------------------------------------------------------------------------------ change digest


def test_change_digest_needs_a_previous_snapshot(acme: Path) -> None:
    result = docbridge("render", "change-digest", "--root", str(acme))
    assert result.returncode == 2
    assert "There is no previous snapshot to compare with: .docbridge/snapshot.json does not exist." in result.stderr
    result = docbridge("render", "change-digest", "--root", str(acme), "--since", str(acme / "nope.json"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_change_digest_after_editing_a_module(acme: Path) -> None:
    assert docbridge("scan", "--root", str(acme)).returncode == 0
    unchanged = render("change-digest", "--root", str(acme))
    assert "0 changed, 0 added, 0 removed of " in unchanged and "No document needs review." in unchanged
    tax = acme / "src" / "billing" / "tax.ts"
    tax.write_text(tax.read_text(encoding="utf-8") + "// reviewed\n", encoding="utf-8")
    (acme / "src" / "billing" / "refunds.ts").write_text("export const REFUND_DAYS = 14;\n", encoding="utf-8")
    (acme / "docs" / "deployment.md").unlink()
    view = docbridge_json("render", "change-digest", "--root", str(acme), "--print-data")
    assert view["changed"] == [{"id": "module:src/billing/tax.ts", "kind": "module", "path": "src/billing/tax.ts"}]
    assert view["added"] == [{"id": "module:src/billing/refunds.ts", "kind": "module",
                              "path": "src/billing/refunds.ts"}]
    assert view["removed"] == [{"id": "document:docs/deployment.md", "kind": "document",
                                "path": "docs/deployment.md"}]
    # docs/billing.md and docs/for-agents/billing.md name `src/billing/tax.ts` and `calculateTax`; the
    # Portuguese guide names `calculateTax` and (misspelt) `src/biling/tax.ts`
    both = "mentions `src/billing/tax.ts`; mentions-symbol `src/billing/tax.ts`"
    assert view["review"] == [{"path": "docs/billing.md", "reason": both},
                              {"path": "docs/for-agents/billing.md", "reason": both},
                              {"path": "docs/guias/faturamento.md", "reason": both}]
    text = render("change-digest", "--root", str(acme))
    previous = json.loads((acme / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))["content_hash"]
    assert f"1 changed, 1 added, 1 removed of {view['total']} file-backed entities (previous revision " \
           f"{previous[:16]}, current " in text
    assert "- `docs/billing.md`: " + both in text
    # rendering does not move the baseline
    assert render("change-digest", "--root", str(acme)) == text
    # a tampered snapshot is refused
    snapshot = acme / ".docbridge" / "snapshot.json"
    snapshot.write_text(snapshot.read_text(encoding="utf-8").replace("src/billing/tax.ts", "src/billing/tux.ts"),
                        encoding="utf-8")
    result = docbridge("render", "change-digest", "--root", str(acme))
    assert result.returncode == 2 and "content hash does not match" in result.stderr


# ------------------------------------------------------------------------------------------ overlay review


def test_overlay_review_without_an_overlay_renders_the_empty_state(acme: Path) -> None:
    body = "# Overlay review\n\nNo enrichment overlay exists for this repository.\n"
    assert render("overlay-review", "--root", str(acme)) == sealed(body, "overlay-review", None)
    (acme / ".docbridge").mkdir(exist_ok=True)
    (acme / ".docbridge" / "overlay.json").write_text('{"pending": []}', encoding="utf-8")
    body = "# Overlay review\n\nNo proposal is pending review.\n"
    assert render("overlay-review", "--root", str(acme)) == sealed(body, "overlay-review", None)


def test_overlay_review_lists_pending_proposals_with_evidence_links(acme: Path) -> None:
    (acme / ".docbridge").mkdir(exist_ok=True)
    overlay = {
        "accepted": [{"proposalId": "ignored", "kind": "summarize", "entity": "document:docs/api.md"}],
        "pending": [
            {"proposalId": "p-sum", "kind": "summarize", "entity": "document:docs/billing.md",
             "confidence": 0.8, "evidence": [{"path": "docs/billing.md", "lineStart": 1, "lineEnd": 3}]},
            {"proposalId": "p-alias", "kind": "add-alias", "entity": "module:src/billing/tax.ts",
             "reason": "People call it  the VAT module.",
             "evidence": [{"path": "docs/for-agents/billing.md", "lineStart": 7},
                          {"path": "src/billing/tax.ts"}]},
            {"proposalId": "p-alias-2", "kind": "add-alias", "entity": "area:src/api",
             "evidence": [{"path": "docs/api.md", "lineStart": 4, "lineEnd": 4}]},
        ]}
    (acme / ".docbridge" / "overlay.json").write_text(json.dumps(overlay), encoding="utf-8")
    body = (
        "# Overlay review\n\n3 proposal(s) pending review in `.docbridge/overlay.json`.\n\n"
        "## add-alias: `area:src/api`\n\n- Proposal: `p-alias-2`\n"
        "- Evidence: [docs/api.md:4](docs/api.md#L4)\n\n"
        "## add-alias: `module:src/billing/tax.ts`\n\n- Proposal: `p-alias`\n- Reason: People call it the VAT module.\n"
        "- Evidence: [docs/for-agents/billing.md:7](docs/for-agents/billing.md#L7), "
        "[src/billing/tax.ts](src/billing/tax.ts)\n\n"
        "## summarize: `document:docs/billing.md`\n\n- Proposal: `p-sum`\n- Confidence: 0.8\n"
        "- Evidence: [docs/billing.md:1-3](docs/billing.md#L1-L3)\n")
    assert render("overlay-review", "--root", str(acme)) == sealed(body, "overlay-review", None)
    out = acme / "review.md"
    render("overlay-review", "--root", str(acme), "--output", str(out))
    assert out.read_text(encoding="utf-8") == sealed(body, "overlay-review", None)


@pytest.mark.parametrize(("content", "message"), [
    ('{"pending": {"a": 1}}', ".docbridge/overlay.json: `pending` must be an array."),
    ('{"pending": [{"kind": "summarize", "entity": "x"}]}',
     ".docbridge/overlay.json: pending[0]: `proposalId` must be a non-empty string."),
    ('{"pending": [{"proposalId": "p", "kind": "k", "entity": "e", "evidence": [{"lineStart": 2}]}]}',
     "pending[0].evidence[0]: each evidence item must be an object with a `path` string."),
    ("[1, 2", ".docbridge/overlay.json:1:6: invalid JSON"),
])
def test_overlay_review_rejects_a_malformed_overlay(acme: Path, content: str, message: str) -> None:
    (acme / ".docbridge").mkdir(exist_ok=True)
    (acme / ".docbridge" / "overlay.json").write_text(content, encoding="utf-8")
    out = acme / "review.md"
    result = docbridge("render", "overlay-review", "--root", str(acme), "--output", str(out))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not out.exists()


# ------------------------------------------------------------------------------------------ the CI gate


@pytest.mark.parametrize("fixture", ["acme", "monorepo"])
def test_render_check_over_the_fixtures(fixture: str, tmp_path: Path) -> None:
    """The CI gate: pages written to their default places are fresh (exit 0) until a planted change (exit 1)."""
    root = copy_fixture(fixture, tmp_path)
    for template in ("area", "ownership", "llms.txt"):
        assert docbridge("render", template, "--root", str(root), "--check").returncode == 1  # missing
        assert docbridge("render", template, "--root", str(root), "--output",
                         str(root / {"area": "docs/areas", "ownership": "docs/ownership"}.get(template, template))
                         ).returncode == 0
    for template in ("area", "ownership", "llms.txt"):
        result = docbridge("render", template, "--root", str(root), "--check")
        assert result.returncode == 0, result.stdout + result.stderr
    # a planted change: a new export in the first area's first module
    pages = docbridge_json("render", "area", "--root", str(root), "--print-data")
    module = root / pages[0]["modules"][0]["path"]
    module.write_text(module.read_text(encoding="utf-8") + "\nexport const planted = 1;\n", encoding="utf-8")
    result = docbridge("render", "area", "--root", str(root), "--check")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"docs/areas/{pages[0]['path']}: differs from a fresh rendering",
                                          f"{len(pages) - 1} of {len(pages)} page(s) of area are up to date."]
    assert docbridge("render", "llms.txt", "--root", str(root), "--check").returncode == 0
