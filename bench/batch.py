"""`paicli batch` throughput: 16 tasks, each making 3 MCP calls to one stdio server (the
fault server's `echo`) through the scripted model, with 1, 2 and 4 workers, locally and on
a local Ray cluster.

    .venv/bin/python bench/batch.py [--tasks 16] [--workers 1,2,4] [--rounds 2] [--no-ray]

Each batch is the command a user runs (`python -m paicli.cli ... batch tasks.jsonl
[--ray ADDRESS]`), timed from its start to its last result line on stdout, each result timed
as it arrives; the model is the scripted OpenAI-compatible server on 127.0.0.1 in this
process, each reply decided from its task's conversation (tests/batch/task_llm.py). The Ray
cluster is started once, before any batch, as a user's `ray start` would be (a Python of its
own holding `ray.init(num_cpus=4)`), and not timed; each Ray batch pays what a user's does
against a running cluster: importing Ray, connecting to it, starting its actors (one per
node). Every process runs from bytecode, as installed packages do, and untimed batches go
first, one of each kind and then Ray ones while the cluster still has idle workers it
prestarted (bytecode written, page cache warm, each timed Ray batch starting its actors'
worker processes as on a cluster that has run batches before).

Printed: tasks per second at each worker count (the median of the rounds, which interleave
local and Ray), the Ray run's time against the local run's at the same count (goal <= 1.3x),
the same once the first result is in (the workers up), and a warm worker's overhead per
task: with one worker, the time between two results less the run itself (the result's
`duration_ms`), i.e. the job's trip, the folder's copy and diff, settings and runtime (goal
< 150 ms). Figures go to bench/batch-results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.batch.task_llm import TaskLlm  # noqa: E402

from paicli.batch.tasks import read_tasks  # noqa: E402

SERVER = ROOT / "tests" / "server_programs" / "fault_server.py"
CALLS = 3
CPUS = 4  # the local Ray cluster's
# A Python holding a local Ray cluster until its stdin closes; it prints the address.
CLUSTER = """
import sys, ray
context = ray.init(num_cpus=int(sys.argv[1]), include_dashboard=False, log_to_driver=False)
print(context.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
"""
RATIO_GOAL = 1.3
OVERHEAD_GOAL_MS = 150.0


def decide(prompt: str, results_so_far: int) -> dict[str, Any]:
    if results_so_far < CALLS:
        arguments = json.dumps({"text": f"{prompt} call {results_so_far}"})
        return {"tool_calls": [{"name": "mcp__echo__echo", "arguments": arguments}]}
    return {"text": f"{prompt}: done"}


class Board:
    def __init__(self) -> None:
        self.began = time.monotonic()
        self.results: list[tuple[float, dict[str, Any]]] = []

    def finished(self, result: dict[str, Any]) -> None:
        if result.get("status") != "done":
            raise RuntimeError(f"task {result.get('task')} failed: {result.get('errors')}")
        self.results.append((time.monotonic(), result))

    def seconds(self) -> float:
        return self.results[-1][0] - self.began

    def steady_seconds(self) -> float:
        """From the first result to the last: the batch once its workers are up."""
        return self.results[-1][0] - self.results[0][0]

    def warm_overhead_ms(self) -> float:
        """With one worker: each gap between two results less the later run's own time."""
        gaps = [
            (later - earlier) * 1000 - result["duration_ms"]
            for (earlier, _), (later, result) in zip(self.results, self.results[1:], strict=False)
        ]
        return float(statistics.median(gaps))


def write_tasks(folder: Path, count: int) -> Path:
    servers = {"echo": {"command": sys.executable, "args": [str(SERVER)]}}
    lines = [
        {"id": f"t{n}", "prompt": f"task {n}", "mcpServers": servers, "allow": ["mcp__echo__echo"]}
        for n in range(count)
    ]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tasks, problems = read_tasks(path)
    assert not problems and len(tasks) == count, problems
    return path


async def start_batch(
    tasks: Path,
    base_url: str,
    workers: int,
    ray: str | None,
    python: tuple[str, ...] = ("-m", "paicli.cli"),
) -> asyncio.subprocess.Process:
    """The `paicli batch` command (`python` says how Python starts paicli), its output piped."""
    where = ["--ray", ray] if ray else []
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *python,
        "--base-url",
        base_url,
        "--model",
        "scripted",
        "batch",
        str(tasks),
        "--workers",
        str(workers),
        "--task-timeout",
        "300",
        *where,
        cwd=tasks.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )


async def one_batch(tasks: Path, base_url: str, workers: int, ray: str | None, count: int) -> Board:
    """`paicli batch` run as a user runs it, each result line timed as it arrives."""
    board = Board()
    process = await start_batch(tasks, base_url, workers, ray)
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    while line := await process.stdout.readline():
        board.finished(json.loads(line))
    code = await process.wait()
    said = (await errors).decode(errors="replace").strip()
    if code != 0 or len(board.results) != count:
        raise RuntimeError(f"paicli batch exited with {code}: {said[-2000:]}")
    return board


