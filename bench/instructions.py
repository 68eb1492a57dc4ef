"""Instructions a call, counted by valgrind: a measure that the machine's load does not move.

    .venv/bin/python bench/instructions.py [--clients paicli,raw-http] [--calls N]
                                           [--measurements http_seq,http_conc,seq,conc]

Each client runs bench/worker.py's echo calls in a process of its own under valgrind's
callgrind (the server runs natively beside it). Counting starts after the warm-up
(`callgrind_control --zero`) and is read after the calls (`--dump`), so the figure is the
client process's user-space instructions a call: it comes out the same from one run to the
next within about half a percent, where calls/s and CPU time on this shared two-core
machine swing by tens of percent. It leaves out the kernel (the socket writes and `epoll`)
and the time a call waits for the server: it ranks changes to a client's own work, and
calls/s (bench/run.py) stays the measure of the targets. Needs valgrind; a client takes
about a minute (everything runs some fifty times slower under it).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import cast

from clients import CLIENTS
from clients.base import ClientModule, Session
from run import last_line, run_child
from worker import SERVER, TEXT, http_server, run_concurrent, warm_up

MEASUREMENTS = ("http_seq", "http_conc", "seq", "conc")
INFLIGHT = 64
WARMUP = 150
# Under valgrind a client's start alone takes 10-60 s: generous, but bounded.
CHILD_TIMEOUT = 600.0


async def counted_calls(client: str, measurement: str, calls: int) -> None:
    """In the child under callgrind: warm up, count `calls` echo calls, dump the count."""
    module = cast(ClientModule, importlib.import_module(CLIENTS[client].module))

    def control(*args: str) -> None:
        command = ["callgrind_control", *args, str(os.getpid())]
        subprocess.run(command, check=True, capture_output=True)

    async def run(session: Session) -> None:
        await warm_up(session, WARMUP)
        concurrent = measurement.endswith("conc")
        if concurrent:
            await run_concurrent(session, INFLIGHT * 2, INFLIGHT)
        control("--zero")
        if concurrent:
            await run_concurrent(session, calls, INFLIGHT)
        else:
            for _ in range(calls):
                await session.echo(TEXT)
        control("--dump=counted")

    if measurement.startswith("http_"):
        async with http_server() as url, module.connect_http(url) as session:
            await run(session)
    else:
        async with module.connect(sys.executable, [str(SERVER)]) as session:
            await run(session)


def count(client: str, measurement: str, calls: int) -> float:
    """Instructions a call of `client` in `measurement` (runs this file under callgrind)."""
    with tempfile.TemporaryDirectory(prefix="paicli-instructions-") as folder:
        out = Path(folder) / "callgrind.out"
        argv = [
            "valgrind",
            "--tool=callgrind",
            "--trace-children=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            client,
            measurement,
            str(calls),
        ]
        status, _, err = run_child(argv, CHILD_TIMEOUT)
        dumps = sorted(Path(folder).glob("callgrind.out.*"))
        if status != 0 or not dumps:
            raise RuntimeError(f"exit status {status}: {last_line(err)}")
        for line in dumps[0].read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]) / calls
        raise RuntimeError("no instruction total in callgrind's dump")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="paicli,raw-http", help="comma-separated")
    parser.add_argument("--measurements", default="http_seq,http_conc")
    parser.add_argument("--calls", type=int, default=640, help="counted calls a measurement")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        client, measurement, calls = args.child
        asyncio.run(counted_calls(client, measurement, int(calls)))
        return 0
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing counted")
        return 0
    clients = [c for c in args.clients.split(",") if c]
    measurements = [m for m in args.measurements.split(",") if m]
    unknown = sorted({*clients} - set(CLIENTS)) + sorted({*measurements} - {*MEASUREMENTS})
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}")
    print(f"instructions a call (client process, user space; {args.calls} calls each)")
    for measurement in measurements:
        for client in clients:
            if not measurement.startswith("http_") and not CLIENTS[client].stdio:
                continue
            try:
                shown = f"{count(client, measurement, args.calls):>12,.0f}"
            except RuntimeError as exc:
                shown = f"ERROR {exc}"
            print(f"  {measurement:<10} {client:<16} {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
