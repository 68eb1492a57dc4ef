"""The server manager with real config files and our test servers: parallel start around a
slow and a broken server, crash and restart with backoff, disable/enable, tool filters,
list_changed refresh. The servers run in memory (tests/memory_connect.py: the same server
code, no process); the tests marked `real` are about processes: exit codes, new pids, and no
process left behind."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import itertools
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from paicli.home import PaicliHome
from paicli.mcp import ConnectionClosed, Transport, TransportWrapper
from paicli.servers.catalogue import Catalogue, catalogue_key
from paicli.servers.config import load_config
from paicli.servers.errors import ServerCallFailed, ServerNotReady, UnknownServer
from paicli.servers.manager import ServerManager, ServerState, StartTimes
from paicli.ui.mcp_shell import summary
from paicli.ui.mcp_view import server_change_line, server_table
from tests.conftest import SERVER_PROGRAMS
from tests.http_servers import run_http_server
from tests.memory_connect import memory_connector
from tests.processes import alive
from tests.server_programs.fault_server import LONG_NAME
from tests.server_programs.fault_server import TOOLS as FAULT_TOOLS

FAULT = str(SERVER_PROGRAMS / "fault_server.py")
LIST_CHANGED = "notifications/tools/list_changed"


def fault(mode: str = "normal", **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [FAULT, "--mode", mode], **extra}


def load(tmp_path: Path, servers: dict[str, dict[str, Any]]) -> list[Any]:
    """`servers` as the user's own (a project's would need approval, and `trust` there is
    ignored)."""
    home = PaicliHome(tmp_path / "home")
    home.root.mkdir(parents=True, exist_ok=True)
    home.mcp_config.write_text(json.dumps({"mcpServers": servers}))
    config = load_config(None, home=home, environ={"HOME": str(tmp_path)})
    return list(config.servers.values())


def in_memory(entries: list[Any], **options: Any) -> ServerManager:
    """A manager whose servers run in this process."""
    return ServerManager(entries, connector=memory_connector, **options)


async def test_servers_start_in_parallel_and_failures_stay_contained(tmp_path: Path) -> None:
    entries = load(
        tmp_path,
        {
            "good": fault(),
            "slow": fault("no_handshake", startupTimeout=1),
            "broken": fault("exit_during_handshake"),
            "off": fault(disabled=True),
            "misconfigured": {"command": "x", "args": "not-a-list"},
        },
    )
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready(["good"])
        good = manager.get("good")
        assert good.state is ServerState.READY
        # The slow server is still starting while the good one is usable.
        assert manager.get("slow").state is ServerState.STARTING
        result = await manager.call_tool("good", "echo", {"text": "hi"})
        assert result.text == "hi"
        await manager.wait_ready()
        assert manager.get("slow").state is ServerState.ERROR
        assert "initialize) timed out after 1s" in (manager.get("slow").error or "")
        broken = manager.get("broken")
        assert broken.state is ServerState.ERROR
        assert "connection closed" in (broken.error or "")
        assert manager.get("off").state is ServerState.DISABLED
        assert manager.get("misconfigured").state is ServerState.ERROR
        assert set(manager.ready_tools()) == {"good"}


def crash_and_return() -> tuple[asyncio.Event, asyncio.Event, Callable[[Any], None]]:
    """Events set when a server fails, and when it is ready again after that; and the
    `on_change` callback that sets them."""
    crashed, back = asyncio.Event(), asyncio.Event()

    def watch(server: Any) -> None:
        if server.state is ServerState.ERROR:
            crashed.set()
        if crashed.is_set() and server.state is ServerState.READY:
            back.set()

    return crashed, back, watch


async def test_a_crash_withdraws_tools_and_restarts_with_backoff(tmp_path: Path) -> None:
    entries = load(tmp_path, {"flaky": fault(restart={"policy": "on-failure", "maxRestarts": 1})})
    crashed, back, watch = crash_and_return()
    async with asyncio.timeout(30), in_memory(entries, on_change=watch) as manager:
        await manager.wait_ready()
        first = manager.get("flaky").session
        assert first is not None
        with pytest.raises(ServerCallFailed, match="connection closed") as failed:
            await manager.call_tool("flaky", "exit", {"code": 7})
        assert (failed.value.server, failed.value.tool) == ("flaky", "exit")
        assert isinstance(failed.value.__cause__, ConnectionClosed)
        await crashed.wait()
        assert manager.ready_tools() == {}
        assert manager.get("flaky").session is None
        await back.wait()
        assert manager.get("flaky").session not in (None, first)
        assert manager.get("flaky").restarts == 1
        assert (await manager.call_tool("flaky", "echo", {"text": "back"})).text == "back"


@pytest.mark.real
async def test_a_crashed_process_is_reported_with_its_exit_code_and_replaced(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"flaky": fault(restart={"policy": "on-failure", "maxRestarts": 1})})
    crashed = asyncio.Event()
    back = asyncio.Event()

    gone = asyncio.Event()
    said: list[str] = []  # what a call would be told, at each crash

    def watch(server: Any) -> None:
        if server.state is ServerState.ERROR:
            said.append(server.unavailable())
            (gone if back.is_set() else crashed).set()
        if crashed.is_set() and server.state is ServerState.READY:
            back.set()

    async with asyncio.timeout(30), ServerManager(entries, on_change=watch) as manager:
        await manager.wait_ready()
        first_pid = manager.get("flaky").pid
        assert first_pid is not None
        with pytest.raises(ServerCallFailed, match="flaky: server exited"):
            await manager.call_tool("flaky", "exit", {"code": 7})
        await crashed.wait()
        assert "exit code 7" in (manager.get("flaky").error or "")
        await back.wait()
        assert manager.get("flaky").pid not in (None, first_pid)
        with pytest.raises(ServerCallFailed):
            await manager.call_tool("flaky", "exit", {"code": 8})
        await gone.wait()
        assert not manager.get("flaky").will_restart
    restarting, final = said
    assert "exit code 7" in restarting and "restarting it (restart 1 of 1)" in restarting
    # Its restarts used up, it is still started again by the next call of one of its tools.
    assert "exit code 8" in final and "starts it again at the next call" in final


async def test_what_the_manager_cannot_serve_raises_typed_server_errors(tmp_path: Path) -> None:
    entries = load(tmp_path, {"off": fault(disabled=True)})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        with pytest.raises(UnknownServer, match="no MCP server named 'nope'"):
            manager.get("nope")
        with pytest.raises(UnknownServer):
            await manager.call_tool("nope", "echo", {})
        with pytest.raises(ServerNotReady, match=r"'off' is not ready \(disabled\)") as info:
            await manager.call_tool("off", "echo", {})
        assert info.value.state == "disabled" and info.value.server == "off"


async def test_disable_withdraws_tools_and_enable_brings_them_back(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fs": fault(excludeTools=["ask_*", "exit"])})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready()
        names = {t.name for t in manager.ready_tools()["fs"]}
        assert "echo" in names
        assert not {"ask_roots", "exit"} & names
        session = manager.get("fs").session
        assert session is not None and session.closed is None
        await manager.disable("fs")
        assert manager.get("fs").state is ServerState.DISABLED
        assert manager.ready_tools() == {}
        assert session.closed is not None  # the connection was closed, not just forgotten
        await manager.enable("fs")
        await manager.wait_ready(["fs"])
        assert manager.get("fs").state is ServerState.READY
        await manager.restart("fs")
        await manager.wait_ready(["fs"])
        assert (await manager.call_tool("fs", "echo", {"text": "again"})).text == "again"


async def test_include_filter_keeps_only_matching_tools(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fs": fault(includeTools=["echo", "sle*"])})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready()
        assert {t.name for t in manager.ready_tools()["fs"]} == {"echo", "sleep"}


async def test_list_changed_refreshes_the_tools(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fs": fault()})
    refreshed = asyncio.Event()
    manager_ = in_memory(entries, on_change=lambda s: refreshed.set())
    async with asyncio.timeout(30), manager_ as manager:
        await manager.wait_ready()
        refreshed.clear()  # the start's changes are in: only the refresh sets it again
        await manager.call_tool("fs", "notify", {"kinds": ["notifications/tools/list_changed"]})
        await refreshed.wait()
        assert manager.get("fs").state is ServerState.READY


class ListsInFlight(TransportWrapper):
    """Counts the client's tools/list requests, and the most ever unanswered at once."""

    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.waiting: set[object] = set()
        self.sent = 0
        self.most = 0

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "tools/list":
            self.sent += 1
            self.waiting.add(message.get("id"))
            self.most = max(self.most, len(self.waiting))
        await super().send(message)

    def observe_incoming(self, message: dict[str, Any]) -> None:
        self.waiting.discard(message.get("id"))


