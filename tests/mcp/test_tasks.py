"""MCP tasks through `ClientSession`, in both eras, against tests/server_programs/task_server.py
run in memory (on the virtual clock: it runs on the loop alone) and once as a real process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from paicli.mcp import (
    ClientHandlers,
    ClientSession,
    ProtocolError,
    TaskFailed,
    TaskHandle,
    TaskInfo,
    TaskTimeout,
)
from paicli.mcp.tasks import MIN_POLL_INTERVAL
from tests.memory_servers import task_in_memory
from tests.server_programs.task_server import TaskServer

ERAS = ["2025-11-25", "modern"]


async def confirm(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "Proceed with the slow job?"
    return {"action": "accept", "content": {"ok": True}}


@asynccontextmanager
async def tasks_session(
    *options: str, protocol: Any = "2025-11-25", handlers: ClientHandlers | None = None
) -> AsyncIterator[tuple[ClientSession, TaskServer]]:
    async with (
        task_in_memory(*options) as (transport, server),
        ClientSession(transport, name="tasks", protocol=protocol, handlers=handlers) as session,
    ):
        await session.list_tools()  # 2025-11-25: which tools allow tasks
        yield session, server


async def started(session: ClientSession, text: str = "hi") -> TaskHandle:
    handle = await session.call_tool_as_task("slow", {"text": text})
    assert handle.task_id is not None and handle.status == "working", handle.status
    return handle


pytestmark = pytest.mark.virtual_time


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_task_completes_after_its_polls_in_either_era(protocol: str) -> None:
    async with tasks_session("--polls", "3", protocol=protocol) as (session, server):
        handle = await started(session)
        assert handle.task_id == "task-1"
        result = await handle.result(timeout=30)
        assert result.text == "done: hi"
        assert handle.done and handle.status == "completed"
        assert server.methods.count("tasks/get") == 3
        # 2026 inlines the result in tasks/get; 2025-11-25 hands it over with tasks/result.
        assert ("tasks/result" in server.methods) == (protocol != "modern")


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_server_that_answers_at_once_gives_a_complete_handle(protocol: str) -> None:
    async with tasks_session("--mode", "sync", protocol=protocol) as (session, server):
        handle = await session.call_tool_as_task("slow", {"text": "now"})
        assert handle.task_id is None and handle.done
        assert (await handle.result()).text == "done: now"
        assert not server.tasks


async def test_a_tool_that_forbids_tasks_is_called_plainly_in_2025_11_25() -> None:
    async with tasks_session() as (session, server):
        handle = await session.call_tool_as_task("quick", {"text": "q"})
        assert handle.task_id is None and (await handle.result()).text == "quick: q"
        assert not server.tasks


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_plain_call_never_declares_tasks(protocol: str) -> None:
    async with tasks_session(protocol=protocol) as (session, server):
        assert (await session.call_tool("slow", {"text": "x"})).text == "done: x"
        assert not server.tasks


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_task_asks_for_input_and_the_handlers_answer(protocol: str) -> None:
    handlers = ClientHandlers(elicitation=confirm)
    async with tasks_session(
        "--mode", "input", "--polls", "1", protocol=protocol, handlers=handlers
    ) as (session, server):
        handle = await started(session)
        result = await handle.result(timeout=30)
        assert result.text == 'done: hi (answer: {"action": "accept", "content": {"ok": true}})'
        assert ("tasks/update" in server.methods) == (protocol == "modern")


async def test_input_can_be_given_by_the_caller_through_update() -> None:
    async with tasks_session("--mode", "input", "--polls", "1", protocol="modern") as (
        session,
        _,
    ):
        handle = await started(session)
        await handle.refresh()
        assert handle.status == "input_required"
        assert handle.pending_input["confirm"]["method"] == "elicitation/create"
        await handle.update({"confirm": {"action": "decline"}})
        result = await handle.result(timeout=30, answer_input=False)
        assert result.text.endswith('(answer: {"action": "decline"})')


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_failed_task_raises_task_failed(protocol: str) -> None:
    async with tasks_session("--mode", "fail", "--polls", "1", protocol=protocol) as (
        session,
        _,
    ):
        handle = await started(session)
        with pytest.raises(TaskFailed) as caught:
            await handle.result(timeout=30)
        assert caught.value.status == "failed" and caught.value.task_id == "task-1"
        assert "the slow job broke" in str(caught.value) or protocol != "modern"


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_task_that_never_ends_is_bounded_and_can_be_cancelled(protocol: str) -> None:
    async with tasks_session("--polls", "0", protocol=protocol) as (session, server):
        handle = await started(session)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        with pytest.raises(TaskTimeout):
            await handle.result(timeout=5)
        assert loop.time() - begun == pytest.approx(5, abs=0.2)
        await handle.cancel()
        assert server.tasks["task-1"].status == "cancelled"
        assert "tasks/cancel" in server.methods and handle.status == "cancelled"
        with pytest.raises(TaskFailed) as caught:
            await handle.result(timeout=1)
        assert caught.value.status == "cancelled"


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_status_notification_wakes_the_poller_early(protocol: str) -> None:
    # The server says: poll every 20 s. The release notice arrives long before that.
    async with tasks_session("--polls", "0", "--poll-ms", "20000", protocol=protocol) as (
        session,
        _,
    ):
        handle = await started(session)
        waiting = asyncio.ensure_future(handle.result(timeout=60))
        await asyncio.sleep(1)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        await session.call_tool("release", {})
        assert (await waiting).text == "done: hi"
        assert loop.time() - begun < 1


async def test_a_flood_of_status_notifications_never_makes_polling_spin() -> None:
    async with tasks_session("--mode", "flood", "--polls", "0", "--poll-ms", "0") as (
        session,
        server,
    ):
        handle = await started(session)
        with pytest.raises(TaskTimeout):
            await handle.result(timeout=2)
        assert server.methods.count("tasks/get") <= 2 / MIN_POLL_INTERVAL + 1


async def test_tasks_are_listed_and_a_kept_id_is_resumed() -> None:
    async with tasks_session("--polls", "2") as (session, _):
        handle = await started(session)
        assert [t.task_id for t in await session.list_tasks()] == [handle.task_id]
        assert handle.task_id is not None
        again = session.task(handle.task_id)
        assert (await again.result(timeout=30)).text == "done: hi"


async def test_an_unknown_task_id_is_the_servers_error() -> None:
    async with tasks_session() as (session, _):
        with pytest.raises(Exception, match="unknown task"):
            await session.task("nope").result(timeout=5)


def test_task_info_reads_both_spellings_and_refuses_nonsense() -> None:
    legacy = TaskInfo.from_wire({"taskId": "a", "status": "working", "pollInterval": 5})
    modern = TaskInfo.from_wire({"taskId": "a", "status": "working", "pollIntervalMs": 5})
    assert legacy == modern and legacy.poll_interval == MIN_POLL_INTERVAL
    assert TaskInfo("a", "working", poll_interval_ms=10**9).poll_interval == 30.0
    for bad in (
        {"taskId": "x" * 513, "status": "working"},
        {"taskId": "", "status": "working"},
        {"taskId": "a", "status": "sleeping"},
        ["not an object"],
    ):
        with pytest.raises(ProtocolError):
            TaskInfo.from_wire(bad)


@pytest.mark.parametrize("protocol", ERAS)
async def test_may_run_as_task_follows_the_servers_announcement(protocol: str) -> None:
    async with tasks_session(protocol=protocol) as (session, _):
        assert session.may_run_as_task("slow")
        # 2025-11-25 tools say whether they allow tasks; in 2026 the server decides per call.
        assert session.may_run_as_task("quick") == (protocol == "modern")


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_notice_that_a_task_ended_is_checked_by_a_poll(protocol: str) -> None:
    async with tasks_session("--mode", "lie", "--polls", "3", protocol=protocol) as (
        session,
        server,
    ):
        heard = asyncio.Event()
        session.subscribe(lambda notice: heard.set() if "tasks" in notice.method else None)
        handle = await started(session)
        if protocol == "modern":  # the notice comes as soon as the client listens
            await heard.wait()
        assert (await handle.result(timeout=30)).text == "done: hi"
        assert server.methods.count("tasks/get") == 3
