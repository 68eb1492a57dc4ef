"""What `paicli mcp list|get|tools|call|logs|lock|probe` print: results on stdout (a table, lines,
or `--json`), progress and errors on stderr, all through `output`. Servers are shown with the
REPL's own table and lines (`mcp_view`); text a server wrote that stands on its own (its
instructions, its stderr) is marked with its name. A server's target is shown as
`trust.describe` writes it: as in its file, `${VAR}` never expanded, and the env and header
values of the user's own servers masked (a repository's are shown: they came with it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paicli.escape import one_line
from paicli.mcp import ClientSession, Implementation, Tool
from paicli.servers.config import ServerEntry
from paicli.servers.containment import contained_line, sandbox_line, sandbox_summary
from paicli.servers.manager import ManagedServer, ServerManager, ServerState
from paicli.servers.tool_pins import PinReview
from paicli.servers.trust import describe
from paicli.tools.mcp.naming import model_tool_name
from paicli.ui.mcp_view import (
    left_out_lines,
    protocol_of,
    sandbox_note,
    server_change_line,
    server_columns,
    server_table,
    tool_details,
    tool_line,
)
from paicli.ui.output import err, out, out_json, quoted, show

if TYPE_CHECKING:
    from paicli.mcp import SandboxSupport

# Seconds between two "installing NAME (npx)… 20s" lines while `mcp list` waits.
INSTALLING_INTERVAL = 10.0
GET_KEYS = ("name", "state", "scope", "transport", "target", "pid", "error", "slow_start")
STDERR_LINES = 10


class Progress:
    """One line per server on stderr as it starts and settles (stdout stays clean for
    `--json`); a `ServerManager` change callback."""

    def __init__(self) -> None:
        self._shown: dict[str, tuple[ServerState, bool]] = {}

    def __call__(self, server: ManagedServer) -> None:
        seen = (server.state, server.installing_note() is not None)
        if self._shown.get(server.name) == seen:
            return
        self._shown[server.name] = seen
        if server.state is ServerState.STARTING:
            err(f"… {server.installing_note() or server.name}")
            return
        line = server_change_line(server)
        if line is not None:
            err(line.plain)


async def wait_showing_installs(manager: ServerManager) -> None:
    """Wait until every server has settled, with a line every `INSTALLING_INTERVAL`
    seconds for each one still installing itself (its first start through npx & co.)."""
    while not await manager.wait_ready(timeout=INSTALLING_INTERVAL):
        for server in manager.servers():
            if (note := server.installing_note()) is not None:
                err(f"… {note}")


def show_totals(servers: list[ManagedServer]) -> None:
    ready = [s for s in servers if s.state is ServerState.READY]
    active = [s for s in servers if s.state is not ServerState.DISABLED]
    err(f"{len(ready)}/{len(active)} ready, {sum(len(s.tools) for s in ready)} tools")


def summary(server: ManagedServer, support: SandboxSupport | None = None) -> dict[str, Any]:
    """One server as `paicli mcp list --json` shows it (`support`: the sandbox mechanisms
    that work here, to name the one a contained server runs by)."""
    return {
        "name": server.name,
        "state": server.state.value,
        "transport": server.transport,
        "protocol": protocol_of(server),
        "tools": len(server.tools),
        "uptime": round(server.uptime, 1) if server.uptime is not None else None,
        "pid": server.pid,
        "error": server.error,
        "last_exit": server.last_exit,
        "ready_after": round(server.ready_after, 3) if server.ready_after is not None else None,
        "slow_start": server.slow_start,
        "skipped_stdout_lines": server.skipped_lines,
        "left_out_tools": dict(server.left_out),
        "scope": server.entry.scope,
        "target": describe(server.entry) if isinstance(server.entry, ServerEntry) else None,
        "sandbox": sandbox_summary(server.entry.containment, support),
    }


def show_list(
    servers: list[ManagedServer],
    skipped: list[str],
    as_json: bool,
    support: SandboxSupport | None = None,
) -> None:
    if as_json:
        unapproved = [{"name": n, "state": "unapproved"} for n in skipped]
        out_json([summary(s, support) for s in servers] + unapproved)
        return
    note = sandbox_note(servers, support)
    if not sys.stdout.isatty():  # plain columns for a script; the note is not one of them
        for line in server_columns(servers, skipped):
            out(line.rstrip())
        if note:
            err(note)
        return
    show(server_table(servers, skipped))
    if note:
        out(note)


def show_server(
    server: ManagedServer, as_json: bool, support: SandboxSupport | None = None
) -> None:
    """`paicli mcp get NAME`: the server as configured and as it describes itself."""
    session = server.session
    info = session.server_info if session is not None else None
    instructions = session.instructions if session is not None else None
    details = summary(server, support) | {
        "server": {"name": info.name, "version": info.version} if info else None,
        "instructions": instructions,
        "tool_names": [t.name for t in server.tools],
        "stderr": server.stderr_tail[-STDERR_LINES:],
    }
    if as_json:
        out_json(details)
        return
    for key in GET_KEYS:
        if details.get(key) is not None:
            out(f"{key + ':':<11}{details[key]}")
    containment = server.entry.containment
    if containment is not None:
        shown = sandbox_line(containment)
        if support is not None:
            shown = contained_line(containment, support)
        out(f"{'sandbox:':<11}{shown}")
    if skipped := details["skipped_stdout_lines"]:
        logs = f"paicli mcp logs {server.name}"
        out(f"{'stdout:':<11}{skipped} lines were not JSON-RPC, skipped (each is in {logs})")
    if info is not None:
        out(f"{'server:':<11}{implementation(info)}")
    out(f"{'tools:':<11}{', '.join(details['tool_names']) or '-'}")
    if instructions:
        out("instructions:")
        quoted(server.name, instructions.strip("\n"))
    if details["stderr"]:
        out("stderr:")
        quoted(server.name, "\n".join(details["stderr"]))


def show_tools(
    ready: list[ManagedServer], as_json: bool, *, full: bool = False, schema: bool = False
) -> None:
    """Each ready server's tools: a line each, or (`full`, `schema`) all the server says of
    them, the input schema too with `schema`."""
    if not as_json:
        for server in ready:
            for tool in server.tools:
                if full or schema:
                    for line in tool_details(server.name, tool, schema=schema):
                        out(line)
                else:
                    show(tool_line(server.name, tool), soft_wrap=True)
            for line in left_out_lines(server):
                out(f"{server.name}: {line}")
        return
    out_json([_tool_json(s.name, t, full=full, schema=schema) for s in ready for t in s.tools])


def _tool_json(server: str, tool: Tool, *, full: bool, schema: bool) -> dict[str, Any]:
    description = (tool.description or "").strip()
    entry: dict[str, Any] = {
        "name": model_tool_name(server, tool.name),
        "server": server,
        "tool": tool.name,
        "description": description if full or schema else description.split("\n")[0][:100],
    }
    if schema:
        entry["inputSchema"] = tool.input_schema
        if tool.output_schema is not None:
            entry["outputSchema"] = tool.output_schema
        if tool.annotations:
            entry["annotations"] = tool.annotations
    return entry


def show_result(text: str, *, is_error: bool, seconds: float) -> None:
    """A tool's result on stdout (escaped, else as the server sent it), its time on stderr."""
    out(text)
    err(f"({seconds:.2f}s{', tool error' if is_error else ''})")