@contextlib.contextmanager
def local_cluster(cpus: int) -> Iterator[str]:
    """A local Ray cluster (started here once, like a user's `ray start`); its address."""
    holder = subprocess.Popen(
        [sys.executable, "-c", CLUSTER, str(cpus)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout is not None
        address = holder.stdout.readline().strip()
        if not address:
            raise RuntimeError("the local Ray cluster did not start")
        yield address
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        try:
            holder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


async def measure(
    count: int, counts: list[int], ray: str | None, repeats: int, root: Path
) -> dict[str, Any]:
    figures: dict[str, Any] = {"tasks": count, "mcp_calls_per_task": CALLS}
    tasks = write_tasks(root, count)
    rounds: dict[str, list[Board]] = {}
    async with TaskLlm(decide) as llm:
        await warm_up(tasks, llm.base_url, max(counts), ray, count)
        # Interleaved (local N, Ray N, ...) so a change in the machine's load hits both
        # sides of a ratio alike; each figure is the median over the rounds.
        for number in range(repeats):
            for workers in counts:
                for where in ("local", "ray") if ray else ("local",):
                    address = ray if where == "ray" else None
                    board = await one_batch(tasks, llm.base_url, workers, address, count)
                    rounds.setdefault(f"{where}_{workers}", []).append(board)
                    print(
                        f"  round {number + 1}: {where:5} {workers} workers: "
                        f"{board.seconds():6.2f} s (first result to last: "
                        f"{board.steady_seconds():.2f} s)",
                        flush=True,
                    )
    for key, boards in rounds.items():
        seconds = statistics.median(b.seconds() for b in boards)
        figures[key] = {
            "seconds": round(seconds, 2),
            "tasks_per_second": round(count / seconds, 2),
            "steady_seconds": round(statistics.median(b.steady_seconds() for b in boards), 2),
            "warm_overhead_ms": round(statistics.median(b.warm_overhead_ms() for b in boards), 1)
            if key.endswith("_1")
            else None,
            "rounds": [round(b.seconds(), 2) for b in boards],
            # Each round's Ray/local ratio, the two run one after the other.
            **({"ratios": same_round_ratios(rounds, key)} if key.startswith("ray_") else {}),
        }
    figures["load"] = os.getloadavg()[0]
    return figures


async def warm_up(tasks: Path, base_url: str, workers: int, ray: str | None, count: int) -> None:
    """Untimed batches: the bytecode written and the page cache warm for every process (the
    driver, Ray's workers, paicli's workers), and the cluster's first idle workers used up,
    so that each timed Ray batch starts its actors as on a cluster that has run batches
    before."""
    for address in (None, ray) if ray else (None,):
        await one_batch(tasks, base_url, workers, address, count)
    # Ray prestarts a few idle workers (two on two cores) and a batch takes one: more
    # untimed batches until none is left, or the first timed one would get it.
    for _ in range(CPUS):
        if ray is None or not idle_ray_workers():
            break
        await one_batch(tasks, base_url, workers, ray, count)


def idle_ray_workers() -> list[int]:
    """Ray's idle worker processes on this machine (Ray titles them `ray::IDLE`)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(b"ray::IDLE"):
                found.append(int(entry.name))
    return found


def same_round_ratios(rounds: dict[str, list[Board]], key: str) -> list[float]:
    local = rounds[key.replace("ray_", "local_")]
    return [round(r.seconds() / h.seconds(), 2) for r, h in zip(rounds[key], local, strict=True)]


def report(figures: dict[str, Any], counts: list[int]) -> None:
    count = figures["tasks"]
    print(f"\npaicli batch: {count} tasks x {CALLS} MCP calls (load {figures['load']:.1f})")
    print(
        "each batch timed as a user runs it: from `paicli batch` starting to its last result; "
        "Ray's includes importing Ray, connecting to the running cluster (started once, "
        "untimed, as `ray start` would be) and starting the actors"
    )
    print(
        "workers  local tasks/s   ray tasks/s   ray/local time   after the first result"
        "   ray/local in each round"
    )
    for workers in counts:
        local = figures[f"local_{workers}"]
        ray = figures.get(f"ray_{workers}")
        ratio = ray["seconds"] / local["seconds"] if ray else None
        verdict = "" if ratio is None else ("ok" if ratio <= RATIO_GOAL else "OVER")
        ray_rate = f"{ray['tasks_per_second']:11.2f}" if ray else "          -"
        shown = f"{ratio:.2f}x {verdict}" if ratio is not None else "-"
        steady = f"{ray['steady_seconds'] / local['steady_seconds']:.2f}x" if ray else "-"
        each = ", ".join(f"{r:.2f}x" for r in ray["ratios"]) if ray else "-"
        print(
            f"{workers:7}  {local['tasks_per_second']:13.2f}   {ray_rate}   {shown:14}   "
            f"{steady:22}   {each}"
        )
    warm = figures["local_1"]["warm_overhead_ms"] if "local_1" in figures else None
    if warm is not None:
        verdict = "ok" if warm < OVERHEAD_GOAL_MS else "OVER"
        print(
            f"warm worker overhead per task (local, 1 worker): {warm:.0f} ms "
            f"(goal < {OVERHEAD_GOAL_MS:.0f} ms: {verdict})"
        )
    if "ray_1" in figures:
        print(
            f"warm actor overhead per task (Ray, 1 worker): "
            f"{figures['ray_1']['warm_overhead_ms']:.0f} ms"
        )


def set_environment(root: Path) -> None:
    """This process's variables, which every batch inherits: everything under `root`."""
    # Timed as installed packages run: from bytecode (some shells set
    # PYTHONDONTWRITEBYTECODE, which would have every process of every batch, Ray's
    # included, compile each module it imports; as in bench/run.py).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.update(
        {
            "PAICLI_HOME": str(root / "home"),
            "HOME": str(root),
            "PAICLI_API_KEY": "sk-bench-0123456789",
            "TMPDIR": str(root),
            # The cluster makes a token (in ~/.ray, under HOME above) and each batch
            # presents it, as on a user's cluster started by `ray start`.
            "RAY_AUTH_MODE": "token",
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    counts = [int(n) for n in options.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        set_environment(root)
        with contextlib.ExitStack() as stack:
            ray = None if options.no_ray else stack.enter_context(local_cluster(CPUS))
            figures = asyncio.run(measure(options.tasks, counts, ray, options.rounds, root))
    report(figures, counts)
    out = ROOT / "bench" / "batch-results.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
