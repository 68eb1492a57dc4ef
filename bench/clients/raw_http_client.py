"""A ceiling for HTTP clients: Streamable HTTP on raw asyncio, with no HTTP library at all.

Not a real client (HTTP/1.1 over plain TCP only, `Content-Length` JSON bodies only, no SSE,
no redirects, no TLS): it shows what the transport itself costs in Python, and so how much of
an httpx-based client's time is httpx's. A pool of keep-alive connections, each an
`asyncio.Protocol` handing one response at a time to a future.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from .base import CALL_TIMEOUT, RawToolCalls

MAX_CONNECTIONS = 100


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, dict[bytes, bytes], bytes]] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("server closed the connection"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get(b"content-length", b"0"))
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((int(lines[0].split(b" ", 2)[1]), headers, body))


class RawHttpSession(RawToolCalls):
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._path = (parts.path or "/").encode()
        self._idle: list[_Connection] = []
        self._all: list[_Connection] = []
        self._next_id = 0
        self._extra = b""

    async def _connection(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Connection, self._host, self._port)
        self._all.append(conn)
        return conn

    async def exchange(self, method: bytes, body: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
        conn = await self._connection()
        assert conn.transport is not None
        conn.waiter = asyncio.get_running_loop().create_future()
        conn.transport.write(
            b"%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s"
            % (method, self._path, self._host.encode(), self._port, self._extra, len(body), body)
        )
        async with asyncio.timeout(CALL_TIMEOUT):
            result = await conn.waiter
        conn.waiter = None
        if len(self._idle) < MAX_CONNECTIONS:
            self._idle.append(conn)
        else:
            assert conn.transport is not None
            conn.transport.close()
        return result

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        status, _, body = await self.exchange(b"POST", json.dumps(message).encode())
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        reply = json.loads(body)
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
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        status, headers, body = await self.exchange(b"POST", json.dumps(initialize).encode())
        if status != 200:
            raise RuntimeError(f"initialize: HTTP {status}")
        version = json.loads(body)["result"]["protocolVersion"].encode()
        session_id = headers.get(b"mcp-session-id")
        self._extra = b"MCP-Protocol-Version: " + version + b"\r\n"
        if session_id:
            self._extra += b"Mcp-Session-Id: " + session_id + b"\r\n"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.exchange(b"POST", json.dumps(note).encode())
        await self.request("tools/list", {})

    async def aclose(self) -> None:
        try:
            async with asyncio.timeout(2.0):
                await self.exchange(b"DELETE", b"")
        except (OSError, TimeoutError):
            pass
        for conn in self._all:
            if conn.transport is not None:
                conn.transport.close()


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[RawHttpSession]:
    session = RawHttpSession(url)
    try:
        await session.handshake()
        yield session
    finally:
        await session.aclose()