async def test_a_flood_of_list_changed_notices_never_lists_twice_at_once(
    tmp_path: Path,
) -> None:
    """1,000 notices in a row: a refresh runs, and the notices that come while it runs make
    one more; never 1,000 concurrent tools/list requests."""
    entries = load(tmp_path, {"fs": fault()})
    wrappers: list[ListsInFlight] = []

    def wrap(transport: Transport) -> Transport:
        wrappers.append(ListsInFlight(transport))
        return wrappers[-1]

    readies: list[int] = []
    refreshed = asyncio.Event()

    def watch(server: Any) -> None:
        if server.state is ServerState.READY:
            readies.append(1)
            if len(readies) > 1:
                refreshed.set()

    connector = functools.partial(memory_connector, wrap=wrap)
    manager_ = ServerManager(entries, connector=connector, on_change=watch)
    async with asyncio.timeout(30), manager_ as manager:
        await manager.wait_ready()
        flood = ["notifications/tools/list_changed"] * 1000
        await manager.call_tool("fs", "notify", {"kinds": flood})
        await refreshed.wait()
    (counted,) = wrappers
    assert counted.sent >= 2  # the start's list and at least one refresh
    assert counted.most == 1
    assert counted.sent < 1001


class HeldRelisting(TransportWrapper):
    """Lets the start's tools/list through and holds every later one until cancelled."""

    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.lists = 0
        self.holding = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "tools/list":
            self.lists += 1
            if self.lists > 1:
                self.holding.set()
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    self.cancelled.set()
                    raise
        await super().send(message)


