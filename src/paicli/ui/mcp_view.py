"""`/mcp` in the REPL: the servers' status table, and restart/logs/disable/enable/tools/
resources/prompts for one server. The table, the server lines and the tool lines are shared
with `paicli mcp` in a shell (`mcp_shell`), so both show servers the same way."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from paicli.escape import one_line, terminal_safe
from paicli.mcp import McpError, Tool
from paicli.runtime import Runtime
from paicli.servers.containment import sandbox_groups, support_for
from paicli.servers.errors import UnknownServer
from paicli.servers.manager import ManagedServer, ServerState
from paicli.servers.oauth import LoginFailed, log_in, log_out
from paicli.servers.trust import TrustStore, withheld_reason
from paicli.tools.mcp.naming import model_tool_name
from paicli.ui.mcp_actions import MCP_ACTIONS
from paicli.ui.output import quoted_lines
from paicli.ui.screen_secrets import screen_line

if TYPE_CHECKING:
    from paicli.mcp import SandboxSupport

MARKS = {
    ServerState.READY: ("●", "green"),
    ServerState.ERROR: ("✗", "red"),
    ServerState.DISABLED: ("○", "dim"),
    ServerState.STARTING: ("…", "yellow"),
    ServerState.STOPPED: ("○", "dim"),
    ServerState.IDLE: ("◌", "dim"),
}
LOG_LINES = 30
# A log line longer than this is shown cut, with a mark: a server that never writes a
# newline to stderr leaves megabytes on one line of its log (the file keeps it whole).
LOG_LINE_SHOWN = 8192
# The time the stderr log puts in front of each line (`paicli.mcp` StderrLog); logs written
# before it did have lines without one.
LOG_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ")
# How long /mcp restart|enable waits to report the outcome; the server keeps starting after.
SETTLE_WAIT = 30.0
# How long /mcp waits for servers still starting before showing the table anyway.
TABLE_WAIT = 5.0


def status_line(runtime: Runtime) -> str:
    servers = runtime.manager.servers()
    if not servers and not runtime.skipped:
        return "🔌 MCP server: not configured"
    ready = [s for s in servers if s.state is ServerState.READY]
    starting = [s for s in servers if s.state is ServerState.STARTING]
    failed = [s for s in servers if s.state is ServerState.ERROR]
    idle = [s for s in servers if s.state is ServerState.IDLE]
    tools = sum(len(s.tools) for s in ready)
    parts = [f"{len(ready)}/{len(servers)} ready", f"{tools} tools"]
    if starting:
        parts.append(f"{len(starting)} starting")
    if idle:
        parts.append(f"{len(idle)} idle until used")
    if failed:
        parts.append(f"{len(failed)} failed")
    if runtime.skipped:
        parts.append(f"{len(runtime.skipped)} not approved")
    return "🔌 MCP servers: " + ", ".join(parts) + "  (/mcp for details)"


def server_change_line(server: ManagedServer) -> Text | None:
    """The line printed when a server settles (shown above the prompt)."""
    name = terminal_safe(server.name)
    if not server.settled_news:
        return None
    if server.state is ServerState.READY:
        seconds = f"  {server.ready_after:.1f}s" if server.ready_after is not None else ""
        line = Text(f"✓ {name}  {server.transport}  {len(server.tools)} tools{seconds}", "green")
        if server.slow_start:
            line.append(f"  (slow: {server.slow_start})", "yellow")
        return line
    if server.state is ServerState.ERROR and server.needs_login:
        return Text(f"⚠ {name}  {server.transport}  needs login: paicli mcp login {name}", "yellow")
    if server.state is ServerState.ERROR:
        error = screen_line(server.failure() or "", 200)
        return Text(f"✗ {name}  {server.transport}  {error}", "red")
    return None


def protocol_of(server: ManagedServer) -> str | None:
    """What a ready server speaks: the MCP version agreed, or `minimal` for a tool in the
    minimal JSON-RPC dialect; None when it is not connected."""
    session = server.session
    if session is None or session.closed is not None:
        return None
    return "minimal" if session.dialect == "minimal" else session.protocol_version


COLUMNS = ("NAME", "STATE", "TRANSPORT", "PROTOCOL", "TOOLS", "UPTIME", "PID", "NOTE")
# In a pipe the scope has a column of its own (on a terminal it is marked after the name).
PLAIN_COLUMNS = ("NAME", "SCOPE", *COLUMNS[1:])


def server_table(servers: list[ManagedServer], skipped: list[str]) -> Table:
    """The servers' status, and the project servers not approved to run."""
    grid = Table(show_edge=False, header_style="bold")
    for column in ("", *COLUMNS):
        grid.add_column(column)
    for server, row in zip(servers, _rows(servers), strict=False):
        mark, style = ("⚠", "yellow") if server.needs_login else MARKS[server.state]
        grid.add_row(Text(mark, style), _name(server), *row[1:])
    for name in skipped:
        grid.add_row("○", Text(terminal_safe(name)), "not approved", "-", "-", "-", "-", "-", "")
    return grid


