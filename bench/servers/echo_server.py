"""The fastest stdlib-only stdio MCP server we could write, for benchmarking clients.

It speaks the legacy handshake (and refuses `server/discover` with -32601, as any legacy
server does) and offers two tools: `echo` {text} and `big` {size}. Every client compared
talks to this same process, so the server's cost is identical for all of them.

`--handshake-delay SECONDS` makes the server sleep that long, once, before answering the
first `initialize` or `server/discover` (whichever comes first), to model a slow start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
READ_SIZE = 1 << 20
TOOLS = json.dumps(
    {
        "tools": [
            {
                "name": "echo",
                "description": "Return the text argument.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            },
            {
                "name": "big",
                "description": "Return a text block of `size` bytes of 'x'.",
                "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}},
            },
        ]
    },
    separators=(",", ":"),
)
dumps = json.JSONEncoder(separators=(",", ":")).encode
# Seconds still to sleep before the first handshake reply (--handshake-delay); 0 once spent.
handshake_delay = 0.0


def response(req_id: Any, result_json: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{dumps(req_id)},"result":{result_json}}}\n'


def error(req_id: Any, code: int, message: str) -> str:
    err = dumps({"code": code, "message": message})
    return f'{{"jsonrpc":"2.0","id":{dumps(req_id)},"error":{err}}}\n'


def text_result(text_json: str) -> str:
    # text_json is already an encoded JSON string; templates beat dumping a whole dict.
    return f'{{"content":[{{"type":"text","text":{text_json}}}],"isError":false}}'


def handle(line: str) -> str | None:
    """The reply line for one input line, or None when nothing is owed."""
    try:
        message = json.loads(line)
    except ValueError:
        return error(None, -32700, "Parse error")
    if not isinstance(message, dict):
        return error(None, -32600, "Invalid Request")
    method = message.get("method")
    if "id" not in message or not isinstance(method, str):
        return None  # a notification, or a response to a request we never send
    req_id = message["id"]
    try:
        return dispatch(req_id, method, message.get("params") or {})
    except (AttributeError, TypeError, ValueError) as exc:  # malformed params
        return error(req_id, -32602, f"Invalid params: {exc}")


def dispatch(req_id: Any, method: str, params: dict[str, Any]) -> str:
    global handshake_delay  # noqa: PLW0603 - a one-shot flag in a single-threaded script
    if handshake_delay and method in ("initialize", "server/discover"):
        time.sleep(handshake_delay)
        handshake_delay = 0.0
    return answer(req_id, method, params)


def answer(req_id: Any, method: str, params: dict[str, Any], name: str = "bench-echo") -> str:
    """The reply to one request (shared with http_echo_server.py, so both serve the same)."""
    if method == "tools/call":
        args = params.get("arguments") or {}
        tool = params.get("name")
        if tool == "echo":
            return response(req_id, text_result(dumps(str(args.get("text", "")))))
        if tool == "big":
            size = max(0, int(args.get("size", 0)))
            return response(req_id, text_result('"' + "x" * size + '"'))
        return error(req_id, -32602, f"Unknown tool: {tool}")
    if method == "tools/list":
        return response(req_id, TOOLS)
    if method == "ping":
        return response(req_id, "{}")
    if method == "initialize":
        offered = params.get("protocolVersion")
        result = {
            "protocolVersion": offered if offered in VERSIONS else VERSIONS[-1],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": name, "version": "1.0"},
        }
        return response(req_id, dumps(result))
    return error(req_id, -32601, "Method not found")


def main() -> None:
    global handshake_delay  # noqa: PLW0603
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handshake-delay", type=float, default=0.0, metavar="SECONDS")
    handshake_delay = max(0.0, parser.parse_args().handshake_delay)
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    # Pieces of a line still waiting for its newline; joined once, so long lines stay linear.
    partial: list[bytes] = []
    while True:
        chunk = os.read(stdin, READ_SIZE)
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            partial.append(chunk)
            continue
        head, tail = chunk[:cut], chunk[cut:]
        if partial:
            head = b"".join(partial) + head
            partial.clear()
        if tail:
            partial.append(tail)
        # Newlines never occur inside a UTF-8 sequence, so the complete part decodes whole.
        lines = head.decode(errors="replace").split("\n")
        replies = [handle(line) for line in lines if line.strip()]
        out = "".join(r for r in replies if r is not None)
        if out and not send(stdout, out):
            return
    last = b"".join(partial).decode(errors="replace")
    reply = handle(last) if last.strip() else None  # a final line lacking its newline
    if reply is not None:
        send(stdout, reply)


def send(fd: int, text: str) -> bool:
    """Write all of text at once (one batch per input chunk); False once the client is gone."""
    view = memoryview(text.encode())
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        return False
    return True


if __name__ == "__main__":
    main()
