"""The `paicli` command line. For now: connect to one MCP server and show what it offers.

`paicli mcp probe [--protocol P] [--call TOOL [JSON]] -- COMMAND [ARGS...]` starts a stdio
server, negotiates the protocol, and prints the server, its era and its tools (or calls one).
The agent REPL arrives in a later release; this is the only place `asyncio.run` appears.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence

from . import __version__
from .mcp import McpError, StdioServer, connect
from .mcp.servers import PROTOCOL_CHOICES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paicli", description="An MCP-native agent CLI.")
    parser.add_argument("--version", action="version", version=f"paicli {__version__}")
    commands = parser.add_subparsers(dest="command")
    mcp = commands.add_parser("mcp", help="work with MCP servers")
    mcp_commands = mcp.add_subparsers(dest="mcp_command", required=True)
    probe = mcp_commands.add_parser(
        "probe", help="start a stdio server, negotiate, and list its tools"
    )
    probe.add_argument("--protocol", default="auto", choices=PROTOCOL_CHOICES)
    probe.add_argument("--call", metavar="TOOL", help="call TOOL instead of listing tools")
    probe.add_argument("--args", default="{}", metavar="JSON", help="arguments for --call")
    probe.add_argument("--timeout", type=float, default=30.0, help="handshake timeout (s)")
    probe.add_argument("server", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    if options.command == "mcp" and options.mcp_command == "probe":
        return asyncio.run(probe(options))
    print(f"paicli {__version__}: the agent REPL is not built yet.")
    print("Try: paicli mcp probe -- COMMAND [ARGS...]   (see paicli --help)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
