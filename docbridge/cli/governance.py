"""What the governance commands share: reading the repository's files for the documentation audit (`audit`,
`check --audit`) and the doctor's report (`doctor`, and `parity`'s doctor claims)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from docbridge.cli.common import UsageError, open_workspace


def disk_reader(root: Path) -> Callable[[str], str | None]:
    """A file's text by repository-relative path, None when it cannot be read."""
    def read(path: str) -> str | None:
        try:
            return (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    return read


def suite_path(value: str | None, configured: str | None, root: Path, what: str) -> Path | None:
    """The golden suite `value` names (an option), else the configured one; a usage error when it is missing."""
    if value:
        path = Path(value)
        if not path.is_file():
            raise UsageError(f"{what}: suite file {value!r} does not exist.")
        return path
    if configured:
        from docbridge.engine.agent.suites import BenchError, configured_suite
        try:
            return configured_suite(root, configured)
        except BenchError as exc:
            raise UsageError(str(exc)) from None
    return None


def doctor_report(root: Path, suite: str | None, use_cache: bool = True) -> dict[str, Any]:
    """The doctor's grade of the repository, with `suite` (else `doctor.suite`) as the golden suite."""
    from docbridge.engine.agent import suites
    from docbridge.engine.agent.doctor import run_doctor
    from docbridge.engine.retrieval import store
    started = store.now_ns()
    workspace = open_workspace(root, use_cache=use_cache)
    path = suite_path(suite, workspace.config.doctor.suite, root, "--suite")
    retriever = store.retriever_for(workspace, started)
    try:
        report: dict[str, Any] = run_doctor(workspace.ensure_resolved(), retriever.projection, retriever, path, root)
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc
    return report
