#!/usr/bin/env python3
"""echo, word_count and now as an MCP server over stdio: Python 3.11+ standard library only.

Full MCP (the `initialize` handshake, protocol versions 2024-11-05 to 2025-11-25): one JSON
message per line on stdin, one answer per line on stdout, logs on stderr only. Run it with
`paicli mcp probe -- python3 examples/tools/python/tools.py`.
"""

import json
import sys
from datetime import UTC, datetime

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TEXT_ARGUMENT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
TOOLS = [
    {"name": "echo", "description": "Return the text unchanged.", "inputSchema": TEXT_ARGUMENT},
    {
        "name": "word_count",
        "description": "Count the words of a text (runs of non-blank characters).",
        "inputSchema": TEXT_ARGUMENT,
        "outputSchema": {
            "type": "object",
            "properties": {"words": {"type": "integer"}},
            "required": ["words"],
        },
    },
    {
        "name": "now",
        "description": "The current time in UTC, as ISO 8601 (2026-01-31T12:00:00Z).",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def call(name, arguments):
    """The result of one tool call (an MCP `CallToolResult`)."""
    if name == "echo":
        return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}
    if name == "word_count":
        counted = {"words": len(str(arguments.get("text", "")).split())}
        return {
            "content": [{"type": "text", "text": json.dumps(counted)}],
            "structuredContent": counted,
        }
    if name == "now":
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"content": [{"type": "text", "text": stamp}]}
    return {"content": [{"type": "text", "text": f"unknown tool: {name}"}], "isError": True}


def answer(request):
    """The result of one request, or raise LookupError for a method we do not have."""
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "example-tools-python", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(params.get("name"), params.get("arguments") or {})
    raise LookupError(method)


def send(message):
    # One line per message, flushed at once: the client waits for the newline.
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:  # ends at end of input: the client closed our stdin
        try:
            request = json.loads(line)
        except ValueError:
            send(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            )
            continue
        if not isinstance(request, dict) or "id" not in request:
            continue  # a notification (notifications/initialized, cancelled): no answer
        reply = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = answer(request)
        except LookupError:
            reply["error"] = {
                "code": -32601,
                "message": f"method not found: {request.get('method')}",
            }
        send(reply)


if __name__ == "__main__":
    main()
