"""A repository's links cannot make Doc Bridge write, or copy, outside it.

git keeps symbolic links, and a link may point anywhere: a pages folder or a page file that is a link, and
renames whose target leaves the workspace, are tried through the CLI and the language server.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

from tests.conftest import copy_fixture, docbridge

pytestmark = pytest.mark.attack("writes and reads outside the repository")

SECRET_LINE = "a line of a file outside the repository"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    root = copy_fixture("acme", tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text(f"# Private\n\n{SECRET_LINE}\n")
    return root, outside


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def test_render_never_writes_through_a_linked_pages_folder(setup: tuple[Path, Path]) -> None:
    root, outside = setup
    before = _tree(outside)
    (root / "docs/areas").symlink_to(outside, target_is_directory=True)
    for output in ("docs/areas", str(root / "docs/areas"), "docs/areas/src-billing.md"):
        result = docbridge("render", "area", "--root", str(root), "--output", output, cwd=root)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "docs/areas" in result.stderr and "symbolic link" in result.stderr
        assert "Traceback" not in result.stderr
    assert _tree(outside) == before


def test_render_never_copies_a_linked_page_file_into_the_repository(setup: tuple[Path, Path]) -> None:
    root, outside = setup
    (root / "docs/areas").mkdir(parents=True)
    page = root / "docs/areas/src-billing.md"
    page.symlink_to(outside / "notes.md")
    result = docbridge("render", "area", "--area", "src/billing", "--root", str(root),
                       "--output", str(root / "docs/areas"))
    assert result.returncode == 2 and "symbolic link" in result.stderr, result.stdout + result.stderr
    assert page.is_symlink() and (outside / "notes.md").read_text().endswith(f"{SECRET_LINE}\n")
    assert not any(SECRET_LINE in text for text in _tree(root / "docs").values() if text)


def test_render_still_writes_a_real_folder_and_where_the_user_types(setup: tuple[Path, Path],
                                                                   tmp_path: Path) -> None:
    root, _ = setup
    assert docbridge("render", "area", "--area", "src/billing", "--root", str(root),
                     "--output", "docs/areas/src-billing.md", cwd=root).returncode == 0
    assert (root / "docs/areas/src-billing.md").is_file()
    elsewhere = tmp_path / "elsewhere.md"  # a path typed on the command line is the user's own choice
    assert docbridge("render", "area", "--area", "src/billing", "--root", str(root),
                     "--output", str(elsewhere)).returncode == 0
    assert elsewhere.is_file()


async def test_the_editors_render_and_renames_stay_inside_the_workspace(setup: tuple[Path, Path]) -> None:
    from tests.lsp_client import session
    root, outside = setup
    before = _tree(outside)
    (root / "docs/linked").symlink_to(outside, target_is_directory=True)
    async with session(root) as s:
        for output in ("docs/linked", "../outside", str(outside)):
            with pytest.raises(JsonRpcException) as refused:
                await s.command("docbridge.render", "area", {"area": "src/billing", "output": output})
            assert "symbolic link" in str(refused.value) or "outside the repository" in str(refused.value)
        written = await s.command("docbridge.render", "area", {"area": "src/billing"})
        assert [p["path"] for p in written["pages"]] == ["docs/areas/src-billing.md"]

        storage = (root / "docs/storage.md").as_uri()
        for target in (f"{root.parent.as_uri()}/outside/moved.md",
                       f"{root.as_uri()}/docs/../../../../etc/passwd.md",
                       (root / "docs/linked/moved.md").as_uri()):
            edit = await s.client.workspace_will_rename_files_async(T.RenameFilesParams(
                files=[T.FileRename(old_uri=storage, new_uri=target)]))
            assert edit is None, target
        assert sum("are not rewritten" in m.message for m in s.client.messages) == 3
    assert _tree(outside) == before
    assert os.readlink(root / "docs/linked") == str(outside)


async def test_a_fifo_in_the_workspace_never_hangs_the_language_server(tmp_path: Path) -> None:
    from tests.lsp_client import session
    root = copy_fixture("acme", tmp_path)
    async with session(root) as s:
        pipe = root / "docs/pipe.md"
        os.mkfifo(pipe)  # appears after the scan: never read by it, asked about by the client
        hover = await asyncio.wait_for(s.hover(pipe, 0, 0), 20)
        assert hover is None
        billing = root / "docs/billing.md"
        (root / "docs/billing.md").unlink()
        os.mkfifo(billing)  # a document of the model, now a FIFO
        await asyncio.wait_for(s.hover(billing, 19, 3), 20)  # answered (from the model), not waited on
        answered = await asyncio.wait_for(s.command("docbridge.search", "invoice", 3), 20)
        assert answered["results"]


async def test_a_document_replaced_by_a_fifo_is_an_error_over_mcp_not_a_hang(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.conftest import BIN
    root = copy_fixture("acme", tmp_path)
    params = StdioServerParameters(command=str(BIN / "docbridge"), args=["mcp", "--root", str(root)],
                                   env=dict(os.environ))
    async with Client(params, read_timeout_seconds=60) as client:
        first = await client.call_tool("doc.get", {"path": "docs/storage.md"})
        assert not first.is_error
        (root / "docs/storage.md").unlink()
        os.mkfifo(root / "docs/storage.md")
        result = await asyncio.wait_for(client.call_tool("doc.get", {"path": "docs/storage.md"}), 30)
        assert result.is_error or result.structured_content is not None
        status = await asyncio.wait_for(client.call_tool("docbridge.status", {}), 30)
        assert not status.is_error


def test_output_to_a_fifo_or_a_device_writes_into_it_and_leaves_it_in_place(tmp_path: Path) -> None:
    """`--output /dev/null` (or a FIFO) is written to, never replaced by a file: an atomic write renames a
    file over the path, which as root turned `/dev/null` into a regular file."""
    import json
    import stat
    import threading
    root = copy_fixture("acme", tmp_path)
    fifo = tmp_path / "findings.fifo"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    result = docbridge("check", "--root", str(root), "--format", "json", "--fail-on", "never",
                       "--output", str(fifo))
    reader.join(60)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert "findings" in json.loads(read[0])
    result = docbridge("check", "--root", str(root), "--fail-on", "never", "--output", os.devnull)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)


def test_index_and_map_write_into_a_fifo_and_a_full_disk_is_one_sentence(tmp_path: Path) -> None:
    """`index --output` and `map --html --output` replaced a FIFO (or, as root, a device) with a file, as `check`
    once did; `--output -` wrote a file named `-`. A write the machine refuses (`/dev/full`: no space left) was a
    traceback: it is one sentence naming the file, exit 2."""
    import json
    import stat
    import threading
    root = copy_fixture("acme", tmp_path)
    for command, parse in ((["index"], json.loads), (["map", "--html"], lambda text: text)):
        fifo = tmp_path / f"{command[0]}.fifo"
        os.mkfifo(fifo)
        read: list[str] = []
        reader = threading.Thread(target=lambda f=fifo, into=read: into.append(f.read_text(encoding="utf-8")),
                                  daemon=True)
        reader.start()
        result = docbridge(*command, "--root", str(root), "--output", str(fifo))
        reader.join(60)
        assert result.returncode == 0, result.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), command
        assert parse(read[0])
    page = docbridge("map", "--html", "--root", str(root), "--output", "-", cwd=tmp_path)
    assert page.returncode == 0 and page.stdout.lstrip().lower().startswith("<!doctype html")
    refused = docbridge("index", "--root", str(root), "--output", "-", cwd=tmp_path)
    assert refused.returncode == 2 and "names no file" in refused.stderr
    assert not (tmp_path / "-").exists()
    if os.path.exists("/dev/full"):
        full = docbridge("check", "--root", str(root), "--fail-on", "never", "--output", "/dev/full")
        assert full.returncode == 2, full.stderr
        assert full.stderr == "error: /dev/full: No space left on device.\n"
        assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_a_scans_read_ahead_opens_nothing_outside_the_root_and_never_waits_on_a_fifo(
        setup: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan's workers ask the kernel to read each batch's files ahead of parsing them: a FIFO put in place of a
    walked file (opened without blocking), a link to a file outside and a linked folder leading outside are
    never opened, and a vanished file is passed over."""
    from docbridge.engine.discovery import files
    root, outside = setup
    os.mkfifo(root / "docs/pipe.md")
    (root / "docs/secret.md").symlink_to(outside / "notes.md")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: object) -> int:
        handle = real_open(path, flags, *args)
        opened.append(os.path.realpath(path))  # opened: a link it named was not followed
        return handle

    monkeypatch.setattr(os, "open", recording_open)
    real_root = os.path.realpath(root)
    paths = ["docs/billing.md", "docs/pipe.md", "docs/secret.md", "linked/notes.md", "docs/gone.md"]
    result: list[None] = []
    worker = __import__("threading").Thread(
        target=lambda: result.append(files.read_ahead(root, paths, real_root, {})), daemon=True)
    worker.start()
    worker.join(20)
    assert result == [None], "the read-ahead waited (on the FIFO?)"
    assert os.path.join(real_root, "docs/billing.md") in opened
    assert not [path for path in opened if not path.startswith(real_root + os.sep)]
