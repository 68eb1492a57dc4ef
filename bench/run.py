"""Benchmark paicli.mcp against the official SDK, FastMCP and a bare asyncio client.

    .venv/bin/python bench/run.py [--quick] [--clients paicli,mcp-sdk,...] [--out FILE]

Every measurement of every client runs in its own subprocess (bench/worker.py) under a
timeout, against its own fresh echo server: bench/servers/echo_server.py over stdio, and
bench/servers/http_echo_server.py for the HTTP measurements (the same calls over Streamable
HTTP, where `bare` is httpx posting JSON-RPC and `raw-http` is raw asyncio sockets). The call
measurements run in rounds that interleave the clients; each number reported is the median
over the rounds. Results are printed as tables and written as JSON (bench/results.json by
default, per-round values included).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from clients import CLIENTS
from report import print_report

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
IMPORT_TIMEOUT = 60.0
WORKER_TIMEOUT = 180.0

FULL: dict[str, Any] = {
    "import_runs": 7,
    "rounds": 3,
    "seq": {"calls": 2000, "warmup": 100},
    "conc": {"calls": 5000, "inflight": 64, "warmup": 100},
    "big": {"big": 10_000_000, "small": 2_000_000, "reps": 5, "warmup": 100},
    "http_seq": {"calls": 2000, "warmup": 100},
    "http_conc": {"calls": 5000, "inflight": 64, "warmup": 100},
}
QUICK: dict[str, Any] = {
    "import_runs": 5,
    "rounds": 2,
    "seq": {"calls": 1000, "warmup": 100},
    "conc": {"calls": 2000, "inflight": 64, "warmup": 100},
    "big": {"big": 10_000_000, "small": 2_000_000, "reps": 2, "warmup": 100},
    "http_seq": {"calls": 1000, "warmup": 100},
    "http_conc": {"calls": 2000, "inflight": 64, "warmup": 100},
}
STDIO_MEASUREMENTS = ("seq", "conc", "big")
HTTP_MEASUREMENTS = ("http_seq", "http_conc")

Result = dict[str, Any]


def run_child(
    argv: list[str], timeout: float, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Run argv in its own process group; on timeout kill that whole group."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return -1, out, f"timed out after {timeout:.0f} s\n{err}"
    return proc.returncode, out, err


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def time_import(code: str, *, python: str = sys.executable, prelude: str = "") -> float:
    """Seconds to run `code` (an import) in a fresh interpreter `python`, after the untimed
    `prelude`."""
    script = (
        f"{prelude}\nimport time\nt0 = time.perf_counter()\n{code}\nprint(time.perf_counter() - t0)"
    )
    # Imports are timed as an installed package runs: from bytecode. Some shells set
    # PYTHONDONTWRITEBYTECODE, which would make every run recompile every module (ours and
    # the peers' alike); the warm-up attempt writes the .pyc files for all clients.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    status, out, err = run_child([python, "-c", script], IMPORT_TIMEOUT, env)
    if status != 0:
        raise RuntimeError(last_line(err))
    return float(out.strip().splitlines()[-1])


def measure_imports(clients: list[str], runs: int) -> dict[str, Result]:
    """Median import time per client; runs interleave clients so drift hits all alike."""
    times: dict[str, list[float]] = {c: [] for c in clients}
    errors: dict[str, str] = {}
    for attempt in range(runs + 1):  # attempt 0 warms the bytecode and page caches
        for client in clients:
            if client in errors:
                continue
            try:
                seconds = time_import(CLIENTS[client].import_code)
            except RuntimeError as exc:
                errors[client] = str(exc)
                continue
            if attempt:
                times[client].append(seconds * 1e3)
    results: dict[str, Result] = {}
    for client in clients:
        if client in errors:
            results[client] = {"error": errors[client]}
        else:
            runs_ms = times[client]
            results[client] = {"median_ms": statistics.median(runs_ms), "runs_ms": runs_ms}
    return results


def run_worker(client: str, measurement: str, params: Result) -> Result:
    argv = [sys.executable, str(BENCH / "worker.py"), client, measurement, json.dumps(params)]
    status, out, err = run_child(argv, WORKER_TIMEOUT)
    for line in reversed(out.splitlines()):
        if line.startswith("RESULT "):
            result: Result = json.loads(line.removeprefix("RESULT "))
            return result
    return {"error": f"exit status {status}: {last_line(err)}"}


def combine(rounds: list[Result]) -> Result:
    """One result from several rounds: the median of every number over the good rounds."""
    good = [r for r in rounds if "error" not in r]
    if not good:
        return {"error": rounds[-1]["error"], "rounds": rounds}
    combined: Result = {}
    for key, value in good[0].items():
        if isinstance(value, int):  # counts stay whole numbers
            combined[key] = statistics.median_low(r[key] for r in good)
        elif isinstance(value, float):
            combined[key] = statistics.median(r[key] for r in good)
    combined["failed_rounds"] = len(rounds) - len(good)
    combined["rounds"] = rounds
    return combined


def run_meta(quick: bool, config: Result) -> Result:
    """What a results file says about the run: mode, configuration, machine and date."""
    return {
        "mode": "quick" if quick else "full",
        "config": config,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run (about a minute)")
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated subset")
    parser.add_argument("--out", type=Path, default=BENCH / "results.json")
    args = parser.parse_args()
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(clients) - set(CLIENTS)
    if unknown:
        parser.error(f"unknown clients: {', '.join(sorted(unknown))}")
    config = QUICK if args.quick else FULL
    # HTTP-only references (raw-http) take no part in the stdio measurements.
    stdio_clients = [c for c in clients if CLIENTS[c].stdio]

    started = time.perf_counter()
    results: Result = {
        "meta": run_meta(args.quick, config),
        "import": measure_imports(stdio_clients, config["import_runs"]),
    }
    # Rounds interleave the clients, so a slow spell on the machine hits them all alike.
    takers = {m: stdio_clients for m in STDIO_MEASUREMENTS} | {
        m: clients for m in HTTP_MEASUREMENTS
    }
    raw: dict[str, dict[str, list[Result]]] = {m: {c: [] for c in cs} for m, cs in takers.items()}
    for round_no in range(1, config["rounds"] + 1):
        for measurement, takers_of in takers.items():
            for client in takers_of:
                print(f"  round {round_no}: {measurement:<9} {client}", file=sys.stderr, flush=True)
                result = run_worker(client, measurement, config[measurement])
                raw[measurement][client].append(result)
    for measurement, takers_of in takers.items():
        results[measurement] = {c: combine(raw[measurement][c]) for c in takers_of}
    results["meta"]["elapsed_s"] = time.perf_counter() - started

    results["ratios"], results["targets"] = print_report(results)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(
        f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}"
        f" ({results['meta']['elapsed_s']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