def show_logs(name: str, lines: list[str]) -> None:
    quoted(name, "\n".join(lines))


# -- `paicli mcp probe` -----------------------------------------------------------------------


def implementation(info: Implementation) -> str:
    return f"{info.name} {info.version}"


def show_probe(session: ClientSession, seconds: float) -> None:
    """The server `probe` reached: who it says it is, the protocol agreed, its process."""
    info = implementation(session.server_info)
    if session.dialect == "minimal":
        spoken = "minimal JSON-RPC dialect"
    else:
        spoken = f"{session.era} {session.protocol_version}"
    pid = session.process.pid if session.process is not None else None
    out(f"✓ {info}  {spoken}  pid {pid}  {seconds:.2f}s")


def show_probe_tools(tools: list[Tool]) -> None:
    out(f"{len(tools)} tools")
    for tool in tools:
        first = (tool.description or "").strip().split("\n")[0]
        out(f"  {tool.name:<28} {one_line(first, 70)}")


@dataclass(frozen=True)
class PinReport:
    """One server's tools against their pins, as `paicli mcp lock` shows them."""

    server: str
    tools: int
    first: bool  # nothing was pinned before: pinned now
    review: PinReview
    updated: bool  # --update: pinned as they are now


def show_pins(reports: list[PinReport], as_json: bool) -> None:
    if as_json:
        out_json(
            [
                {
                    "server": r.server,
                    "tools": r.tools,
                    "changed": [c.tool.name for c in r.review.changed],
                    "added": r.review.added,
                    "removed": r.review.removed,
                    "pinned_now": r.first or r.updated,
                }
                for r in reports
            ]
        )
        return
    for report in reports:
        review = report.review
        if report.first:
            out(f"{report.server}: {report.tools} tools pinned (first time)")
            continue
        changed = [c.tool.name for c in review.changed]
        state = "changed" if changed else "unchanged"
        out(f"{report.server}: {report.tools} tools, {state}")
        for change in review.changed:
            out(f"  ✗ {change.tool.name} {'re-pinned' if report.updated else 'changed'}")
            for line in change.lines():
                out(f"      {line}")
        for name in review.added:
            out(f"  + {name} (new, pinned)")
        for name in review.removed:
            out(f"  - {name} (no longer offered)")
    if any(r.review.changed and not r.updated for r in reports):
        err("Changed tools are not offered to the model until accepted: paicli mcp lock --update")


def show_lock_written(path: object, tools: int) -> None:
    out(f"Wrote {path}: {tools} tool definitions pinned for this project (commit it).")
