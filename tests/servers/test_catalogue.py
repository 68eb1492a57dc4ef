"""Instant start from the tool catalogue: a server's tools from its last start are offered at
once while it starts again, a call to one waits for the server, the live list wins and is
recorded, and a changed config starts as a first run. The servers run in memory; a gate in
front of the connector holds a server's start for as long as a test needs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import ClientHandlers, ClientSession, EraCache, HttpServer, StdioServer, Tool
from paicli.permissions.approval import Answer, Choice
from paicli.servers.catalogue import Catalogue, catalogue_key
from paicli.servers.errors import ServerCallFailed, ServerNotReady
from paicli.servers.manager import ServerManager, ServerState
from tests.agent.test_loop import Approvals, Events, project, tool_messages
from tests.llm_memory import MemoryLlm
from tests.llm_server import Json
from tests.memory_connect import memory_connector
from tests.model_view import unfenced
from tests.runtimes import memory_runtime
from tests.server_programs.fault_server import TOOLS as FAULT_TOOLS
from tests.servers.test_manager import FAULT, fault, load


class Gate:
    """A connector that starts a server only once `open` is set (a slow handshake on cue)."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.starts = 0

    @contextlib.asynccontextmanager
    async def __call__(
        self,
        spec: StdioServer | HttpServer,
        /,
        *,
        name: str,
        handlers: ClientHandlers | None,
        era_cache: EraCache,
    ) -> AsyncIterator[ClientSession]:
        self.starts += 1
        await self.open.wait()
        async with memory_connector(
            spec, name=name, handlers=handlers, era_cache=era_cache
        ) as session:
            yield session


def manager(entries: list[Any], folder: Path, gate: Gate) -> ServerManager:
    return ServerManager(entries, connector=gate, catalogue=Catalogue(folder))


async def first_run(entries: list[Any], folder: Path) -> list[str]:
    """Start once with nothing recorded; return the tools the server offered."""
    gate = Gate()
    gate.open.set()
    async with asyncio.timeout(30), manager(entries, folder, gate) as first:
        await first.wait_ready()
        return [t.name for t in first.get("fault").tools]


async def test_the_second_start_offers_the_recorded_tools_before_the_server_is_up(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"fault": fault()})
    folder = tmp_path / "home" / "catalogue"
    live = await first_run(entries, folder)
    (entry,) = folder.iterdir()
    assert entry.name == f"{catalogue_key(entries[0])}.json"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700

    gate = Gate()
    async with asyncio.timeout(30), manager(entries, folder, gate) as second:
        server = second.get("fault")
        assert server.state is ServerState.STARTING
        assert [t.name for t in second.offered_tools()["fault"]] == live
        assert second.ready_tools() == {}
        assert second.starting() == ["fault"]
        assert second.starting(without_catalogue=True) == []  # nothing to wait for
        call = asyncio.ensure_future(second.call_tool("fault", "echo", {"text": "hi"}))
        await asyncio.sleep(0)  # let the call reach its wait (not a synchronisation point)
        assert not call.done()
        gate.open.set()
        assert (await call).text == "hi"
        assert second.get("fault").state is ServerState.READY
        assert server.cached_tools is None  # the live list is what is offered now


