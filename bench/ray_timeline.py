"""Where a `paicli batch --ray` run's start goes: a timeline of its steps, each from the
moment the command started, for one batch at each worker count.

    .venv/bin/python bench/ray_timeline.py [--workers 1,2] [--runs 3]

The cluster and the batches are bench/batch.py's (the same fairness: the cluster started
once, its prestarted idle workers used up before anything is timed). The driver runs under
a shim that notes, on stderr, when it imports Ray, connects, makes its actors and sends
their first calls (Ray's functions wrapped, paicli's untouched); when the actor started
each paicli worker is seen from outside, by the change time of the worker's log (opened
just before it starts), the cluster being on this machine.
Each step printed is the median over the runs, with each run's figure after it; each Ray
run is followed by a local run of the same batch, whose main steps are shown beside, and by
a bare Ray driver: one that only imports Ray, joins the cluster and makes one empty actor
(with the batch's plain serialization set-up), timed until the actor's `__init__` runs in
its new Ray worker process: the floor of any Ray batch's start on this cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import batch as bench  # noqa: E402
from tests.batch.task_llm import TaskLlm  # noqa: E402

MARK = "@@timeline "

# The shim: run in the driver before paicli, it wraps Ray's calls as they are first used.
SHIM = r"""
import importlib, sys, threading, time

def mark(label):
    sys.stderr.write(f"@@timeline {time.time():.4f} {label}\n")
    sys.stderr.flush()

def patched(ray):
    def timed(owner, name, label, once=False):
        original = getattr(owner, name)
        seen = []
        def wrapper(*args, **kwargs):
            first = not seen
            seen.append(1)
            if first or not once:
                mark(f"{label} begins")
            try:
                return original(*args, **kwargs)
            finally:
                if first or not once:
                    mark(f"{label} ends")
        setattr(owner, name, wrapper)
    import ray.actor
    timed(ray, "init", "ray.init")
    timed(ray, "cluster_resources", "ray.cluster_resources")
    timed(ray, "nodes", "ray.nodes")
    timed(ray.actor.ActorClass, "_remote", "actor made", once=False)
    timed(ray.actor.ActorMethod, "_remote", "first actor call", once=True)
    timed(ray, "kill", "ray.kill", once=True)
    import ray._private.worker
    timed(ray._private.worker, "shutdown", "ray.shutdown", once=True)

real_import = importlib.import_module
done = []

def import_module(name, package=None):
    if name != "ray" or done:
        return real_import(name, package)
    mark("import ray begins")
    module = real_import(name, package)
    done.append(1)
    mark("import ray ends")
    patched(module)
    return module

importlib.import_module = import_module
# A `import ray` statement (not import_module) is seen as it ends, via the audit hook.
def audit(event, args):
    if event == "import" and args[0] == "ray" and not done:
        mark("import ray (statement) begins")
sys.addaudithook(audit)
mark("python up")
import atexit
atexit.register(lambda: mark("last exit handler"))
from paicli.cli import main
code = main()
mark("main returned")
sys.exit(code)
"""


# The bare driver: what any job on the cluster waits for before its first actor runs.
BARE = r"""
import os, sys, time
began = float(sys.argv[2])
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
import ray
imported = time.time()
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
joined = time.time()
from paicli.batch.actor import plain_ray_serialization
plain_ray_serialization()

@ray.remote(num_cpus=0.5)
class Empty:
    def __init__(self):
        self.at = time.time()

    def at_init(self):
        return self.at

actor = Empty.remote()
ran = ray.get(actor.at_init.remote())
print(imported - began, joined - began, ran - began)
ray.kill(actor)
ray.shutdown()
"""
BARE_STEPS = ("ray imported", "joined", "its actor's __init__ runs")


async def bare_driver(ray: str) -> dict[str, float]:
    """The bare driver's steps, in seconds from its start."""
    began = time.time()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", BARE, ray, repr(began), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the bare Ray driver exited with {process.returncode}")
    return {
        f"(bare Ray driver: {step})": float(value)
        for step, value in zip(BARE_STEPS, out.split(), strict=True)
    }


async def watch(root: Path, seen: dict[str, float], stop: asyncio.Event) -> None:
    """When the actor started each paicli worker: the worker's log, in the actor's scratch
    folder, is opened just before (its change time; the cluster is on this machine)."""
    while not stop.is_set():
        for log in root.glob("paicli-batch-*/worker-*.log"):  # noqa: ASYNC240 - local
            with contextlib.suppress(OSError):
                seen.setdefault(f"paicli {log.stem} started", log.stat().st_ctime)
        await asyncio.sleep(0.005)


async def one_run(
    tasks: Path, base_url: str, workers: int, ray: str | None, count: int
) -> dict[str, float]:
    seen: dict[str, float] = {}
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(watch(tasks.parent, seen, stop))
    began = time.time()
    process = await bench.start_batch(tasks, base_url, workers, ray, ("-c", SHIM))
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    steps: dict[str, float] = {}
    results = 0
    while await process.stdout.readline():
        results += 1
        now = time.time() - began
        steps.setdefault("first result", now)
        steps["last result"] = now
    steps["command exited"] = (await asyncio.wait_for(process.wait(), 120), time.time() - began)[1]
    stop.set()
    await watcher
    said = (await errors).decode(errors="replace")
    if results != count:
        raise RuntimeError(f"{results} results of {count}: {said[-2000:]}")
    for line in said.splitlines():
        if line.startswith(MARK):
            when, label = line[len(MARK) :].split(" ", 1)
            steps.setdefault(label, float(when) - began)
    for label, at in seen.items():
        steps[label] = at - began
    return steps


async def measure(count: int, counts: list[int], ray: str, runs: int, root: Path) -> None:
    tasks = bench.write_tasks(root, count)
    async with TaskLlm(bench.decide) as llm:
        await bench.warm_up(tasks, llm.base_url, max(counts), ray, count)
        for workers in counts:
            timelines = []
            for _ in range(runs):
                timelines.append(await one_run(tasks, llm.base_url, workers, ray, count))
                local = await one_run(tasks, llm.base_url, workers, None, count)
                for step in ("paicli worker-0 started", "first result", "last result"):
                    timelines[-1][f"(local run: {step})"] = local[step]
                timelines[-1].update(await bare_driver(ray))
            show(workers, timelines)


def show(workers: int, timelines: list[dict[str, Any]]) -> None:
    print(
        f"\n--ray, {workers} workers (median of {len(timelines)} runs, load "
        f"{os.getloadavg()[0]:.1f}): seconds from the command's start"
    )
    labels = sorted(
        {label for steps in timelines for label in steps},
        key=lambda label: statistics.median(s.get(label, 1e9) for s in timelines),
    )
    for label in labels:
        values = [steps[label] for steps in timelines if label in steps]
        each = " ".join(f"{v:5.2f}" for v in values)
        print(f"  {statistics.median(values):6.3f}  {label:38} ({each})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    counts = [int(n) for n in options.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench.set_environment(root)
        with bench.local_cluster(bench.CPUS) as ray:
            asyncio.run(measure(options.tasks, counts, ray, options.runs, root))


if __name__ == "__main__":
    main()
