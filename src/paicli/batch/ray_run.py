"""`paicli batch --ray [ADDRESS|auto]`: the same batch on a Ray cluster.

One long-lived actor per node (`actor.BatchActor`; at most one per worker), the batch's
workers split evenly among them, owns one `WorkerProcess` per worker: the same worker
process as a local batch, so a task is isolated the same way (its timeout, its memory
limit, a crash replaces the worker) and each worker's MCP servers stay warm across the
tasks it runs. One actor per node rather than per worker: each actor is a Ray worker
process, whose start (importing Ray, joining the cluster) is paid once per node instead of
once per worker. Each task is an actor call; a node lost mid-task restarts its actor (all
its workers) elsewhere and its calls are retried (`max_restarts`, `max_task_retries`). The
driver keeps each actor as busy as it has workers, with one task more waiting in it for the
first worker free (a worker's next task is there when it finishes, not a round trip to the
driver later), and results come back in the order they finish (the actors' result futures
waited on together, as `ray.wait` does). The driver turns to Ray first (`on_ray`): Ray
imported, joined and the actors made before it loads what it needs only later (the tasks'
permission checks, results, progress), which then overlaps Ray starting the actors' worker
processes.

Ray is imported here only, and this module only with `--ray`. An address that does not
answer costs one line and exit 2 within `CONNECT_TIMEOUT`, never a hang. Task folders,
`--mcp-config` files and servers' commands are paths on the node that runs the task: on
more than one machine they have to be on a shared filesystem (or the same on each).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from paicli.batch.actor import BatchActor, Placement, plain_ray_serialization
from paicli.batch.defaults import Defaults
from paicli.batch.tasks import Task
from paicli.errors import PaicliError
from paicli.ui.ray_stderr import RayStderr

if TYPE_CHECKING:  # both load the agent's modules: not on the way to the actors' start
    from paicli.batch.local import Board

__all__ = ["RayActors", "RayUnavailable", "import_ray", "on_ray", "split_workers"]

# How long reaching the cluster may take: a TCP answer from its address, then `ray.init`
# (which on its own would retry an address that does not answer for minutes).
PROBE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 60.0
# A node lost mid-task: the actor is started again (elsewhere) this many times, and the
# task it was running is sent again.
RESTARTS = 3
# Tasks sent to an actor beyond one per worker, waiting there for the first worker free.
QUEUED = 1
# How often Ray's diverted output is read for a refused token while it connects.
REFUSAL_POLL = 0.25
# A join still going after this long is said on stderr (a far or busy cluster), once.
SLOW_JOIN = 2.0
AUTH_REFUSED = (
    "the cluster refused this machine's Ray auth token (give it as RAY_AUTH_TOKEN or in "
    "~/.ray/auth_token; `ray get-auth-token` on the cluster's head prints it)"
)
UV_HOOK = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"
INSTALL_HINT = "--ray needs Ray: pip install 'paicli-cli[ray]' (or uv tool install ...)"


class RayUnavailable(PaicliError):
    """Ray is not installed, or the cluster cannot be reached (exit 2)."""


def passed_environment(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The driver's variables the actors need: paicli's own, model keys and endpoints, the
    home (sessions, audit), and where Python finds paicli."""
    keep = {"HOME", "PYTHONPATH", "TMPDIR"}
    return {
        name: value
        for name, value in environ.items()
        if name in keep or name.startswith("PAICLI_") or name.endswith(("_API_KEY", "_BASE_URL"))
    }


@contextlib.asynccontextmanager
async def on_ray(options: argparse.Namespace, tasks: int) -> AsyncIterator[RayActors]:
    """Ray imported, the cluster joined and the actors for `tasks` tasks made (so started):
    what the caller does inside overlaps Ray starting their worker processes. On the way
    out the actors are closed and Ray left. RayUnavailable when Ray cannot be had."""
    ray = import_ray()
    joined = await _connect(ray, options.ray)
    try:
        actors = _start_actors(ray, tasks, options) if tasks else []
        try:
            yield RayActors(ray, actors, options.task_timeout)
        finally:
            await asyncio.shield(_close(ray, [actor for actor, _ in actors]))
    finally:
        if joined:
            # Left now, not at exit: Ray's exit hook sleeps 0.5 s first (for log lines to
            # arrive, and this driver asks for none) before it does the same.
            await asyncio.shield(asyncio.to_thread(ray.shutdown))