async def test_a_refresh_in_flight_ends_with_its_connection(tmp_path: Path) -> None:
    """A relisting belongs to the connection it lists: stopping the server cancels it, so it
    can never hand a stopped server its tools back."""
    entries = load(tmp_path, {"fs": fault()})
    wrappers: list[HeldRelisting] = []

    def wrap(transport: Transport) -> Transport:
        wrappers.append(HeldRelisting(transport))
        return wrappers[-1]

    connector = functools.partial(memory_connector, wrap=wrap)
    async with asyncio.timeout(30), ServerManager(entries, connector=connector) as manager:
        await manager.wait_ready()
        await manager.call_tool("fs", "notify", {"kinds": [LIST_CHANGED]})
        (held,) = wrappers
        await held.holding.wait()
        await manager.disable("fs")
        assert held.cancelled.is_set()
        assert manager.get("fs").tools == []


@pytest.mark.real
@pytest.mark.usefixtures("short_shutdown_waits")
async def test_disabling_or_closing_leaves_no_process_behind(tmp_path: Path) -> None:
    entries = load(
        tmp_path, {f"s{i}": fault() for i in range(4)} | {"stubborn": fault("ignore_sigterm")}
    )
    async with asyncio.timeout(30):
        async with ServerManager(entries) as manager:
            await manager.wait_ready()
            pids = [s.pid for s in manager.servers() if s.pid is not None]
            stubborn = json.loads((await manager.call_tool("stubborn", "pids", {})).text)
            assert len(pids) == 5
            disabled = manager.get("s0").pid
            assert disabled is not None
            await manager.disable("s0")
            assert not alive(disabled)
        for pid in [*pids, stubborn["grandchild"]]:
            assert not alive(pid), pid
    assert os.getpid() > 0


async def test_a_bounded_wait_says_which_servers_are_still_starting(tmp_path: Path) -> None:
    entries = load(tmp_path, {"good": fault(), "slow": fault("no_handshake", startupTimeout=30)})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        assert await manager.wait_ready(["good"], timeout=20) is True
        assert await manager.wait_ready(timeout=0.2) is False
        assert manager.starting() == ["slow"]


class FailingStarts:
    """A connector whose starts all fail as a server that exits during the handshake does;
    `times` holds the loop time of each start."""

    def __init__(self) -> None:
        self.times: list[float] = []

    @contextlib.asynccontextmanager
    async def __call__(self, spec: Any, /, **options: Any) -> AsyncIterator[Any]:
        self.times.append(asyncio.get_running_loop().time())
        raise ConnectionClosed("connection closed during the handshake")
        yield  # an async generator all the same


