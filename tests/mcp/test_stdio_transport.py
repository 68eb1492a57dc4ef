"""The stdio transport with real subprocesses: environment, framing limits, stderr capture,
and the shutdown ladder (process groups, grandchildren, cancellation)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from paicli.mcp import (
    ConnectionClosed,
    MessageTooLarge,
    RequestTimeout,
    StdioServer,
    StdioTransport,
    connect,
)
from paicli.mcp._stderr import STDERR_FILE_MAX
from tests.conftest import fault_server
from tests.processes import alive, in_group, processes_with, server_process, until
from tests.server_programs.fault_server import CHATTY_LINES

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

# What the scripts below put in each JSON object they write, so it is a JSON-RPC message
# (the transport counts an object without "jsonrpc" as a log line, not a message).
NOTE = "'jsonrpc': '2.0', 'method': 'note'"


async def test_server_gets_a_minimal_environment_plus_its_own_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PAICLI_TEST_SECRET", "must-not-leak")
    script = f"import json, os; print(json.dumps({{{NOTE}, **os.environ}}), flush=True)"
    transport = await StdioTransport.start(
        sys.executable, ["-c", script], env={"MY_KEY": "v"}, cwd=tmp_path
    )
    async with asyncio.timeout(10):
        env = await transport.receive()
        await transport.aclose()
    assert env["MY_KEY"] == "v"
    assert "PAICLI_TEST_SECRET" not in env
    assert env["PATH"] == os.environ["PATH"]


async def test_an_inherited_variable_holding_a_shell_function_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `export -f` writes and Shellshock abused: a bash child would run the trailer.
    monkeypatch.setenv("TZ", "() { :; }; touch pwned")
    monkeypatch.setenv("LANG", "C.UTF-8")
    script = f"import json, os; print(json.dumps({{{NOTE}, **os.environ}}), flush=True)"
    transport = await StdioTransport.start(sys.executable, ["-c", script], cwd=tmp_path)
    async with asyncio.timeout(10):
        env = await transport.receive()
        await transport.aclose()
    assert "TZ" not in env
    assert env["LANG"] == "C.UTF-8"


async def test_server_directory_and_process_group_are_reported(tmp_path: Path) -> None:
    script = (
        f"import json, os; print(json.dumps({{{NOTE}, 'cwd': os.getcwd(),"
        " 'pgid': os.getpgid(0)}), flush=True)"
    )
    transport = await StdioTransport.start(sys.executable, ["-c", script], cwd=tmp_path)
    async with asyncio.timeout(10):
        message = await transport.receive()
        await transport.aclose()
    assert message["cwd"] == str(tmp_path)
    assert message["pgid"] == transport.pid
    assert message["pgid"] != os.getpgid(0)


async def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(ConnectionClosed, match="cannot start 'no-such-mcp-server'"):
        async with connect(StdioServer("no-such-mcp-server")):
            pass


async def test_banners_and_garbage_on_stdout_are_skipped() -> None:
    async with asyncio.timeout(20), connect(fault_server("garbage_stdout")) as session:
        assert (await session.call_tool("echo", {"text": "still fine"})).text == "still fine"
        assert len(await session.list_tools()) > 0


@pytest.mark.parametrize(
    ("large", "reason"),
    [("int", "number is infinity when parsed as double"), ("deep", "depth limit exceeded")],
)
async def test_lines_no_parser_accepts_are_skipped_at_every_size_and_the_answer_still_arrives(
    large: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Each reply comes in the same write as a 5000-digit integer and nesting 2000 deep,
    # both small, and one of them over 1 MiB.
    server = fault_server("poison_lines", "--poison", large, request_timeout=5)
    async with asyncio.timeout(30), connect(server) as session:
        caplog.clear()
        # (Only the session's first skipped line is a warning; the rest are debug records.)
        with caplog.at_level(logging.DEBUG, logger="paicli.mcp"):
            assert (await session.call_tool("echo", {"text": "through"})).text == "through"
    skipped = [r.getMessage() for r in caplog.records if "skipping" in r.getMessage()]
    reasons = [message.partition("(")[2].partition(":")[0] for message in skipped]
    assert reasons == ["number is infinity when parsed as double", "depth limit exceeded", reason]


@pytest.mark.parametrize(("protocol", "batches"), [("2025-03-26", True), ("2025-11-25", False)])
async def test_a_batch_is_read_only_in_a_2025_03_26_session(protocol: str, batches: bool) -> None:
    server = fault_server("batch_replies", protocol=protocol, request_timeout=1)
    async with asyncio.timeout(30), connect(server) as session:
        if batches:
            assert (await session.call_tool("echo", {"text": "in a batch"})).text == "in a batch"
        else:
            with pytest.raises(RequestTimeout):
                await session.call_tool("echo", {"text": "in a batch"})


async def test_a_line_over_the_size_limit_ends_the_connection_with_bounded_memory() -> None:
    async with asyncio.timeout(30), connect(fault_server("huge_line")) as session:
        with pytest.raises(MessageTooLarge, match="67108864 byte limit"):
            await session.call_tool("echo", {"text": "x"})


async def test_the_size_limit_is_configurable() -> None:
    server = fault_server("normal", max_message_size=1000)
    async with asyncio.timeout(20), connect(server) as session:
        assert (await session.call_tool("echo", {"text": "short"})).text == "short"
        with pytest.raises(MessageTooLarge, match="1000 byte limit"):
            await session.call_tool("echo", {"text": "y" * 2000})


async def test_a_stream_without_newlines_ends_the_connection() -> None:
    server = fault_server("no_newline", max_message_size=4 * 1024 * 1024)
    async with asyncio.timeout(30), connect(server) as session:
        with pytest.raises(MessageTooLarge):
            await session.call_tool("echo", {"text": "x"})


async def test_stderr_is_kept_in_a_ring_buffer_of_the_last_200_lines(tmp_path: Path) -> None:
    mirror = tmp_path / "logs" / "server.log"
    server = fault_server("stderr_flood", stderr_file=str(mirror))
    async with asyncio.timeout(30), connect(server) as session:
        # 10 MB of stderr before the server reads stdin: it only answers if we drain it.
        assert (await session.call_tool("echo", {"text": "x"})).text == "x"
        await session.call_tool("stderr", {"text": "last words"})
        lines = server_process(session).stderr_lines()
    assert len(lines) == 200
    assert lines[-1] == "last words"
    # The log file rotated at 4 MiB: two files at most, both private, the newest last.
    older = mirror.with_name("server.log.1")
    assert mirror.stat().st_size <= STDERR_FILE_MAX
    # Past the limit by at most one read of the pipe (64 KiB), whose 100-byte lines each
    # gained the 24-byte time in front of them.
    assert STDERR_FILE_MAX < older.stat().st_size <= STDERR_FILE_MAX + 64 * 1024 * 5 // 4
    assert sorted(p.name for p in mirror.parent.iterdir()) == ["server.log", "server.log.1"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in (mirror, older)} == {0o600}
    assert mirror.read_bytes().endswith(b"last words\n")


def unstamped(line: str) -> str:
    """A log line without the time in front of it."""
    stamp = re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ", line)
    assert stamp is not None, line
    return line[stamp.end() :]


async def test_stdout_noise_is_one_warning_then_counted_and_kept_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every reply of this server comes after a banner, a non-JSON line, two JSON scalars
    and an object that is no JSON-RPC, with an escape sequence in one: one warning for the
    session (and no other), then a count; each skipped line is noted in the server's log
    file."""
    mirror = tmp_path / "server.log"
    server = fault_server("garbage_stdout", stderr_file=str(mirror))
    with caplog.at_level(logging.DEBUG, logger="paicli.mcp"):
        async with asyncio.timeout(20), connect(server) as session:
            for _ in range(3):
                assert (await session.call_tool("echo", {"text": "x"})).text == "x"
            skipped = server_process(session).skipped_lines()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "later lines like it are counted, not shown" in warnings[0].getMessage()
    assert skipped >= 5 * 4  # five junk lines before each of at least four replies
    noted = [unstamped(line) for line in mirror.read_text().splitlines()]
    assert sum(1 for line in noted if line.startswith("[paicli] ")) == skipped
    assert "\x1b" not in "".join(noted)  # quoted, never raw


