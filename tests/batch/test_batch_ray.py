"""`paicli batch --ray` on the shared local Ray (tests/conftest.py, `ray.init(num_cpus=2)`;
Ray is slow to start on a small machine, so its tests are few), and the bad addresses
that must cost one line and exit 2. Without --ray, Ray is never imported."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from paicli.batch.actor import BatchActor, Placement
from paicli.batch.defaults import Defaults
from paicli.batch.ray_run import UV_HOOK, on_ray
from paicli.batch.tasks import Task
from tests.batch.task_llm import TaskLlm
from tests.batch.test_batch_runs import batch, environ, results, write_tasks, writes_its_name
from tests.conftest import SERVER_PROGRAMS
from tests.imports import fresh_python
from tests.processes import parent_of, processes_with, until

pytestmark = [pytest.mark.real, pytest.mark.xdist_group("ray")]


def same_fields(result: dict[str, Any]) -> tuple[Any, ...]:
    return (result["status"], result["subtype"], result.get("result"), result["diff"])


async def test_a_batch_on_ray_gives_the_local_results_and_survives_a_lost_actor(
    tmp_path: Path, local_ray: ModuleType
) -> None:
    """One test: Ray is slow on two cores (the local Ray is shared, tests/conftest.py)."""
    await same_results_as_a_local_batch_and_warm_servers(tmp_path / "same")
    await lost_actor(tmp_path / "lost")
    await an_actor_starts_its_workers_at_once(tmp_path / "eager", local_ray)


async def same_results_as_a_local_batch_and_warm_servers(root: Path) -> None:
    """One batch on two workers, run locally and then on Ray (one actor on the one node),
    gives the same results; each worker keeps its own server, opened once and lent to every
    task that worker runs."""
    os.mkdir(root)
    (root / "plain").mkdir()
    (root / "plain" / "kept.txt").write_text("kept\n")
    servers = {
        "echo": {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    }
    echoing = [
        {"id": f"t{n}", "prompt": f"p{n}", "mcpServers": servers, "allow": ["mcp__echo__echo"]}
        for n in range(4)
    ]
    write_tasks(
        root / "tasks.jsonl",
        {"id": "copy", "prompt": "alpha", "cwd": "plain", "allow": ["write_file"]},
        {"id": "empty", "prompt": "beta", "allow": ["write_file"]},
        {"id": "gone", "prompt": "gamma", "cwd": "missing"},
        *echoing,
        {"id": "refused", "prompt": "delta", "allow": ["Bash(unclosed"]},
    )
    async with TaskLlm(writes_or_echoes) as llm:
        here = await batch(root, llm, "tasks.jsonl", "--workers", "2")
        on_ray = await batch(root, llm, "tasks.jsonl", "--workers", "2", "--ray")
    assert on_ray.code == here.code == 1, on_ray.stderr
    # A rule checked once Ray is starting the actors (--ray) is refused all the same.
    refused = "paicli batch: tasks.jsonl:8: 'allow' rule 'Bash(unclosed': "
    assert refused in here.stderr and refused in on_ray.stderr
    local, remote = results(here.stdout), results(on_ray.stdout)
    assert {k: same_fields(v) for k, v in remote.items()} == {
        k: same_fields(v) for k, v in local.items()
    }
    assert remote["copy"]["status"] == "done" and "+++ b/alpha.txt" in remote["copy"]["diff"]
    assert remote["copy"]["node"] == socket.gethostname()
    assert "gamma" not in llm.prompts()  # the missing folder failed before any model call
    assert [remote[f"t{n}"]["result"] for n in range(4)] == [f"p{n} echoed" for n in range(4)]
    assert [remote[f"t{n}"]["warm_servers_opened"] for n in range(4)] == [1, 1, 1, 1]
    # The driver leaves Ray itself (not in Ray's exit hook, which sleeps first), and only
    # once its actors have stopped their workers: none is left when the command is over,
    # nor the actor's scratch folder.
    assert processes_with(f"{root}/paicli-batch-") == []
    assert [name for name in os.listdir(root) if name.startswith("paicli-batch-")] == []


def writes_or_echoes(prompt: str, results_so_far: int) -> dict[str, Any]:
    """Tasks `p<N>` echo their prompt through the server, then say so; the others write a
    file named after their prompt."""
    if not prompt.startswith("p"):
        return writes_its_name(prompt, results_so_far)
    if results_so_far == 0:
        arguments = json.dumps({"text": prompt})
        return {"tool_calls": [{"name": "mcp__echo__echo", "arguments": arguments}]}
    return {"text": f"{prompt} echoed"}


async def test_a_ray_address_that_does_not_answer_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    with socket.socket() as unused:  # a port nobody listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    write_tasks(tmp_path / "tasks.jsonl", {"prompt": "never run"})
    async with TaskLlm(lambda *_: {"text": "no"}) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--ray", f"127.0.0.1:{port}")
    assert run.code == 2
    assert run.stderr == f"paicli batch: cannot reach Ray at 127.0.0.1:{port}: " + (
        f"Connect call failed ('127.0.0.1', {port})\n"
    )
    assert llm.requests == []


@pytest.mark.parametrize(
    "address",
    ["not an address", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:\u00b2"],
)
async def test_a_ray_address_that_is_none_is_one_line_and_exit_2(
    tmp_path: Path, address: str
) -> None:
    """A port past 65535 or of other digits ("²" is one to str.isdigit) was an internal
    error."""
    write_tasks(tmp_path / "tasks.jsonl", {"prompt": "never run"})
    async with TaskLlm(lambda *_: {"text": "no"}) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--ray", address)
    assert run.code == 2
    expected = "expected HOST:PORT (a port from 1 to 65535), ray://HOST:PORT or auto"
    assert run.stderr == f"paicli batch: --ray {address}: {expected}\n"
    assert llm.requests == []


@pytest.mark.parametrize(("asked", "hook"), [(None, "False"), ("1", "True")])
def test_the_driver_turns_ray_s_uv_hook_off_unless_asked(
    tmp_path: Path, asked: str | None, hook: str
) -> None:
    """Run under `uv run`, Ray would start every worker with `uv run` in an uploaded copy of
    the folder; a fresh driver has Ray import with that off, unless the user set it."""
    with socket.socket() as unused:  # a port nobody listens on: Ray is imported, not joined
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "never run"}\n')
    script = (
        "import os\n"
        f"os.environ.pop({UV_HOOK!r}, None)\n"
        + (f"os.environ[{UV_HOOK!r}] = {asked!r}\n" if asked else "")
        + "from paicli.cli import main\n"
        "code = main(['--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', 'batch',\n"
        f"             'tasks.jsonl', '--ray', '127.0.0.1:{port}'])\n"
        "from ray._private import ray_constants\n"
        "print(code, ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV)\n"
    )
    assert fresh_python(script, cwd=tmp_path) == f"2 {hook}\n"


def test_a_batch_without_ray_never_imports_it(tmp_path: Path) -> None:
    (tmp_path / "tasks.jsonl").write_text("")
    script = (
        "import sys\n"
        "from paicli.cli import main\n"
        "code = main(['batch', 'tasks.jsonl'])\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    prints_no_modules(script, cwd=tmp_path)


def test_with_ray_the_driver_turns_to_ray_before_loading_the_rest(tmp_path: Path) -> None:
    """`--ray`: Ray is imported (then joined and the actors made) before the driver loads
    what it needs only later (the batch command itself, the tasks' permission checks,
    results, progress, the local batch), which it does while Ray starts the actors' worker
    processes. Here importing Ray fails, after the modules loaded when it is first asked
    for are noted; the command then says Ray is missing."""
    later = [
        "paicli.cli.batch",
        "paicli.permissions.rules",
        "paicli.permissions.request",
        "paicli.batch.results",
        "paicli.batch.local",
        "paicli.ui.batch_progress",
    ]
    script = (
        "import sys\n"
        "class NoRay:\n"
        "    asked = False\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ray':\n"
        "            if not NoRay.asked:\n"
        f"                print([m for m in {later!r} if m in sys.modules], file=sys.__stdout__)\n"
        "            NoRay.asked = True\n"
        "            raise ImportError('no ray')\n"
        "sys.meta_path.insert(0, NoRay())\n"
        "from paicli.cli import main\n"
        "code = main(['batch', 'tasks.jsonl', '--ray'])\n"
        "assert code == 2, code\n"
    )
    write_tasks(tmp_path / "tasks.jsonl", {"prompt": "p", "allow": ["mcp__echo__echo"]})
    prints_no_modules(script, cwd=tmp_path)


async def an_actor_starts_its_workers_at_once(root: Path, ray: ModuleType) -> None:
    """A new actor's worker processes (one per slot) load while the driver is still sending
    the first tasks, all children of the actor, and closing the actor stops them. The actor
    is made without arguments, so its new Ray worker starts them before it sets up Ray's
    serialization (which it does for the first task's arguments), and sets it up plain:
    without the optional serializers whose imports (pydantic and more) cost 0.1-0.25 s."""
    os.mkdir(root)
    placed = BatchActor.placed(Placement({"TMPDIR": str(root)}, None, 2))

    class Watched(placed):  # type: ignore[misc,valid-type]  # made here, pickled whole
        def __init__(self) -> None:
            worker = ray._private.worker.global_worker
            self.serialization_set_up = bool(worker.serialization_context_map)
            super().__init__()

        async def serialization_set_up_at_init(self) -> bool:
            return self.serialization_set_up

        async def optional_serializers_loaded(self, _argument: object) -> bool:
            return "ray._common.pydantic_compat" in sys.modules

    # A variable of its own: a new Ray worker, never an idle one other tests' tasks used.
    fresh = {"env_vars": {"PAICLI_TEST_FRESH_WORKER": str(root)}}
    actor = ray.remote(num_cpus=0, runtime_env=fresh)(Watched).remote()
    marker = f"{root}/paicli-batch-"
    await until(lambda: len(processes_with(marker)) == 2, timeout=60)
    assert len({parent_of(pid) for pid in processes_with(marker)}) == 1
    assert await asyncio.wrap_future(actor.serialization_set_up_at_init.remote().future()) is False
    loaded = actor.optional_serializers_loaded.remote({"an": "argument"})
    assert await asyncio.wrap_future(loaded.future()) is False
    await asyncio.wrap_future(actor.close.remote().future())
    ray.kill(actor, no_restart=True)
    await until(lambda: processes_with(marker) == [], timeout=20)


def test_an_actor_loads_none_of_the_agent_before_its_worker_starts() -> None:
    """What a Ray actor imports is on the batch's clock: not the agent, the model client or
    the MCP client (its worker process loads those)."""
    heavy = ["paicli.agent.events", "paicli.mcp", "paicli.permissions.rules", "openai", "ray"]
    prints_no_modules(
        f"import sys, paicli.batch.actor; print([m for m in {heavy!r} if m in sys.modules])"
    )


def prints_no_modules(script: str, cwd: Path | None = None) -> None:
    """`script`, run by a new Python, printed an empty list (of the modules it loaded)."""
    assert fresh_python(script, cwd) == "[]\n"


async def lost_actor(root: Path) -> None:
    """A node lost mid-task, as its actor's process killed: Ray starts the actor again and
    the task runs there (its worker died with the actor: no orphan)."""
    os.mkdir(root)
    seen: list[str] = []

    def decide(prompt: str, _: int) -> dict[str, Any]:
        seen.append(prompt)
        return {"hang": True} if len(seen) == 1 else {"text": "second time"}

    write_tasks(root / "tasks.jsonl", {"id": "lost", "prompt": "lost"})
    async with TaskLlm(decide) as llm:
        running = asyncio.ensure_future(batch(root, llm, "tasks.jsonl", "--ray"))
        await asyncio.wait_for(llm.wait_for_requests(1), 120)
        marker = f"{root}/paicli-batch-"
        (worker,) = processes_with(marker)
        actor = parent_of(worker)
        assert actor is not None
        os.kill(actor, signal.SIGKILL)
        await until(lambda: worker not in processes_with(marker), timeout=10)
        run = await asyncio.wait_for(running, 180)
    found = results(run.stdout)
    assert found["lost"]["status"] == "done", run.stderr
    assert found["lost"]["result"] == "second time"
    await until(lambda: processes_with(marker) == [], timeout=20)


async def test_a_cluster_that_refuses_this_machines_token_is_one_line_and_exit_2(
    tmp_path: Path, local_ray: ModuleType
) -> None:
    # The test's Ray wants its auth token; this batch runs as a process of its own with a
    # HOME of its own and no RAY_AUTH_MODE, so the cluster refuses it. Ray's client would
    # write a raw line a second for ~20 s, then fail vaguely: one line says why, at once.
    address = local_ray.get_runtime_context().gcs_address
    write_tasks(tmp_path / "tasks.jsonl", {"prompt": "never run"})
    env = {**environ(tmp_path), "PAICLI_API_KEY": "unused"}
    args = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "batch", "tasks.jsonl"]
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "paicli.cli", *args, "--ray", address),
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(15):  # Ray alone retries for ~20 s
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 2
    assert out == b""
    *before, last = err.decode().splitlines()
    assert last == (
        f"paicli batch: cannot reach Ray at {address}: the cluster refused this machine's "
        "Ray auth token (give it as RAY_AUTH_TOKEN or in ~/.ray/auth_token; `ray "
        "get-auth-token` on the cluster's head prints it)"
    )
    # (On a slow machine the refusal may come after the wait is said.)
    assert before in (
        [],
        [f"paicli batch: waiting for Ray at {address} to answer (giving up after 60s)"],
    )


async def test_a_ray_this_process_had_joined_is_left_joined(local_ray: ModuleType) -> None:
    """The driver leaves the cluster when the batch is over only if it joined it: a Ray the
    caller started (`ray job submit`'s entry point, a notebook) stays as it was."""
    options = argparse.Namespace(ray="auto", workers=1, task_memory=None, task_timeout=None)
    async with on_ray(options, 0) as cluster:
        await cluster.run([], Defaults(), _NoBoard())
    assert local_ray.is_initialized()


class _NoBoard:
    def started(self, task: Task) -> None:
        raise AssertionError(f"no task was given, yet {task.id} started")

    def finished(self, result: dict[str, Any]) -> None:
        raise AssertionError(f"no task was given, yet {result} came back")


async def test_a_join_that_takes_long_is_said_once_then_given_up_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A cluster that accepts the connection and never answers: the wait is said on stderr
    once (not silence until the deadline), then one line when paicli gives up. Ray here is
    a stand-in whose `ray.init` blocks (the real one would retry for the whole minute)."""
    from paicli.batch import ray_run  # noqa: PLC0415

    monkeypatch.setattr(ray_run, "SLOW_JOIN", 0.3)
    monkeypatch.setattr(ray_run, "CONNECT_TIMEOUT", 1.0)
    released = threading.Event()
    stand_in = types.SimpleNamespace(init=lambda **_: released.wait(), is_initialized=lambda: False)
    with socket.socket() as silent:  # listening, so the TCP probe passes; it never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        try:
            with pytest.raises(ray_run.RayUnavailable) as caught:
                await ray_run._connect(stand_in, address)
        finally:
            released.set()
    assert str(caught.value) == f"Ray at {address} did not answer within 1s"
    assert capfd.readouterr().err == (
        f"paicli batch: waiting for Ray at {address} to answer (giving up after 1s)\n"
    )
