"""Headless first event: how long after launch `paicli -p --output-format stream-json`
writes its first line (the `system`/`init` message), with no MCP servers configured.

    .venv/bin/python bench/headless_start.py [--runs N]

The model is the scripted OpenAI-compatible server on 127.0.0.1 inside this process (the
init message does not wait for it: the model client loads while the servers, here none,
are waited for). Every run is a fresh process, and the figure is the median of N runs
(default 7), also given against a bare `python -c pass` measured in the same rounds (the
interpreter's own start, which no paicli change can remove). Target: under 200 ms.
Set PYTHONPATH (or run another venv's python) to measure another checkout's source.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instant_start import TimedLlm, environment  # noqa: E402

TARGET_MS = 200.0


async def first_event(home: Path, cwd: Path, llm: TimedLlm) -> float:
    """Seconds from launch until the first stdout line; checks that it is the init."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "paicli.cli", "-p", "hi", "--output-format", "stream-json"),
        cwd=cwd,
        env=environment(home, llm),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    async with asyncio.timeout(60):
        line = await process.stdout.readline()
        seconds = time.monotonic() - started
        _, err = await process.communicate()
    first = json.loads(line) if line else {}
    if process.returncode != 0 or first.get("subtype") != "init":
        raise RuntimeError(f"paicli -p failed ({process.returncode}): {err.decode()[-500:]}")
    return seconds


async def bare_python() -> float:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await process.wait()
    return time.monotonic() - started


async def measure(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        cwd.mkdir()
        async with TimedLlm(runs + 1) as llm:
            await first_event(home, cwd, llm)  # warm the file cache and bytecode
            firsts, bares = [], []
            for _ in range(runs):
                bares.append(await bare_python())
                firsts.append(await first_event(home, cwd, llm))
    first = statistics.median(firsts) * 1000
    bare = statistics.median(bares) * 1000
    load = os.getloadavg()[0]  # a busy machine slows every figure alike
    return {"first_event_ms": round(first, 1), "python_ms": round(bare, 1), "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    figures = asyncio.run(measure(options.runs))
    first, bare = figures["first_event_ms"], figures["python_ms"]
    verdict = "ok" if first < TARGET_MS else "OVER"
    print(f"-p --output-format stream-json, no servers: first event after {first:.0f} ms")
    print(f"  (python -c pass: {bare:.0f} ms; paicli's own: {first - bare:.0f} ms)")
    print(f"  target < {TARGET_MS:.0f} ms: {verdict} (load average {figures['load']:.1f})")
    out = ROOT / "bench" / "headless-start-results.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
