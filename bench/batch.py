"""`paicli batch` throughput: 16 tasks, each making 3 MCP calls to one stdio server (the
fault server's `echo`) through the scripted model, with 1, 2 and 4 workers, locally and on
a local Ray started here (`ray.init(num_cpus=4)`).

    .venv/bin/python bench/batch.py [--tasks 16] [--workers 1,2,4] [--rounds 2] [--no-ray]

The batch runs through the same runners `paicli batch` uses (`paicli.batch.local.run_local`,
`paicli.batch.ray_run.run_on_ray`), so each task's finish is timed as it happens; the model is
the scripted OpenAI-compatible server on 127.0.0.1 in this process, each reply decided from
its task's conversation (tests/batch/task_llm.py). Printed: tasks per second at each worker
count (the median of the rounds, which interleave local and Ray), the Ray run's time against
the local run's at the same count (goal <= 1.3x), the same once the first result is in (the
workers up), and a warm worker's overhead per task: with one worker, the time between two
results less the run itself (the result's `duration_ms`), i.e. the job's trip, the folder's
copy and diff, settings and runtime (goal < 150 ms). Figures go to bench/batch-results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.batch.task_llm import TaskLlm  # noqa: E402

from paicli.batch.defaults import Defaults  # noqa: E402
from paicli.batch.local import run_local  # noqa: E402
from paicli.batch.tasks import Task, read_tasks  # noqa: E402

SERVER = ROOT / "tests" / "server_programs" / "fault_server.py"
CALLS = 3
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

    def started(self, task: Task) -> None:
        pass

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


def write_tasks(folder: Path, count: int) -> list[Task]:
    servers = {"echo": {"command": sys.executable, "args": [str(SERVER)]}}
    lines = [
        {"id": f"t{n}", "prompt": f"task {n}", "mcpServers": servers, "allow": ["mcp__echo__echo"]}
        for n in range(count)
    ]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tasks, problems = read_tasks(path)
    assert not problems, problems
    return tasks


async def one_batch(
    tasks: list[Task], defaults: Defaults, workers: int, scratch: Path, ray: bool
) -> Board:
    board = Board()
    if ray:
        from paicli.batch.ray_run import run_on_ray  # noqa: PLC0415

        options = argparse.Namespace(
            ray="auto", workers=workers, task_timeout=300.0, task_memory=None
        )
        await run_on_ray(tasks, defaults, board, options)
    else:
        await run_local(tasks, defaults, board, scratch=scratch, workers=workers, timeout=300.0)
    assert len(board.results) == len(tasks)
    return board


async def measure(count: int, counts: list[int], with_ray: bool, repeats: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"tasks": count, "mcp_calls_per_task": CALLS}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ.update(
            {
                "PAICLI_HOME": str(root / "home"),
                "HOME": str(root),
                "PAICLI_API_KEY": "sk-bench-0123456789",
                "TMPDIR": str(root),
            }
        )
        tasks = write_tasks(root, count)
        rounds: dict[str, list[Board]] = {}
        async with TaskLlm(decide) as llm:
            defaults = Defaults(flags={"base_url": llm.base_url, "model": "scripted"})
            # Interleaved (local N, Ray N, ...) so a change in the machine's load hits both
            # sides of a ratio alike; each figure is the median over the rounds.
            for number in range(repeats):
                for workers in counts:
                    for where in ("local", "ray") if with_ray else ("local",):
                        board = await one_batch(tasks, defaults, workers, root, where == "ray")
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
                "warm_overhead_ms": round(
                    statistics.median(b.warm_overhead_ms() for b in boards), 1
                )
                if key.endswith("_1")
                else None,
                "rounds": [round(b.seconds(), 2) for b in boards],
            }
    figures["load"] = os.getloadavg()[0]
    return figures


def report(figures: dict[str, Any], counts: list[int]) -> None:
    count = figures["tasks"]
    print(f"\npaicli batch: {count} tasks x {CALLS} MCP calls (load {figures['load']:.1f})")
    print("workers  local tasks/s   ray tasks/s   ray/local time   after the first result")
    for workers in counts:
        local = figures[f"local_{workers}"]
        ray = figures.get(f"ray_{workers}")
        ratio = ray["seconds"] / local["seconds"] if ray else None
        verdict = "" if ratio is None else ("ok" if ratio <= RATIO_GOAL else "OVER")
        ray_rate = f"{ray['tasks_per_second']:11.2f}" if ray else "          -"
        shown = f"{ratio:.2f}x {verdict}" if ratio is not None else "-"
        steady = f"{ray['steady_seconds'] / local['steady_seconds']:.2f}x" if ray else "-"
        print(
            f"{workers:7}  {local['tasks_per_second']:13.2f}   {ray_rate}   {shown:14}   {steady}"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    counts = [int(n) for n in options.workers.split(",")]
    with_ray = not options.no_ray
    if with_ray:
        import ray  # noqa: PLC0415

        ray.init(
            num_cpus=max(counts),
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    figures = asyncio.run(measure(options.tasks, counts, with_ray, options.rounds))
    report(figures, counts)
    out = ROOT / "bench" / "batch-results.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
