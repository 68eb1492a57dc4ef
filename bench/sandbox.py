"""Sandbox cost: one command (`true`) and one stdio server start, sandboxed and not.

    .venv/bin/python bench/sandbox.py [--runs N] [--server-runs N]

Per command: `sandbox_command(["true"], ...)`, spawning it, waiting for it and `aclose()`,
against spawning `true` plainly; median of N (default 50). Per server start: `connect()` to
bench/servers/echo_server.py until its tools are listed, against the same unsandboxed;
median of N (default 20); closing is not timed. Each mechanism that works here is measured
(bubblewrap; Landlock with seccomp), the cases taking turns so a busy machine slows them
alike. The profile is `Sandbox.for_project(a temporary folder)` with network "none". The
one-time probe (`check_sandbox`) is timed apart. Targets: under 15 ms added per command,
under 30 ms per server start. Writes bench/sandbox-results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import paicli.mcp as m
from paicli.mcp._sandbox.support import _Cache, check_sandbox

BENCH = Path(__file__).resolve().parent
SERVER = BENCH / "servers" / "echo_server.py"
TRUE = shutil.which("true") or "/bin/true"
COMMAND_TARGET_MS = 15.0
SERVER_TARGET_MS = 30.0


async def plain_command() -> None:
    process = await asyncio.create_subprocess_exec(TRUE)
    await process.wait()


async def sandboxed_command(sandbox: m.Sandbox) -> None:
    command = await m.sandbox_command([TRUE], sandbox)
    try:
        process = await asyncio.create_subprocess_exec(
            *command.argv, env=command.env, preexec_fn=command.preexec, pass_fds=command.pass_fds
        )
        if await process.wait() != 0:
            raise RuntimeError(f"{command.mechanism}: true failed")
    finally:
        await command.aclose()


async def server_start(sandbox: m.Sandbox | None) -> float:
    """Seconds until the server's tools are listed (closing not timed)."""
    spec = m.StdioServer(sys.executable, args=[str(SERVER)], sandbox=sandbox)
    started = time.perf_counter()
    async with m.connect(spec) as session:
        await session.list_tools()
        elapsed = time.perf_counter() - started
    return elapsed


def use(mechanism: str | None, support: m.SandboxSupport) -> None:
    """Make `mechanism` the one chosen (bubblewrap, or Landlock with bubblewrap left out)."""
    if mechanism == "landlock":
        _Cache.support = dataclasses.replace(support, bubblewrap="left out by the benchmark")
    else:
        _Cache.support = support


def label(case: str | None) -> str:
    return case or "unsandboxed"


async def timed(run: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await run()
    return time.perf_counter() - started


async def measure(runs: int, server_runs: int, folder: Path) -> dict[str, Any]:
    probe_started = time.perf_counter()
    support = check_sandbox(fresh=True)
    probe_ms = (time.perf_counter() - probe_started) * 1e3
    mechanisms = [name for name, why in (("bubblewrap", support.bubblewrap),) if why is None]
    if support.landlock is None and support.seccomp is None:
        mechanisms.append("landlock")
    sandbox = m.Sandbox.for_project(folder)
    cases: list[str | None] = [None, *mechanisms]
    command_ms: dict[str, list[float]] = {label(c): [] for c in cases}
    server_ms: dict[str, list[float]] = {label(c): [] for c in cases}
    for case in cases:  # warm-up: page cache, bytecode, the proxy of nothing
        use(case, support)
        await (plain_command() if case is None else sandboxed_command(sandbox))
    for round_no in range(runs):
        for case in cases:
            use(case, support)
            seconds = await timed(
                plain_command if case is None else lambda: sandboxed_command(sandbox)
            )
            command_ms[label(case)].append(seconds * 1e3)
            if round_no < server_runs:
                start = await server_start(None if case is None else sandbox)
                server_ms[label(case)].append(start * 1e3)
    use(None, support)
    return {
        "probe_ms": probe_ms,
        "support": support.describe(),
        "command_ms": {k: statistics.median(v) for k, v in command_ms.items()},
        "server_ms": {k: statistics.median(v) for k, v in server_ms.items()},
    }


def report(results: dict[str, Any]) -> bool:
    print(f"\nsandbox mechanisms here: {'; '.join(results['support'])}")
    print(f"first check_sandbox() (probes, once per process): {results['probe_ms']:.0f} ms")
    verdicts = []
    for title, key, target in (
        ("per command (true)", "command_ms", COMMAND_TARGET_MS),
        ("per stdio server start", "server_ms", SERVER_TARGET_MS),
    ):
        figures = results[key]
        base = figures["unsandboxed"]
        print(f"\n{title}: median, added, ratio (target: under {target:.0f} ms added)")
        print(f"  {'unsandboxed':<12} {base:7.1f} ms")
        for name, value in figures.items():
            if name == "unsandboxed":
                continue
            added = value - base
            verdict = "PASS" if added < target else "MISS"
            verdicts.append(added < target)
            print(
                f"  {name:<12} {value:7.1f} ms  +{added:5.1f} ms  x{value / base:4.2f}  {verdict}"
            )
    return all(verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--server-runs", type=int, default=20)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="paicli-bench-"))
    try:
        results = asyncio.run(measure(options.runs, options.server_runs, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    results["meta"] = {
        "runs": options.runs,
        "server_runs": options.server_runs,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    passed = report(results)
    out = BENCH / "sandbox-results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(BENCH.parent)}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
