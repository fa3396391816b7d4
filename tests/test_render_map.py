"""`docbridge map --html` in a real headless browser (Debian's chromium): the page loads with no console error,
its script runs, and the screenshot shows the fixture's areas (the undocumented one in its highlight colour)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.conftest import docbridge, docbridge_json

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
UNDOCUMENTED_FILL = (0xFF, 0xEB, 0xE9)


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", "--virtual-time-budget=3000", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def _pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit, non-interlaced PNG (what chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, data, header = 8, b"", b""
    while position < len(png):
        (length,) = struct.unpack(">I", png[position:position + 4])
        kind, body = png[position + 4:position + 8], png[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(data)
    rows, previous, stride = [], bytearray(width * step), width * step
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up, corner = previous[i], previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line) if step == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        previous = line
    return width, height, rows


def test_map_data_nodes_and_edges(acme: Path) -> None:
    data = docbridge_json("map", "--json", "--root", str(acme))
    areas = {n["path"]: n for n in data["nodes"] if n["kind"] == "area"}
    assert sorted(areas) == ["src/api", "src/auth", "src/billing", "src/catalog", "src/notifications", "src/orders",
                             "src/storage", "src/util"]
    assert [p for p, n in areas.items() if n["undocumented"]] == ["src/notifications"]
    assert areas["src/billing"]["page"] == "docs/areas/src-billing.md"
    assert "docs/billing.md" in areas["src/billing"]["documents"]
    imports = {(e["source"], e["target"]): e for e in data["edges"] if e["kind"] == "imports"}
    # orders and billing import each other (the fixture's one cycle); api imports orders without a cycle
    assert imports[("area:src/orders", "area:src/billing")]["cycle"]
    assert imports[("area:src/billing", "area:src/orders")]["cycle"]
    assert not imports[("area:src/api", "area:src/orders")]["cycle"]
    # the Portuguese guide misspells `src/biling/tax.ts` (a fuzzy match) but also names `src/billing/invoice.ts`
    # exactly: its edge to billing is observed, not dashed
    (guide,) = [e for e in data["edges"] if e["source"] == "document:docs/guias/faturamento.md"
                and e["target"] == "area:src/billing"]
    assert not guide["proposed"]
    assert not any(e["proposed"] for e in data["edges"])
    # a document whose only mention of an area is misspelt: a dashed (proposed) edge
    (acme / "docs" / "sms.md").write_text("# SMS\n\nText messages are sent by `src/notifcations/sms.ts`.\n",
                                          encoding="utf-8")
    data = docbridge_json("map", "--json", "--root", str(acme))
    dashed = [(e["source"], e["target"]) for e in data["edges"] if e["proposed"]]
    assert dashed == [("document:docs/sms.md", "area:src/notifications")]
    assert docbridge("map", "--root", str(acme)).returncode == 2


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium); "
                                              ".ci/run installs it")
def test_map_html_in_headless_chromium(acme: Path, tmp_path: Path) -> None:
    page = tmp_path / "out" / "map.html"
    result = docbridge("map", "--html", "--root", str(acme), "--output", str(page))
    assert result.returncode == 0, result.stderr
    source = page.read_text(encoding="utf-8")
    # self-contained: no external script, style sheet, image or frame
    assert "<link" not in source and " src=" not in source and "<iframe" not in source
    assert 'href="../acme/docs/areas/src-billing.md"' in source

    dom = _chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    assert 'data-ready="21"' in dom.stdout  # the script ran to its end: 1 package, 8 areas, 12 documents
    for area in ("src/api", "src/billing", "src/notifications", "src/util"):
        assert f">{area}</text>" in dom.stdout

    shot = tmp_path / "map.png"
    result = _chromium("--window-size=1200,800", f"--screenshot={shot}", page.as_uri())
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    width, height, rows = _pixels(shot.read_bytes())
    assert (width, height) == (1200, 800)
    highlighted = sum(1 for row in rows for i in range(0, len(row), 3) if tuple(row[i:i + 3]) == UNDOCUMENTED_FILL)
    assert highlighted > 2000  # the undocumented area's box (240 × 36) is drawn in its colour