async def test_a_changed_config_starts_as_a_first_run(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "catalogue"
    await first_run(load(tmp_path, {"fault": fault()}), folder)
    changed = load(tmp_path, {"fault": fault(env={"EXTRA": "1"})})
    gate = Gate()
    async with asyncio.timeout(30), manager(changed, folder, gate) as run:
        assert run.offered_tools() == {}
        assert run.starting(without_catalogue=True) == ["fault"]
        gate.open.set()
        await run.wait_ready()
    assert len(list(folder.iterdir())) == 2  # one entry per config


async def test_the_live_list_wins_and_is_recorded(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fault": fault()})
    folder = tmp_path / "home" / "catalogue"
    live = await first_run(entries, folder)
    key = catalogue_key(entries[0])
    assert key is not None
    ghost = Tool(name="ghost", input_schema={"type": "object"}, description="Gone since.")
    Catalogue(folder).save(key, "fault", [ghost])
    gate = Gate()
    async with asyncio.timeout(30), manager(entries, folder, gate) as run:
        assert [t.name for t in run.offered_tools()["fault"]] == ["ghost"]
        call = asyncio.ensure_future(run.call_tool("fault", "ghost", {}))
        gate.open.set()
        with pytest.raises(ServerCallFailed, match="no longer offers this tool"):
            await call
        assert [t.name for t in run.offered_tools()["fault"]] == live
    recorded = Catalogue(folder).load(key)
    assert recorded is not None and [t.name for t in recorded] == live


async def test_a_server_that_fails_to_start_withdraws_the_recorded_tools(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "catalogue"
    entries = load(tmp_path, {"fault": fault()})
    await first_run(entries, folder)
    key = catalogue_key(entries[0])
    assert key is not None
    broken = load(tmp_path, {"fault": fault("exit_during_handshake")})
    recorded = Catalogue(folder).load(key)
    assert recorded is not None
    broken_key = catalogue_key(broken[0])
    assert broken_key is not None
    Catalogue(folder).save(broken_key, "fault", recorded)
    gate = Gate()
    async with asyncio.timeout(30), manager(broken, folder, gate) as run:
        assert "fault" in run.offered_tools()
        call = asyncio.ensure_future(run.call_tool("fault", "echo", {"text": "x"}))
        gate.open.set()
        await run.wait_ready()
        assert run.get("fault").state is ServerState.ERROR
        assert run.offered_tools() == {}
        with pytest.raises(ServerNotReady, match=r"not ready \(error\)"):
            await call


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"format": 1, "key": "other", "tools": []}', b"[]", b"\xff\xfe"],
)
async def test_a_broken_entry_reads_as_none(tmp_path: Path, content: bytes) -> None:
    entries = load(tmp_path, {"fault": fault()})
    key = catalogue_key(entries[0])
    assert key is not None
    folder = tmp_path / "catalogue"
    folder.mkdir(mode=0o700)
    (folder / f"{key}.json").write_bytes(content)
    assert Catalogue(folder).load(key) is None
    gate = Gate()
    gate.open.set()
    async with asyncio.timeout(30), manager(entries, folder, gate) as run:
        assert run.starting(without_catalogue=True) == ["fault"]
        await run.wait_ready()
    assert Catalogue(folder).load(key) is not None  # rewritten by the live list


async def test_the_model_sees_recorded_tools_and_its_call_waits_for_the_server(
    tmp_path: Path,
) -> None:
    root, environ = project(tmp_path)
    # The first run records the servers' tools.
    async with (
        MemoryLlm([{"text": "hi"}]) as llm,
        memory_runtime(root, environ, llm, Approvals()) as runtime,
    ):
        async with asyncio.timeout(30):
            await runtime.manager.wait_ready()
    gate = Gate()
    script: list[Json] = [
        {"tool_calls": [{"id": "e", "name": "mcp__fault__echo", "arguments": '{"text": "yo"}'}]},
        {"text": "done"},
    ]
    approvals = Approvals([Answer(Choice.ALLOW_ONCE)], hook=gate.open.set)
    async with (
        MemoryLlm(script) as llm,
        memory_runtime(root, environ, llm, approvals, connector=gate) as runtime,
    ):
        assert runtime.agent is not None
        assert runtime.manager.starting(without_catalogue=True) == []
        async with asyncio.timeout(30):
            await runtime.agent.run("echo yo", Events())
    # The first request left while no server had started (the gate opened at approval).
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"mcp__fault__echo", "mcp__sdk__add"} <= offered
    (result,) = tool_messages(llm.requests[1])
    assert unfenced(result["content"]) == "yo"
    catalogue = Path(environ["PAICLI_HOME"]) / "catalogue"
    assert all(json.loads(p.read_text())["format"] == 1 for p in catalogue.iterdir())
    assert stat.S_IMODE(os.stat(catalogue).st_mode) == 0o700


