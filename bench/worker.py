"""Run one measurement of one client in this (fresh) process and print its result as JSON.

    python bench/worker.py CLIENT MEASUREMENT '{"param": ...}'

MEASUREMENT is `seq`, `conc` or `big` (stdio), or `http_seq` or `http_conc` (the same calls
over Streamable HTTP). The last stdout line is `RESULT {json}`; on failure it is
`RESULT {"error": ...}` and the exit status is 1. Each run starts its own echo server:
bench/servers/echo_server.py for stdio, bench/servers/http_echo_server.py for HTTP.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import resource
import signal
import statistics
import sys
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, cast

from clients import CLIENTS
from clients.base import ClientModule, Session

SERVER = Path(__file__).resolve().parent / "servers" / "echo_server.py"
HTTP_SERVER = Path(__file__).resolve().parent / "servers" / "http_echo_server.py"
HTTP_STARTUP_TIMEOUT = 20.0
TEXT = "hello, benchmark"
WARMUP = 100

Result = dict[str, Any]


async def warm_up(session: Session, calls: int) -> None:
    for _ in range(calls):
        if await session.echo(TEXT) != TEXT:
            raise AssertionError("echo returned the wrong text")


async def measure_seq(session: Session, params: Result) -> Result:
    calls = int(params["calls"])
    await warm_up(session, int(params.get("warmup", WARMUP)))
    clock = time.perf_counter_ns
    latencies = [0] * calls
    cpu = time.process_time()
    start = clock()
    for i in range(calls):
        t0 = clock()
        await session.echo(TEXT)
        latencies[i] = clock() - t0
    elapsed = (clock() - start) / 1e9
    cpu = time.process_time() - cpu
    latencies.sort()
    return {
        "calls": calls,
        "p50_us": latencies[calls // 2] / 1e3,
        "p99_us": latencies[min(calls - 1, int(calls * 0.99))] / 1e3,
        "mean_us": statistics.fmean(latencies) / 1e3,
        "calls_per_s": calls / elapsed,
        "cpu_us": cpu / calls * 1e6,
    }


async def run_concurrent(session: Session, total: int, inflight: int) -> float:
    """Make `total` echo calls with at most `inflight` outstanding; return the seconds taken."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await session.echo(TEXT)

    start = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(inflight):
            group.create_task(worker())
    return time.perf_counter() - start


async def measure_conc(session: Session, params: Result) -> Result:
    total, inflight = int(params["calls"]), int(params["inflight"])
    await warm_up(session, int(params.get("warmup", WARMUP)))
    await run_concurrent(session, inflight * 2, inflight)
    cpu = time.process_time()
    elapsed = await run_concurrent(session, total, inflight)
    cpu = time.process_time() - cpu
    return {
        "calls": total,
        "inflight": inflight,
        "calls_per_s": total / elapsed,
        "cpu_us": cpu / total * 1e6,
    }


def max_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def timed_big(session: Session, size: int) -> float:
    start = time.perf_counter()
    got = await session.big(size)
    elapsed = time.perf_counter() - start
    if got != size:
        raise AssertionError(f"big({size}) returned {got} bytes")
    return elapsed


async def measure_big(session: Session, params: Result) -> Result:
    big, small, reps = int(params["big"]), int(params["small"]), int(params["reps"])
    await warm_up(session, int(params.get("warmup", WARMUP)))
    await timed_big(session, 1000)
    # The memory call comes first: ru_maxrss is a high-water mark, so any earlier large
    # call would hide part of this one's peak.
    before = max_rss_mb()
    first = await timed_big(session, big)
    after = max_rss_mb()
    big_times, small_times = [], []
    for _ in range(reps):
        small_times.append(await timed_big(session, small))
        big_times.append(await timed_big(session, big))
    t_big, t_small = statistics.median(big_times), statistics.median(small_times)
    return {
        "payload_mb": big / 1e6,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "rss_delta_mb": after - before,
        "rss_delta_ratio": (after - before) * 1024 * 1024 / big,
        "first_s": first,
        "big_s": t_big,
        "small_s": t_small,
        "linearity": t_big / t_small,
    }


MEASUREMENTS: dict[str, Callable[[Session, Result], Awaitable[Result]]] = {
    "seq": measure_seq,
    "conc": measure_conc,
    "big": measure_big,
    "http_seq": measure_seq,
    "http_conc": measure_conc,
}


@asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    """Run bench/servers/http_echo_server.py on a free loopback port; yield its URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HTTP_SERVER),
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(HTTP_STARTUP_TIMEOUT):
            line = (await process.stdout.readline()).decode()
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"the HTTP echo server did not start (printed {line!r})")
        yield line.removeprefix("LISTENING ").strip()
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            async with asyncio.timeout(5.0):
                await process.wait()
        except TimeoutError:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def run(client: str, measurement: str, params: Result) -> Result:
    module = cast(ClientModule, importlib.import_module(CLIENTS[client].module))
    if measurement.startswith("http_"):
        async with http_server() as url:
            start = time.perf_counter()
            async with module.connect_http(url) as session:
                connect_ms = (time.perf_counter() - start) * 1e3
                result = await MEASUREMENTS[measurement](session, params)
    else:
        start = time.perf_counter()
        async with module.connect(sys.executable, [str(SERVER)]) as session:
            connect_ms = (time.perf_counter() - start) * 1e3
            result = await MEASUREMENTS[measurement](session, params)
    result["connect_ms"] = connect_ms
    return result


def main() -> int:
    client, measurement = sys.argv[1], sys.argv[2]
    params = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    try:
        result = asyncio.run(run(client, measurement, params))
    except BaseException as exc:  # report anything, including ExceptionGroups, then fail
        traceback.print_exc()
        print("RESULT " + json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
