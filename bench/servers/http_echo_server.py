"""The fastest simple Streamable HTTP MCP server we could write, for benchmarking clients.

    python bench/servers/http_echo_server.py [--port N]

A raw `asyncio.Protocol` HTTP/1.1 server with keep-alive (neither httptools nor uvloop is
installed, and uvicorn's pure-Python h11 stack is several times slower than this). Every POST
is answered with an `application/json` body, never SSE: `initialize` (with an
`Mcp-Session-Id`), `notifications/*` (202), `server/discover` (-32601, so clients fall back to
the handshake), `tools/list`, `tools/call` `echo` {text} and `big` {size}, `ping`. GET is 405
(no server stream), DELETE 200. Every client compared talks to this same server, so its cost
is the same for all of them. Prints `LISTENING <url>` once it accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import uuid
from typing import Any

import echo_server  # the same tools and replies as the stdio bench server

try:
    import orjson

    loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a paicli dependency
    loads = json.loads

MAX_HEAD = 64 * 1024

STATUS = {
    200: b"200 OK",
    202: b"202 Accepted",
    400: b"400 Bad Request",
    405: b"405 Method Not Allowed",
    413: b"413 Content Too Large",
}


def error(req_id: Any, code: int, message: str) -> bytes:
    reply: str = echo_server.error(req_id, code, message)
    return reply.encode()


def dispatch(req_id: Any, method: str, params: dict[str, Any]) -> bytes:
    reply: str = echo_server.answer(req_id, method, params, name="bench-http-echo")
    return reply.encode()


class HttpMcp(asyncio.Protocol):
    """One keep-alive connection: parse requests as bytes arrive, answer each in order."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        out: list[bytes] = []
        close = False
        while not close:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    out.append(reply(413, b"", close=True))
                    close = True
                break
            head = bytes(self.buffer[:end]).split(b"\r\n")
            method = head[0].split(b" ", 1)[0]
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(b":")
                lowered = name.strip().lower()
                if lowered == b"content-length":
                    length = int(value)
                elif lowered == b"connection" and value.strip().lower() == b"close":
                    close = True
            start = end + 4
            if len(self.buffer) < start + length:
                close = False  # the rest of the body is still in flight
                break
            body = bytes(self.buffer[start : start + length])
            del self.buffer[: start + length]
            out.append(handle(method, body, close))
        if out and self.transport is not None:
            self.transport.write(b"".join(out) if len(out) > 1 else out[0])
            if close:
                self.transport.close()


def reply(status: int, body: bytes, *, extra: bytes = b"", close: bool = False) -> bytes:
    kind = b"Content-Type: application/json\r\n" if body else b""
    conn = b"Connection: close\r\n" if close else b""
    return b"".join(
        (
            b"HTTP/1.1 ",
            STATUS[status],
            b"\r\n",
            kind,
            extra,
            conn,
            b"Content-Length: ",
            str(len(body)).encode(),
            b"\r\n\r\n",
            body,
        )
    )


def handle(method: bytes, body: bytes, close: bool) -> bytes:
    if method == b"DELETE":
        return reply(200, b"", close=close)
    if method != b"POST":
        return reply(405, b"", extra=b"Allow: POST, DELETE\r\n", close=close)
    try:
        message = loads(body)
    except ValueError:
        return reply(400, error(None, -32700, "Parse error"), close=close)
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        # A response to a server request we never send, or junk.
        return reply(202, b"", close=close)
    if "id" not in message:
        return reply(202, b"", close=close)
    method_name = message["method"]
    try:
        answer = dispatch(message["id"], method_name, message.get("params") or {})
    except (AttributeError, TypeError, ValueError) as exc:
        answer = error(message["id"], -32602, f"Invalid params: {exc}")
    extra = b""
    if method_name == "initialize":
        extra = b"Mcp-Session-Id: " + uuid.uuid4().hex.encode() + b"\r\n"
    return reply(200, answer, extra=extra, close=close)


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(HttpMcp, "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    print(f"LISTENING http://127.0.0.1:{bound}/mcp", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.port))
    sys.exit(0)


if __name__ == "__main__":
    main()
