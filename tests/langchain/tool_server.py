#!/usr/bin/env python3
"""A stdlib-only stdio MCP server (2025-06-18, no discovery) for the LangChain bridge tests.

Tools: `echo` (text), `fail` (an error result), `media` (text, an image and audio),
`weather` (structured content beside its JSON text), `pid` (this process's id), `sleep`
(answers after `seconds`), `crash` (exits without answering), `crash_once` (exits the first
time for a given marker file, echoes after), `hang_once` (hangs for good the first time).
Requests are answered in order, one at a time.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

Json = dict[str, Any]


def tool(name: str, description: str, **properties: str) -> Json:
    schema = {k: {"type": v} for k, v in properties.items()}
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": schema, "required": list(properties)},
    }


TOOLS = [
    tool("echo", "Echo the text back.", text="string"),
    tool("fail", "Fail with the reason.", reason="string"),
    tool("media", "Text, a PNG image and WAV audio."),
    tool("weather", "The weather in a city, as structured content.", city="string"),
    tool("pid", "This server's process id."),
    tool("sleep", "Answer after the given seconds.", seconds="number"),
    tool("crash", "Exit at once without answering."),
    tool("crash_once", "Exit the first time for this marker file; echo after.", marker="string"),
    tool("hang_once", "Hang for good the first time for this marker file.", marker="string"),
]


def text(value: str, *, error: bool = False) -> Json:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def call(name: str, args: Json) -> Json:
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "fail":
        return text(f"failed: {args.get('reason')}", error=True)
    if name == "media":
        return {
            "content": [
                {"type": "text", "text": "a picture and a sound"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            ]
        }
    if name == "weather":
        report = {"city": args.get("city"), "celsius": 21}
        return {
            "content": [{"type": "text", "text": json.dumps(report)}],
            "structuredContent": report,
        }
    if name == "pid":
        return text(str(os.getpid()))
    if name == "sleep":
        time.sleep(float(args.get("seconds", 0)))
        return text("slept")
    if name == "crash":
        os._exit(3)
    if name == "hang_once":
        marker = Path(str(args["marker"]))
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(3600)  # blocks the only thread: no ping is answered either
        return text("survived")
    if name == "crash_once":
        marker = Path(str(args["marker"]))
        if not marker.exists():
            marker.write_text("crashed")
            os._exit(4)
        return text("survived")
    raise KeyError(name)


def answer(message: Json) -> Json | None:
    method, req_id = message.get("method"), message.get("id")
    if req_id is None:
        return None
    if method == "initialize":
        result: Json = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bridge-test", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = message.get("params") or {}
        try:
            result = call(str(params.get("name")), params.get("arguments") or {})
        except KeyError:
            error = {"code": -32602, "message": f"unknown tool {params.get('name')}"}
            return {"jsonrpc": "2.0", "id": req_id, "error": error}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"unknown method {method}"}
        return {"jsonrpc": "2.0", "id": req_id, "error": error}
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
