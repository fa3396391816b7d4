"""What Doc Bridge changes in pygls's protocol layer: the position encoding it picks, answers to requests whose
parameters do not parse, and how quiet it is about normal events."""

from __future__ import annotations

import logging
from typing import Any

import pygls.protocol.language_server as pygls_language_server
from lsprotocol import types as T
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification

from lsp.positions import UTF8, UTF16

log = logging.getLogger("docbridge.lsp")


class Capabilities(ServerCapabilitiesBuilder):
    @classmethod
    def choose_position_encoding(cls, client_capabilities: T.ClientCapabilities) -> Any:
        """UTF-8 when the client offers it (no conversion of ASCII or UTF-8 text), else UTF-16."""
        general = client_capabilities.general
        offered = list(general.position_encodings or []) if general else []
        return UTF8 if UTF8 in offered else UTF16


def install() -> None:
    """Make pygls build Doc Bridge's capabilities (a module-level hook of pygls; idempotent)."""
    pygls_language_server.ServerCapabilitiesBuilder = Capabilities  # type: ignore[misc]


class DocBridgeProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request whose parameters do not fit its method still gets an answer ("invalid params")
        instead of being dropped, which would leave the client waiting forever."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], None, exc.to_response_error())
            return JsonRPCNotification(method="$/docbridge/ignored", jsonrpc="2.0", params=None)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A cancel for a request already answered is normal (the client raced the answer): not a warning."""
        if msg_id not in self._request_futures:
            log.debug("cancel for request %s, already answered", msg_id)
            return
        super()._handle_cancel_notification(msg_id)


__all__ = ["Capabilities", "DocBridgeProtocol", "install"]
