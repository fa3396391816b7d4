"""Start-up: `initialize` answered before the server's libraries are loaded.

Loading pygls, lsprotocol's types, pydantic and the engine takes about 0.4 s; an editor waits for the answer
to `initialize` before it sends anything else. The answer depends only on the client's capabilities and on
this server's code, so the server keeps each answer it gave in the user's cache folder, keyed by a hash of
both (the client's capabilities, and the size and modification time of every module of this package and of
pygls's capability builder). A later start by the same client reads the first frame with the standard library
alone, answers it from that file within milliseconds while the libraries load on another thread, and hands the
frame to the server, which does everything else `initialize` does and checks its own answer against the one
sent (a difference is logged and the file corrected). Without a kept answer the server answers as always.

Then, until the libraries are loaded, it goes on reading (every message is kept, in order, for the server)
and publishes the diagnostics kept at the last stop for a document opened with the same text (`docbridge.lsp.restart`).

Nothing here imports more than the standard library, `lsp.framing` and `engine.base.safe_io` (which import no more
either) and, for the kept diagnostics, `lsp.restart` (the artifacts' sealed reader).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import select
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from docbridge.engine.base.safe_io import user_cache_folder
from docbridge.lsp.framing import READ_CHUNK, FrameReader, invalid_message

log = logging.getLogger("docbridge.lsp")

CACHE_FORMAT = 1
UTF8, UTF16 = "utf-8", "utf-16"


ANSWERS_ENV = "DOCBRIDGE_INITIALIZE_ANSWERS"  # where the answers are kept (default: the user's cache folder)


def answers_folder() -> Path:
    """Where answers to `initialize` are kept: the user's cache folder (as the artifacts' seal key)."""
    given = os.environ.get(ANSWERS_ENV, "").strip()
    return Path(given).expanduser() if given else user_cache_folder() / "initialize"


def _code_identity() -> list[Any]:
    """The size and modification time of every module that decides the answer: this package's (its features
    and their options) and pygls's capability builder."""
    files = sorted(Path(__file__).parent.glob("*.py"))
    spec = importlib.util.find_spec("pygls")  # finds the package without running it
    if spec is not None and spec.submodule_search_locations:
        pygls_root = Path(next(iter(spec.submodule_search_locations)))
        files += [pygls_root / "capabilities.py", pygls_root / "protocol" / "language_server.py"]
    identity: list[Any] = [CACHE_FORMAT, sys.version_info[:2]]
    for path in files:
        try:
            st = path.stat()
        except OSError:
            identity.append([path.name, None])
            continue
        identity.append([str(path), st.st_size, st.st_mtime_ns])
    return identity


