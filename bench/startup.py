"""Startup benchmark: 8 slow-handshake stdio servers ready at once, and CLI wall time.

    .venv/bin/python bench/startup.py

For each client, the time from start until all 8 servers (bench/servers/echo_server.py
--handshake-delay 0.5) have completed the handshake and listed their tools: paicli's
ServerManager, the official SDK's ClientSessionGroup, FastMCP's multi-server Client (an
`mcpServers` config) and a bare asyncio.gather of paicli.mcp.connect calls. Each run is a
fresh subprocess (imports not timed) under a timeout; median of 3. Then the wall time of
`paicli --version` and `paicli mcp list` (empty PAICLI_HOME and cwd): median of 7 after a
warm-up. Prints a table with PASS/MISS against the targets; writes bench/startup-results.json.
"""

# Each client imports its library inside its function: a child process imports only its own.
# ruff: noqa: PLC0415

from __future__ import annotations

import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from run import ROOT, last_line, run_child

BENCH = Path(__file__).resolve().parent
SERVER = BENCH / "servers" / "echo_server.py"
PAICLI = ROOT / ".venv" / "bin" / "paicli"
SERVERS = 8
DELAY = 0.5
TOOLS_EACH = 2
RUNS = 3
CLI_RUNS = 7
CHILD_TIMEOUT = 60.0
CLI_TIMEOUT = 30.0
READY_TARGET_S = 0.7
CLI_TARGET_MS = 150.0
SERVER_ARGS = [str(SERVER), "--handshake-delay", str(DELAY)]


async def start_paicli() -> int:
    from paicli.mcp import StdioServer
    from paicli.servers.config import ServerEntry
    from paicli.servers.manager import ServerManager, ServerState

    entries = [
        ServerEntry(
            name=f"s{i}",
            source=Path("bench"),
            scope="user",
            spec=StdioServer(sys.executable, args=SERVER_ARGS),
        )
        for i in range(SERVERS)
    ]
    async with ServerManager(entries) as manager:
        await manager.wait_ready()
        bad = [s.name for s in manager.servers() if s.state is not ServerState.READY]
        if bad:
            raise RuntimeError(f"not ready: {bad}")
        return sum(len(tools) for tools in manager.ready_tools().values())


async def start_sdk() -> int:
    from itertools import count

    from mcp.client.session_group import ClientSessionGroup
    from mcp.client.stdio import StdioServerParameters

    # Every server has the same serverInfo name, so tell their tools apart by a counter.
    serial = count()
    async with ClientSessionGroup(component_name_hook=lambda n, _: f"{n}{next(serial)}") as group:
        # The documented usage: one connect_to_server after another.
        for _ in range(SERVERS):
            await group.connect_to_server(
                StdioServerParameters(command=sys.executable, args=SERVER_ARGS)
            )
        return len(group.tools)


async def start_fastmcp() -> int:
    from fastmcp import Client

    config = {
        "mcpServers": {
            f"s{i}": {"command": sys.executable, "args": SERVER_ARGS} for i in range(SERVERS)
        }
    }
    async with Client(config) as client:
        return len(await client.list_tools())


async def start_bare() -> int:
    from paicli.mcp import StdioServer, connect

    spec = StdioServer(sys.executable, args=SERVER_ARGS)
    async with AsyncExitStack() as stack:
        sessions = await asyncio.gather(
            *(stack.enter_async_context(connect(spec)) for _ in range(SERVERS))
        )
        tools = await asyncio.gather(*(s.list_tools() for s in sessions))
        return sum(len(t) for t in tools)


CLIENTS = {
    "paicli ServerManager": start_paicli,
    "mcp SDK ClientSessionGroup": start_sdk,
    "fastmcp Client(mcpServers)": start_fastmcp,
    "bare gather(connect)": start_bare,
}
# What each client imports, loaded before its clock starts: the benchmark times starting
# servers, not importing libraries (import time has its own benchmark in run.py).
IMPORTS = {
    "paicli ServerManager": ["paicli.mcp", "paicli.servers.config", "paicli.servers.manager"],
    "mcp SDK ClientSessionGroup": ["mcp.client.session_group", "mcp.client.stdio"],
    "fastmcp Client(mcpServers)": ["fastmcp"],
    "bare gather(connect)": ["paicli.mcp"],
}