def server_columns(servers: list[ManagedServer], skipped: list[str]) -> list[str]:
    """The table as plain lines for a pipe or a file: the columns aligned with spaces, no
    marks, rules or colours, no cell cut to fit a width, one word per cell but the note
    (`awk '{print $2}'` works; `--json` has the rest)."""
    rows = [list(PLAIN_COLUMNS)]
    rows += [
        [row[0], server.entry.scope, *row[1:]]
        for server, row in zip(servers, _rows(servers), strict=True)
    ]
    rows += [[name, "project", "unapproved", "-", "-", "-", "-", "-", ""] for name in skipped]
    rows = [[terminal_safe(cell) or "-" for cell in row[:-1]] + [row[-1]] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(PLAIN_COLUMNS) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    ]


def _rows(servers: list[ManagedServer]) -> list[list[str]]:
    rows = []
    for server in servers:
        rows.append(
            [
                server.name,
                server.state.value,
                server.transport,
                protocol_of(server) or "-",
                str(len(server.tools)),
                f"{server.uptime:.0f}s" if server.uptime is not None else "-",
                str(server.pid or "-"),
                _note(server).plain,
            ]
        )
    return rows


def sandbox_note(servers: list[ManagedServer], support: SandboxSupport | None) -> str:
    """One line under the table: which stdio servers run in the OS sandbox, by what, and
    which do not ("" without stdio servers); `paicli mcp doctor` says why."""
    return sandbox_groups([(s.name, s.entry.containment) for s in servers], support)


def _name(server: ManagedServer) -> Text:
    """The server's name, marked `(local)` or `(cli)` when it comes from neither a file of
    the user's nor of the project (`mcp get` and `--json` name every scope)."""
    name = Text(terminal_safe(server.name))
    scope = server.entry.scope
    if scope in ("local", "cli"):
        name.append(f" ({scope})", "dim")
    return name


def _note(server: ManagedServer) -> Text:
    """The table's last column: why it failed, or why its start was slow."""
    failed = server.failure() or server.error
    if server.needs_login and failed:
        return Text(screen_line(failed, 80), "yellow")
    if failed:
        return Text(screen_line(failed, 80), "red")
    notes = []
    if installing := server.installing_note():
        notes.append(installing)
    if server.state is ServerState.READY and server.slow_start:
        notes.append("slow start: " + server.slow_start)
    if left_out := len(server.left_out):
        where = f"paicli mcp tools {terminal_safe(server.name)}"
        notes.append(f"{left_out} tools left out ({where})")
    if skipped := server.skipped_lines:
        where = f"paicli mcp logs {terminal_safe(server.name)}"
        notes.append(f"{skipped} stdout lines were not JSON ({where})")
    if server.state is not ServerState.READY and server.last_exit:
        notes.append("last exit: " + server.last_exit)
    return Text(screen_line("; ".join(notes), 160), "yellow")


def tool_line(server: str, tool: Tool) -> Text:
    """A tool as the model knows it, and the start of its description."""
    line = Text(model_tool_name(server, tool.name), "cyan")
    line.append("  " + one_line(tool.description or "", 100), "dim")
    return line


def left_out_lines(server: ManagedServer) -> list[str]:
    """The tools a server lists that are not offered, and why, one line each (escaped)."""
    return [screen_line(f"left out: {name} ({why})", 300) for name, why in server.left_out.items()]


def tool_details(server: str, tool: Tool, *, schema: bool) -> list[str]:
    """All a server says of one of its tools, for `--full`/`--schema` and `/mcp schema`: the
    whole description (where an instruction hidden past the first line or the first 100
    characters shows), the annotations and, with `schema`, the input and output schemas.
    Every line the server wrote is escaped and marked with its name."""
    lines = [model_tool_name(server, tool.name)]
    if tool.title:
        lines += quoted_lines(server, "title: " + tool.title)
    lines += quoted_lines(server, tool.description or "(no description)")
    if tool.annotations:
        lines += quoted_lines(server, "annotations: " + _json(tool.annotations, None))
    if schema:
        lines += quoted_lines(server, "input schema: " + _json(tool.input_schema, 2))
        if tool.output_schema is not None:
            lines += quoted_lines(server, "output schema: " + _json(tool.output_schema, 2))
    return lines


