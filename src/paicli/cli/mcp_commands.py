"""`paicli mcp list|get|tools|call|logs|add|remove`: the configured servers from a shell.

Servers come from the config files (`paicli.servers.config`); project servers run only once
approved (`paicli.servers.trust`). While servers start, one progress line per server goes to
stderr, so `--json` output on stdout stays clean. Secrets (env and header values) are never
printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from paicli.mcp import McpError
from paicli.servers.config import (
    ConfigWriteError,
    LoadedConfig,
    ServerEntry,
    add_server,
    load_config,
    paicli_home,
    remove_server,
)
from paicli.servers.manager import ManagedServer, ServerManager, ServerState
from paicli.servers.naming import model_tool_name
from paicli.servers.results import to_model_result
from paicli.servers.trust import TrustStore, approve_servers, describe
from paicli.tools.escape import terminal_safe

from ._signals import run_until_signalled

MARKS = {
    ServerState.READY: "●",
    ServerState.ERROR: "✗",
    ServerState.DISABLED: "○",
    ServerState.STARTING: "…",
    ServerState.STOPPED: "○",
}


def err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(options: argparse.Namespace) -> int:
    command = options.mcp_command
    if command == "add":
        return add(options)
    if command == "remove":
        return remove(options)
    if command == "logs":
        return logs(options)
    return run_until_signalled(with_servers(options))


# -- config editing -------------------------------------------------------------------------


def config_path(scope: str) -> Path:
    if scope == "project":
        return Path.cwd() / ".paicli" / "mcp.json"
    return paicli_home() / "mcp.json"


def add(options: argparse.Namespace) -> int:
    target = list(options.target)
    if target[:1] == ["--"]:
        target = target[1:]
    elif options.transport != "stdio":
        # `NAME URL --header 'K: V'`: options after the URL land in the remainder too.
        rest, target = target, []
        while rest:
            item = rest.pop(0)
            if item in ("--header", "-H") and rest:
                options.header.append(rest.pop(0))
            else:
                target.append(item)
    if not target:
        err("paicli mcp add: give the command after -- (stdio) or the URL (http, sse)")
        return 2
    entry: dict[str, Any]
    if options.transport == "stdio":
        entry = {"command": target[0], "args": target[1:]}
        env = {}
        for item in options.env:
            key, sep, value = item.partition("=")
            if not sep or not key:
                err(f"paicli mcp add: --env {item!r} is not KEY=VALUE")
                return 2
            env[key] = value
        if env:
            entry["env"] = env
    else:
        entry = {"type": options.transport, "url": target[0]}
        headers = {}
        for item in options.header:
            key, sep, value = item.partition(":")
            if not sep or not key.strip():
                err(f"paicli mcp add: --header {item!r} is not 'Name: value'")
                return 2
            headers[key.strip()] = value.strip()
        if headers:
            entry["headers"] = headers
    path = config_path(options.scope)
    try:
        add_server(path, options.name, entry)
    except ConfigWriteError as exc:
        err(f"paicli mcp add: {exc}")
        return 1
    print(f"Added {options.transport} server {options.name!r} to {path}")
    return 0


def remove(options: argparse.Namespace) -> int:
    scopes = [options.scope] if options.scope else ["project", "user"]
    for scope in scopes:
        path = config_path(scope)
        try:
            if remove_server(path, options.name):
                print(f"Removed server {options.name!r} from {path}")
                return 0
        except ConfigWriteError as exc:
            err(f"paicli mcp remove: {exc}")
            return 1
    err(f"paicli mcp remove: no server named {options.name!r} in {' or '.join(scopes)} config")
    return 1


def logs(options: argparse.Namespace) -> int:
    path = paicli_home() / "logs" / "mcp" / f"{options.name}.log"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        err(f"paicli mcp logs: no log for {options.name!r} yet ({path})")
        return 1
    for line in lines[-options.lines :]:
        print(line)
    return 0


# -- commands that start servers --------------------------------------------------------------


def ask_on_terminal(entry: ServerEntry) -> bool:
    """The trust prompt for one project server, on stderr/stdin (used when stdin is a tty)."""
    err(
        f"Project server {entry.name!r} ({entry.source}) wants to run:\n"
        f"  {terminal_safe(describe(entry))}"
    )
    err("Allow it? [y/N] ")
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def approved(config: LoadedConfig, trust_flag: bool) -> tuple[list[ServerEntry], list[str]]:
    """The entries allowed to run, and the names of unapproved project servers skipped."""
    ask = ask_on_terminal if sys.stdin.isatty() else None
    allowed, skipped = approve_servers(
        config.servers.values(),
        Path.cwd(),
        TrustStore(paicli_home()),
        trust_all=trust_flag,
        ask=ask,
    )
    if ask is None:
        for name in skipped:
            err(
                f"paicli: skipping unapproved project server {name!r} "
                "(approve it in an interactive run, or pass --trust-project)"
            )
    return allowed, skipped


class Progress:
    """One line per server as it starts and settles, on stderr."""

    def __init__(self) -> None:
        self._shown: dict[str, ServerState] = {}

    def __call__(self, server: ManagedServer) -> None:
        if self._shown.get(server.name) is server.state:
            return
        self._shown[server.name] = server.state
        if server.state is ServerState.STARTING:
            err(f"… {server.name}")
        elif server.state is ServerState.READY:
            seconds = f"{server.ready_after:.1f}s" if server.ready_after is not None else ""
            err(f"✓ {server.name}  {server.transport}  {len(server.tools)} tools  {seconds}")
        elif server.state is ServerState.ERROR:
            err(f"✗ {server.name}  {server.transport}  {server.error}")


async def with_servers(options: argparse.Namespace) -> int:
    config = load_config(Path.cwd())
    for problem in config.errors:
        err(f"paicli: {problem.source}: {problem.message}")
    for warning in config.warnings:
        err(f"paicli: warning: {warning}")
    entries, skipped = approved(config, options.trust_project)
    only = getattr(options, "name", None)
    if only is not None:
        if only not in config.servers:
            err(f"paicli mcp: no server named {only!r} (see paicli mcp list)")
            return 1
        entries = [e for e in entries if e.name == only]
    if not entries and not skipped:
        print("No MCP servers configured. Add one with: paicli mcp add NAME -- COMMAND ARGS...")
        return 0
    log_dir = paicli_home() / "logs" / "mcp"
    async with ServerManager(entries, on_change=Progress(), log_dir=log_dir) as manager:
        await manager.wait_ready()
        servers = manager.servers()
        ready = [s for s in servers if s.state is ServerState.READY]
        if options.mcp_command in ("list", "tools") and only is None:
            total = sum(len(s.tools) for s in ready)
            active = [s for s in servers if s.state is not ServerState.DISABLED]
            err(f"{len(ready)}/{len(active)} ready, {total} tools")
        if options.mcp_command == "list":
            return show_list(servers, skipped, options.json)
        if options.mcp_command == "get":
            return show_server(manager.get(only), options.json) if only else 2
        if options.mcp_command == "tools":
            return show_tools(ready, options.json)
        return await call(manager, options)


def summary(server: ManagedServer) -> dict[str, Any]:
    return {
        "name": server.name,
        "state": server.state.value,
        "transport": server.transport,
        "tools": len(server.tools),
        "uptime": round(server.uptime, 1) if server.uptime is not None else None,
        "pid": server.pid,
        "error": server.error,
        "scope": getattr(server.entry, "scope", None),
        "target": describe(server.entry) if isinstance(server.entry, ServerEntry) else None,
    }


def show_list(servers: list[ManagedServer], skipped: list[str], as_json: bool) -> int:
    rows = [summary(s) for s in servers]
    rows += [{"name": n, "state": "unapproved"} for n in skipped]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'':2}{'NAME':<20} {'TRANSPORT':<9} {'TOOLS':>5} {'UPTIME':>7} {'PID':>7}  ERROR")
    for server, row in zip(servers, rows, strict=False):
        uptime = f"{row['uptime']:.0f}s" if row["uptime"] is not None else "-"
        print(
            f"{MARKS[server.state]} {row['name']:<20} {row['transport']:<9} {row['tools']:>5} "
            f"{uptime:>7} {row['pid'] or '-':>7}  {row['error'] or ''}"
        )
    for name in skipped:
        print(f"○ {name:<20} {'-':<9} {'-':>5} {'-':>7} {'-':>7}  not approved (project server)")
    return 0


def show_server(server: ManagedServer, as_json: bool) -> int:
    info = summary(server) | {
        "tool_names": [t.name for t in server.tools],
        "stderr": server.stderr_tail[-10:],
    }
    if as_json:
        print(json.dumps(info, indent=2))
        return 0
    for key in ("name", "state", "scope", "transport", "target", "pid", "error"):
        if info.get(key) is not None:
            print(f"{key + ':':<11}{info[key]}")
    print(f"{'tools:':<11}{', '.join(info['tool_names']) or '-'}")
    return 0 if server.state is ServerState.READY else 1


def show_tools(ready: list[ManagedServer], as_json: bool) -> int:
    rows = [
        {
            "name": model_tool_name(s.name, t.name),
            "server": s.name,
            "tool": t.name,
            "description": (t.description or "").strip().split("\n")[0][:100],
        }
        for s in ready
        for t in s.tools
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['name']:<48} {row['description']}")
    return 0


async def call(manager: ServerManager, options: argparse.Namespace) -> int:
    try:
        arguments = json.loads(options.arguments)
    except json.JSONDecodeError as exc:
        err(f"paicli mcp call: arguments are not valid JSON: {exc}")
        return 2
    if not isinstance(arguments, dict):
        err("paicli mcp call: arguments must be a JSON object")
        return 2
    server = manager.get(options.name)
    if server.state is not ServerState.READY:
        err(f"paicli mcp call: server {options.name!r} is not ready: {server.error}")
        return 1
    started = time.monotonic()
    try:
        result = await manager.call_tool(options.name, options.tool, arguments)
    except McpError as exc:
        err(f"paicli mcp call: {exc}")
        return 1
    shown = await asyncio.to_thread(to_model_result, result, server=options.name, tool=options.tool)
    print(shown.text)
    err(f"({time.monotonic() - started:.2f}s{', tool error' if shown.is_error else ''})")
    return 1 if shown.is_error else 0