async def test_a_server_logging_to_stdout_is_one_warning_naming_the_file_that_keeps_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that logs to stdout as Node servers do (pino's JSON objects, console.log's
    coloured text): a thousand lines before it reads anything and one before each reply.
    One warning in all, which says where every line is kept; the rest are counted."""
    mirror = tmp_path / "logs" / "chatty.log"
    server = fault_server("chatty_stdout", stderr_file=str(mirror))
    with caplog.at_level(logging.DEBUG, logger="paicli.mcp"):
        async with asyncio.timeout(20), connect(server) as session:
            for _ in range(3):
                assert (await session.call_tool("echo", {"text": "x"})).text == "x"
            skipped = server_process(session).skipped_lines()
    [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert ": stdout: skipping a JSON object that is not JSON-RPC: " in warning
    assert warning.endswith(
        f"(later lines like it are counted, not shown; each is kept in {mirror})"
    )
    assert skipped >= CHATTY_LINES + 4  # and one before each of at least four replies
    lines = [unstamped(line) for line in mirror.read_text().splitlines()]
    noted = [line for line in lines if line.startswith("[paicli] ")]
    assert len(noted) == skipped
    assert sum("request 998 handled" in line for line in noted) == 1
    assert sum("debug line 999" in line for line in noted) == 1
    assert "\x1b" not in "".join(noted)  # quoted, never raw
    assert stat.S_IMODE(mirror.stat().st_mode) == 0o600
    assert stat.S_IMODE(mirror.parent.stat().st_mode) == 0o700


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_shutdown_kills_a_server_that_ignores_sigterm_and_its_grandchild() -> None:
    async with asyncio.timeout(30):
        async with connect(fault_server("ignore_sigterm")) as session:
            pids = json.loads((await session.call_tool("pids")).text)
            assert server_process(session).pid == pids["pid"]
            assert alive(pids["grandchild"])
        assert not alive(pids["pid"])
        assert not alive(pids["grandchild"])


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_shutdown_finishes_even_when_the_caller_is_cancelled() -> None:
    async with asyncio.timeout(30):
        context = connect(fault_server("ignore_sigterm"))
        session = await context.__aenter__()
        pids = json.loads((await session.call_tool("pids")).text)
        closing = asyncio.ensure_future(session.aclose())
        await asyncio.sleep(0)
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        assert not alive(pids["pid"])
        assert not alive(pids["grandchild"])
        await context.__aexit__(None, None, None)


async def test_a_well_behaved_server_exits_on_stdin_close() -> None:
    async with asyncio.timeout(20):
        async with connect(fault_server()) as session:
            pid = server_process(session).pid
            assert pid is not None
        assert not alive(pid)
        assert isinstance(session.transport, StdioTransport)
        assert session.transport.returncode == 0


async def test_large_messages_spanning_many_reads_arrive_whole() -> None:
    # Over the 1 MiB threshold of the memory-lean parser, with a non-ASCII character and a
    # garbage line of the same size before it that must be skipped.
    script = (
        "import json, sys\n"
        "sys.stdout.write('x' * 3_000_000 + '\\n')\n"
        f"sys.stdout.write(json.dumps({{{NOTE}, 'big': 'é' + 'y' * 3_000_000}},"
        " ensure_ascii=False) + '\\n')\n"
        f"sys.stdout.write(json.dumps({{{NOTE}, 'small': 1}}) + '\\n')\n"
        "sys.stdout.flush()\n"
    )
    transport = await StdioTransport.start(sys.executable, ["-c", script])
    async with asyncio.timeout(20):
        first = await transport.receive()
        second = await transport.receive()
        await transport.aclose()
    assert first["big"] == "é" + "y" * 3_000_000
    assert second == {"jsonrpc": "2.0", "method": "note", "small": 1}


# -- never hang, never orphan --------------------------------------------------------------


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_a_server_that_stops_reading_fails_a_large_call_at_its_deadline_and_is_stopped() -> (
    None
):
    async with asyncio.timeout(20), connect(fault_server("stop_reading")) as session:
        pid = server_process(session).pid
        assert pid is not None
        # 4 MiB is far more than the pipe and our write buffer hold: the write cannot finish.
        with pytest.raises(RequestTimeout, match=r"after 0\.5s"):
            await session.call_tool("echo", {"text": "x" * (4 * 1024 * 1024)}, timeout=0.5)
        reason = await session.wait_closed()
        assert "stopped reading its input" in str(reason)
        await until(lambda: not in_group(pid))


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_a_caller_cancelled_while_the_server_is_not_reading_is_not_stuck() -> None:
    async with asyncio.timeout(20), connect(fault_server("stop_reading")) as session:
        pid = server_process(session).pid
        assert pid is not None
        call = asyncio.ensure_future(
            session.call_tool("echo", {"text": "x" * (4 * 1024 * 1024)}, timeout=None)
        )
        for _ in range(5):
            await asyncio.sleep(0)  # the call starts and fills the pipe
        assert not call.done()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: not in_group(pid))


async def test_a_server_that_closes_its_stdout_is_stopped_while_the_session_is_held() -> None:
    async with asyncio.timeout(20), connect(fault_server("close_stdout")) as session:
        pid = server_process(session).pid
        assert pid is not None
        with pytest.raises(ConnectionClosed):
            await session.call_tool("echo", {"text": "x"})
        await until(lambda: not in_group(pid))


async def test_a_last_answer_without_its_newline_is_still_delivered() -> None:
    async with asyncio.timeout(20), connect(fault_server("no_final_newline")) as session:
        result = await session.call_tool("echo", {"text": "x"})
        assert result.text == "last words"


@pytest.mark.parametrize("turns", range(12))
async def test_connect_cancelled_in_its_first_moments_leaves_no_process(turns: int) -> None:
    marker = f"paicli-leak-probe-{turns}-{os.getpid()}"
    server = fault_server("normal", "--initial-stderr", marker)
    entered = asyncio.Event()

    async def hold() -> None:
        async with connect(server):
            entered.set()
            await asyncio.Event().wait()

    async with asyncio.timeout(20):
        task = asyncio.ensure_future(hold())
        for _ in range(turns):
            await asyncio.sleep(0)  # let connect() get this many event-loop turns in
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: not processes_with(marker))