def _json(value: object, indent: int | None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=True)


async def mcp_command(runtime: Runtime, console: Console, words: list[str]) -> None:
    if not words:
        if not runtime.manager.servers() and not runtime.skipped:
            console.print(status_line(runtime))
            console.print("Add one with: paicli mcp add NAME -- COMMAND ARGS...")
            return
        starting = runtime.manager.starting()
        if starting:  # a table of "starting" says little: give them a moment
            with console.status(Text(f"waiting for {terminal_safe(', '.join(starting))}…")):
                await runtime.manager.wait_ready(starting, timeout=TABLE_WAIT)
        servers = runtime.manager.servers()
        console.print(server_table(servers, runtime.skipped))
        note = sandbox_note(servers, await support_for(s.entry.containment for s in servers))
        if note:
            console.print(Text(terminal_safe(note), "dim"))
        return
    action, names = words[0], words[1:]
    if action == "schema" and len(names) == 2:
        names, only = names[:1], names[1]
    else:
        only = None
    if action not in MCP_ACTIONS or len(names) != 1:
        console.print(Text(f"Usage: /mcp [{'|'.join(MCP_ACTIONS)} NAME]", "yellow"))
        return
    name = names[0]
    if action == "approve":
        await _approve(runtime, console, name)
        return
    try:
        server = runtime.manager.get(name)
    except UnknownServer:
        known = terminal_safe(", ".join(s.name for s in runtime.manager.servers()) or "none")
        console.print(
            Text(f"No MCP server named {terminal_safe(name)!r} (servers: {known})", "red")
        )
        return
    if action == "restart":
        with console.status(Text(f"restarting {terminal_safe(name)}…")):
            await runtime.manager.restart(name)
            await _settle(runtime, name)
        _report(console, server)
    elif action == "enable":
        with console.status(Text(f"starting {terminal_safe(name)}…")):
            await runtime.manager.enable(name)
            await _settle(runtime, name)
        _report(console, server)
    elif action == "disable":
        await runtime.manager.disable(name)
        console.print(f"Disabled {terminal_safe(name)} for this session; its tools are withdrawn.")
    elif action == "logs":
        _logs(runtime, console, server)
    elif action == "login":
        await _login(runtime, console, server)
    elif action == "logout":
        try:
            forgot = await log_out(server.entry.spec, name)
        except LoginFailed as exc:
            console.print(Text(f"{terminal_safe(name)}: {terminal_safe(str(exc))}", "red"))
            return
        said = "Logged out of" if forgot else "There was no login to forget for"
        console.print(f"{said} {terminal_safe(name)}.")
    else:
        if server.state is ServerState.STARTING:  # asked right after start: wait for it
            with console.status(Text(f"waiting for {terminal_safe(name)} to start…")):
                await _settle(runtime, name)
        if action in ("tools", "schema"):
            _tools(console, server, schema=action == "schema", only=only)
        else:
            await _listing(console, server, action)


async def _approve(runtime: Runtime, console: Console, name: str) -> None:
    """`/mcp approve NAME`: a project server that was not approved (declined, or skipped)
    approved as it is now, and started."""
    entry = runtime.config.servers.get(name)
    if entry is None or name not in runtime.skipped:
        known = any(s.name == name for s in runtime.manager.servers())
        why = "it is not waiting for approval" if known else "no such project server"
        console.print(Text(f"/mcp approve {terminal_safe(name)!r}: {why}", "yellow"))
        return
    store, project = TrustStore(runtime.home.trust_store), runtime.project or runtime.root
    store.approve(project, entry)
    # Secrets stay withheld unless agreed to for this entry (paicli mcp approve --secret).
    agreed = [secret for secret, yes in store.secret_answers(project, entry).items() if yes]
    server = runtime.approve_server(runtime.config.passing(entry, agreed))
    console.print(f"Approved {terminal_safe(name)} as it is now; starting it.")
    if entry.withheld:
        console.print(Text(terminal_safe(withheld_reason(entry)), "yellow"))
    with console.status(Text(f"starting {terminal_safe(name)}…")):
        await _settle(runtime, name)
    _report(console, server)


async def _login(runtime: Runtime, console: Console, server: ManagedServer) -> None:
    """`/mcp login NAME`: the browser login, then the server started again with its tokens."""
    name = terminal_safe(server.name)

    def show(url: str) -> None:
        console.print(f"Log in to {name} in your browser. If it does not open, visit:")
        console.print(Text("  " + terminal_safe(url)), soft_wrap=True)

    settings = server.entry.oauth
    port = settings.callback_port if settings is not None else None
    try:
        with console.status(Text(f"waiting for the login to {name} (Ctrl+C gives up)…")):
            tools = await log_in(server.entry.spec, server.name, show=show, callback_port=port)
    except LoginFailed as exc:
        console.print(Text(f"{name}: login failed: {terminal_safe(str(exc))}", "red"))
        return
    console.print(Text(f"✓ Logged in to {name} ({tools} tools); restarting it.", "green"))
    await runtime.manager.restart(server.name)
    await _settle(runtime, server.name)
    _report(console, server)


