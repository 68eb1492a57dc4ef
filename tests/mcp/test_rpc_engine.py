"""The JSON-RPC engine against our fault server (in memory; in a process where the exit code
and stderr are the point): ids, deadlines, cancellation, progress,
server-to-client requests, notifications, and failing pending calls when the server dies."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from typing import Any

import pytest

from paicli.mcp import (
    ClientHandlers,
    ClientSession,
    ConnectionClosed,
    Notification,
    Progress,
    RequestTimeout,
    Root,
    RpcError,
    connect,
)
from paicli.mcp._rpc import RpcEngine
from paicli.mcp._transport import Transport
from tests.conftest import fault_server
from tests.memory_servers import memory_fault_session
from tests.scripted_server import INITIALIZE_RESULT, Json, Script, result, scripted_session


async def cancelled_ids(session: ClientSession) -> list[int]:
    result = await session.call_tool("cancelled_ids")
    ids = json.loads(result.text)
    assert isinstance(ids, list)
    return ids


async def test_many_concurrent_calls_each_get_their_own_answer() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        results = await asyncio.gather(
            *(session.call_tool("echo", {"text": f"msg {i}"}) for i in range(200))
        )
        assert [r.text for r in results] == [f"msg {i}" for i in range(200)]


async def test_responses_with_unknown_ids_are_dropped_not_delivered() -> None:
    async with asyncio.timeout(20), memory_fault_session("wrong_ids") as session:
        results = await asyncio.gather(
            *(session.call_tool("echo", {"text": str(i)}) for i in range(20))
        )
        assert [r.text for r in results] == [str(i) for i in range(20)]


async def test_deadline_fails_the_call_and_tells_the_server_to_cancel() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        with pytest.raises(RequestTimeout, match=r"tools/call timed out after 0.2s"):
            await session.call_tool("sleep", {"seconds": 30}, timeout=0.2)
        ids = await cancelled_ids(session)
        assert len(ids) == 1
        # The connection is still usable afterwards.
        assert (await session.call_tool("echo", {"text": "after"})).text == "after"


async def test_caller_cancellation_tells_the_server_to_cancel() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        call = asyncio.ensure_future(session.call_tool("sleep", {"seconds": 30}))
        await asyncio.sleep(0)  # let the request go out
        while not session._connection.engine._pending:  # noqa: ASYNC110 - event loop turns only
            await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert len(await cancelled_ids(session)) == 1


async def test_server_default_request_timeout_applies_when_none_given() -> None:
    async with asyncio.timeout(20), memory_fault_session(request_timeout=0.3) as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("sleep", {"seconds": 30})


async def test_progress_reaches_the_per_call_callback() -> None:
    updates: list[Progress] = []
    async with asyncio.timeout(20), memory_fault_session() as session:
        result = await session.call_tool(
            "progress", {"steps": 3, "interval": 0.01}, on_progress=updates.append
        )
    assert result.text == "done"
    assert [(u.progress, u.total, u.message) for u in updates] == [
        (1.0, 3.0, "step 1"),
        (2.0, 3.0, "step 2"),
        (3.0, 3.0, "step 3"),
    ]


async def test_progress_extends_the_deadline_when_asked() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        # 8 steps of 0.1 s take 0.8 s, well past the 0.3 s deadline, but each step resets it.
        result = await session.call_tool(
            "progress",
            {"steps": 8, "interval": 0.1},
            timeout=0.3,
            on_progress=lambda p: None,
            progress_extends_deadline=True,
            max_timeout=10,
        )
        assert result.text == "done"


async def test_progress_never_extends_past_the_hard_maximum_and_the_error_names_it() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        with pytest.raises(RequestTimeout) as caught:
            await session.call_tool(
                "progress",
                {"steps": 50, "interval": 0.1},
                timeout=0.3,
                on_progress=lambda p: None,
                progress_extends_deadline=True,
                max_timeout=0.6,
            )
    error = caught.value
    assert (error.limit, error.seconds) == ("maximum", 0.3)
    assert error.maximum == pytest.approx(0.6)
    assert error.elapsed >= 0.6
    # Not "timed out after 0.3s" when it ran twice that: the limit hit is the maximum.
    assert f"timed out after {error.elapsed:.1f}s: progress kept it going, up to its " in str(error)
    assert str(error).endswith("maximum of 0.6s")


async def test_a_call_whose_progress_stops_names_the_silence_it_timed_out_on() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        with pytest.raises(RequestTimeout) as caught:
            # Three steps 0.1 s apart, then the tool sleeps far past the 0.3 s timeout.
            await session.call_tool(
                "progress",
                {"steps": 3, "interval": 0.1, "then_sleep": 30},
                timeout=0.3,
                on_progress=lambda p: None,
                progress_extends_deadline=True,
                max_timeout=10,
            )
    error = caught.value
    assert (error.limit, error.maximum) == ("timeout", None)
    assert error.elapsed > 0.5
    assert str(error).endswith("no answer or progress for 0.3s")
    assert f"timed out after {error.elapsed:.1f}s" in str(error)


async def test_server_ping_is_always_answered() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        answer = json.loads((await session.call_tool("ask_ping")).text)
        assert answer == {"jsonrpc": "2.0", "id": answer["id"], "result": {}}


async def test_server_requests_reach_the_handlers() -> None:
    async def sampling(params: dict[str, object]) -> dict[str, object]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    async def elicitation(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"name": "Ada"}}

    handlers = ClientHandlers(
        roots=[Root("file:///work", "work")], sampling=sampling, elicitation=elicitation
    )
    async with asyncio.timeout(20), memory_fault_session(handlers=handlers) as session:
        roots = json.loads((await session.call_tool("ask_roots")).text)
        sample = json.loads((await session.call_tool("ask_sampling")).text)
        elicit = json.loads((await session.call_tool("ask_elicitation")).text)
    assert roots["result"] == {"roots": [{"uri": "file:///work", "name": "work"}]}
    assert sample["result"]["content"]["text"] == "sampled"
    assert elicit["result"] == {"action": "accept", "content": {"name": "Ada"}}


async def test_server_requests_without_a_handler_get_method_not_found() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        for tool in ("ask_roots", "ask_sampling", "ask_elicitation"):
            answer = json.loads((await session.call_tool(tool)).text)
            assert answer["error"]["code"] == -32601, tool


async def test_a_failing_handler_sends_an_internal_error_and_the_session_survives() -> None:
    async def broken(params: dict[str, object]) -> dict[str, object]:
        raise RuntimeError("handler bug")

    handlers = ClientHandlers(sampling=broken)
    async with asyncio.timeout(20), memory_fault_session(handlers=handlers) as session:
        answer = json.loads((await session.call_tool("ask_sampling")).text)
        assert answer["error"]["code"] == -32603
        assert "handler bug" in answer["error"]["message"]
        assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_notifications_reach_subscribers_and_unknown_ones_are_ignored() -> None:
    seen: list[Notification] = []
    async with asyncio.timeout(20), memory_fault_session() as session:
        session.subscribe(seen.append)
        assert (await session.call_tool("notify")).text == "ok"
    methods = [n.method for n in seen]
    assert "notifications/tools/list_changed" in methods
    assert Notification("notifications/resources/updated", {"uri": "test://r"}) in seen
    assert (
        Notification("notifications/message", {"level": "info", "logger": "t", "data": "hello"})
        in seen
    )


async def test_a_notification_flood_does_not_break_the_call() -> None:
    count = 0

    def on_notification(n: Notification) -> None:
        nonlocal count
        count += n.method == "notifications/message"

    async with asyncio.timeout(30), memory_fault_session("flood_notifications") as session:
        session.subscribe(on_notification)
        assert (await session.call_tool("echo", {"text": "x"})).text == "x"
    assert count == 10_000


async def test_server_crash_fails_every_pending_call_and_later_ones() -> None:
    async with asyncio.timeout(20), memory_fault_session("crash_mid_call") as session:
        calls = [session.call_tool("echo", {"text": str(i)}) for i in range(5)]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(result, ConnectionClosed) for result in results), results
        with pytest.raises(ConnectionClosed):
            await session.call_tool("echo", {"text": "late"})


@pytest.mark.real
async def test_a_crashed_process_fails_pending_calls_with_exit_code_and_stderr() -> None:
    async with asyncio.timeout(20), connect(fault_server("crash_mid_call")) as session:
        calls = [session.call_tool("echo", {"text": str(i)}) for i in range(5)]
        results = await asyncio.gather(*calls, return_exceptions=True)
        for result in results:
            assert isinstance(result, ConnectionClosed)
            assert result.exit_code == 3
            assert "fatal: boom" in result.stderr_tail
            assert "exit code 3" in str(result)
        # Later calls fail at once with the same reason.
        with pytest.raises(ConnectionClosed, match="exit code 3"):
            await session.call_tool("echo", {"text": "late"})


async def test_tool_errors_are_results_and_protocol_errors_are_rpc_errors() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        with pytest.raises(RpcError) as info:
            await session.call_tool("no_such_tool")
        assert info.value.code == -32602


# -- envelopes: only a valid JSON-RPC 2.0 response with the request's own id answers it ----


def forged_then_real(forged: Json) -> Script:
    """Answers every tools/call with `forged` (given the call's id unless it names one),
    then with the real answer."""

    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "tools/call":
            return None
        return [{"id": message["id"], **forged}, result(message, text_result("real"))]

    return script


def text_result(text: str) -> Json:
    return {"content": [{"type": "text", "text": text}]}


FORGED = text_result("forged")
INVALID_ANSWERS = {
    "jsonrpc 1.0": ({"jsonrpc": "1.0", "result": FORGED}, '"jsonrpc" is \'1.0\', not "2.0"'),
    "no jsonrpc": ({"result": FORGED}, 'no "jsonrpc": "2.0"'),
    "result and error": (
        {"jsonrpc": "2.0", "result": FORGED, "error": {"code": 1, "message": "x"}},
        "a response with both a result and an error",
    ),
    "float id": ({"jsonrpc": "2.0", "id": 2.0, "result": FORGED}, "response id 2.0 is neither"),
}


@pytest.mark.parametrize(("forged", "problem"), INVALID_ANSWERS.values(), ids=INVALID_ANSWERS)
async def test_an_invalid_envelope_never_answers_a_call(
    forged: Json, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with asyncio.timeout(20), scripted_session(forged_then_real(forged)) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
            assert (await session.call_tool("t")).text == "real"
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"scripted: dropping an invalid JSON-RPC message ({problem}")


async def test_a_call_answered_only_by_an_invalid_envelope_times_out() -> None:
    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "tools/call":
            return None
        return [{"jsonrpc": "1.0", "id": message["id"], "result": FORGED}]

    async with asyncio.timeout(20), scripted_session(script, request_timeout=0.3) as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("t")


async def test_an_id_of_true_is_not_the_id_1(caplog: pytest.LogCaptureFixture) -> None:
    # Pinned, so `initialize` is request 1; Python has True == 1 and hash(True) == hash(1).
    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "initialize":
            return None
        forged = {**INITIALIZE_RESULT, "protocolVersion": "1999-01-01"}
        return [
            {"jsonrpc": "2.0", "id": True, "result": forged},
            result(message, INITIALIZE_RESULT),
        ]

    with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
        async with asyncio.timeout(20), scripted_session(script) as session:
            assert session.protocol_version == "2025-11-25"
    [warning] = [r.getMessage() for r in caplog.records]
    assert "response id True is neither a string nor an integer" in warning


async def test_a_message_that_is_not_an_object_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The in-memory pair does not split arrays; a batch reaching the engine is dropped.
    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "tools/call":
            return None
        return [[result(message, FORGED)], result(message, text_result("real"))]

    async with asyncio.timeout(20), scripted_session(script) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
            assert (await session.call_tool("t")).text == "real"
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("scripted: dropping a message that is not a JSON object")


class _DyingWhileSending(Transport):
    """A server that dies while a request is being written: the write fails only after the
    receive loop has seen the end (and failed every pending request)."""

    def __init__(self) -> None:
        self.ended = asyncio.Event()
        self.failed_all = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        self.ended.set()
        await self.failed_all.wait()
        raise ConnectionClosed("server stdin is closed")

    async def receive(self) -> dict[str, Any]:
        await self.ended.wait()
        raise ConnectionClosed("server exited; last stderr: the-config-secret")

    async def aclose(self) -> None:
        pass


async def test_a_request_whose_send_fails_after_the_end_leaves_no_unretrieved_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The failed send is what the caller sees; the end's error, set on the same request
    meanwhile, must not surface later as "Future exception was never retrieved" (a line
    that reaches the screen after the run's redactor is gone)."""
    transport = _DyingWhileSending()
    engine = RpcEngine(transport, on_request=_no_requests, on_notification=_no_notifications)
    runner = asyncio.ensure_future(engine.run())

    async def call() -> str:
        try:
            await engine.request("tools/list", None, timeout=None)
        except ConnectionClosed as exc:
            return str(exc)  # nothing of the failure outlives the call (no traceback kept)
        return "answered"

    async with asyncio.timeout(10):
        calling = asyncio.ensure_future(call())
        while engine.closed is None:  # noqa: ASYNC110 - event loop turns only: the end seen
            await asyncio.sleep(0)
        transport.failed_all.set()
        assert await calling == "server stdin is closed"
        await runner
    del calling, runner
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
        await asyncio.sleep(0)  # the loop's handler reports from a callback
    assert "never retrieved" not in caplog.text


async def _no_requests(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    raise AssertionError(method)


def _no_notifications(method: str, params: dict[str, Any] | None) -> None:
    raise AssertionError(method)