async def test_a_tool_redefined_since_the_catalogue_offered_it_is_not_called(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"fault": fault()})
    folder = tmp_path / "home" / "catalogue"
    await first_run(entries, folder)
    key = catalogue_key(entries[0])
    assert key is not None
    recorded = Catalogue(folder).load(key)
    assert recorded is not None
    # What the model was offered said something else than what the server now defines.
    offered = [
        Tool(name=t.name, input_schema=t.input_schema, description="An older description.")
        for t in recorded
    ]
    Catalogue(folder).save(key, "fault", offered)
    gate = Gate()
    async with asyncio.timeout(30), manager(entries, folder, gate) as run:
        call = asyncio.ensure_future(run.call_tool("fault", "echo", {"text": "x"}))
        gate.open.set()
        with pytest.raises(ServerCallFailed, match="redefined this tool since it was offered"):
            await call
        assert (await run.call_tool("fault", "echo", {"text": "x"})).text == "x"  # now live


async def test_a_lazy_server_starts_on_first_use_once_its_tools_are_known(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"fault": fault(start="lazy")})
    folder = tmp_path / "home" / "catalogue"
    gate = Gate()
    gate.open.set()
    # Nothing known yet: a lazy server starts at once, like any other, to learn its tools.
    async with asyncio.timeout(30), manager(entries, folder, gate) as first:
        await first.wait_ready()
        assert first.get("fault").state is ServerState.READY
    gate = Gate()
    gate.open.set()
    async with asyncio.timeout(30), manager(entries, folder, gate) as run:
        server = run.get("fault")
        assert server.state is ServerState.IDLE
        assert gate.starts == 0
        assert "echo" in {t.name for t in run.offered_tools()["fault"]}
        assert await run.wait_ready()  # an idle server is not waited for
        assert (await run.call_tool("fault", "echo", {"text": "hi"})).text == "hi"
        assert gate.starts == 1
        assert run.get("fault").state is ServerState.READY


def test_start_takes_eager_or_lazy(tmp_path: Path) -> None:
    (entry,) = load(tmp_path, {"fault": fault(start="sometimes")})
    assert entry.spec is None
    assert "'start' must be \"eager\" or \"lazy\", got 'sometimes'" in (entry.error or "")


async def test_a_tool_unfit_to_offer_never_costs_the_others_their_entry(tmp_path: Path) -> None:
    """A server with one tool nested 100 levels deep (more than a catalogue file may nest):
    the entry records its other tools, and the next start offers them at once."""
    crowded = [FAULT, "--mode", "crowded", "--tools", "3", "--deep", "1"]
    entries = load(tmp_path, {"crowd": {"command": sys.executable, "args": crowded}})
    folder = tmp_path / "catalogue"
    async with (
        asyncio.timeout(30),
        ServerManager(entries, connector=memory_connector, catalogue=Catalogue(folder)) as first,
    ):
        await first.wait_ready()
        assert "record_0" in first.get("crowd").left_out
    recorded = Catalogue(folder).load(catalogue_key(entries[0]) or "")
    assert recorded is not None
    assert [t.name for t in recorded] == [*FAULT_TOOLS, "record_1", "record_2"]
    gate = Gate()
    async with asyncio.timeout(30), manager(entries, folder, gate) as second:
        offered = second.offered_tools()["crowd"]
        assert second.get("crowd").state is ServerState.STARTING
        assert [t.name for t in offered] == [t.name for t in recorded]
        gate.open.set()


def held(entries: list[Any], folder: Path, gate: Gate) -> ServerManager:
    return ServerManager(entries, connector=gate, catalogue=Catalogue(folder), held=True)


async def test_a_held_manager_offers_the_catalogue_and_starts_nothing_until_told(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"fault": fault()})
    folder = tmp_path / "home" / "catalogue"
    live = await first_run(entries, folder)
    gate = Gate()
    gate.open.set()
    async with asyncio.timeout(30), held(entries, folder, gate) as run:
        assert run.get("fault").state is ServerState.STARTING
        assert [t.name for t in run.offered_tools()["fault"]] == live
        assert run.starting(without_catalogue=True) == []
        await asyncio.sleep(0)  # a started owner would reach the connector now
        assert gate.starts == 0
        run.start()
        run.start()  # idempotent
        await run.wait_ready()
        assert gate.starts == 1
        assert run.get("fault").state is ServerState.READY


