"""`paicli mcp replay FILE [--server NAME]`: a stdio MCP server that answers from a trace.

Run it where a client expects a stdio server (`paicli mcp add bug -- paicli mcp replay
trace.jsonl`, or the official SDK's `stdio_client`) and a bug report's session plays again
offline. It reads newline-delimited JSON-RPC on stdin until EOF and writes one JSON line per
answer on stdout (through the escaping output path: still valid JSON, harmless on a
terminal); what the recording lacks is reported on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from paicli.servers.replay import Replay
from paicli.servers.traces import TraceError, read_trace
from paicli.ui.output import err, out_json

# A message larger than the library would accept is no MCP message.
MAX_LINE = 64 * 1024 * 1024


def replay(options: argparse.Namespace) -> int:
    try:
        trace = read_trace(Path(options.file))
    except TraceError as exc:
        err(f"paicli mcp replay: {exc}")
        return 1
    servers = trace.servers
    name = options.server
    if name is None and len(servers) > 1:
        err(f"paicli mcp replay: the trace holds {', '.join(servers)}: choose one with --server")
        return 2
    if name is None and servers:
        name = servers[0]
    if name not in servers:
        err(f"paicli mcp replay: no server {name!r} in {options.file}")
        return 2
    serve(Replay(r for r in trace.records if r.server == name))
    return 0


def serve(answers: Replay) -> None:
    stdin = sys.stdin.buffer
    while line := stdin.readline(MAX_LINE):
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            err("paicli mcp replay: a message over 64 MiB was skipped")
            while (rest := stdin.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # blank lines and noise, as a server would skip them
        if not isinstance(message, dict):
            continue
        reply = answers.answer(message)
        if reply is not None:
            out_json(reply, indent=None)
            if "error" in reply and reply["error"].get("code") == -32601:
                err(str(reply["error"]["message"]))
