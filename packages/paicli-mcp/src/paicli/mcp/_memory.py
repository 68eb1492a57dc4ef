"""An in-memory transport pair: a client and a server in the same process, no I/O.

Each end implements the narrow contract only (`send`, `receive`, `aclose`, `traits`): no
optional hook, no process. Messages are copied through their JSON encoding, so neither side
can share (or mutate) the other's objects and a message that is not JSON fails at `send()`,
as it would on a real wire. Closing either end ends the other's `receive()` once it has read
what was already sent.
"""

from __future__ import annotations

import asyncio
from collections import deque

import orjson

from ._transport import JsonObject, Transport, TransportTraits
from .errors import ConnectionClosed

__all__ = ["MemoryTransport"]


class MemoryTransport(Transport):
    """One end of an in-memory connection. Make both ends with `MemoryTransport.pair()`."""

    traits = TransportTraits(kind="memory")

    def __init__(self, name: str) -> None:
        self._name = name
        self._inbox: deque[JsonObject] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._peer: MemoryTransport | None = None
        self._closed = False

    @classmethod
    def pair(cls) -> tuple[MemoryTransport, MemoryTransport]:
        """(client end, server end), connected to each other."""
        client, server = cls("client"), cls("server")
        client._peer, server._peer = server, client
        return client, server

    @property
    def closed(self) -> bool:
        """Whether this end, or its peer, has been closed."""
        return self._closed or self._peer is None or self._peer._closed

    async def send(self, message: JsonObject) -> None:
        if self.closed:
            raise ConnectionClosed(f"in-memory {self._name}: connection closed")
        try:
            copy = orjson.loads(orjson.dumps(message))
        except TypeError as exc:
            raise TypeError(f"in-memory {self._name}: message is not JSON: {exc}") from exc
        assert self._peer is not None
        self._peer._inbox.append(copy)
        self._peer._wake()

    async def receive(self) -> JsonObject:
        while True:
            if self._inbox:
                return self._inbox.popleft()
            if self.closed:
                raise ConnectionClosed(f"in-memory {self._name}: connection closed")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def aclose(self) -> None:
        self._closed = True
        self._wake()
        if self._peer is not None:
            self._peer._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
