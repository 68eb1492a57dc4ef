"""Connecting to a server built on the official Python SDK 1.x: paicli against the SDK 1.x
client, the same server, in the same run.

    .venv/bin/python bench/sdk1_connect.py [--connects N] [--rounds R] [--out FILE]

The server is tests/server_programs/sdk1_http_server.py (Streamable HTTP, `mcp==1.30.0`, from the
.venv-sdk1 that `make setup` makes). A connect is: open the session (paicli: the 2026
discovery probe, which SDK 1.x refuses with HTTP 400, then `initialize`; the SDK: `initialize`
alone), list the tools, close. Each client runs in a fresh interpreter per round and times
`--connects` connects in a row; its first connect (a cold process) is reported apart from
the median of the others. Rounds interleave the clients, and each figure is the median over
the rounds. The target: paicli within 0.3 s of the SDK client.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SDK1_PYTHON = ROOT / ".venv-sdk1" / "bin" / "python"
SERVER = ROOT / "tests" / "server_programs" / "sdk1_http_server.py"
TARGET_SECONDS = 0.3
CHILD_TIMEOUT = 120.0

# Each child prints one JSON list: the seconds of each connect, in order.
PAICLI_CHILD = """
import asyncio, json, sys, time
import paicli.mcp as m

async def main(url, n):
    seconds = []
    for _ in range(n):
        start = time.perf_counter()
        async with m.connect(m.HttpServer(url)) as session:
            await session.list_tools()
        seconds.append(time.perf_counter() - start)
    print(json.dumps(seconds))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""
SDK1_CHILD = """
import asyncio, json, sys, time
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main(url, n):
    seconds = []
    for _ in range(n):
        start = time.perf_counter()
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
        seconds.append(time.perf_counter() - start)
    print(json.dumps(seconds))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""
CLIENTS = {"paicli": (sys.executable, PAICLI_CHILD), "mcp SDK 1.30": (str(SDK1_PYTHON), SDK1_CHILD)}


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(
        [str(SDK1_PYTHON), str(SERVER)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # SDK 1.x logs a traceback for each closed session
        start_new_session=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the server prints its URL once it listens
    if not line.startswith(b"LISTENING "):
        process.kill()
        raise SystemExit(f"sdk1_http_server.py did not start (printed {line!r})")
    return process, line.split()[1].decode()


def stop_server(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_client(client: str, url: str, connects: int) -> list[float]:
    python, code = CLIENTS[client]
    done = subprocess.run(
        [python, "-c", code, url, str(connects)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{client} failed:\n{done.stderr[-2000:]}")
    seconds: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connects", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=BENCH / "sdk1-connect-results.json")
    args = parser.parse_args()
    if not SDK1_PYTHON.exists():
        raise SystemExit(f"{SDK1_PYTHON} is missing: run `make setup` first")
    process, url = start_server()
    rounds: dict[str, list[list[float]]] = {client: [] for client in CLIENTS}
    try:
        for _ in range(args.rounds):
            for client in CLIENTS:
                rounds[client].append(run_client(client, url, args.connects))
    finally:
        stop_server(process)
    results = {
        client: {
            "first_ms": statistics.median(r[0] for r in runs) * 1000,
            "median_ms": statistics.median(statistics.median(r[1:]) for r in runs) * 1000,
        }
        for client, runs in rounds.items()
    }
    ours, theirs = results["paicli"], results["mcp SDK 1.30"]
    print(f"connect + tools/list + close against an SDK 1.x HTTP server ({args.rounds} rounds)")
    print(f"{'client':<14}{'first (ms)':>12}{'median (ms)':>13}")
    for client, figures in results.items():
        print(f"{client:<14}{figures['first_ms']:>12.1f}{figures['median_ms']:>13.1f}")
    ratio = ours["median_ms"] / theirs["median_ms"]
    gap = max(ours["first_ms"] - theirs["first_ms"], ours["median_ms"] - theirs["median_ms"])
    verdict = "met" if gap <= TARGET_SECONDS * 1000 else "MISSED"
    print(f"paicli / SDK 1.x (median): {ratio:.2f}x; worst gap {gap:+.1f} ms")
    print(f"target: within {TARGET_SECONDS * 1000:.0f} ms of the SDK client: {verdict}")
    record = {"results": results, "ratio": ratio, "gap_ms": gap, "when": time.time()}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
