"""The interface every benchmark client module implements."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

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


class RawToolCalls:
    """`echo` and `big` on top of a hand-written client's `request` (the bare references)."""

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def echo(self, text: str) -> str:
        result = await self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        return str(result["content"][0]["text"])

    async def big(self, size: int) -> int:
        result = await self.request("tools/call", {"name": "big", "arguments": {"size": size}})
        return len(result["content"][0]["text"])
