"""`/audit`: the last records of the audit log, one line each: a hook run (its event, command
and how it ended), a tool change, or a call (a sub-agent's named). What a record holds came
from tools, servers and hooks: each line is escaped and cut to one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from paicli.escape import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.runtime import Runtime

__all__ = ["audit_command", "audit_line"]


async def audit_command(runtime: Runtime, console: Console, words: list[str]) -> None:
    """`/audit [N]`: the last N records (default 10)."""
    try:
        count = int(words[0]) if words else 10
    except ValueError:
        console.print("Usage: /audit [N]", style="yellow")
        return
    records = runtime.audit.tail(count)
    if not records:
        console.print("No tool calls recorded yet.")
        return
    for record in records:
        console.print(one_line(audit_line(record), 160))


def audit_line(record: Mapping[str, object]) -> str:
    """One record of the audit log as `/audit` shows it: a hook run (its event, command and
    how it ended), a tool change, or a call (a sub-agent's named). A call interrupted while
    the user was asked has no decision (null in the log): it reads "not decided", never
    None/None."""
    time = str(record.get("time", ""))[:19]
    if record.get("event") == "hook":
        return (
            f"{time}  hook {record.get('hook_event')}  {record.get('command')}  "
            f"{record.get('outcome')}  {record.get('duration_ms')} ms"
        )
    # A changed tool's record says what changed where a call's says how long it ran.
    last = record.get("changed") if "duration_ms" not in record else None
    by = f"{record['agent']}: " if record.get("agent") else ""  # a sub-agent's call
    decision, decider = record.get("decision"), record.get("decided_by")
    decided = (
        "not decided" if decision is None else f"{decision}/{decider}" if decider else str(decision)
    )
    return f"{time}  {by}{record.get('tool')}  {decided}  {record.get('outcome')}  " + (
        str(last) if last is not None else f"{record.get('duration_ms')} ms"
    )
