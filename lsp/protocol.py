"""What Doc Bridge changes in pygls's protocol layer: the position encoding it picks, answers to requests whose
parameters do not parse, and how quiet it is about normal events."""

from __future__ import annotations

import concurrent.futures
import contextvars
import json
import logging
from typing import Any

import orjson
import pygls.protocol.language_server as pygls_language_server
from cattrs.errors import ClassValidationError
from cattrs.v import transform_error
from docbridge.lsp import textsync
from docbridge.lsp.positions import UTF8, UTF16
from lsprotocol import types as T
from lsprotocol.types import EXIT
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification

log = logging.getLogger("docbridge.lsp")


LATER = object()  # a fast path's answer when the request must wait (for a scan or queued changes)
IGNORED = JsonRPCNotification(method="$/docbridge/ignored", jsonrpc="2.0", params=None)  # handled already


class Capabilities(ServerCapabilitiesBuilder):
    @classmethod
    def choose_position_encoding(cls, client_capabilities: T.ClientCapabilities) -> Any:
        """UTF-8 when the client offers it (no conversion of ASCII or UTF-8 text), else UTF-16."""
        general = client_capabilities.general
        offered = list(general.position_encodings or []) if general else []
        return UTF8 if UTF8 in offered else UTF16


def _not_deserialize_noise(record: logging.LogRecord) -> bool:
    """pygls logs at error level, with a traceback, every message whose parameters do not fit their method
    (DocBridgeProtocol answers and reports those itself, in one line) and every error a handler answers on
    purpose (InvalidParams, RequestFailed: the answer says it all). Dropped, so a traceback means a bug."""
    if str(record.msg).startswith("Unable to deserialize message"):
        return False
    if str(record.msg).startswith("Exception occurred for message") and record.exc_info:
        error = record.exc_info[1]
        return not (isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError))
    return True


def install() -> None:
    """Make pygls build Doc Bridge's capabilities (a module-level hook of pygls; idempotent)."""
    pygls_language_server.ServerCapabilitiesBuilder = Capabilities  # type: ignore[misc]  # pygls's capabilities builder, replaced by ours
    textsync.install()
    pygls_logger = logging.getLogger("pygls.protocol.json_rpc")
    if _not_deserialize_noise not in pygls_logger.filters:
        pygls_logger.addFilter(_not_deserialize_noise)


class DocBridgeProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request whose parameters do not fit its method still gets an answer ("invalid params")
        instead of being dropped, which would leave the client waiting forever; a response of the client
        that does not fit the server's request fails that request instead of leaving it waiting forever."""
        if isinstance(data, dict) and "id" in data and data.get("method") == T.WORKSPACE_EXECUTE_COMMAND:
            params = data.get("params")
            given = params.get("arguments") if isinstance(params, dict) else None
            if given is not None and not isinstance(given, list):  # a string would become one argument a letter
                command = params.get("command") if isinstance(params, dict) else None
                self._send_response(data["id"], None, JsonRpcInvalidParams(
                    f"{command}: the arguments must be an array, not {type(given).__name__}").to_response_error())
                return IGNORED
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            cause = exc.__cause__ or exc
            if isinstance(exc, JsonRpcInvalidParams) and isinstance(cause, ClassValidationError):
                # what does not fit, and where: `textDocument/hover: invalid value for type, expected int @
                # $.params.position.line` (pygls said only "Invalid Params")
                method = data.get("method", "the message") if isinstance(data, dict) else "the message"
                exc = JsonRpcInvalidParams(f"{method}: {'; '.join(transform_error(cause)[:3])}")
            log.warning("a message that does not fit %s was answered with an error: %s",
                        data.get("method", "the request it answers") if isinstance(data, dict) else "its method",
                        str(cause).splitlines()[0] if str(cause) else type(cause).__name__)
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], None, exc.to_response_error())
            elif isinstance(data, dict) and "id" in data:
                future = self._request_futures.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_exception(exc)
            return IGNORED

    def handle_message(self, message: Any) -> None:
        """pygls's dispatch, with the message's kind read from its attributes: pygls tells a request from a
        notification with `isinstance` against runtime-checked Protocols, which walks their members on every
        call (a sixth of a definition request's time in the server)."""
        if message.jsonrpc != "2.0":
            log.warning("a message of JSON-RPC version %r was skipped", message.jsonrpc)
            return
        if self._shutdown and getattr(message, "method", "") != EXIT:
            if _has(message, "id", "method"):  # a request is answered (LSP 3.17: InvalidRequest), never left waiting
                self._send_response(message.id, None, JsonRpcInvalidRequest(
                    f"{message.method}: the server is shutting down (it answers only `exit`)").to_response_error())
                return
            log.warning("the server is shutting down: %s was skipped", getattr(message, "method", "a response"))
            return
        context = contextvars.copy_context()  # each handler runs in a context of its own, as in pygls
        if _has(message, "id", "method", "params"):
            context.run(self._handle_request, message.id, message.method, message.params)
        elif _has(message, "method", "params"):
            context.run(self._handle_notification, message.method, message.params)
        elif _has(message, "id", "result"):
            context.run(self._handle_response, message.id, message.result)
        else:
            context.run(self._handle_response, message.id, None, message.error)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None,
                         kwargs: Any = None) -> None:
        """A request whose handler has a synchronous fast path (`.fast`, answering when the model is settled)
        is answered at once, without a task and two loop turns, and its answer is written as plain JSON (no
        future, no typed response object); the handler runs when it answers `LATER`."""
        fast = getattr(getattr(handler, "func", handler), "fast", None)
        if fast is not None and callback is not None and not kwargs:
            try:
                result = fast(self._server, *(args or ()))
            except Exception as exc:  # as the handler itself would report it
                future: Any = concurrent.futures.Future()
                future.set_exception(exc)
                future.add_done_callback(callback)
                return
            if result is not LATER:
                self._result_types.pop(msg_id, None)
                self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": self.to_json(result)})
                return
        super()._execute_handler(msg_id, handler, callback, args, kwargs)

    def to_json(self, value: Any) -> Any:
        """An lsprotocol value as the JSON it is sent as."""
        return self._converter.unstructure(value)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose parameters are JSON already (no typed message to build and unstructure), encoded
        by orjson (a scan's diagnostics are thousands of these, sent from the event loop)."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            body = orjson.dumps(message)
        except TypeError:  # what orjson refuses (integers beyond 64 bits, lone surrogates): pygls's encoder
            self._send_data(message)
            return
        self.send_frame(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    @staticmethod
    def encode_notification(method: str, params: dict[str, Any]) -> bytes:
        """A notification as the bytes of its frame (pure: a worker thread encodes a large one, so the event
        loop only writes it). A list parameter is encoded an element at a time: one `json.dumps` of 20,000
        diagnostics holds the interpreter lock, and so the event loop, for 90 ms."""
        def encoded(value: Any) -> str:
            if isinstance(value, list):
                return "[" + ", ".join(json.dumps(item) for item in value) + "]"
            return json.dumps(value)
        members = ", ".join(f"{json.dumps(name)}: {encoded(value)}" for name, value in params.items())
        body = f'{{"jsonrpc": "2.0", "method": {json.dumps(method)}, "params": {{{members}}}}}'.encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    def send_frame(self, frame: bytes) -> None:
        """Write a frame made by `encode_notification`."""
        if self.writer is None:
            log.error("unable to send a notification: no transport")
            return
        self.writer.write(frame)

    early: Any = None  # what the start-up read and answered (`docbridge.lsp.bootstrap.Early`), until initialize is done

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """The answer to an `initialize` the start-up answered already is not sent again: it is checked against
        the one sent (and kept for the next start when there was none, or when it differs)."""
        early = self.early
        if early is None or early.key is None or msg_id != early.initialize_id:
            super()._send_response(msg_id, result, error)
            return
        self.early = None
        from docbridge.lsp.bootstrap import keep_answer
        if error is not None:
            if early.answered is not None:
                log.error("initialize failed after the start-up answered it: %s", error)
        else:
            answer = json.loads(json.dumps(self.to_json(result)))
            if early.answered is None or answer != early.answered:
                if early.answered is not None:
                    log.warning("the kept answer to initialize differed from the server's; it is corrected")
                keep_answer(early.key, answer)
        if early.answered is None:
            super()._send_response(msg_id, result, error)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """A `$/` request nobody implements is answered MethodNotFound quietly (the protocol allows ignoring
        them; a warning per request floods the editor's log)."""
        if method_name.startswith("$/") and method_name not in self.fm.features and \
                method_name not in self.fm.builtin_features:
            self._send_response(msg_id, None, JsonRpcMethodNotFound.of(method_name).to_response_error())
            return
        super()._handle_request(msg_id, method_name, params)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A cancel for a request already answered is normal (the client raced the answer): not a warning."""
        if isinstance(msg_id, bool) or not isinstance(msg_id, str | int):  # no request has such an id
            log.debug("cancel for an id of no request: %r", msg_id)
            return
        if msg_id not in self._request_futures:
            log.debug("cancel for request %s, already answered", msg_id)
            return
        super()._handle_cancel_notification(msg_id)


def _has(message: Any, *names: str) -> bool:
    return all(hasattr(message, name) for name in names)


__all__ = ["LATER", "Capabilities", "DocBridgeProtocol", "install"]
