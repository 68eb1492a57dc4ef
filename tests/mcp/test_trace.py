"""Message tracing through the public seam: `instrument(TraceRecorder(...))` records every
message of every session, with what the transport saw besides (stderr, HTTP responses)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from paicli import mcp
from tests.conftest import fault_server
from tests.http_servers import run_http_server
from tests.memory_servers import fault_in_memory

TIMEOUT = 20


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def messages(rows: list[dict[str, Any]], direction: str) -> list[dict[str, Any]]:
    return [r["msg"] for r in rows if r["dir"] == direction]


async def test_every_message_is_recorded_both_ways_with_era_and_size(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="fault") as session:
                assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
    recorder.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    rows = records(path)
    sent = messages(rows, "out")
    assert [m.get("method") for m in sent] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert sent[-1]["params"] == {"name": "echo", "arguments": {"text": "hi"}}
    received = messages(rows, "in")
    assert received[-1]["result"]["content"][0]["text"] == "hi"
    assert {(r["server"], r["conn"]) for r in rows} == {("fault", rows[0]["conn"])}
    assert rows[0]["conn"].endswith(".1")
    call = next(r for r in rows if r["dir"] == "out" and r["msg"].get("method") == "tools/call")
    assert call["era"] == "legacy"
    assert call["size"] == len(json.dumps(call["msg"], separators=(",", ":")))
    assert [r["event"] for r in rows if r["dir"] == "event"] == ["open", "negotiated", "closed"]


async def test_a_removed_instrument_wraps_no_new_session(tmp_path: Path) -> None:
    recorder = mcp.TraceRecorder(tmp_path / "trace.jsonl")
    mcp.instrument(recorder).remove()
    async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
        async with mcp.ClientSession(transport, name="fault") as session:
            assert not isinstance(session.transport, mcp.TransportWrapper)
    recorder.close()
    assert (tmp_path / "trace.jsonl").read_text() == ""


async def test_a_session_given_its_instruments_uses_those_and_not_the_default(
    tmp_path: Path,
) -> None:
    mine, default = mcp.TraceRecorder(tmp_path / "mine.jsonl"), mcp.TraceRecorder(tmp_path / "d")
    with mcp.instrument(default):
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="fault", instruments=[mine]):
                pass
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="bare", instruments=()) as session:
                assert not isinstance(session.transport, mcp.TransportWrapper)
    mine.close()
    default.close()
    assert {row["server"] for row in records(tmp_path / "mine.jsonl")} == {"fault"}
    assert (tmp_path / "d").read_text() == ""


async def test_a_recorder_limited_to_some_servers_leaves_the_others_alone(tmp_path: Path) -> None:
    recorder = mcp.TraceRecorder(tmp_path / "trace.jsonl", servers=["other"])
    async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
        assert recorder(transport, "fault") is transport
    recorder.close()


async def test_redaction_sees_every_message_and_text_before_it_is_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "trace.jsonl"

    def redact(value: Any) -> Any:
        text = json.dumps(value)
        return json.loads(text.replace("s3cret-value", "[REDACTED]"))

    recorder = mcp.TraceRecorder(path, redact=redact)
    with mcp.instrument(recorder):
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="fault") as session:
                await session.call_tool("echo", {"text": "the s3cret-value"})
    recorder.close()
    text = path.read_text()
    assert "s3cret-value" not in text
    assert text.count("the [REDACTED]") == 2  # the call and its result


async def test_a_timed_out_call_shows_as_its_cancellation(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="fault") as session:
                with pytest.raises(mcp.RequestTimeout):
                    await session.call_tool("sleep", {"seconds": 30}, timeout=0.1)
    recorder.close()
    cancelled = [m for m in messages(records(path), "out") if "cancelled" in m.get("method", "")]
    assert cancelled[0]["params"]["reason"] == "timeout"


@pytest.mark.real
async def test_stderr_lines_and_a_crash_are_recorded_from_a_real_server(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        async with asyncio.timeout(TIMEOUT):
            async with mcp.connect(fault_server(name="fault")) as session:
                await session.call_tool("stderr", {"text": "\x1b[31mwarming up"})
                with pytest.raises(mcp.ConnectionClosed):
                    await session.call_tool("exit", {"code": 3})
    recorder.close()
    rows = records(path)
    assert "\x1b[31mwarming up" in [r["text"] for r in rows if r["dir"] == "stderr"]
    closed = [r for r in rows if r["dir"] == "event" and r["event"] == "closed"]
    assert closed[0]["exit_code"] == 3
    opened = next(r for r in rows if r["dir"] == "event" and r["event"] == "open")
    assert isinstance(opened["pid"], int)


@pytest.mark.real
async def test_http_responses_are_recorded_with_their_status_and_a_hashed_session(
    tmp_path: Path,
) -> None:
    path = tmp_path / "trace.jsonl"
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        async with (
            asyncio.timeout(TIMEOUT),
            run_http_server("http_fault_server.py") as url,
            mcp.connect(mcp.HttpServer(url, name="web")) as session,
        ):
            assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
            session_id = session.transport.inner.session_id  # type: ignore[attr-defined]
    recorder.close()
    http = [r for r in records(path) if r["dir"] == "http"]
    posts = [r for r in http if r["method"] == "POST"]
    # The 2026 probe is refused by this legacy server; the handshake and the call are not.
    assert [r["status"] for r in posts][1:] == [200, 202, 200]
    assert any("content-type" in r["headers"] for r in posts)
    assert session_id
    hashed = {r["headers"].get("mcp-session-id") for r in http} - {None}
    assert hashed == {mcp._trace.hashed(session_id)}
    assert session_id not in path.read_text()


def test_a_trace_written_to_an_existing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("")
    os.chmod(path, 0o644)
    mcp.TraceRecorder(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
