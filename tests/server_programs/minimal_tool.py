"""A tool in the minimal JSON-RPC dialect, written the way tutorials teach it (stdlib only).

The first line read is the handshake, whatever its method; every later line is a call whose
method is a tool name. Options make it as fragile as such tools often are:
`--crash-on-unexpected` exits (status 3) on any message that is not a call of one of its
tools, `--silent-on-unknown` never answers one, `--start-delay S` reads nothing for S
seconds (a slow start: imports, a model loading), `--first-answer-delay S` reads the first
line at once but answers it S seconds later. Every line read is logged to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Return the text argument.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "stats",
        "description": "Length and words of a text, as an object.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "fail",
        "description": "Always answers with an error.",
        "input_schema": {"type": "object"},
    },
    {"name": "nothing", "description": "Answers null."},
    {"name": "deep", "description": "Answers a list nested `depth` levels deep."},
    {
        "name": "sleep",
        "description": "Answers after `seconds`.",
        "input_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
]


def answer(params: dict[str, Any], method: str) -> Any:
    if method == "echo":
        return str(params.get("text", ""))
    if method == "stats":
        text = str(params.get("text", ""))
        return {"length": len(text), "words": text.split()}
    if method == "nothing":
        return None
    if method == "sleep":
        time.sleep(float(params.get("seconds", 0)))
        return "slept"
    raise ValueError("this tool always fails")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crash-on-unexpected", action="store_true")
    parser.add_argument("--silent-on-unknown", action="store_true")
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--first-answer-delay", type=float, default=0.0)
    options = parser.parse_args()
    time.sleep(options.start_delay)
    names = {tool["name"] for tool in TOOLS}
    first = True
    for line in sys.stdin:
        print(f"got {line.strip()}", file=sys.stderr, flush=True)
        request = json.loads(line)
        if first:
            first = False
            time.sleep(options.first_answer_delay)
            info = {"name": "minimal-python", "version": "1.0"}
            handshake = {"server_info": info, "capabilities": {"tools": TOOLS}}
            send({"jsonrpc": "2.0", "id": request.get("id"), "result": handshake})
            continue
        method = request.get("method")
        if "id" not in request or method not in names:
            if options.crash_on_unexpected:
                print(f"unexpected message: {line.strip()}", file=sys.stderr, flush=True)
                sys.exit(3)
            if options.silent_on_unknown or "id" not in request:
                continue
            error = {"code": -32601, "message": f"unknown tool {method}"}
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})
            continue
        if method == "deep":  # written by hand: json.dumps cannot nest this deep
            depth = int(request["params"]["depth"])
            nested = "[" * depth + "]" * depth
            sys.stdout.write(f'{{"jsonrpc":"2.0","id":{request["id"]},"result":{nested}}}\n')
            sys.stdout.flush()
            continue
        try:
            result = answer(request.get("params") or {}, method)
        except ValueError as exc:
            send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": 1, "message": str(exc)}})
        else:
            send({"jsonrpc": "2.0", "id": request["id"], "result": result})


if __name__ == "__main__":
    main()
