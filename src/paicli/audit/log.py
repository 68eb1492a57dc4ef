"""The audit log: one JSON line per tool call, allowed or not, in `$PAICLI_HOME/audit/`.

One append-only file per local day (`YYYY-MM-DD.jsonl`, mode 0600, folder 0700). Every record
is redacted before it is serialised. Writing never raises into the agent: a failure is logged
once and counted. `AuditingToolbox` is the outermost wrapper, so denials and refusals by the
wrappers inside it are recorded too. A tool a server redefined since it was pinned is a record
of its own (`"event": "tool_changed"`), written where the answer about it is given; a call
asked about again because its tool changed since an answer carries `changed` and `diff`; a
call a sub-agent made carries `agent`, its name. Each run opens with `"event":
"session_start"` and ends with `"event": "session_end"`, whatever ends it (`session`: its
`reason`, "exit", "interrupted" or "error", and the signal, when one did).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from paicli.private_files import make_private_dir
from paicli.redact import Redactor
from paicli.servers.retry import Attempt, listening
from paicli.servers.tool_pins import ToolChange
from paicli.tools.base import (
    SUBAGENT,
    VERDICT,
    DecidedBy,
    Toolbox,
    ToolboxWrapper,
    ToolOutcome,
    ToolSpec,
    Verdict,
)
from paicli.tools.mcp.naming import model_tool_name

__all__ = ["AuditLog", "AuditingToolbox", "CallOutcome", "EndReason"]

_log = logging.getLogger(__name__)

_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.jsonl$")
# The error field is a pointer into the transcript, not a copy of it.
_ERROR_LIMIT = 500

CallOutcome = Literal["ok", "error", "denied", "refused", "cancelled"]
EndReason = Literal["exit", "interrupted", "error"]


def _local_now() -> datetime:
    return datetime.now().astimezone()


class AuditLog:
    """Appends redacted records to today's file in `directory`; reads the latest back."""

    def __init__(
        self,
        directory: Path,
        redactor: Redactor,
        *,
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        self.directory = directory
        self.redactor = redactor
        self.clock = clock  # aware local time; a test seam for the per-day file name
        self.failures = 0

    def write(self, record: Mapping[str, object]) -> None:
        """Append one redacted record to today's file; never raises."""
        try:
            line = json.dumps(self.redactor.redact(record), ensure_ascii=False, default=str)
            # backslashreplace: a lone surrogate from the model's JSON must not cost the
            # record (the call it describes may have run).
            data = (line + "\n").encode("utf-8", "backslashreplace")
            self._append(self.clock().date().isoformat(), data)
        except (OSError, ValueError, TypeError) as exc:
            self.failures += 1
            if self.failures == 1:
                _log.warning("cannot write the audit log in %s: %s", self.directory, exc)

    def tool_changed(
        self, change: ToolChange, *, session: str, accepted: bool, decided_by: DecidedBy
    ) -> None:
        """Record a tool its server redefined since it was pinned, and the answer: the server,
        the tool, what changed (the summary and the diff the user is shown), accepted (pinned
        and offered) or held back."""
        self.write(
            {
                "time": self.clock().isoformat(timespec="milliseconds"),
                "session": session,
                "event": "tool_changed",
                "tool": model_tool_name(change.server, change.tool.name),
                "server": change.server,
                **_what_changed(change.lines()),
                "decision": "allowed" if accepted else "denied",
                "decided_by": decided_by,
                "outcome": "accepted" if accepted else "held_back",
            }
        )

    @contextlib.contextmanager
    def session(self, session: str, said: Callable[[], EndReason | None]) -> Iterator[None]:
        """The run in the block, between its start and end records. The end says why it
        ended: what `said()` returns (the REPL's word for a Ctrl+C twice), else "exit", or
        "interrupted" by a cancellation (Ctrl+C, SIGTERM, SIGHUP: the signal's name, when
        the cancellation carries it), or "error"."""
        started = self.clock()
        self.write(
            {
                "time": started.isoformat(timespec="milliseconds"),
                "session": session,
                "event": "session_start",
                "pid": os.getpid(),
            }
        )
        reason: EndReason = "exit"
        signal: str | None = None
        try:
            yield
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            reason = "interrupted"
            named = exc.args[0] if exc.args else None
            signal = named if isinstance(named, str) and named.startswith("SIG") else None
            raise
        except BaseException:
            reason = "error"
            raise
        finally:
            ended = self.clock()
            record: dict[str, object] = {
                "time": ended.isoformat(timespec="milliseconds"),
                "session": session,
                "event": "session_end",
                "reason": said() or reason,
                "seconds": round((ended - started).total_seconds(), 3),
            }
            if signal is not None:
                record["signal"] = signal
            self.write(record)

    def _append(self, day: str, data: bytes) -> None:
        # 0700: the log may hold file contents and commands.
        make_private_dir(self.directory)
        # O_APPEND and a single write: concurrent paicli processes interleave whole lines.
        fd = os.open(
            self.directory / f"{day}.jsonl",
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
            0o600,
        )
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def tail(self, n: int) -> list[dict[str, object]]:
        """The last `n` records of calls and tool changes across the newest day files,
        oldest first (sessions' start and end records are left out). Unreadable files and
        lines (a line cut short by a crash) are skipped."""
        if n <= 0:
            return []
        try:
            names = sorted(
                (p.name for p in self.directory.iterdir() if _DAY_FILE.match(p.name)),
                reverse=True,
            )
        except OSError:
            return []
        newest_first: list[dict[str, object]] = []
        for name in names:
            try:
                lines = (self.directory / name).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in reversed(lines):
                record = _parse(line)
                if record is not None and not str(record.get("event")).startswith("session_"):
                    newest_first.append(record)
                    if len(newest_first) == n:
                        return newest_first[::-1]
        return newest_first[::-1]


def _parse(line: str) -> dict[str, object] | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _call_outcome(outcome: ToolOutcome) -> CallOutcome:
    if outcome.decision == "denied":
        return "denied"
    if outcome.decision == "refused":
        return "refused"
    return "error" if outcome.is_error else "ok"


def _what_changed(lines: Sequence[str]) -> dict[str, object]:
    """`describe_change`'s lines as record fields: the summary, and the diff."""
    return {"changed": lines[0], "diff": list(lines[1:])} if lines else {}


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0] if text.strip() else ""
    return line[:_ERROR_LIMIT]


