"""`paicli mcp probe [--protocol P] [--call TOOL --args JSON] -- COMMAND [ARGS...]`: start one
stdio server, negotiate, and print the server, its era and its tools (or call one)."""

from __future__ import annotations

import argparse
import asyncio
import json

from paicli.mcp import McpError, StdioServer, connect
from paicli.ui.mcp_shell import show_probe, show_probe_tools
from paicli.ui.output import err, out


async def probe(options: argparse.Namespace) -> int:
    argv: list[str] = list(options.server)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        err("paicli mcp probe: give the server command after --")
        return 2
    try:
        arguments = json.loads(options.args)
    except json.JSONDecodeError as exc:
        err(f"paicli mcp probe: --args is not valid JSON: {exc}")
        return 2
    server = StdioServer(
        argv[0], args=argv[1:], protocol=options.protocol, handshake_timeout=options.timeout
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        async with connect(server) as session:
            show_probe(session, loop.time() - started)
            if options.call:
                result = await session.call_tool(options.call, arguments)
                out(("error: " if result.is_error else "") + result.text)
                return 1 if result.is_error else 0
            show_probe_tools(await session.list_tools())
    except McpError as exc:
        err(f"✗ {argv[0]}: {exc}")
        return 1
    return 0
