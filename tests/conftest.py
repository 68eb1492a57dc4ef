"""Shared test helpers: server descriptions for our fault server and the SDK server."""

from __future__ import annotations

import asyncio
import gc
import importlib
import os
import signal
import socket
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from paicli.mcp import (
    ClientHandlers,
    ClientSession,
    Notification,
    Root,
    StdioServer,
    _process,
    _rpc,
)
from paicli.mcp._sandbox.support import SandboxSupport, _Cache
from tests import xdist_fork, zygote
from tests.virtual_clock import VirtualClockLoop

SERVER_PROGRAMS = Path(__file__).parent / "server_programs"
REPO = Path(__file__).parent.parent

# Keep the bytecode caches, as `make test` does (it unexports the variable): under
# PYTHONDONTWRITEBYTECODE every pytest worker rewrites every test module again (three times
# the collection's CPU) and every Python the real tests start compiles what has no cache
# yet. This runs before pytest-xdist starts its workers, so they and their children inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# `make test` runs pytest under `uv run`, and a Ray driver with `uv run` among its ancestors
# has Ray start its workers with `uv run` in an uploaded copy of the working folder (the
# repository): seconds a worker, minutes in all. The tests' own Ray (`local_ray`) is not
# about uv; `paicli batch --ray` turns the hook off itself.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")

