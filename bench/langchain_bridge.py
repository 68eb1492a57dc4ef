"""Benchmark the LangChain bridge, paicli.langchain, against langchain-mcp-adapters.

    .venv/bin/python bench/langchain_bridge.py [--quick] [--out FILE]

Both bridges call the `echo` tool of the same stdio server (bench/servers/echo_server.py)
through LangChain's `tool.ainvoke`. langchain-mcp-adapters 0.3 needs the official SDK 1.x,
while paicli's dev environment pins 2.x for its interop tests, so the adapters run in a
virtual environment of their own that this script makes on first use with uv
(bench/.venvs/langchain-mcp-adapters, on this Python). Measured, interleaved in rounds, each
number the median over the rounds:

- import time in a fresh interpreter: cold, and over langchain-core (`BaseTool` imported
  first, untimed: what a LangChain program pays for the bridge itself);
- per call, sequential: paicli (`async with load_tools`, `ainvoke`), paicli-sync (`with
  load_tools`, `invoke` from plain sync code), the adapters' default
  (`MultiServerMCPClient.get_tools()`: a new session, so a new server process, per call)
  and the adapters with a persistent session (`load_mcp_tools(session)`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from report import Check, _fmt, print_targets, table
from run import ROOT, combine, last_line, run_child, run_meta, time_import

BENCH = Path(__file__).resolve().parent
WORKER = BENCH / "langchain_worker.py"
ADAPTERS_VENV = BENCH / ".venvs" / "langchain-mcp-adapters"
ADAPTERS_REQUIREMENTS = ("langchain-mcp-adapters>=0.3,<0.4", "mcp>=1.9,<2")
WORKER_TIMEOUT = 300.0

OURS = "paicli"
IMPORTS = {
    OURS: "from paicli.langchain import MCPTool, load_tools",
    "adapters": (
        "from langchain_mcp_adapters.client import MultiServerMCPClient\n"
        "from langchain_mcp_adapters.tools import load_mcp_tools"
    ),
}
LANGCHAIN_CORE = "from langchain_core.tools import BaseTool"
FULL = {"import_runs": 7, "rounds": 3, "calls": 1000, "warmup": 100, "default_calls": 30}
QUICK = {"import_runs": 3, "rounds": 2, "calls": 300, "warmup": 50, "default_calls": 10}

Result = dict[str, Any]


def adapters_python() -> str:
    """The adapters' interpreter, making their environment first if needed."""
    python = ADAPTERS_VENV / "bin" / "python"
    if python.exists():
        return str(python)
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("uv is needed to make the adapters' environment (see `make setup`)")
    print(f"  making {ADAPTERS_VENV.relative_to(ROOT)} ...", file=sys.stderr, flush=True)
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(ADAPTERS_VENV)], check=True)
    install = [uv, "pip", "install", "-q", "--python", str(python), *ADAPTERS_REQUIREMENTS]
    subprocess.run(install, check=True)
    return str(python)


def versions(python: str, packages: tuple[str, ...]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"
    )
    status, out, err = run_child([python, "-c", code, *packages], 60.0)
    return json.loads(out) if status == 0 else {"error": last_line(err)}


def measure_imports(pythons: dict[str, str], runs: int) -> Result:
    """Median ms per bridge, cold and over langchain-core; runs interleave the bridges."""
    times: dict[str, list[float]] = {f"{b} {k}": [] for b in IMPORTS for k in ("cold", "over")}
    for attempt in range(runs + 1):  # attempt 0 writes the bytecode and warms the caches
        for bridge, code in IMPORTS.items():
            cold = time_import(code, python=pythons[bridge])
            over = time_import(code, python=pythons[bridge], prelude=LANGCHAIN_CORE)
            if attempt:
                times[f"{bridge} cold"].append(cold * 1e3)
                times[f"{bridge} over"].append(over * 1e3)
    return {key: {"median_ms": statistics.median(v), "runs_ms": v} for key, v in times.items()}


def run_worker(python: str, bridge: str, params: Result) -> Result:
    status, out, err = run_child([python, str(WORKER), bridge, json.dumps(params)], WORKER_TIMEOUT)
    for line in reversed(out.splitlines()):
        if line.startswith("RESULT "):
            result: Result = json.loads(line.removeprefix("RESULT "))
            return result
    return {"error": f"exit status {status}: {last_line(err)}"}


