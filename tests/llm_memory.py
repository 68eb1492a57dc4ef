"""The scripted model (tests/llm_server.py's `LlmScript`) answering in memory.

`MemoryLlm.http_client()` is an `httpx2.AsyncClient` (the HTTP library the openai SDK runs
on) whose transport is the script itself: the real SDK sends real requests and parses real
server-sent events, and no socket is opened, so agent tests join the in-memory tier. What
the aiohttp adapter does on a socket is done here on the response: a dropped connection is
the `RemoteProtocolError` httpx2 raises for one, and a hung stream ends when the client
closes the response or cancels its read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx2

from tests.llm_server import DEFAULT_MODEL, Dropped, LlmScript, Reply

__all__ = ["MemoryLlm"]

# No such host can exist (RFC 6761), so a request that missed the in-memory transport fails.
BASE_URL = "http://scripted-llm.invalid/v1"


class MemoryLlm(LlmScript):
    """The script, answered through `http_client()`; `async with` closes those clients."""

    def __init__(self, script: Sequence[Mapping[str, Any]], *, model: str = DEFAULT_MODEL) -> None:
        super().__init__(script, model=model)
        self._clients: list[httpx2.AsyncClient] = []

    @property
    def base_url(self) -> str:
        return BASE_URL

    def http_client(self) -> httpx2.AsyncClient:
        """A client whose every request this script answers."""
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self._handle))
        self._clients.append(client)
        return client

    async def aclose(self) -> None:
        await super().aclose()
        for client in self._clients:
            await client.aclose()

    async def _handle(self, request: httpx2.Request) -> httpx2.Response:
        route = (request.method, request.url.path)
        if route == ("GET", "/v1/models"):
            if self.models_answer is not None:
                status, text = self.models_answer
                return httpx2.Response(status, text=text, headers={"Content-Type": "text/html"})
            return httpx2.Response(200, json=self.models())
        if route != ("POST", "/v1/chat/completions"):
            return httpx2.Response(404, text="404: Not Found")  # what aiohttp answers
        reply = self.reply_to(await request.aread(), request.headers.get("Authorization"))
        if reply.kind == "drop":
            self.disconnected.set()
            raise httpx2.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        if reply.kind == "json":
            if reply.hang:
                await self.wait_for_disconnect()
            return httpx2.Response(reply.status, json=reply.body, headers=reply.headers)
        headers = {"Content-Type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, stream=_Events(self, reply, request))


class _Events(httpx2.AsyncByteStream):
    """A streamed reply's body: the script's frames until they end, the script drops the
    connection, or the client closes the response."""

    def __init__(self, script: LlmScript, reply: Reply, request: httpx2.Request) -> None:
        self._script = script
        self._reply = reply
        self._request = request
        self._gone = asyncio.Event()
        self._finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for frame in self._script.frames(self._reply, self._gone):
                yield frame
        except Dropped:
            raise httpx2.RemoteProtocolError(
                "peer closed connection without sending complete message body "
                "(incomplete chunked read)",
                request=self._request,
            ) from None
        self._finished = True

    async def aclose(self) -> None:
        if not self._finished:
            self._script.disconnected.set()
        self._gone.set()
