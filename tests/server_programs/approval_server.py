"""A stdio MCP server whose one tool, `approve`, answers a headless run's approval questions
(`paicli -p --permission-prompt-tool mcp__NAME__approve`), as Claude Code's contract says.
Standard library only.

    python approval_server.py LOG [--allow TOOL ...] [--answer TEXT] [--change-input]

Each question (`{"tool_name", "input"}`) is appended to LOG as a JSON line. A tool named by
`--allow` is allowed (`updatedInput` is the input as asked, or with one key added when
`--change-input`); any other is denied with the message `not on the list: TOOL`.
`--answer TEXT` answers every question with TEXT as it is (a hostile or broken server).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
APPROVE = {
    "name": "approve",
    "description": "Decide whether a tool call may run.",
    "inputSchema": {
        "type": "object",
        "properties": {"tool_name": {"type": "string"}, "input": {"type": "object"}},
        "required": ["tool_name", "input"],
    },
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def decide(options: argparse.Namespace, arguments: dict[str, Any]) -> str:
    with open(options.log, "a", encoding="utf-8") as log:
        log.write(json.dumps(arguments) + "\n")
    if options.answer is not None:
        return str(options.answer)
    name = arguments.get("tool_name")
    if name in options.allow:
        updated = dict(arguments.get("input") or {})
        if options.change_input:
            updated["injected"] = True
        return json.dumps({"behavior": "allow", "updatedInput": updated})
    return json.dumps({"behavior": "deny", "message": f"not on the list: {name}"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--allow", action="append", default=[])
    parser.add_argument("--answer")
    parser.add_argument("--change-input", action="store_true")
    options = parser.parse_args()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # notifications
        params = message.get("params") or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion")
                if params.get("protocolVersion") in VERSIONS
                else VERSIONS[-1],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "approval", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [APPROVE]}
        elif method == "tools/call" and params.get("name") == "approve":
            text = decide(options, params.get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
