"""A hand-written HTTP/1.1 MCP endpoint on 127.0.0.1, in the test process, for faults an
ASGI server will not produce: a body cut short of its Content-Length or of its JSON, a gzip
body that expands a thousandfold, redirects, refusals with a body.

Every request gets its own connection (each response says `Connection: close`), so a test's
`answer` writes exactly the bytes it wants and the connection ends there. By default the
endpoint is a stateless legacy server (2025-11-25, or the version the client offers): it
refuses the 2026 probe as legacy servers do, answers `initialize`, `tools/list` (one tool,
`echo`) and `tools/call` (echo) with JSON, accepts notifications with 202, and answers GET
and DELETE with 405. Tests using it are in the real tier: it opens a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]
HOST = "127.0.0.1"
PATH = "/mcp"
VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
REASONS = {
    200: "OK",
    202: "Accepted",
    301: "Moved Permanently",
    307: "Temporary Redirect",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
}


@dataclass
class Request:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def message(self) -> Json:
        value = json.loads(self.body) if self.body else {}
        return value if isinstance(value, dict) else {}


# The raw bytes of a whole response, or None for the default answer.
Answer = Callable[[Request], bytes | None]


@dataclass
class RawServer:
    url: str
    requests: list[Request] = field(default_factory=list)


def response(
    status: int,
    body: bytes = b"",
    *,
    headers: dict[str, str] | None = None,
    content_length: int | None = None,
) -> bytes:
    """A whole HTTP/1.1 response; `content_length` may lie about `body`, and None for a
    body (but not for an empty one) means "until the connection closes"."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if content_length is not None:
        lines.append(f"Content-Length: {content_length}")
    elif not body:
        lines.append("Content-Length: 0")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def json_response(value: Any, status: int = 200) -> bytes:
    body = json.dumps(value).encode()
    return response(
        status, body, headers={"Content-Type": "application/json"}, content_length=len(body)
    )


def rpc_result(request: Request, result: Json) -> Json:
    return {"jsonrpc": "2.0", "id": request.message["id"], "result": result}


def default_answer(request: Request) -> bytes:
    if request.method != "POST":
        return response(405, headers={"Allow": "POST"})
    message = request.message
    method = message.get("method")
    if "id" not in message:
        return response(202)
    if method == "server/discover":
        error = {"code": -32601, "message": "Method not found"}
        return json_response({"jsonrpc": "2.0", "id": message["id"], "error": error}, 404)
    if method == "initialize":
        offered = message.get("params", {}).get("protocolVersion")
        result: Json = {
            "protocolVersion": offered if offered in VERSIONS else VERSIONS[-1],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1.0"},
        }
        return json_response(rpc_result(request, result))
    if method == "tools/list":
        echo = {"name": "echo", "inputSchema": {"type": "object"}}
        return json_response(rpc_result(request, {"tools": [echo]}))
    if method == "tools/call":
        text = str(message["params"].get("arguments", {}).get("text", ""))
        return json_response(rpc_result(request, {"content": [{"type": "text", "text": text}]}))
    error = {"code": -32601, "message": "Method not found"}
    return json_response({"jsonrpc": "2.0", "id": message["id"], "error": error})


@asynccontextmanager
async def raw_http_server(answer: Answer | None = None) -> AsyncIterator[RawServer]:
    """Serve on a free port of 127.0.0.1 for the length of the block; yield its URL (path
    /mcp) and the requests it read. `answer` may answer any request itself."""
    served: RawServer | None = None

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            first, *lines = head.split("\r\n")
            method, path, _ = first.split(" ", 2)
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in lines if line)
            }
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            request = Request(method, path, headers, body)
            assert served is not None
            served.requests.append(request)
            reply = answer(request) if answer is not None else None
            writer.write(default_answer(request) if reply is None else reply)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    served = RawServer(f"http://{HOST}:{port}{PATH}")
    try:
        async with server:
            yield served
    finally:
        server.close()