@pytest.mark.virtual_time
async def test_a_server_that_uses_up_its_restarts_is_one_summary_line(tmp_path: Path) -> None:
    """It fails every start: the user reads the first failure (restarting) and the last
    (given up, with the count), not a line per attempt; /mcp's table says the same. The
    restarts back off 0.5 s, 1 s, 2 s (on the virtual clock)."""
    policy = {"policy": "on-failure", "maxRestarts": 3}
    entries = load(tmp_path, {"loop": fault(restart=policy)})
    lines: list[str] = []
    given_up = asyncio.Event()

    def watch(server: Any) -> None:
        line = server_change_line(server)
        if line is not None:
            lines.append(line.plain)
        if server.state is ServerState.ERROR and not server.will_restart:
            given_up.set()

    starts = FailingStarts()
    manager = ServerManager(entries, connector=starts, on_change=watch)
    async with asyncio.timeout(30), manager:
        await given_up.wait()
        server = manager.get("loop")
        assert server.restarts == 3
        screen = io.StringIO()
        Console(file=screen, width=300).print(server_table([server], []))
        table = screen.getvalue()
    first, last = lines
    assert first.startswith("✗ loop") and "(restarting: 1 of 3)" in first
    assert last.startswith("✗ loop") and "failed after 3 restarts: " in last
    assert "failed after 3 restarts" in table
    assert [b - a for a, b in itertools.pairwise(starts.times)] == [0.5, 1.0, 2.0]


@pytest.mark.real
async def test_a_plain_url_server_reached_over_legacy_sse_is_listed_as_sse(tmp_path: Path) -> None:
    async with (
        asyncio.timeout(30),
        run_http_server("sdk_http_server.py", "--transport", "sse") as url,
    ):
        entries = load(tmp_path, {"old": {"url": url}, "new": {"url": url, "type": "sse"}})
        async with ServerManager(entries) as manager:
            await manager.wait_ready()
            old = manager.get("old")
            assert old.state is ServerState.READY and old.transport == "sse"
            screen = io.StringIO()
            Console(file=screen, width=300).print(server_table([old], []))
            (row,) = [line for line in screen.getvalue().splitlines() if " old " in line]
            assert " sse " in row and " http " not in row


async def test_a_slow_start_says_what_it_was_spent_on(tmp_path: Path) -> None:
    """A legacy server that ignores the 2026 discovery probe: the probe waits half of the
    3 s start deadline before the handshake. The change line, /mcp's table and the JSON
    listing say so; a quick server says nothing."""
    entries = load(
        tmp_path,
        {"quiet": fault("legacy_silent_discover", startupTimeout=3), "quick": fault()},
    )
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready()
        quiet, quick = manager.get("quiet"), manager.get("quick")
        assert quiet.state is ServerState.READY and quiet.start_times is not None
        assert quiet.start_times.probe is not None and quiet.start_times.probe >= 1.0
        line = server_change_line(quiet)
        screen = io.StringIO()
        Console(file=screen, width=300).print(server_table([quiet, quick], []))
        listed = summary(quiet)
    assert quick.slow_start is None and quick.start_times is not None
    assert quiet.slow_start is not None
    assert "on the 2026 discovery probe before the initialize handshake" in quiet.slow_start
    assert line is not None and "(slow: " in line.plain and "discovery probe" in line.plain
    rows = screen.getvalue().splitlines()
    assert "slow start: " in next(r for r in rows if " quiet " in r)
    assert "slow" not in next(r for r in rows if " quick " in r)
    assert listed["slow_start"] == quiet.slow_start


@pytest.mark.parametrize(
    ("times", "words"),
    [
        (StartTimes(queued=2.0, connect=0.2, probe=None, tools=0.1), "start slot (64 servers"),
        (StartTimes(queued=0.0, connect=3.0, probe=None, tools=0.1), "3.0s to start and answer"),
        (StartTimes(queued=0.0, connect=0.2, probe=None, tools=1.5), "1.5s to list its tools"),
        (StartTimes(queued=0.0, connect=0.3, probe=0.2, tools=0.1), None),
    ],
)
def test_why_a_start_was_slow_names_its_biggest_part(times: StartTimes, words: str | None) -> None:
    said = times.why_slow(64)
    assert said is None if words is None else (said is not None and words in said)


