"""Instant start: how long after launch paicli answers `--version` and `mcp list`, draws its
REPL prompt and sends a one-shot's first model request; with nothing configured, and with 8
stdio servers that each take 2 s to answer their handshake: cold (no tool catalogue) and warm
(the catalogue of the run before).

    .venv/bin/python bench/instant_start.py [--runs N]

`paicli -p hi` runs against a scripted OpenAI-compatible model on 127.0.0.1 inside this
process, which notes when the first request arrives; the REPL runs in a pseudo-terminal and
the times are when its prompt is drawn (it takes keys from then on) and when paicli has
loaded behind it (the banner's last line, drawn above the prompt). Every run is a fresh
process; the cases take turns round by round (a busy machine slows them all alike), and
each figure is the median of N rounds (default 5). Each figure is also given against its
baseline measured in the same run: a bare `python -c pass` for the nothing-configured
commands, no servers for the 8-server cases (the median of the rounds' differences).
Targets: nothing configured, each under 150 ms (the REPL: its prompt); warm at most 100 ms
later than no servers. Then where a no-server one-shot's time goes, phase by phase,
measured in a child.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llm_server import ScriptedLlm  # noqa: E402
from tests.ui.terminal import Terminal  # noqa: E402

SERVER = ROOT / "bench" / "servers" / "echo_server.py"
SERVERS = 8
DELAY = 2.0
TARGET_MS = 100.0  # warm: at most this much later than no servers
QUICK_MS = 150.0  # nothing configured: --version, mcp list, the REPL prompt
PROMPT = "\u203a"  # the REPL prompt's mark
LOADED = "Ctrl+D to exit"  # the banner's last line: paicli has loaded behind the prompt


class TimedLlm(ScriptedLlm):
    """The scripted model, noting when each request arrives (time.monotonic)."""

    def __init__(self, replies: int) -> None:
        super().__init__([{"text": "ok"}] * replies)
        self.arrivals: list[float] = []

    def reply_to(self, raw: bytes, authorization: str | None) -> Any:
        self.arrivals.append(time.monotonic())
        return super().reply_to(raw, authorization)


def environment(home: Path, llm: TimedLlm) -> dict[str, str]:
    # PYTHONPATH passes through: a checkout's own source measured with the venv's packages.
    passed = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    return {
        **passed,
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PAICLI_HOME": str(home / ".paicli"),
        "PAICLI_API_KEY": "sk-bench-0000",
        "PAICLI_BASE_URL": llm.base_url,
        "PAICLI_MODEL": "scripted",
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }


def keyless(env: dict[str, str]) -> dict[str, str]:
    """`env` with no model configured (no key, no endpoint)."""
    return {k: v for k, v in env.items() if k not in ("PAICLI_API_KEY", "PAICLI_BASE_URL")}


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


async def command(argv: list[str], home: Path, cwd: Path, llm: TimedLlm) -> float:
    """Seconds a whole `paicli ARGV` process (or `python ARGV` when argv starts with -c)
    takes, nothing configured."""
    program = argv if argv[0] == "-c" else ["-m", "paicli.cli", *argv]
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *program,
        cwd=cwd,
        env=keyless(environment(home, llm)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        _, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{argv} failed ({process.returncode}): {err.decode()[-500:]}")
    return time.monotonic() - started


async def repl(home: Path, cwd: Path, llm: TimedLlm, *, key: bool = True) -> tuple[float, float]:
    """Seconds from launch until the REPL's prompt was drawn, and until paicli has loaded
    behind it (its banner's last line is on the screen)."""
    env = environment(home, llm)
    started = time.monotonic()
    term = await Terminal.spawn(
        [sys.executable, "-m", "paicli.cli"], cwd=cwd, env=env if key else keyless(env)
    )
    try:
        await term.expect(PROMPT, timeout=60)
        shown = time.monotonic() - started
        await term.expect(LOADED, timeout=60)
        loaded = time.monotonic() - started
        term.send_keys("ctrl-d")
        await term.exit_code()
    finally:
        await term.aclose()
    return shown, loaded


# The nothing-configured cases: (label, what runs); "repl" is the prompt, no model key.
QUICK = (
    ("python -c pass", ["-c", "pass"]),
    ("paicli --version", ["--version"]),
    ("paicli mcp list", ["mcp", "list"]),
    ("REPL prompt, no key", None),
)
READY = "REPL loaded, no key"  # its banner, drawn above the prompt (no target)
SERVER_CASES = (("no servers", 0), ("8 slow, cold", SERVERS), ("8 slow, warm", SERVERS))


def forget_catalogue(home: Path) -> None:
    for entry in (home / ".paicli" / "catalogue").glob("*.json"):
        entry.unlink()


async def measure(runs: int) -> dict[str, dict[str, float]]:
    """Median seconds per case and figure; the cases take turns within each round."""
    samples: dict[str, dict[str, list[float]]] = {}

    def note(case: str, figure: str, seconds: float) -> None:
        samples.setdefault(case, {}).setdefault(figure, []).append(seconds)

    async with TimedLlm(replies=runs * 8 + 4) as llm:
        with tempfile.TemporaryDirectory() as scratch:
            cwd = Path(scratch) / "work"
            cwd.mkdir()
            homes = {case: Path(scratch) / f"home{i}" for i, (case, _) in enumerate(SERVER_CASES)}
            for case, servers in SERVER_CASES:
                configure(homes[case], servers)
            await record_catalogue(homes["8 slow, warm"], cwd, llm)
            empty = Path(scratch) / "empty"  # no files at all: nothing configured
            for _ in range(runs):
                for label, argv in QUICK:
                    if argv is None:
                        shown, loaded = await repl(empty, cwd, llm, key=False)
                        note(label, "s", shown)
                        note(READY, "s", loaded)
                    else:
                        note(label, "s", await command(argv, empty, cwd, llm))
                for case, _ in SERVER_CASES:
                    home = homes[case]
                    if case.endswith("cold"):
                        forget_catalogue(home)
                    note(case, "one_shot_first_request_s", await one_shot(home, cwd, llm))
                    if case.endswith("cold"):
                        forget_catalogue(home)
                    shown, loaded = await repl(home, cwd, llm)
                    note(case, "repl_prompt_s", shown)
                    note(case, "repl_loaded_s", loaded)
    results = {
        case: {figure: statistics.median(values) for figure, values in figures.items()}
        for case, figures in samples.items()
    }
    # Each round's 8-server figure less the same round's no-server one: a load that drifts
    # between rounds cancels out of these better than out of a difference of medians.
    base = samples["no servers"]
    for case, _ in SERVER_CASES[1:]:
        for figure, values in samples[case].items():
            paired = [v - b for v, b in zip(values, base[figure], strict=True)]
            results[case][f"{figure}_paired_delta"] = statistics.median(paired)
    return results


# A no-server `paicli -p hi`, step by step as the one-shot path takes them, each step's end
# printed as a time.monotonic() reading (one clock for every process on Linux): the parent
# knows when it spawned the child, and the scripted model when the request arrived.
PHASES = r"""
import time
marks = []
def mark(name): marks.append((name, time.monotonic()))
mark("python starts")
import paicli.cli; mark("import paicli.cli (argument parsing)")
import paicli.cli.oneshot, paicli.cli._signals
mark("import the one-shot path (runtime, agent, tools, servers, MCP library, rich)")
import paicli.llm.client; mark("import the openai SDK (paicli.llm.client)")
import asyncio
from pathlib import Path
from paicli.run_settings import StartOptions, load_run_settings
from paicli.runtime import open_runtime
from paicli.ui.oneshot import EventPrinter
async def main():
    settings = load_run_settings(Path.cwd(), StartOptions(hold_servers=True))
    async with open_runtime(settings) as rt:
        mark("open_runtime: config files, settings, toolbox")
        await rt.agent.llm.client(); mark("build the model client (AsyncOpenAI)")
        await rt.agent.run("hi", EventPrinter())
asyncio.run(main())
print("\n".join(f"MARK\t{n}\t{t}" for n, t in marks))
"""
ARRIVED = "the first request built, sent, read by the model (event loop, HTTP, JSON)"


def phases(home: Path, llm: TimedLlm, runs: int) -> dict[str, float]:
    """Where a no-server one-shot's time goes: the median seconds of each step (PHASES),
    from spawning the child to the model receiving its request."""
    took: dict[str, list[float]] = {}
    for _ in range(runs):
        before = len(llm.arrivals)
        spawned = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", PHASES],
            check=False,
            capture_output=True,
            text=True,
            env=environment(home, llm),
            cwd=home,
        )
        if done.returncode != 0 or len(llm.arrivals) <= before:
            # (a checkout from before open_runtime(hold_servers=...), say)
            print(f"phases not measured: {done.stderr.strip().splitlines()[-1:]}")
            return {}
        last = spawned
        for line in done.stdout.splitlines():
            if not line.startswith("MARK\t"):
                continue  # the answer
            _, name, when = line.split("\t")
            took.setdefault(name, []).append(float(when) - last)
            last = float(when)
        took.setdefault(ARRIVED, []).append(llm.arrivals[before] - last)
    return {name: statistics.median(values) for name, values in took.items()}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def report(results: dict[str, dict[str, float]], split: dict[str, float]) -> None:
    bare = results["python -c pass"]["s"]
    print("nothing configured (whole process; REPL: until the prompt is drawn)")
    for label, _ in QUICK:
        took = results[label]["s"]
        extra = "" if label.startswith("python") else f"  {took / bare:4.1f}x python -c pass"
        verdict = (
            "" if label.startswith("python") else ("PASS" if took * 1000 <= QUICK_MS else "MISS")
        )
        print(f"  {label:<22}{ms(took):>9}{extra}  (target < {QUICK_MS:.0f} ms) {verdict}")
    loaded = results[READY]["s"]
    print(f"  {READY:<22}{ms(loaded):>9}  (the banner above the prompt: all of paicli loaded)")
    print(
        f"\n{'8 stdio servers, 2 s handshake':<32}{'one-shot first request':>24}"
        f"{'REPL prompt':>14}{'REPL loaded':>14}"
    )
    for case, _ in SERVER_CASES:
        figures = results[case]
        shot, prompt = figures["one_shot_first_request_s"], figures["repl_prompt_s"]
        loaded = figures["repl_loaded_s"]
        row = f"  {case:<30}{ms(shot):>24}{ms(prompt):>14}{ms(loaded):>14}"
        if case != "no servers":
            shot_late = figures["one_shot_first_request_s_paired_delta"] * 1000
            prompt_late = figures["repl_prompt_s_paired_delta"] * 1000
            row += f"   ({shot_late:+.0f} ms, {prompt_late:+.0f} ms)"
        print(row)
    print("  (in brackets: the median of each round's difference from no servers)")
    for label, key in (("one-shot", "one_shot_first_request_s"), ("REPL", "repl_prompt_s")):
        late = results["8 slow, warm"][f"{key}_paired_delta"] * 1000
        verdict = "PASS" if late <= TARGET_MS else "MISS"
        target = f"(target <= {TARGET_MS:.0f})"
        print(f"{label}: warm is {late:+.0f} ms against no servers {target} {verdict}")
    print("\nwhere a no-server one-shot's time goes (median of each step, in its own runs):")
    for name, seconds in split.items():
        print(f"  {name:<78}{ms(seconds):>9}")
    if split:
        print(f"  {'total':<78}{ms(sum(split.values())):>9}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    results = asyncio.run(measure(options.runs))

    async def split_with_model() -> dict[str, float]:
        async with TimedLlm(replies=options.runs) as llm, asyncio.timeout(300):
            with tempfile.TemporaryDirectory() as scratch:
                return await asyncio.to_thread(phases, Path(scratch), llm, options.runs)

    split = asyncio.run(split_with_model())
    report(results, split)
    out = ROOT / "bench" / "instant-start-results.json"
    out.write_text(json.dumps({"results": results, "phases": split}, indent=1) + "\n")


if __name__ == "__main__":
    main()