def answer_key(client_capabilities: Any) -> str:
    """The name of the file that keeps the answer for these client capabilities and this code."""
    text = json.dumps({"client": client_capabilities, "code": _code_identity()}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def kept_answer(key: str) -> dict[str, Any] | None:
    """The `initialize` result kept under `key`, or None (absent, unreadable or not a result)."""
    try:
        data = json.loads((answers_folder() / f"{key}.json").read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or not isinstance(data.get("result"), dict):
        return None
    return data["result"]


def keep_answer(key: str, result: dict[str, Any]) -> None:
    """Keep `result` under `key` (atomically; a folder that cannot be written costs only the next start's speed)."""
    folder = answers_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = folder / f".{key}.{os.getpid()}.tmp"
        temp.write_text(json.dumps({"format": CACHE_FORMAT, "result": result}, sort_keys=True), encoding="utf-8")
        os.replace(temp, folder / f"{key}.json")
    except OSError as exc:
        log.debug("could not keep the answer to initialize: %s", exc)


class Early:
    """What the start-up read before the server existed: the frames it framed and the malformed ones it skipped
    (`events`), the reader holding the bytes after them, and the `initialize` it read first and its answer."""

    def __init__(self) -> None:
        self.events: list[bytes | str] = []  # in the order read: a frame's body, or why bytes were skipped
        self.reader = FrameReader(self.events.append, self.events.append)
        self.ended = False
        self.initialize_id: int | str | None = None  # the id of the `initialize` read first
        self.key: str | None = None  # the key of its answer (kept by the server when there was none)
        self.answered: dict[str, Any] | None = None  # the answer sent, when one was kept
        self.roots: list[Path] = []  # the workspace folders `initialize` named
        self.encoding = UTF16  # the position encoding the server negotiates (`docbridge.lsp.protocol.Capabilities`)
        self.prepublished: dict[str, tuple[str, list[Any]]] = {}  # uri -> (text hash, diagnostics) published


def read_first_frame(descriptor: int) -> Early:
    """Read the standard input until one frame (or the end of the stream, or a malformed start) is there."""
    early = Early()
    while not early.events and not early.ended:
        _read_into(early, descriptor)
    return early


def _read_into(early: Early, descriptor: int) -> None:
    """What has arrived on `descriptor`, fed to the early reader (the end of the stream, or an error, ends it)."""
    try:
        chunk = os.read(descriptor, READ_CHUNK)  # retried by Python when a signal interrupts it
    except OSError:
        chunk = b""
    if chunk:
        early.reader.feed(chunk)
    else:
        early.ended = True


def answer_early(early: Early, write: Any) -> None:
    """Answer the first frame when it is an `initialize` whose answer is kept; note its key either way."""
    if not early.events or not isinstance(early.events[0], bytes):
        return
    try:
        message = json.loads(early.events[0])
    except (ValueError, RecursionError):
        return
    if invalid_message(message) is not None or message.get("method") != "initialize" or "id" not in message:
        return
    params = message.get("params")
    if not isinstance(params, dict):
        return
    early.initialize_id, early.key = message["id"], answer_key(params.get("capabilities"))
    early.roots, early.encoding = _roots(params), _encoding(params.get("capabilities"))
    result = kept_answer(early.key)
    if result is None:
        return
    try:
        write(_frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
    except OSError:
        return
    early.answered = result


def _roots(params: dict[str, Any]) -> list[Path]:
    folders = params.get("workspaceFolders")
    uris = [f.get("uri") for f in folders if isinstance(f, dict)] if isinstance(folders, list) and folders else [
        params.get("rootUri")]
    return [path for uri in uris if isinstance(uri, str) for path in [_file_path(uri)] if path is not None]


def _file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    path = unquote(parsed.path)
    return Path(path) if parsed.scheme == "file" and path and "\x00" not in path else None


def _encoding(capabilities: Any) -> str:
    """UTF-8 when the client offers it, else UTF-16: the rule of `docbridge.lsp.protocol.Capabilities`."""
    general = capabilities.get("general") if isinstance(capabilities, dict) else None
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    return UTF8 if isinstance(offered, list) and UTF8 in offered else UTF16


def relay_until_loaded(early: Early, loader: threading.Thread, descriptor: int, write: Any) -> None:
    """While the modules load, read what the client sends (kept, in order, for the server) and publish the
    diagnostics kept at the last stop (`docbridge.lsp.restart`) of a document opened with the text they were computed
    for. Only after an `initialize` answered here: nothing may be published before that answer."""
    if early.answered is None or not early.roots:
        return
    kept: dict[Path, dict[str, tuple[str, list[Any]]]] = {}
    handled = len(early.events)
    while loader.is_alive() and not early.ended:
        try:
            readable, _, _ = select.select([descriptor], [], [], 0.005)
        except (OSError, ValueError):
            return
        if readable:
            _read_into(early, descriptor)
        for event in early.events[handled:]:
            if isinstance(event, bytes) and b'"textDocument/didOpen"' in event:
                _publish_kept(early, event, kept, write)
        handled = len(early.events)


def _publish_kept(early: Early, body: bytes, kept: dict[Path, dict[str, tuple[str, list[Any]]]], write: Any) -> None:
    try:
        message = json.loads(body)
        document = message["params"]["textDocument"]
        uri, text = document["uri"], document["text"]
    except (ValueError, RecursionError, KeyError, TypeError):
        return  # the server answers whatever is wrong with it
    path = _file_path(uri) if isinstance(uri, str) and isinstance(text, str) else None
    root = next((r for r in early.roots if path is not None and path.is_relative_to(r)), None)
    if root is None:
        return
    from docbridge.lsp.restart import read_kept, text_hash
    if root not in kept:
        kept[root] = read_kept(root, early.encoding)
    entry = kept[root].get(uri)
    if entry is None or entry[0] != text_hash(text):
        return
    try:
        write(_frame({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                      "params": {"uri": uri, "diagnostics": entry[1]}}))
    except OSError:
        return
    early.prepublished[uri] = entry


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def main(argv: list[str] | None = None) -> int:
    """The `docbridge-lsp` command."""
    args = argv if argv is not None else sys.argv[1:]
    if args and args[0] in ("--version", "-V"):
        from docbridge.engine import __version__
        print(f"docbridge-lsp {__version__}")
        return 0
    from docbridge.engine.base.heap import bound_malloc_arenas
    bound_malloc_arenas()  # before any thread starts
    if args and args[0] in ("--help", "-h"):
        print("docbridge-lsp: the Doc Bridge language server. It speaks the Language Server Protocol on stdin and "
              "stdout; start it from an editor (see the README).")
        return 0
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="docbridge-lsp %(levelname)s %(name)s: %(message)s")
    # Scans and index builds run in worker threads; a short GIL switch interval lets the event loop answer
    # requests meanwhile within a few milliseconds instead of waiting out 5 ms slices several times (and the
    # first frame is answered while the modules load).
    sys.setswitchinterval(0.0005)
    profile = os.environ.get("DOCBRIDGE_LSP_PROFILE")  # a file: the session's cProfile statistics
    if profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            start()
        finally:
            profiler.disable()
            profiler.dump_stats(profile)
        return 0
    start()
    _leave()
    return 0


def _leave() -> None:
    """End the process now: the interpreter's exit would join the worker threads still running (a scan, an index
    build), and the editor waits for the process to end."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def start() -> None:
    """Serve on stdio: the first frame read (and answered, when it can be) while the server's modules load."""
    loaded: list[BaseException] = []

    def load() -> None:
        try:
            import docbridge.lsp.server  # noqa: F401  (the import is the work)
        except BaseException as exc:  # raised again on the main thread, where it is reported
            loaded.append(exc)

    loader = threading.Thread(target=load, name="docbridge-lsp-load", daemon=True)
    loader.start()
    early: Early | None = None
    with contextlib.suppress(OSError, ValueError):
        descriptor = sys.stdin.fileno()
        sys.stdout.flush()
        early = read_first_frame(descriptor)
        answer_early(early, _write_all)
        relay_until_loaded(early, loader, descriptor, _write_all)
    loader.join()
    if loaded:
        raise loaded[0]
    from docbridge.lsp.server import create_server
    create_server().start_io(early=early)


__all__ = ["ANSWERS_ENV", "Early", "answer_early", "answer_key", "answers_folder", "keep_answer", "kept_answer", "main",
           "read_first_frame", "relay_until_loaded", "start"]
