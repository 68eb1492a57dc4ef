"""A minimal, correct stdio MCP server (the initialize handshake, stdlib only); each server
beside it breaks it in one way that `paicli mcp doctor` must recognise."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]

ECHO: Json = {
    "name": "echo",
    "description": "Return the text argument.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def write_line(text: str) -> None:
    """What a correct server does with each message: the line, a newline, a flush."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(message: Json, tools: list[Json], name: str) -> Json | None:
    """The reply to one message (None for a notification)."""
    if "id" not in message:
        return None
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        result: Json = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        text = str(params.get("arguments", {}).get("text", ""))
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"unknown method {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve(
    *,
    tools: list[Json] | None = None,
    name: str = "broken-example",
    write: Callable[[str], None] = write_line,
    shape: Callable[[Json], Json | None] = lambda reply: reply,
) -> None:
    """Answer each line of stdin until it ends; `write` sends a line, `shape` may spoil a
    reply before it is sent (or drop it: None)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), [ECHO] if tools is None else tools, name)
        shaped = None if reply is None else shape(reply)
        if shaped is not None:
            write(json.dumps(shaped, ensure_ascii=False))