def import_ray() -> Any:
    """Ray, imported (RayUnavailable when it is not installed)."""
    # A driver run under `uv run` has Ray start every worker with `uv run` too, in a copy of
    # the working folder it uploads to the cluster (Ray's uv hook): seconds a worker, and the
    # user's folder sent along. The actors need paicli where Ray runs them, uv or not, so the
    # hook is off unless the user turns it on (read once, as Ray is imported).
    os.environ.setdefault(UV_HOOK, "0")
    try:
        # Only with --ray; untyped here (Ray's own stubs cover a fraction of what is used).
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayUnavailable(INSTALL_HINT) from exc


class RayActors(NamedTuple):
    """A batch's actors on the cluster, each with its number of workers."""

    ray: Any
    actors: list[tuple[Any, int]]
    timeout: float | None

    async def run(self, tasks: Sequence[Task], defaults: Defaults, board: Board) -> None:
        if tasks and self.actors:
            await _dispatch(self.ray, self.actors, tasks, defaults, board, timeout=self.timeout)


def _start_actors(ray: Any, tasks: int, options: argparse.Namespace) -> list[tuple[Any, int]]:
    """The actors, each with its number of workers, made (and so started) at once: their
    start overlaps the driver sending them their first tasks, which Ray queues."""
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    count = min(options.workers or max(1, int(cpus)), tasks)
    nodes = [_cpus(node) for node in ray.nodes() if node.get("Alive") and _cpus(node) > 0]
    share = min(1.0, cpus / count)  # each worker's CPU, as Ray counts it
    environ = passed_environment(os.environ)
    made: dict[int, Any] = {}  # an actor class per number of workers (at most two)

    def actor_class(slots: int) -> Any:
        if slots not in made:
            made[slots] = ray.remote(
                max_restarts=RESTARTS,
                max_task_retries=RESTARTS,
                scheduling_strategy="SPREAD",
                # Its workers' share, never more than the smallest node has (it must fit one).
                num_cpus=min(slots * share, min(nodes, default=1.0)),
                max_concurrency=slots + QUEUED + 1,  # its workers' runs, those queued, the close
            )(BatchActor.placed(Placement(environ, options.task_memory, slots)))
        return made[slots]

    # Making the first actor sets up this process's serialization: plain (see the actor).
    restore = plain_ray_serialization()
    try:
        return [(actor_class(slots).remote(), slots) for slots in split_workers(count, len(nodes))]
    finally:
        restore()


def _cpus(node: dict[str, Any]) -> float:
    return float(node.get("Resources", {}).get("CPU", 0.0))