def measure_calls(pythons: dict[str, str], config: Result) -> Result:
    bridges = {
        OURS: pythons[OURS],
        "paicli-sync": pythons[OURS],
        "adapters": pythons["adapters"],
        "adapters-session": pythons["adapters"],
    }
    raw: dict[str, list[Result]] = {b: [] for b in bridges}
    for round_no in range(1, config["rounds"] + 1):
        for bridge, python in bridges.items():
            print(f"  round {round_no}: {bridge}", file=sys.stderr, flush=True)
            calls = config["default_calls"] if bridge == "adapters" else config["calls"]
            warmup = 2 if bridge == "adapters" else config["warmup"]
            raw[bridge].append(run_worker(python, bridge, {"calls": calls, "warmup": warmup}))
    return {bridge: combine(rounds) for bridge, rounds in raw.items()}


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def report(results: Result) -> tuple[Result, Result]:
    imports, calls = results["import"], results["calls"]
    table(
        "1. Import time of the bridge (fresh interpreter; 'over langchain-core': BaseTool "
        "imported first)",
        ["bridge", "cold ms", "over langchain-core ms"],
        [
            [
                b,
                f"{imports[f'{b} cold']['median_ms']:.0f}",
                f"{imports[f'{b} over']['median_ms']:.0f}",
            ]
            for b in IMPORTS
        ],
    )
    rows = []
    for bridge, r in calls.items():
        if "error" in r:
            rows.append([bridge, f"ERROR {r['error'][:150]}"])
        else:
            rows.append(
                [
                    bridge,
                    f"{r['p50_us']:,.0f}",
                    f"{r['mean_us']:,.0f}",
                    f"{r['calls_per_s']:,.0f}",
                    f"{r['connect_ms']:.0f}",
                ]
            )
    table(
        "2. Sequential echo calls through LangChain's tool interface (after warm-up)",
        ["bridge", "p50 us", "mean us", "calls/s", "open ms"],
        rows,
    )

    def mean(bridge: str) -> float | None:
        value = calls.get(bridge, {}).get("mean_us")
        return float(value) if isinstance(value, int | float) else None

    def median_ms(key: str) -> float:
        return float(imports[key]["median_ms"])

    ratios: Result = {
        "call_adapters_default_over_ours": ratio(mean("adapters"), mean(OURS)),
        "call_adapters_session_over_ours": ratio(mean("adapters-session"), mean(OURS)),
        "call_adapters_session_over_ours_sync": ratio(
            mean("adapters-session"), mean("paicli-sync")
        ),
        "import_over_core_ours_over_adapters": ratio(
            median_ms(f"{OURS} over"), median_ms("adapters over")
        ),
        "import_cold_ours_over_adapters": ratio(
            median_ms(f"{OURS} cold"), median_ms("adapters cold")
        ),
    }
    labels = {
        "call_adapters_default_over_ours": "per call, adapters default / paicli (ainvoke)",
        "call_adapters_session_over_ours": "per call, adapters session / paicli (ainvoke)",
        "call_adapters_session_over_ours_sync": "per call, adapters session / paicli-sync (invoke)",
        "import_over_core_ours_over_adapters": "import over langchain-core, paicli / adapters",
        "import_cold_ours_over_adapters": "import cold, paicli / adapters",
    }
    print("\nRatios (mean per-call time; import medians)")
    for key, label in labels.items():
        print(f"  {label:<52} {_fmt(ratios[key], '')}")
    checks: dict[str, Check] = {
        "per call >= 10x faster than adapters default": (
            ratios["call_adapters_default_over_ours"],
            10.0,
            True,
        ),
        "per call >= 2x faster than adapters session": (
            ratios["call_adapters_session_over_ours"],
            2.0,
            True,
        ),
        # Passes below the threshold: a third, as the issue asks, less a hair.
        "import (over langchain-core) < 1/3 of adapters": (
            ratios["import_over_core_ours_over_adapters"],
            1 / 3,
            False,
        ),
    }
    return ratios, print_targets(checks, width=48)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run")
    parser.add_argument("--out", type=Path, default=BENCH / "langchain-results.json")
    args = parser.parse_args()
    config = QUICK if args.quick else FULL
    pythons = {OURS: sys.executable, "adapters": adapters_python()}
    started = time.perf_counter()
    results: Result = {
        "meta": {
            **run_meta(args.quick, config),
            "versions": {
                OURS: versions(sys.executable, ("paicli-cli", "paicli-mcp", "langchain-core")),
                "adapters": versions(
                    pythons["adapters"], ("langchain-mcp-adapters", "mcp", "langchain-core")
                ),
            },
        },
        "import": measure_imports(pythons, config["import_runs"]),
        "calls": measure_calls(pythons, config),
    }
    results["meta"]["elapsed_s"] = time.perf_counter() - started
    print(f"\nversions: {json.dumps(results['meta']['versions'])}")
    results["ratios"], results["targets"] = report(results)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out} ({results['meta']['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
