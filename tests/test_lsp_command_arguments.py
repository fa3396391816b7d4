"""Workspace commands answer arguments of the wrong type (a JSON null included) and `arguments` that are not
an array with InvalidParams (-32602) naming what is wrong, never InternalError, a wrong answer or a hang; no
handler fails, and the commands answer correctly afterwards."""

from __future__ import annotations

import asyncio
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