def split_workers(count: int, nodes: int) -> list[int]:
    """`count` workers over one actor per node (at most one per worker), as evenly as can
    be: each actor's number of workers."""
    actors = max(1, min(count, nodes))
    return [count // actors + (1 if n < count % actors else 0) for n in range(actors)]


async def _dispatch(
    ray: Any,
    actors: list[tuple[Any, int]],
    tasks: Sequence[Task],
    defaults: Defaults,
    board: Board,
    *,
    timeout: float | None,
) -> None:
    """Each actor kept busy: a task per worker, and one more waiting in the actor for the
    first worker free (`QUEUED`), so a worker's next task is there when it finishes rather
    than a round trip to the driver later. A queued task counts as started once a result
    of its actor frees a worker for it."""
    waiting = list(reversed(tasks))
    sent = defaults.to_wire()
    running: dict[asyncio.Future[Any], tuple[Any, Task]] = {}
    queued: dict[int, deque[Task]] = {id(actor): deque() for actor, _ in actors}

    def send(actor: Any, *, start: bool) -> None:
        task = waiting.pop()
        if start:
            board.started(task)
        else:
            queued[id(actor)].append(task)
        call = actor.run.remote(task.to_wire(), sent, timeout)
        running[asyncio.wrap_future(call.future())] = (actor, task)

    for actor, slots in actors:  # each of its workers' first task, then those queued
        for number in range(slots + QUEUED):
            if waiting:
                send(actor, start=number < slots)
    while running:
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            actor, task = running.pop(future)
            try:
                result = future.result()
            except ray.exceptions.RayError as exc:
                from paicli.batch.results import failure  # noqa: PLC0415 - see Board

                result = failure(task, f"the Ray actor was lost: {_first_line(exc)}", "crashed")
            mine = queued[id(actor)]
            if task in mine:  # its start not seen: the result that freed its worker is next
                mine.remove(task)
                board.started(task)
            board.finished(result)
            if mine:
                board.started(mine.popleft())
            if waiting:
                send(actor, start=False)


async def _close(ray: Any, actors: list[Any]) -> None:
    """Each actor's worker stopped and scratch removed (bounded), then the actor ended."""
    closing = [asyncio.wrap_future(actor.close.remote().future()) for actor in actors]
    if closing:
        await asyncio.wait(closing, timeout=CONNECT_TIMEOUT)
    for actor in actors:
        ray.kill(actor, no_restart=True)


async def _connect(ray: Any, address: str) -> bool:
    """Reach the cluster at `address` (`auto`: the one this machine's `ray start` or `ray
    job submit` names; a Ray already started in this process is used as it is). Whether
    this joined it (and so leaves it when the batch is over)."""
    if address != "auto":
        await _probe(address)
    elif ray.is_initialized():
        return False
    done = threading.Event()
    failed: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(
                address=address,
                log_to_driver=False,
                logging_level="ERROR",
                configure_logging=True,
            )
        except BaseException as exc:  # told to the caller, who says it in one line
            failed.append(exc)
        finally:
            done.set()

    quiet = RayStderr()
    quiet.open()
    try:
        # A daemon thread: an init that never returns must not keep the process alive.
        threading.Thread(target=init, name="paicli-ray-init", daemon=True).start()
        await _joined(done, quiet, address)
    except BaseException:
        quiet.keep_diverted()  # Ray may go on retrying until paicli exits
        raise
    refused = quiet.refused()
    quiet.restore()
    if failed:
        why = AUTH_REFUSED if refused else _first_line(failed[0])
        raise RayUnavailable(f"cannot reach Ray at {address}: {why}")
    return True


async def _joined(done: threading.Event, quiet: RayStderr, address: str) -> None:
    """Wait for `ray.init` to return, within `CONNECT_TIMEOUT` (said on stderr after
    `SLOW_JOIN`); RayUnavailable as soon as Ray writes that the cluster refused its auth
    token (it would retry for ~20 s)."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    said = False
    while not await asyncio.to_thread(done.wait, REFUSAL_POLL):
        if quiet.refused():
            raise RayUnavailable(f"cannot reach Ray at {address}: {AUTH_REFUSED}")
        waited = loop.time() - began
        if waited >= CONNECT_TIMEOUT:
            raise RayUnavailable(f"Ray at {address} did not answer within {CONNECT_TIMEOUT:g}s")
        if waited >= SLOW_JOIN and not said:
            from paicli.ui.output import err  # noqa: PLC0415 - not on a quick join's way

            said = True
            err(
                f"paicli batch: waiting for Ray at {address} to answer "
                f"(giving up after {CONNECT_TIMEOUT:g}s)"
            )


async def _probe(address: str) -> None:
    """A TCP answer from `address` (`[ray://]HOST:PORT`) within `PROBE_TIMEOUT`."""
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    # ASCII digits only: str.isdigit takes "²", which int() refuses.
    if not host or not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise RayUnavailable(
            f"--ray {address}: expected HOST:PORT (a port from 1 to 65535), ray://HOST:PORT or auto"
        )
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
    except (OSError, TimeoutError) as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise RayUnavailable(f"cannot reach Ray at {address}: {why}") from None
    writer.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
