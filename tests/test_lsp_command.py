"""`docbridge lsp` starts the same language server as `docbridge-lsp`, with the arguments after `lsp` its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import BIN
from support.jsonrpc import decode, encode


def _responses(output: bytes) -> dict[object, dict[str, object]]:
    return {m["id"]: m for m in decode(output) if "id" in m and "method" not in m}


def test_docbridge_lsp_answers_initialize_and_stops_on_exit(tmp_path: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    result = subprocess.run([str(BIN / "docbridge"), "lsp"], input=b"".join(encode(m) for m in messages),
                            capture_output=True, timeout=120, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    responses = _responses(result.stdout)
    assert responses[1]["result"]["serverInfo"]["name"] == "docbridge"
    assert responses[2]["result"] is None