async def test_many_tools_left_out_at_once_are_a_few_warning_lines_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """30 tools more, 20 of them nested 100 levels deep: five warnings name the first five,
    one line counts the other 15, the rest are offered, and a relisting says nothing again."""
    crowded = [FAULT, "--mode", "crowded", "--tools", "30", "--deep", "20"]
    entries = load(tmp_path, {"crowd": {"command": sys.executable, "args": crowded}})
    relisted = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="paicli.servers"):
        manager_ = in_memory(entries, on_change=lambda s: relisted.set())
        async with asyncio.timeout(30), manager_ as manager:
            await manager.wait_ready()
            relisted.clear()  # the start's changes are in: only the relisting sets it again
            await manager.call_tool("crowd", "notify", {"kinds": [LIST_CHANGED]})
            await relisted.wait()
            server = manager.get("crowd")
            offered = [t.name for t in server.tools]
    warned = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    deep = "is left out: its schemas nest more than 48 levels deep"
    assert warned == [
        *(f"crowd: tool 'record_{i}' {deep}" for i in range(5)),
        "crowd: 15 more tools are left out (paicli mcp tools crowd)",
    ]
    assert len(server.left_out) == 20
    assert offered == [*FAULT_TOOLS, *(f"record_{i}" for i in range(20, 30))]


@pytest.mark.real
async def test_a_hostile_catalogue_costs_only_its_bad_tools(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One tool 10,000 levels deep (which makes the whole tools/list line unparseable), one
    of 6 MB, `echo` listed three more times, one with a malformed schema, a name of 100,000
    characters listed twice: the server is ready with its other tools at once, /mcp says what
    was left out and why, each in one short warning line, and the catalogue records the
    tools that are offered (the 6 MB one would make its file too large to keep)."""
    entries = load(tmp_path, {"cat": fault("hostile_catalogue", startupTimeout=10)})
    folder = tmp_path / "catalogue"
    with caplog.at_level(logging.WARNING, logger="paicli.servers"):
        manager_ = ServerManager(entries, catalogue=Catalogue(folder))
        async with asyncio.timeout(30), manager_ as manager:
            await manager.wait_ready()
            server = manager.get("cat")
            assert server.state is ServerState.READY, server.error
            screen = io.StringIO()
            Console(file=screen, width=300).print(server_table([server], []))
            offered = [t.name for t in server.tools]
    assert offered == [*FAULT_TOOLS, LONG_NAME]
    assert set(server.left_out) == {"deep", "huge", "echo", LONG_NAME}
    assert server.left_out["deep"] == "its definition could not be read (depth limit exceeded)"
    assert "KiB of JSON (the limit is 256 KiB)" in server.left_out["huge"]
    assert server.left_out["echo"] == "listed more than once; the first definition is used"
    assert "4 tools left out (paicli mcp tools cat)" in screen.getvalue()
    warned = [r.getMessage() for r in caplog.records if "is left out" in r.getMessage()]
    assert len(warned) == 4 and all(len(line) < 300 for line in warned)
    assert "cat: tool 'long-nnn" in warned[-1] and "… (100,005 characters) is left" in warned[-1]
    recorded = Catalogue(folder).load(catalogue_key(entries[0]) or "")
    assert recorded is not None and [t.name for t in recorded] == offered


@pytest.mark.real
async def test_each_start_of_a_server_begins_its_log_with_a_dated_separator(
    tmp_path: Path,
) -> None:
    policy = {"policy": "on-failure", "maxRestarts": 1}
    marker = f"hello-from-{tmp_path.name}"
    entry = fault(restart=policy)
    entry["args"] += ["--initial-stderr", marker]
    entries = load(tmp_path, {"logged": entry})
    _, back, watch = crash_and_return()
    logs = tmp_path / "logs"
    async with asyncio.timeout(30), ServerManager(entries, log_dir=logs, on_change=watch) as m:
        await m.wait_ready()
        with pytest.raises(ServerCallFailed):
            await m.call_tool("logged", "exit", {"code": 1})
        await back.wait()
        await m.call_tool("logged", "echo", {"text": "x"})  # its stderr is in by now
    lines = (logs / "logged.log").read_text().splitlines()
    runs = [i for i, line in enumerate(lines) if line.startswith("----- paicli: logged started ")]
    assert len(runs) == 2 and lines[runs[1]].endswith(", restart 1 -----")
    assert marker in "\n".join(lines[runs[0] : runs[1]]) and marker in "\n".join(lines[runs[1] :])
