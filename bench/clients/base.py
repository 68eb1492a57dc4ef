"""The interface every benchmark client module implements."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

CALL_TIMEOUT = 30.0


class Session(Protocol):
    async def echo(self, text: str) -> str:
        """Call the `echo` tool and return the text of its first content block."""
        ...

    async def big(self, size: int) -> int:
        """Call the `big` tool and return the length of the text it returned."""
        ...


class ClientModule(Protocol):
    def connect(
        self, command: str, args: Sequence[str]
    ) -> AbstractAsyncContextManager[Session]: ...

    def connect_http(self, url: str) -> AbstractAsyncContextManager[Session]:
        """A session with the Streamable HTTP server at `url` (handshake and tools/list done)."""
        ...
