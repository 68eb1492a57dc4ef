"""The "speed of light" reference: the least an asyncio stdio MCP client can do (and, at the
end, the least a keep-alive Streamable HTTP client on httpx can do).

Pipes from `asyncio.create_subprocess_exec`, `StreamReader.readline` framing, stdlib `json`,
a dict from request id to future and one reader task. No validation, one timer per request,
no cancellation notices: just the handshake and request/response.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import httpx

from .base import CALL_TIMEOUT, RawToolCalls

# StreamReader refuses lines longer than its limit; leave room for a 10 MB result and more.
LINE_LIMIT = 64 * 1024 * 1024


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError("request timed out"))


class BareSession(RawToolCalls):
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while line := await self._stdout.readline():
                message = json.loads(line)
                future = self._pending.pop(message.get("id"), None)
                if future is None or future.done():
                    continue
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]))
                else:
                    future.set_result(message["result"])
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("server closed its stdout"))

    async def _send(self, message: dict[str, Any]) -> None:
        self._stdin.write(json.dumps(message).encode() + b"\n")
        await self._stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        request_id = self._next_id
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        timer = asyncio.get_running_loop().call_later(CALL_TIMEOUT, _expire, future)
        try:
            return await future
        finally:
            timer.cancel()
            self._pending.pop(request_id, None)

    async def handshake(self) -> None:
        await self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bare", "version": "0"},
            },
        )
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.request("tools/list", {})

    async def aclose(self) -> None:
        self._stdin.close()
        try:
            await asyncio.wait_for(self._proc.wait(), 2.0)
        except TimeoutError:
            self._proc.kill()
            await self._proc.wait()
        self._reader.cancel()
        with suppress(asyncio.CancelledError):
            await self._reader


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[BareSession]:
    proc = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=LINE_LIMIT,
    )
    session = BareSession(proc)
    try:
        await session.handshake()
        yield session
    finally:
        await session.aclose()


# -- HTTP: the least a keep-alive Streamable HTTP client can do ------------------------------


class BareHttpSession(RawToolCalls):
    """httpx.AsyncClient POSTing JSON-RPC and parsing the JSON body: no SSE, no GET stream,
    no validation. Its pool keeps connections alive, one per concurrent request."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self._client = client
        self._url = url
        self._next_id = 0
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}

    async def _post(self, message: dict[str, Any]) -> httpx.Response:
        response = await self._client.post(
            self._url, content=json.dumps(message), headers=self._headers
        )
        response.raise_for_status()
        return response

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        reply = json.loads((await self._post(message)).content)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    async def handshake(self) -> None:
        self._next_id += 1
        initialize = {
            "jsonrpc": "2.0",
            "id": self._next_id,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bare", "version": "0"},
            },
        }
        response = await self._post(initialize)
        result = json.loads(response.content)["result"]
        session_id = response.headers.get("mcp-session-id")
        if session_id:
            self._headers["Mcp-Session-Id"] = session_id
        self._headers["MCP-Protocol-Version"] = result["protocolVersion"]
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.request("tools/list", {})


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[BareHttpSession]:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx.AsyncClient(timeout=CALL_TIMEOUT, limits=limits) as client:
        session = BareHttpSession(client, url)
        await session.handshake()
        yield session
        with suppress(httpx.HTTPError):
            await client.delete(url, headers=session._headers)