async def _settle(runtime: Runtime, name: str) -> None:
    await runtime.manager.wait_ready([name], timeout=SETTLE_WAIT)


def _report(console: Console, server: ManagedServer) -> None:
    # Ready and error lines are printed by the REPL's server-change callback already.
    if server.state not in (ServerState.READY, ServerState.ERROR):
        console.print(f"{terminal_safe(server.name)}: still {server.state.value}")


def _logs(runtime: Runtime, console: Console, server: ManagedServer) -> None:
    try:
        lines = log_lines(runtime.home.mcp_log(server.name), LOG_LINES)
    except OSError:
        lines = list(server.stderr_tail)
    process = server.session.process if server.session is not None else None
    if process is not None:
        lines = lines or process.stderr_lines()
    if not lines:
        console.print(f"No stderr output from {server.name} yet.")
        return
    for line in quoted_lines(server.name, "\n".join(lines[-LOG_LINES:])):
        console.print(Text(line))


def log_lines(path: Path, last: int) -> list[str]:
    """The last `last` lines of a server's stderr log (OSError if it cannot be read), read
    on into the older file it rotated to (`NAME.log.1`) when the current one has fewer;
    each (after its time, when it has one) cut at 8 KiB with a mark. Only "\n" ends a
    line: a carriage return is shown as an escape, never obeyed as a line break (so bytes,
    not `read_text`, whose universal newlines would turn it into one)."""
    data = path.read_bytes()
    if data.count(b"\n") < last:
        # The older file may end inside a line the current one finishes: read them joined.
        with contextlib.suppress(OSError):
            data = path.with_name(path.name + ".1").read_bytes() + data
    text = data.decode("utf-8", errors="replace")
    lines = text.removesuffix("\n").split("\n")[-last:] if text else []
    return [_cut(line) for line in lines]


def _cut(line: str) -> str:
    """`line` with what follows its time (older logs have none) cut at `LOG_LINE_SHOWN`."""
    stamp = LOG_TIME.match(line)
    head = stamp.group() if stamp else ""
    text = line[len(head) :]
    if len(text) <= LOG_LINE_SHOWN:
        return line
    cut = f"[line cut at {LOG_LINE_SHOWN:,} of {len(text):,} characters]"
    return f"{head}{text[:LOG_LINE_SHOWN]} … {cut}"


def _tools(
    console: Console, server: ManagedServer, *, schema: bool = False, only: str | None = None
) -> None:
    if server.state is not ServerState.READY:
        console.print(f"{terminal_safe(server.name)} is {server.state.value}.")
        return
    if not schema:
        for tool in server.tools:
            console.print(tool_line(server.name, tool))
        for line in left_out_lines(server):
            console.print(Text(line, "yellow"))
        return
    chosen = [t for t in server.tools if only is None or only in (t.name, _model_name(server, t))]
    if not chosen:
        console.print(
            Text(f"{terminal_safe(server.name)} has no tool {terminal_safe(only or '')!r}", "red")
        )
    for tool in chosen:
        first, *rest = tool_details(server.name, tool, schema=True)
        console.print(Text(first, "cyan"))
        for line in rest:
            console.print(Text(line), soft_wrap=True)


def _model_name(server: ManagedServer, tool: Tool) -> str:
    return model_tool_name(server.name, tool.name)


async def _listing(console: Console, server: ManagedServer, action: str) -> None:
    session = server.session
    if server.state is not ServerState.READY or session is None:
        console.print(f"{terminal_safe(server.name)} is {server.state.value}.")
        return
    try:
        if action == "resources":
            resources = await session.list_resources()
            rows = [(f"@{server.name}:{r.uri}", r.description or r.name) for r in resources]
        else:
            prompts = await session.list_prompts()
            rows = [(p.name, p.description or "") for p in prompts]
    except McpError as exc:
        console.print(Text(f"{terminal_safe(server.name)}: {terminal_safe(str(exc))}", "red"))
        return
    if not rows:
        console.print(f"{terminal_safe(server.name)} offers no {action}.")
    for first, second in rows:
        line = Text(terminal_safe(first), "cyan")
        line.append("  " + one_line(second, 100), "dim")
        console.print(line)
