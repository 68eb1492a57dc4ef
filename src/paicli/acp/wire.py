"""The ACP channel on stdin/stdout: newline-delimited JSON-RPC, as the SDK's message-level
`Transport` (send, receive, close).

stdout carries nothing but ACP messages: at the start the channel takes private copies of
fds 0 and 1 and points fd 1 at stderr and fd 0 at /dev/null, so a stray print, a child that
inherits them or a library's output can never corrupt the channel or read the editor's
bytes. Input is hostile: a line that is not JSON gets a -32700 answer, one that is not a
request object a -32600, a line over `MAX_LINE` bytes is dropped whole with a -32600, and
the channel keeps serving (the SDK itself would skip the first and stop at the second)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

__all__ = ["MAX_LINE", "StdioChannel"]

# One message larger than this is no editor's (a prompt with images stays far below).
MAX_LINE = 32 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class StdioChannel:
    """The editor's end of the conversation, on the process's own stdin and stdout."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.WriteTransport) -> None:
        self._reader = reader
        self._writer = writer
        self._closed = False

    @classmethod
    async def open(cls) -> StdioChannel:
        """Take stdin and stdout over for ACP (see the module)."""
        loop = asyncio.get_running_loop()
        inbound = os.fdopen(os.dup(0), "rb", buffering=0)
        outbound = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        reader = asyncio.StreamReader(limit=MAX_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), inbound)
        transport, _ = await loop.connect_write_pipe(lambda: _Outbound(reader), outbound)
        return cls(reader, transport)

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed or self._writer.is_closing():
            raise ConnectionError("the editor closed the connection")
        # ensure_ascii: no byte of the line can be a newline or break the framing.
        self._writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        """The next request, notification or response; None at the end of input."""
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                await self._error(None, PARSE_ERROR, "Parse error: the line is not JSON")
                continue
            problem = _shape_problem(message)
            if problem is None:
                return message  # type: ignore[no-any-return]
            request_id = message.get("id") if isinstance(message, dict) else None
            if not isinstance(request_id, int | str):
                request_id = None
            await self._error(request_id, INVALID_REQUEST, f"Invalid Request: {problem}")

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()

    async def _line(self) -> bytes | None:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None  # a last line without its newline still counts
        except asyncio.LimitOverrunError:
            await self._skip_long_line()
            await self._error(None, INVALID_REQUEST, f"Invalid Request: over {MAX_LINE} bytes")
            return b""
        return line

    async def _skip_long_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    async def _error(self, request_id: int | str | None, code: int, message: str) -> None:
        with contextlib.suppress(ConnectionError):
            error = {"code": code, "message": message}
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})


class _Outbound(asyncio.Protocol):
    """stdout's pipe: once the editor's reading end is gone (asyncio watches a pipe for
    that), nothing paicli does can reach it: input ends there too, so paicli stops, its
    sessions and their servers with it, rather than serving prompts nobody reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def connection_lost(self, exc: Exception | None) -> None:
        self._reader.feed_eof()


def _shape_problem(message: object) -> str | None:
    """Why `message` is no JSON-RPC message the connection can route (None: it is one)."""
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        if "id" in message and not isinstance(message["id"], int | str):
            return '"id" must be a number or a string'
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return '"params" must be an object'
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return 'neither a request (no "method") nor a response'
