"""`paicli mcp probe [--protocol P] [--call TOOL --args JSON] -- COMMAND [ARGS...]`: start one
stdio server, negotiate, and print the server, its era and its tools (or call one)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from paicli.mcp import McpError, StdioServer, connect


async def probe(options: argparse.Namespace) -> int:
    argv: list[str] = list(options.server)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("paicli mcp probe: give the server command after --", file=sys.stderr)
        return 2
    try:
        arguments = json.loads(options.args)
    except json.JSONDecodeError as exc:
        print(f"paicli mcp probe: --args is not valid JSON: {exc}", file=sys.stderr)
        return 2
    server = StdioServer(
        argv[0], args=argv[1:], protocol=options.protocol, handshake_timeout=options.timeout
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        async with connect(server) as session:
            elapsed = loop.time() - started
            info = session.server_info
            print(f"✓ {info.name} {info.version}  {session.era} {session.protocol_version}", end="")
            print(f"  pid {session.pid}  {elapsed:.2f}s")
            if options.call:
                result = await session.call_tool(options.call, arguments)
                print(("error: " if result.is_error else "") + result.text)
                return 1 if result.is_error else 0
            tools = await session.list_tools()
            print(f"{len(tools)} tools")
            for tool in tools:
                summary = (tool.description or "").strip().splitlines()
                print(f"  {tool.name:<28} {summary[0][:70] if summary else ''}")
    except McpError as exc:
        print(f"✗ {argv[0]}: {exc}", file=sys.stderr)
        return 1
    return 0