class AuditingToolbox(ToolboxWrapper):
    """Records every call `inner` receives, including denied, refused and cancelled ones.
    (A precheck is not recorded on its own: `call` runs it again inside the approving
    wrapper, and that refusal is what the log records.)"""

    def __init__(self, inner: Toolbox, log: AuditLog, *, session_id: str) -> None:
        super().__init__(inner)
        self._log = log
        self._session_id = session_id

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        started = self._log.clock()
        start = time.monotonic()
        record: dict[str, object] = {
            "time": started.isoformat(timespec="milliseconds"),
            "session": self._session_id,
            "tool": spec.name,
            "server": spec.server,
            "arguments": arguments,
        }
        if (scope := SUBAGENT.get()) is not None:
            record["agent"] = scope.agent  # a sub-agent's call, not the main agent's
        verdict = Verdict()
        token = VERDICT.set(verdict)

        def on_retry(attempt: Attempt) -> None:
            # Each failed attempt is a record of its own; the last one is the call's record.
            self._log.write(
                {
                    **record,
                    "time": self._log.clock().isoformat(timespec="milliseconds"),
                    "decision": "allowed",
                    "decided_by": verdict.decided_by,
                    "outcome": "error",
                    "duration_ms": round(attempt.seconds * 1000),
                    "error": _first_line(attempt.error),
                    "attempt": attempt.number,
                    "then": attempt.line,
                }
            )
            record["attempt"] = attempt.number + 1

        try:
            with listening(on_retry):
                outcome = await self._inner.call(spec, arguments)
        except asyncio.CancelledError:
            self._unfinished(record, start, verdict, "cancelled")
            raise
        except Exception as exc:
            # A toolbox should never raise; if one does, the log still says what happened.
            self._unfinished(record, start, verdict, "error", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            VERDICT.reset(token)
        waited = outcome.waited_ms
        if waited is not None:
            record["waited_ms"] = waited  # time spent asking the user, not running
        record.update(_what_changed(verdict.changed))
        self._write(
            record,
            start,
            decision=outcome.decision,
            decided_by=outcome.decided_by,
            result=_call_outcome(outcome),
            error=_first_line(outcome.text) if outcome.is_error else None,
            waited=waited or 0,
        )
        return outcome

    def _unfinished(
        self,
        record: dict[str, object],
        start: float,
        verdict: Verdict,
        result: CallOutcome,
        error: str | None = None,
    ) -> None:
        """A call that ended without an outcome: who allowed it, if it got that far, is
        kept (an approved call the user then cancelled was still approved by them)."""
        allowed = verdict.decided_by is not None
        if verdict.waited_ms is not None:
            record["waited_ms"] = verdict.waited_ms
        record.update(_what_changed(verdict.changed))
        self._write(
            record,
            start,
            decision="allowed" if allowed else None,
            decided_by=verdict.decided_by,
            result=result,
            error=error,
            waited=verdict.waited_ms or 0,
        )

    def _write(
        self,
        record: dict[str, object],
        start: float,
        *,
        decision: str | None,
        decided_by: str | None,
        result: CallOutcome,
        error: str | None = None,
        waited: int = 0,
    ) -> None:
        elapsed = round((time.monotonic() - start) * 1000)
        record.update(
            decision=decision,
            decided_by=decided_by,
            outcome=result,
            duration_ms=max(0, elapsed - waited),
            error=error,
        )
        self._log.write(record)
