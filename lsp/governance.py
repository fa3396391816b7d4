"""`docbridge.doctor`: the doctor's grade and report for each folder, from the folder's current model (the
editors show the grade in their status line and open the report)."""

from __future__ import annotations

import asyncio
from typing import Any

from docbridge.engine.agent.doctor import render_text, run_doctor
from docbridge.engine.agent.suites import BenchError, configured_suite
from docbridge.engine.artifacts.snapshot_file import artifact_dir
from docbridge.engine.base.cache import write_atomic
from docbridge.lsp.commands import _current, arguments, clear_errors, retriever
from docbridge.lsp.positions import path_to_uri
from docbridge.lsp.server import DocBridgeServer


def register(server: DocBridgeServer) -> None:
    @server.command("docbridge.doctor")
    @clear_errors
    async def doctor(ls: DocBridgeServer, *args: Any) -> list[dict[str, Any]]:
        """`[{"show": bool}?]` -> `[{root, grade, score, report, text}]` per folder; with `show` (the default
        when called without arguments, as from a command palette) the first folder's report is written to
        .docbridge/doctor.md and opened."""
        (options,) = arguments("docbridge.doctor", args, ("options", dict, None))
        out, roots = [], []
        for folder in ls.folders:
            if folder.refused:
                continue
            state = await _current(ls, folder)
            if state is None:
                continue
            ranked = await retriever(ls, folder, state)
            configured = state.config.doctor.suite
            try:
                suite = configured_suite(folder.root, configured) if configured else None
                report = await asyncio.to_thread(run_doctor, state, ranked.projection, ranked, suite, folder.root)
            except BenchError as exc:  # the suite is outside, missing or not a suite: the sentence says which
                raise ValueError(str(exc)) from None
            roots.append(folder.root)
            out.append({"root": folder.uri, "grade": report["grade"], "score": report["score"], "report": report,
                        "text": render_text(report)})
        show = bool(options.get("show")) if isinstance(options, dict) else not args
        if out and show:
            target = artifact_dir(roots[0]) / "doctor.md"
            write_atomic(target, ("# Doc Bridge doctor\n\n```text\n" + out[0]["text"] + "```\n").encode("utf-8"))
            await ls.show_document(path_to_uri(target))
        return out
