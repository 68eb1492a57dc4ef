"""Every tool call leaves one redacted JSON line in the day's audit file, whatever happened."""

from __future__ import annotations

import asyncio
import json
import logging
import stat
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from paicli.audit import log as audit
from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.permissions import approval
from paicli.permissions.approval import Answer, ApprovingToolbox, Choice, PermissionStore, Policy
from paicli.redact import Redactor
from paicli.tools.base import ToolOutcome, ToolSpec

WRITE = ToolSpec("write_file", "Write a file", {"type": "object"}, "write")
READ = ToolSpec("read_file", "Read a file", {"type": "object"}, "read")
FETCH = ToolSpec("mcp__web__fetch", "Fetch", {"type": "object"}, "mcp", server="web", tool="fetch")
ZONE = timezone(timedelta(hours=2))
SECRET = "s3cr3t-known-value-42"


class FixedClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class ScriptedToolbox:
    """A real toolbox whose calls fail, succeed, refuse or block as the test says."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.block = False

    def specs(self) -> list[ToolSpec]:
        return [WRITE, READ, FETCH]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        if arguments.get("path") == "/etc/passwd":
            return ToolOutcome(
                "Refused: outside the project",
                is_error=True,
                decision="refused",
                decided_by="refusal",
            )
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        self.started.set()
        if self.block:
            await asyncio.Event().wait()
        if arguments.get("path") == "missing":
            return ToolOutcome("No such file: missing\nmore detail", is_error=True)
        return ToolOutcome(f"ran {spec.name}")


def audited(
    tmp_path: Path, inner: ScriptedToolbox, clock: FixedClock | None = None
) -> tuple[AuditingToolbox, AuditLog]:
    log = AuditLog(
        tmp_path / "audit",
        Redactor([SECRET]),
        clock=clock or FixedClock(datetime(2025, 3, 14, 9, 30, tzinfo=ZONE)),
    )
    approving = ApprovingToolbox(
        inner, policy=Policy(), store=PermissionStore(tmp_path / "permissions.json"), approver=None
    )
    return AuditingToolbox(approving, log, session_id="sess-1"), log


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_an_allowed_call_is_one_json_line_with_every_field(tmp_path: Path) -> None:
    tools, _ = audited(tmp_path, ScriptedToolbox())
    await tools.call(READ, {"path": "a.txt"})
    [record] = lines(tmp_path / "audit" / "2025-03-14.jsonl")
    duration = record.pop("duration_ms")
    assert isinstance(duration, int) and duration >= 0
    assert record == {
        "time": "2025-03-14T09:30:00.000+02:00",
        "session": "sess-1",
        "tool": "read_file",
        "server": None,
        "arguments": {"path": "a.txt"},
        "decision": "allowed",
        "decided_by": "policy",
        "outcome": "ok",
        "error": None,
    }


async def test_denied_refused_and_failed_calls_are_recorded(tmp_path: Path) -> None:
    tools, _ = audited(tmp_path, ScriptedToolbox())
    await tools.call(FETCH, {"url": "https://example.com"})
    await tools.call(READ, {"path": "/etc/passwd"})
    await tools.call(READ, {"path": "missing"})
    records = lines(tmp_path / "audit" / "2025-03-14.jsonl")
    summary = [
        (r["tool"], r["server"], r["decision"], r["decided_by"], r["outcome"]) for r in records
    ]
    assert summary == [
        ("mcp__web__fetch", "web", "denied", "flag", "denied"),
        ("read_file", None, "refused", "refusal", "refused"),
        ("read_file", None, "allowed", "policy", "error"),
    ]
    assert str(records[0]["error"]).startswith("The tool mcp__web__fetch was not run")
    assert records[2]["error"] == "No such file: missing"


async def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    tools, _ = audited(tmp_path, ScriptedToolbox())
    await tools.call(
        READ,
        {
            "path": f"notes-{SECRET}.txt",
            "headers": {"Authorization": "Bearer abcdefgh12345678"},
            "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
            "note": "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
        },
    )
    data = (tmp_path / "audit" / "2025-03-14.jsonl").read_bytes()
    for secret in (SECRET, "abcdefgh12345678", "ghp_abcdef", "sk-ant-api03"):
        assert secret.encode() not in data
    [record] = lines(tmp_path / "audit" / "2025-03-14.jsonl")
    assert record["arguments"] == {
        "path": "notes-[REDACTED].txt",
        "headers": {"Authorization": "[REDACTED]"},
        "env": {"GITHUB_TOKEN": "[REDACTED]"},
        "note": "key [REDACTED]",
    }


async def test_a_cancelled_call_is_recorded_and_the_cancellation_goes_on(tmp_path: Path) -> None:
    inner = ScriptedToolbox()
    inner.block = True
    tools, log = audited(tmp_path, inner)
    async with asyncio.timeout(5):
        task = asyncio.create_task(tools.call(READ, {"path": "big"}))
        await inner.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    [record] = log.tail(5)
    assert (record["outcome"], record["decision"], record["decided_by"], record["tool"]) == (
        "cancelled",
        "allowed",
        "policy",
        "read_file",
    )


async def test_a_call_cancelled_while_the_user_is_asked_has_no_decision(tmp_path: Path) -> None:
    asked = asyncio.Event()

    async def never_answers(request: approval.ApprovalRequest) -> Answer:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    log = AuditLog(tmp_path / "audit", Redactor([]))
    approving = ApprovingToolbox(
        ScriptedToolbox(),
        policy=Policy(),
        store=PermissionStore(tmp_path / "permissions.json"),
        approver=never_answers,
    )
    tools = AuditingToolbox(approving, log, session_id="s")
    async with asyncio.timeout(5):
        task = asyncio.create_task(tools.call(WRITE, {"path": "a"}))
        await asked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    [record] = log.tail(5)
    assert (record["outcome"], record["decision"], record["decided_by"]) == (
        "cancelled",
        None,
        None,
    )


async def test_each_local_day_has_its_own_file(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2025, 3, 14, 23, 59, tzinfo=ZONE))
    tools, _ = audited(tmp_path, ScriptedToolbox(), clock)
    await tools.call(READ, {"path": "a"})
    clock.now = datetime(2025, 3, 15, 0, 1, tzinfo=ZONE)
    await tools.call(READ, {"path": "b"})
    assert sorted(p.name for p in (tmp_path / "audit").iterdir()) == [
        "2025-03-14.jsonl",
        "2025-03-15.jsonl",
    ]


def test_two_loggers_append_to_the_same_file_without_losing_lines(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2025, 3, 14, 12, 0, tzinfo=ZONE))
    first = AuditLog(tmp_path / "audit", Redactor(), clock=clock)
    second = AuditLog(tmp_path / "audit", Redactor(), clock=clock)
    first.write({"n": 1})
    before = (tmp_path / "audit" / "2025-03-14.jsonl").read_bytes()
    second.write({"n": 2})
    first.write({"n": 3})
    after = (tmp_path / "audit" / "2025-03-14.jsonl").read_bytes()
    assert after.startswith(before)
    assert lines(tmp_path / "audit" / "2025-03-14.jsonl") == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_the_log_is_private_to_the_user(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "home" / "audit", Redactor())
    log.write({"n": 1})
    [path] = (tmp_path / "home" / "audit").iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_tail_reads_the_newest_records_across_days_oldest_first(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2025, 3, 13, 12, 0, tzinfo=ZONE))
    log = AuditLog(tmp_path / "audit", Redactor(), clock=clock)
    for n in range(3):
        log.write({"n": n})
    clock.now = datetime(2025, 3, 14, 12, 0, tzinfo=ZONE)
    for n in range(3, 5):
        log.write({"n": n})
    with (tmp_path / "audit" / "2025-03-14.jsonl").open("a") as file:
        file.write('{"n": 99, "cut sho')  # a line a crash left behind
    (tmp_path / "audit" / "notes.txt").write_text("not a day file")
    assert log.tail(3) == [{"n": 2}, {"n": 3}, {"n": 4}]
    assert log.tail(100) == [{"n": n} for n in range(5)]
    assert log.tail(0) == []


def test_tail_of_a_log_never_written_is_empty(tmp_path: Path) -> None:
    assert AuditLog(tmp_path / "audit", Redactor()).tail(10) == []


def test_a_write_failure_never_raises_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "audit").write_text("a file where the folder should be")
    log = AuditLog(tmp_path / "audit", Redactor())
    with caplog.at_level(logging.WARNING, logger="paicli.audit.log"):
        log.write({"n": 1})
        log.write({"n": 2})
    assert log.failures == 2
    assert len(caplog.records) == 1
    assert "cannot write the audit log" in caplog.records[0].getMessage()


class ManualMonotonic:
    """Stands in for the `time` module of the approval and audit wrappers: their monotonic
    clock moves only when the test says, so durations are exact (the event loop keeps the
    real clock)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_time_spent_asking_is_kept_apart_from_the_run_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualMonotonic()
    monkeypatch.setattr(approval, "time", clock)
    monkeypatch.setattr(audit, "time", clock)

    class SlowApprover:
        async def __call__(self, request: object) -> Answer:
            clock.now += 300  # the user thinks for five minutes
            return Answer(Choice.ALLOW_ONCE)

    class SlowToolbox(ScriptedToolbox):
        async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
            clock.now += 0.042  # the tool runs for 42 ms
            return await super().call(spec, arguments)

    log = AuditLog(tmp_path / "audit", Redactor())
    toolbox = AuditingToolbox(
        ApprovingToolbox(
            SlowToolbox(),
            policy=Policy(),
            store=PermissionStore(tmp_path / "permissions.json"),
            approver=SlowApprover(),
        ),
        log,
        session_id="s",
    )
    await toolbox.call(WRITE, {"path": "a.txt"})
    (record,) = log.tail(1)
    assert (record["waited_ms"], record["duration_ms"]) == (300_000, 42)


async def test_a_lone_surrogate_in_the_arguments_does_not_cost_the_record(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit", Redactor())
    toolbox = AuditingToolbox(ScriptedToolbox(), log, session_id="s")
    await toolbox.call(READ, json.loads('{"path": "a\\udcff"}'))
    (record,) = log.tail(1)
    assert record["tool"] == "read_file"
    assert log.failures == 0
