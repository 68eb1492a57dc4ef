"""The retry policy in memory: config, which calls are safe to repeat, backoff with jitter,
and the loop's bounds (attempts, the overall deadline, what counts as retryable). The retry
loop runs on the virtual clock: its pauses are the real ones, and cost no real time."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import ConnectionClosed, RequestTimeout, RpcError, Tool
from paicli.servers.config import load_config
from paicli.servers.retry import (
    Attempt,
    RetryPolicy,
    listening,
    retry_delay,
    retry_safe,
    with_retries,
)
from tests.servers.test_manager import fault, load


def test_retry_and_retry_tools_are_read_from_a_server_entry(tmp_path: Path) -> None:
    retry = {"attempts": 4, "backoff": 0.25, "on": ["crash"], "deadline": 30}
    [entry] = load(tmp_path, {"s": fault(retry=retry, retryTools=["get_*"])})
    assert entry.retry == RetryPolicy(4, 0.25, ("crash",), 30.0)
    assert entry.retry_tools == ("get_*",)
    [plain] = load(tmp_path, {"s": fault()})
    assert (plain.retry, plain.retry_tools) == (None, ())


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ({"attempts": 0}, "retry.attempts must be a whole number from 1 to 10"),
        ({"attempts": 1000}, "retry.attempts must be a whole number from 1 to 10"),
        ({"backoff": -1}, "retry.backoff must be a number of seconds >= 0"),
        ({"backoff": 3600}, "retry.backoff must be at most 60 seconds"),
        ({"on": ["error"]}, 'retry.on must be a list of "timeout" and "crash"'),
        ({"tries": 3}, "retry: unknown key 'tries'"),
        ("always", "'retry' must be an object such as {\"attempts\": 3}"),
    ],
)
def test_a_bad_retry_fails_that_server_in_one_line(
    tmp_path: Path, retry: object, message: str
) -> None:
    [entry] = load(tmp_path, {"s": fault(retry=retry)})
    assert entry.spec is None and entry.error is not None
    assert entry.error.endswith(f"server 's': {message}")


def test_a_projects_server_may_declare_retries_like_any_other(tmp_path: Path) -> None:
    """Its retryTools only repeat calls to its own server; trust stays the user's."""
    project = tmp_path / "repo"
    (project / ".paicli").mkdir(parents=True)
    (project / ".paicli" / "mcp.json").write_text(
        '{"mcpServers": {"s": {"command": "x", "retry": {}, "retryTools": ["read"]}}}'
    )
    entry = load_config(project, environ={"HOME": str(tmp_path)}).servers["s"]
    assert entry.retry == RetryPolicy() and entry.retry_tools == ("read",)
    assert entry.trust is False


def tool(annotations: dict[str, Any] | None) -> Tool:
    return Tool("t", {"type": "object"}, annotations=annotations)


def test_only_read_only_tools_of_trusted_servers_or_listed_tools_are_safe() -> None:
    read_only = tool({"readOnlyHint": True})
    assert retry_safe(read_only, "t", trusted=True, patterns=())
    assert not retry_safe(read_only, "t", trusted=False, patterns=())  # its own claim
    assert not retry_safe(tool({"readOnlyHint": "yes"}), "t", trusted=True, patterns=())
    assert not retry_safe(tool(None), "t", trusted=True, patterns=())
    assert retry_safe(tool(None), "get_file", trusted=False, patterns=("get_*",))
    assert not retry_safe(tool(None), "delete_file", trusted=False, patterns=("get_*",))


def test_backoff_doubles_with_jitter_between_half_and_all_of_it() -> None:
    rng = random.Random(7)
    for number, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0)):
        delays = {retry_delay(number, 0.5, rng) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1


class Script:
    """Attempts that fail as scripted, then succeed."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls: list[float] = []
        self.recovered = 0

    async def attempt(self, left: float) -> str:
        self.calls.append(left)
        if self.failures:
            raise self.failures.pop(0)
        return "ok"

    async def recover(self, left: float) -> None:
        self.recovered += 1


async def run(script: Script, policy: RetryPolicy, seconds: float = 60) -> tuple[str, list[str]]:
    heard: list[Attempt] = []
    deadline = asyncio.get_running_loop().time() + seconds
    with listening(heard.append):
        result = await with_retries(policy, script.attempt, script.recover, deadline=deadline)
    return result, [a.line for a in heard]


async def test_a_crash_recovers_the_server_before_the_next_attempt() -> None:
    script = Script(ConnectionClosed("gone"), RequestTimeout("slow", 1))
    result, lines = await run(script, RetryPolicy(3, 0.0))
    assert result == "ok"
    assert lines == ["retry 2/3 after crash", "retry 3/3 after timeout"]
    assert script.recovered == 1  # after the crash only


async def test_the_last_failure_is_raised_when_attempts_run_out() -> None:
    script = Script(*(RequestTimeout(f"slow {n}", 1) for n in range(3)))
    with pytest.raises(RequestTimeout, match="slow 1 timed out"):
        await run(script, RetryPolicy(2, 0.0))
    assert len(script.calls) == 2


async def test_an_error_reply_or_an_unlisted_reason_is_never_retried() -> None:
    script = Script(RpcError(-32000, "the tool said no"))
    with pytest.raises(RpcError):
        await run(script, RetryPolicy(3, 0.0))
    timeouts = Script(RequestTimeout("slow", 1))
    with pytest.raises(RequestTimeout):
        await run(timeouts, RetryPolicy(3, 0.0, on=("crash",)))
    assert (len(script.calls), len(timeouts.calls)) == (1, 1)


@pytest.mark.virtual_time
async def test_no_backoff_runs_past_the_overall_deadline() -> None:
    """A pause that would end after the deadline is not taken: the call fails now."""
    script = Script(ConnectionClosed("gone"))
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(ConnectionClosed):
        await run(script, RetryPolicy(3, backoff=30.0), seconds=5)
    assert len(script.calls) == 1 and script.recovered == 0
    assert loop.time() == began


@pytest.mark.virtual_time
async def test_each_attempt_waits_out_its_backoff_and_is_told_the_time_left() -> None:
    script = Script(RequestTimeout("slow", 1), ConnectionClosed("gone"))
    heard: list[Attempt] = []
    loop = asyncio.get_running_loop()
    began = loop.time()
    policy = RetryPolicy(3, backoff=1.0)
    with listening(heard.append):
        await with_retries(
            policy, script.attempt, script.recover, deadline=began + 60, rng=random.Random(7)
        )
    same = random.Random(7)
    first, second = retry_delay(1, 1.0, same), retry_delay(2, 1.0, same)
    assert [a.delay for a in heard] == [first, second]
    assert script.calls == pytest.approx([60, 60 - first, 60 - first - second])
    assert loop.time() - began == pytest.approx(first + second)
