"""Instant start: how long after launch paicli's first model request leaves and its REPL
prompt appears, with no servers, and with 8 stdio servers that each take 2 s to answer their
handshake: cold (no tool catalogue) and warm (the catalogue of the run before).

    .venv/bin/python bench/instant_start.py [--runs N]

`paicli -p hi` runs against a scripted OpenAI-compatible model on 127.0.0.1 inside this
process, which notes when the first request arrives; the REPL runs in a pseudo-terminal and
the time is when its prompt is drawn. Each figure is the median of N runs (default 5), each a
fresh process with the same $PAICLI_HOME. Target: warm is at most 100 ms later than no
servers. Where the no-server time goes: `python -X importtime -m paicli.cli --version` and
the phase times printed at the end (import of the CLI, of the model SDK, the runtime).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llm_server import ScriptedLlm  # noqa: E402
from tests.ui.terminal import Terminal  # noqa: E402

SERVER = ROOT / "bench" / "servers" / "echo_server.py"
SERVERS = 8
DELAY = 2.0
TARGET_MS = 100.0
PROMPT = "\u203a"  # the REPL prompt's mark


class TimedLlm(ScriptedLlm):
    """The scripted model, noting when each request arrives (time.monotonic)."""

    def __init__(self, replies: int) -> None:
        super().__init__([{"text": "ok"}] * replies)
        self.arrivals: list[float] = []

    def reply_to(self, raw: bytes, authorization: str | None) -> Any:
        self.arrivals.append(time.monotonic())
        return super().reply_to(raw, authorization)


def environment(home: Path, llm: TimedLlm) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PAICLI_HOME": str(home / ".paicli"),
        "PAICLI_API_KEY": "sk-bench-0000",
        "PAICLI_BASE_URL": llm.base_url,
        "PAICLI_MODEL": "scripted",
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }


def configure(home: Path, servers: int) -> None:
    config = {
        "mcpServers": {
            f"slow{i}": {
                "command": sys.executable,
                "args": [str(SERVER), "--handshake-delay", str(DELAY)],
            }
            for i in range(servers)
        }
    }
    (home / ".paicli").mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / ".paicli" / "mcp.json").write_text(json.dumps(config))


async def one_shot(home: Path, cwd: Path, llm: TimedLlm) -> float:
    """Seconds from launch until the first model request arrived."""
    before = len(llm.arrivals)
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        "-p",
        "hi",
        cwd=cwd,
        env=environment(home, llm),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        _, err = await process.communicate()
    if process.returncode != 0 or len(llm.arrivals) <= before:
        raise RuntimeError(f"paicli -p failed ({process.returncode}): {err.decode()[-500:]}")
    return llm.arrivals[before] - started


async def record_catalogue(home: Path, cwd: Path, llm: TimedLlm) -> None:
    """`paicli mcp list`: every server started and its tools recorded (the warm state)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        "mcp",
        "list",
        cwd=cwd,
        env=environment(home, llm),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    async with asyncio.timeout(120):
        await process.wait()
    recorded = list((home / ".paicli" / "catalogue").glob("*.json"))
    if len(recorded) != SERVERS:
        raise RuntimeError(f"the catalogue has {len(recorded)} entries, not {SERVERS}")


async def repl(home: Path, cwd: Path, llm: TimedLlm) -> float:
    """Seconds from launch until the REPL's prompt was drawn."""
    started = time.monotonic()
    term = await Terminal.spawn(
        [sys.executable, "-m", "paicli.cli"], cwd=cwd, env=environment(home, llm)
    )
    try:
        await term.expect(PROMPT, timeout=60)
        shown = time.monotonic() - started
        term.send_keys("ctrl-d")
        await term.exit_code()
    finally:
        await term.aclose()
    return shown


async def measure(runs: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    async with TimedLlm(replies=runs * 8 + 4) as llm:
        with tempfile.TemporaryDirectory() as scratch:
            cwd = Path(scratch) / "work"
            cwd.mkdir()
            for case, servers in (
                ("no servers", 0),
                ("8 slow, cold", SERVERS),
                ("8 slow, warm", SERVERS),
            ):
                home = Path(scratch) / ("empty" if servers == 0 else "slow")
                configure(home, servers)
                if case.endswith("warm"):
                    await record_catalogue(home, cwd, llm)
                shots: list[float] = []
                prompts: list[float] = []
                for _ in range(runs):
                    if case.endswith("cold"):
                        for entry in (home / ".paicli" / "catalogue").glob("*.json"):
                            entry.unlink()
                    shots.append(await one_shot(home, cwd, llm))
                    if case.endswith("cold"):
                        for entry in (home / ".paicli" / "catalogue").glob("*.json"):
                            entry.unlink()
                    prompts.append(await repl(home, cwd, llm))
                results[case] = {
                    "one_shot_first_request_s": statistics.median(shots),
                    "repl_prompt_s": statistics.median(prompts),
                }
    return results


def phases() -> dict[str, float]:
    """Where a no-server start goes: import times of the CLI and the model SDK, cold."""
    code = (
        "import time; t=time.perf_counter(); import paicli.cli; a=time.perf_counter();"
        "import paicli.runtime; b=time.perf_counter(); import openai; c=time.perf_counter();"
        "print(a-t, b-a, c-b)"
    )
    interpreter = subprocess.run(
        [sys.executable, "-c", "pass"], check=True, capture_output=True, text=True
    )
    del interpreter
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.perf_counter() - started
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    cli, runtime, sdk = (float(x) for x in out)
    return {
        "python_start_s": bare,
        "import_paicli_cli_s": cli,
        "import_runtime_s": runtime,
        "import_openai_s": sdk,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    results = asyncio.run(measure(options.runs))
    base = results["no servers"]
    print(f"{'':<16}{'one-shot first request':>24}{'REPL prompt':>14}")
    for case, figures in results.items():
        shot, prompt = figures["one_shot_first_request_s"], figures["repl_prompt_s"]
        print(f"{case:<16}{shot * 1000:>20.0f} ms{prompt * 1000:>11.0f} ms")
    for label, key in (("one-shot", "one_shot_first_request_s"), ("REPL", "repl_prompt_s")):
        late = (results["8 slow, warm"][key] - base[key]) * 1000
        verdict = "PASS" if late <= TARGET_MS else "MISS"
        print(
            f"{label}: warm is {late:+.0f} ms against no servers "
            f"(target <= {TARGET_MS:.0f}) {verdict}"
        )
    split = phases()
    print(
        "where a start goes (no servers): "
        + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in split.items())
    )
    out = ROOT / "bench" / "instant-start-results.json"
    out.write_text(json.dumps({"results": results, "phases": split}, indent=1))


if __name__ == "__main__":
    main()
