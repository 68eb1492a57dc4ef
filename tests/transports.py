"""A transport wrapper that records what the session put on the wire, so a test can assert
which requests, notifications and cancellations a session really sent."""

from __future__ import annotations

import asyncio
from typing import Any

import paicli.mcp as m

JsonObject = dict[str, Any]
RequestId = int | str


class RecordingTransport(m.TransportWrapper):
    """Forwards everything to `inner`; keeps every message sent and every request the
    session asked the transport to cancel its own way (with the transport's answer)."""

    def __init__(self, inner: m.Transport) -> None:
        super().__init__(inner)
        self.sent: list[JsonObject] = []
        self.cancelled: list[tuple[RequestId, bool]] = []
        self._more = asyncio.Event()

    async def send(self, message: JsonObject) -> None:
        self.sent.append(message)
        self._more.set()
        await super().send(message)

    async def sending(self, method: str) -> JsonObject:
        """Wait until the session has handed the transport a `method` message (over HTTP,
        its POST has begun) and return it."""
        while True:
            self._more.clear()
            for message in self.sent:
                if message.get("method") == method:
                    return message
            await self._more.wait()

    def cancel_request(self, request_id: RequestId) -> bool:
        done = super().cancel_request(request_id)
        self.cancelled.append((request_id, done))
        return done