def child(client: str) -> None:
    """In a fresh process: time one client's startup; print `RESULT {json}`."""

    for module in IMPORTS[client]:
        importlib.import_module(module)

    async def timed() -> tuple[float, int]:
        started = time.perf_counter()
        tools = await CLIENTS[client]()
        return time.perf_counter() - started, tools

    # The clock stops once everything is ready, inside the client's context; shutdown is
    # not timed (but must still finish within the timeout).
    seconds, tools = asyncio.run(timed())
    if tools != SERVERS * TOOLS_EACH:
        raise RuntimeError(f"listed {tools} tools, expected {SERVERS * TOOLS_EACH}")
    print("RESULT " + json.dumps({"seconds": seconds}), flush=True)


def run_once(client: str) -> float | str:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", client]
    # As in run.py: from bytecode, as installed packages run.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    status, out, err = run_child(argv, CHILD_TIMEOUT, env)
    for line in reversed(out.splitlines()):
        if line.startswith("RESULT "):
            seconds: float = json.loads(line.removeprefix("RESULT "))["seconds"]
            return seconds
    return f"exit status {status}: {last_line(err)}"


def time_cli(args: list[str], home: Path, cwd: Path) -> float | str:
    """Wall milliseconds of one `paicli ARGS` process."""
    # As in run.py: measured as installed packages run, from bytecode.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PAICLI_HOME"] = str(home)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [str(PAICLI), *args],
            check=False,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=CLI_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    elapsed = (time.perf_counter() - started) * 1e3
    if proc.returncode != 0:
        return f"exit status {proc.returncode}: {last_line(proc.stderr.decode())}"
    return elapsed


def summarize(runs: list[float | str], target: float | None) -> dict[str, Any]:
    """Median of the good runs; `pass` only where a target applies (None: a reference)."""
    good = [r for r in runs if isinstance(r, float)]
    if not good:
        return {"error": str(runs[-1]), "runs": runs}
    median = statistics.median(good)
    summary: dict[str, Any] = {"median": median, "runs": runs, "failed": len(runs) - len(good)}
    if target is not None:
        summary["pass"] = median <= target
    return summary


def main() -> int:
    results: dict[str, Any] = {
        "meta": {
            "servers": SERVERS,
            "handshake_delay_s": DELAY,
            "runs": RUNS,
            "cli_runs": CLI_RUNS,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
        "ready_s": {},
        "cli_ms": {},
    }
    raw: dict[str, list[float | str]] = {c: [] for c in CLIENTS}
    for round_no in range(1, RUNS + 1):  # rounds interleave the clients
        for client in CLIENTS:
            print(f"  round {round_no}: {client}", file=sys.stderr, flush=True)
            raw[client].append(run_once(client))
    for client in CLIENTS:
        target = READY_TARGET_S if client.startswith("paicli") else None
        results["ready_s"][client] = summarize(raw[client], target)

    commands = {"paicli --version": ["--version"], "paicli mcp list": ["mcp", "list"]}
    cli_raw: dict[str, list[float | str]] = {c: [] for c in commands}
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        for attempt in range(CLI_RUNS + 1):  # attempt 0 warms bytecode and page caches
            for label, args in commands.items():
                ms = time_cli(args, Path(home), Path(cwd))
                if attempt:
                    cli_raw[label].append(ms)
    for label in commands:
        results["cli_ms"][label] = summarize(cli_raw[label], CLI_TARGET_MS)

    print(f"\n{SERVERS} stdio servers, {DELAY} s handshake each: ready (median of {RUNS})")
    rows: list[tuple[str, dict[str, Any], str, str]] = [
        (c, r, "s", f"<= {READY_TARGET_S} s" if c.startswith("paicli") else "")
        for c, r in results["ready_s"].items()
    ]
    rows += [(c, r, "ms", f"<= {CLI_TARGET_MS:.0f} ms") for c, r in results["cli_ms"].items()]
    for label, r, unit, goal in rows:
        if "error" in r:
            print(f"  {label:<28} ERROR {r['error']}")
            continue
        value = f"{r['median']:.2f} s" if unit == "s" else f"{r['median']:.0f} ms"
        verdict = ("PASS" if r["pass"] else "MISS") if "pass" in r else ""
        print(f"  {label:<28} {value:>9}  {goal:<10} {verdict}")
    out = BENCH / "startup-results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(ROOT)}")
    verdicts = [r.get("pass", False) for r in results["cli_ms"].values()]
    verdicts.append(results["ready_s"]["paicli ServerManager"].get("pass", False))
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit(main())
