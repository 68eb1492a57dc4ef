"""The transport interface: move JSON-RPC messages, know nothing about them.

A transport sends one message, receives one message (raising `ConnectionClosed` once the
peer is gone), and closes. It never looks at ids, handshakes or tools; the session does.
"""

from __future__ import annotations

from typing import Any, Protocol

JsonObject = dict[str, Any]


class Transport(Protocol):
    """What every transport (stdio, HTTP, in-memory) implements."""

    async def send(self, message: JsonObject) -> None:
        """Deliver one JSON-RPC message to the peer."""
        ...

    async def receive(self) -> JsonObject:
        """Return the next message from the peer; raise `ConnectionClosed` at the end."""
        ...

    async def aclose(self) -> None:
        """Close the transport and release its resources; safe to call twice."""
        ...
