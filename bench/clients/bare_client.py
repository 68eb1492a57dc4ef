"""The "speed of light" reference: the least an asyncio stdio MCP client can do.

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

from .base import CALL_TIMEOUT

# StreamReader refuses lines longer than its limit; leave room for a 10 MB result and more.
LINE_LIMIT = 64 * 1024 * 1024


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError("request timed out"))


class BareSession:
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

    async def echo(self, text: str) -> str:
        result = await self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        return str(result["content"][0]["text"])

    async def big(self, size: int) -> int:
        result = await self.request("tools/call", {"name": "big", "arguments": {"size": size}})
        return len(result["content"][0]["text"])

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