async def test_waiting_for_or_calling_a_held_server_starts_it(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fault": fault()})
    folder = tmp_path / "home" / "catalogue"
    await first_run(entries, folder)
    gate = Gate()
    gate.open.set()
    async with asyncio.timeout(30), held(entries, folder, gate) as run:
        assert (await run.call_tool("fault", "echo", {"text": "hi"})).text == "hi"
        assert gate.starts == 1
    async with asyncio.timeout(30), held(entries, folder, gate) as run:
        assert await run.wait_ready(["fault"])  # a wait is never left hanging on the hold
        assert run.get("fault").state is ServerState.READY
        assert gate.starts == 2


async def test_a_held_server_never_started_is_stopped_on_close(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fault": fault()})
    gate = Gate()
    async with asyncio.timeout(30), held(entries, tmp_path / "catalogue", gate) as run:
        server = run.get("fault")
    assert server.state is ServerState.STOPPED
    assert gate.starts == 0


class CountingGate(Gate):
    """A gate that also tells when `wanted` servers have reached it."""

    def __init__(self, wanted: int) -> None:
        super().__init__()
        self.wanted = wanted
        self.all_reached = asyncio.Event()

    @contextlib.asynccontextmanager
    async def __call__(
        self,
        spec: StdioServer | HttpServer,
        /,
        *,
        name: str,
        handlers: ClientHandlers | None,
        era_cache: EraCache,
    ) -> AsyncIterator[ClientSession]:
        if self.starts + 1 >= self.wanted:
            self.all_reached.set()
        async with super().__call__(
            spec, name=name, handlers=handlers, era_cache=era_cache
        ) as session:
            yield session


class StartsSeen(MemoryLlm):
    """The scripted model, noting how many servers had started when each request came."""

    def __init__(self, script: list[Json], gate: Gate) -> None:
        super().__init__(script)
        self.gate = gate
        self.starts_seen: list[int] = []

    def reply_to(self, raw: bytes, authorization: str | None) -> Any:
        self.starts_seen.append(self.gate.starts)
        return super().reply_to(raw, authorization)


async def test_with_servers_held_the_first_request_leaves_before_any_server_starts(
    tmp_path: Path,
) -> None:
    """Issue 14: with every server's tools in the catalogue, a one-shot's first request
    carries them and goes out before any server process starts; the answer starts them."""
    root, environ = project(tmp_path)
    async with (
        MemoryLlm([{"text": "hi"}]) as llm,
        memory_runtime(root, environ, llm, Approvals()) as runtime,
    ):
        async with asyncio.timeout(30):
            await runtime.manager.wait_ready()
    gate = CountingGate(wanted=2)
    gate.open.set()
    async with (
        StartsSeen([{"text": "done"}], gate) as llm,
        memory_runtime(root, environ, llm, Approvals(), connector=gate, hold_servers=True) as rt,
    ):
        assert rt.agent is not None
        async with asyncio.timeout(30):
            await rt.agent.run("hello", Events())
            await gate.all_reached.wait()
    assert llm.starts_seen == [0]
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"mcp__fault__echo", "mcp__sdk__add"} <= offered


@pytest.mark.parametrize(
    ("server", "hints", "kept"),
    [
        ({"url": "https://docs.example/mcp"}, (None, None), True),
        ({"url": "https://docs.example/mcp"}, (0, "public"), True),
        ({"url": "https://docs.example/mcp"}, (0, "private"), False),
        ({"command": "server"}, (0, "private"), True),  # no authorization to be private to
    ],
)
def test_a_private_list_of_an_oauth_server_is_not_kept_in_the_catalogue(
    tmp_path: Path, server: Json, hints: tuple[int | None, str | None], kept: bool
) -> None:
    from paicli.servers.screening import ToolScreen  # noqa: PLC0415
    from tests.servers.test_manager import load  # noqa: PLC0415

    (entry,) = load(tmp_path, {"s": server})
    catalogue = Catalogue(tmp_path / "catalogue")
    screen = ToolScreen(catalogue)
    tool = Tool("echo", {"type": "object"})
    screen.listing(entry, [tool], {})  # an earlier run's list, kept
    screen.listing(entry, [tool], {}, hints)
    assert (screen.cached(entry) is not None) is kept
