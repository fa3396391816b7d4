"""Workspace commands answer arguments of the wrong type (a JSON null included) and `arguments` that are not
an array with InvalidParams (-32602) naming what is wrong, never InternalError, a wrong answer or a hang; no
handler fails, and the commands answer correctly afterwards."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture
from lsp_client import RawClient, session
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

INVALID_PARAMS = -32602
REF_COMMANDS = ["docbridge.search", "docbridge.explain", "docbridge.handoff", "docbridge.lookup",
                "docbridge.render", "docbridge.documents", "docbridge.approveProposal", "docbridge.rejectProposal"]
COMMANDS = [*REF_COMMANDS, "docbridge.doctor", "docbridge.reindex"]


async def _invalid(s: Any, command: str, arguments: Any) -> str:
    """The message of the InvalidParams error `command` answers `arguments` with."""
    try:
        answer = await asyncio.wait_for(s.client.workspace_execute_command_async(T.ExecuteCommandParams(
            command=command, arguments=arguments)), 30)
    except JsonRpcException as exc:
        assert exc.code == INVALID_PARAMS, (command, arguments, exc.code, exc.message)
        return str(exc.message)
    raise AssertionError(f"{command} {arguments!r} answered {answer!r}")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture("acme", tmp_path)


async def test_wrong_typed_arguments_are_invalid_params(root: Path) -> None:
    async with session(root) as s:
        for command in REF_COMMANDS:
            for bad in ([None], [42], [True], [["a"]], [{}]):
                message = await _invalid(s, command, bad)
                assert message.startswith(f"{command}: argument 1 (") and "must be a str" in message
        for command, second in (("docbridge.search", "many"), ("docbridge.lookup", None), ("docbridge.handoff", 3)):
            message = await _invalid(s, command, ["acme-billing", second] if second is not None else
                                     ["acme-billing", "deep"])
            assert "argument 2" in message
        for bad in ([42], [["a"]], ["show"]):
            assert "argument 1 (options) must be a dict" in await _invalid(s, "docbridge.doctor", bad)
        # and every command still answers
        assert (await s.command("docbridge.search", "calculateTax", 1))["results"]
        assert (await s.command("docbridge.handoff", "acme-billing"))["handoff"]["target"]["path"]
        assert (await s.command("docbridge.lookup", "acme-billing"))
        assert [m.message for m in s.client.log_messages if m.type == T.MessageType.Error] == []


async def test_null_and_non_array_arguments_over_raw_json_rpc(root: Path) -> None:
    """`arguments: null` is no arguments (the documented default where there is one, else InvalidParams),
    `arguments` that are not an array are InvalidParams, and a command that opens a document does not hang on a
    client that answers showDocument with nothing."""
    client = await RawClient.start()
    try:
        await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        await client.ready()  # the first scan finished
        number = 10
        for command in REF_COMMANDS:
            number += 1
            answer = await client.request(number, "workspace/executeCommand",
                                          {"command": command, "arguments": None})
            assert answer["error"]["code"] == INVALID_PARAMS and "argument 1" in answer["error"]["message"], answer
        for command in COMMANDS:  # not an array: a string would be taken a letter at a time, a dict a key at a time
            for bad in ("acme-billing", {"ref": "acme-billing"}, 7):
                number += 1
                answer = await client.request(number, "workspace/executeCommand",
                                              {"command": command, "arguments": bad})
                assert answer["error"]["code"] == INVALID_PARAMS, answer
                assert "must be an array" in answer["error"]["message"], answer
        answer = await client.request(50, "workspace/executeCommand",
                                      {"command": "docbridge.doctor", "arguments": None}, timeout=90)
        assert answer["result"][0]["grade"], answer  # shown (the client answered showDocument with null)
        answer = await client.request(51, "workspace/executeCommand", {"command": "docbridge.handoff",
                                                                       "arguments": ["acme-billing", {"show": True}]})
        assert answer["result"]["handoff"]["target"]["path"]
        failures = [n["params"]["message"] for n in client.notifications
                    if n["method"] == "window/logMessage" and n["params"]["type"] == 1]
        assert failures == []
    finally:
        await client.stop()


async def test_render_options_of_the_wrong_type_and_a_doctor_suite_outside_the_folder(tmp_path: Path) -> None:
    """`docbridge.render` with `options.output` a number was an internal error with a traceback, and with a NUL
    character the bare "embedded null byte"; a repository's `doctor.suite` leading out of the folder was read
    (a suite that is not JSON was an internal error naming the exception's class). Each is InvalidParams with
    the sentence, nothing outside is read, and an `initialize` whose root URI holds %00 logs no traceback."""
    root = copy_fixture("acme", tmp_path / "repo")
    outside = tmp_path / "outside-suite.json"
    outside.write_text('{"version": 1, "name": "outside", "cases": [{"id": "secret-case", "input": "x", '
                       '"expected": {"anyOf": ["docs/x.md"]}}]}', encoding="utf-8")
    config = root / "doc-bridge.config.json"
    settings = json.loads(config.read_text(encoding="utf-8")) if config.exists() else {}
    config.write_text(json.dumps({**settings, "doctor": {"suite": "../outside-suite.json"}}), encoding="utf-8")
    log_file = tmp_path / "server.log"
    with log_file.open("wb") as stderr:
        client = await RawClient.start(stderr=stderr)
        try:
            await client.serve_folder(root)
            for number, (options, said) in enumerate((
                    ({"output": 5}, "docbridge.render: options.output must be a string"),
                    ({"output": "page\u0000.txt"}, "docbridge.render: options.output holds a NUL character"),
                    ({"area": ["src"]}, "docbridge.render: options.area must be a string")), start=10):
                answer = await client.request(number, "workspace/executeCommand",
                                              {"command": "docbridge.render", "arguments": ["llms.txt", options]})
                assert answer["error"]["code"] == INVALID_PARAMS and answer["error"]["message"].startswith(said), answer
            answer = await client.request(20, "workspace/executeCommand",
                                          {"command": "docbridge.doctor", "arguments": [{"show": False}]}, timeout=90)
            assert answer["error"]["code"] == INVALID_PARAMS, answer
            assert "outside the repository" in answer["error"]["message"], answer
            assert "secret-case" not in json.dumps(answer)
        finally:
            await client.stop()
        odd = await RawClient.start(stderr=stderr)
        try:
            answer = await odd.request(1, "initialize", {"processId": None, "rootUri": "file:///tmp/%00",
                                                         "capabilities": {}})
            assert "result" in answer, answer
            odd.send({"method": "initialized", "params": {}})
            assert "result" in await odd.request(2, "workspace/symbol", {"query": "x"})
        finally:
            await odd.stop()
    log = log_file.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log and "embedded null byte" not in log, log


async def test_render_into_a_folder_deleted_meanwhile_is_refused(tmp_path: Path) -> None:
    """The workspace folder deleted while the server runs: `docbridge.render` made the folder again, holding only
    the page it wrote. It answers InvalidParams naming the folder, and makes nothing."""
    import shutil
    root = copy_fixture("acme", tmp_path / "repo")
    client = await RawClient.start()
    try:
        await client.serve_folder(root)
        shutil.rmtree(root)
        answer = await client.request(2, "workspace/executeCommand",
                                      {"command": "docbridge.render", "arguments": ["llms.txt", {}]}, timeout=60)
        assert answer["error"]["code"] == INVALID_PARAMS and "no longer exists" in answer["error"]["message"], answer
        assert not root.exists()
    finally:
        await client.stop()
