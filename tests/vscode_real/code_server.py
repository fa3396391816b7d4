"""code-server (VS Code's workbench served to a browser) for the real-UI test, set up so that nothing is
written outside one run folder: its own config (127.0.0.1, no password), user-data, extensions and XDG
folders, and HOME. It runs in its own process group and is stopped by that group's id."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CodeServer:
    url: str
    run_dir: Path
    user_data: Path
    extensions: Path
    process: subprocess.Popen[bytes]

    def logs(self, pattern: str) -> list[Path]:
        """Log files of the running workbench (extension host, output channels), newest session first."""
        return sorted(self.user_data.glob(f"logs/*/{pattern}"), reverse=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(scratch: Path, run_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{scratch / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    home = run_dir / "home"
    for name, folder in (("HOME", home), ("XDG_CONFIG_HOME", home / ".config"),
                         ("XDG_DATA_HOME", home / ".local/share"), ("XDG_CACHE_HOME", home / ".cache"),
                         ("XDG_STATE_HOME", home / ".local/state"), ("XDG_RUNTIME_DIR", run_dir / "runtime")):
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    (run_dir / "runtime").chmod(0o700)
    return env


def _command(scratch: Path, run_dir: Path) -> list[str]:
    return [str(scratch / "code-server/node_modules/.bin/code-server"), "--config", str(run_dir / "config.yaml"),
            "--user-data-dir", str(run_dir / "user-data"), "--extensions-dir", str(run_dir / "extensions")]


def _write_config(run_dir: Path, port: int) -> None:
    """Without --config code-server writes ~/.config/code-server/config.yaml, with a password."""
    (run_dir / "config.yaml").write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n", encoding="utf-8")


def install_extension(scratch: Path, run_dir: Path, vsix: Path) -> subprocess.CompletedProcess[str]:
    _write_config(run_dir, free_port())
    return subprocess.run([*_command(scratch, run_dir), "--install-extension", str(vsix)],
                          env=_environment(scratch, run_dir), capture_output=True, text=True, timeout=180, check=False)


def write_settings(run_dir: Path, user: dict[str, object], machine: dict[str, object]) -> None:
    """User settings, and Machine settings: code-server is a remote window, so machine-scoped settings
    (docbridge.server.command) are read from there, not from the User settings."""
    for scope, values in (("User", user), ("Machine", machine)):
        folder = run_dir / "user-data" / scope
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(values, indent=2), encoding="utf-8")


@contextlib.contextmanager
def running(scratch: Path, run_dir: Path, folder: Path, timeout: float = 90,
            environment: dict[str, str] | None = None) -> Iterator[CodeServer]:
    """code-server on `folder`; `environment` is set over the run folder's own (a PATH of the test's, say)."""
    port = free_port()
    _write_config(run_dir, port)
    log = (run_dir / "code-server.log").open("wb")
    process = subprocess.Popen(
        [*_command(scratch, run_dir), "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
         "--disable-getting-started-override", "--ignore-last-opened", str(folder)],
        env={**_environment(scratch, run_dir), **(environment or {})}, stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True)  # its own process group, stopped below by the group id
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"code-server exited with {process.returncode}; see {run_dir / 'code-server.log'}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"code-server did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.2)
        yield CodeServer(url=url, run_dir=run_dir, user_data=run_dir / "user-data", extensions=run_dir / "extensions",
                         process=process)
    finally:
        _stop_group(process)
        log.close()


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the whole group (code-server, its extension host, the language server), SIGKILL after 10 s."""
    group = process.pid  # start_new_session: the group id is the leader's pid
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            process.poll()  # reap the leader, else it stays in the group as a zombie
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