# A suite started in the background by a script (`make test &`, nohup, some CI runners) gets
# SIGINT ignored, and every Python it starts keeps it so: the paicli processes of the tests
# that press Ctrl+C would then never see it, and paicli run inside a test puts Python's own
# handler back when it ends (asyncio's remove_signal_handler does). Run as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: list[Any]) -> None:
    """xdist's workers forked from one warm interpreter (tests/xdist_fork.py)."""
    xdist_fork.setup_nodes(config, specs)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` sends the tests of one `xdist_group` to one worker: pytest-xdist
    tells the controller an item's group by ending its node id with `@group`, but under
    pytest 9.2 the field it sets is no longer the node id (pytest-dev/pytest-xdist#1386), so
    every group was spread over the workers (the local Ray started in two of them). Until
    xdist does it again, this adds the suffix where it is missing."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name")) for m in marks})
        suffix = f"@{'_'.join(names)}"
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = type(item._id).parse(item.nodeid + suffix)


def fault_server(mode: str = "normal", *extra: str, **options: Any) -> StdioServer:
    """Our stdlib fault-injection server in `mode` (see tests/server_programs/fault_server.py)."""
    return StdioServer(
        sys.executable,
        args=[str(SERVER_PROGRAMS / "fault_server.py"), "--mode", mode, *extra],
        **options,
    )


def sdk_server(**options: Any) -> StdioServer:
    """A server built on the official `mcp` SDK (dual-era)."""
    return StdioServer(sys.executable, args=[str(SERVER_PROGRAMS / "sdk_server.py")], **options)


@pytest.fixture(scope="session")
def local_ray() -> Iterator[ModuleType]:
    """One local Ray of two CPUs for every test that needs one. Starting Ray costs 10-30 s on
    two cores, so it starts once per pytest worker, and the modules that use it are in the
    xdist group "ray" (run with `--dist loadgroup`), so only one worker ever starts it."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()
    # Ray leaves the handles of its stopped daemons to the garbage collector, which would
    # warn (an error here) in whatever test it runs during.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture
def short_shutdown_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorter waits for a stdio server that outlasts them on purpose (it ignores SIGTERM,
    has stopped reading, hangs): between the steps of the shutdown ladder (stdin closed,
    SIGTERM, SIGKILL) and for a cancellation notice its full pipe will never take. Which
    steps run and what is left afterwards is the point of such tests, not how long each wait
    lasts, and the full waits would cost up to 3 s a test."""
    monkeypatch.setattr(_process, "STDIN_CLOSE_GRACE", 0.2)
    monkeypatch.setattr(_process, "SIGTERM_GRACE", 0.2)
    monkeypatch.setattr(_rpc, "CANCEL_NOTICE_TIMEOUT", 0.2)


# What the in-memory tier is told works here: bubblewrap, as on most Linux machines. A test
# that needs another answer sets `_Cache.support` itself.
IN_MEMORY_SANDBOX = SandboxSupport(
    bubblewrap=None,
    landlock="not probed in the in-memory tier",
    seccomp="not probed in the in-memory tier",
    seatbelt="not probed in the in-memory tier",
    bwrap="/usr/bin/bwrap",
)


class NotInMemory(AssertionError):
    """A test of the in-memory tier tried to spawn a process or use a socket."""


@pytest.fixture(autouse=True)
def _sigint_left_as_found() -> Iterator[None]:
    """A test may not leave SIGINT changed in its worker: every `paicli` started there later
    (fresh, or forked: tests/zygote.py) inherits an ignored SIGINT, and the tests that stop
    one with Ctrl+C then wait out their timeouts far from the cause. Fails the test that did
    it (and puts SIGINT back for the rest)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left SIGINT as {after!r} (it was {before!r})")


@pytest.fixture(autouse=True)
def _in_memory_unless_marked_real(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep the in-memory tier honest: a test not marked `real` cannot spawn a
    process or connect or bind a socket, so `make test-fast` stays fast and needs nothing
    but this process."""
    # Whether this test's `python -m paicli.cli` processes start fresh (tests/zygote.py).
    zygote.fresh_for_this_test(request.node.get_closest_marker("fresh_paicli") is not None)
    if request.node.get_closest_marker("real"):
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise NotInMemory(
            f"{request.node.nodeid} is in the in-memory tier; mark it @pytest.mark.real "
            "to spawn processes or open sockets"
        )

    # The official SDK (tests/memory_connect.py serves it in memory, and loads it only then)
    # cannot be imported under the block: load it first (once per process).
    importlib.import_module("tests.sdk_memory")
    monkeypatch.setattr(subprocess, "Popen", refuse)
    for name in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, name, refuse)
    # The sandbox probe runs processes: the in-memory tier gets a fixed answer, not whatever
    # an earlier real test of this process found (nor NotInMemory when none probed yet).
    monkeypatch.setattr(_Cache, "support", IN_MEMORY_SANDBOX)


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """A test marked `virtual_time` runs on a virtual clock (tests/virtual_clock.py): its
    deadlines, backoff and timeouts cost no real time and never depend on the machine's load.
    Every other test runs on asyncio's own loop."""
    if item.get_closest_marker("virtual_time"):
        return {"virtual_time": VirtualClockLoop}
    return {"asyncio": asyncio.new_event_loop}


class Inbox:
    """Collects every server notification; `wait_for` waits on arrivals, never polls."""

    def __init__(self) -> None:
        self.notes: list[Notification] = []
        self._arrived = asyncio.Event()

    def __call__(self, note: Notification) -> None:
        self.notes.append(note)
        self._arrived.set()

    async def wait_for(
        self, match: Callable[[Notification], bool], *, start: int = 0
    ) -> Notification:
        """The first matching notification at index `start` or later."""
        while True:
            self._arrived.clear()
            for note in self.notes[start:]:
                if match(note):
                    return note
            await self._arrived.wait()


def recording_handlers(
    asked: dict[str, list[dict[str, Any]]], root: Root, form: dict[str, Any]
) -> ClientHandlers:
    """Handlers that record what they were asked: a canned model reply, `form` as the
    accepted elicitation content, and `root` as the only root."""

    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        asked.setdefault("sampling", []).append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "hi from the model"},
            "model": "test-model",
            "stopReason": "endTurn",
        }

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.setdefault("elicitation", []).append(params)
        return {"action": "accept", "content": dict(form)}

    return ClientHandlers(roots=[root], sampling=sampling, elicitation=elicitation)


async def wait_for_tools(session: ClientSession, inbox: Inbox, wanted: set[str]) -> set[str]:
    """List tools until `wanted` are all there, re-listing after each list_changed."""
    while True:
        seen = len(inbox.notes)
        names = {tool.name for tool in await session.list_tools()}
        if wanted <= names:
            return names
        await inbox.wait_for(
            lambda note: note.method == "notifications/tools/list_changed", start=seen
        )
