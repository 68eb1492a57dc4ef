"""Examine one server alone: start it, watch everything it does, and report what is wrong.

A stdio server is started through the library (`StdioTransport`, its spawn and shutdown
ladder), with a tap on its raw stdout and a wrapper noting the ids sent, so a handshake that
gets no answer can be told apart by what was seen. After the ladder, processes the server
left running are found by the mark in their environment and killed. An HTTP server is
reached with `connect()`; only what the session sees is reported.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace
from typing import Any

from paicli.doctor._command import check_paths, start_failure
from paicli.doctor._explain import (
    STDERR_LINES,
    explain_agreement,
    explain_exit,
    explain_silence,
    explain_stdout,
    explain_unanswered,
    note_probe_exit,
)
from paicli.doctor._http import examine_http
from paicli.doctor._leftovers import Leftover, Marker
from paicli.doctor._sandbox import note_sandbox
from paicli.doctor._settings import Limits
from paicli.doctor._stdout import StdoutWatch
from paicli.doctor._tools import check_tools
from paicli.doctor.findings import ServerReport, excerpt
from paicli.mcp import (
    ClientSession,
    ClosedOnProbe,
    CommandCheck,
    ConnectionClosed,
    HttpServer,
    McpError,
    RequestTimeout,
    StdioServer,
    StdioTransport,
    Timeouts,
    Transport,
    TransportWrapper,
)
from paicli.servers.containment import Containment

__all__ = ["examine"]

# Request ids remembered to check answers against: the doctor sends a handful.
MAX_SENT = 64
# A process that left the server's group may be ending on its own (its stdin closed too):
# it gets this long before it counts as left behind. The process table has no event to wait on.
LEFTOVER_GRACE = 0.5
LEFTOVER_POLL = 0.02


async def examine(
    name: str,
    spec: StdioServer | HttpServer,
    limits: Limits,
    containment: Containment | None = None,
) -> ServerReport:
    """Every finding about `spec`; never raises for the server's faults. `containment` (a
    configured stdio server's) is said first: by what mechanism it runs contained, or why
    not; a sandbox that cannot be had here is an error, and the server is not started."""
    if isinstance(spec, StdioServer):
        report = ServerReport(name, "stdio")
        if containment is not None and not await note_sandbox(report, containment):
            return report
        return await _examine_stdio(report, spec, limits)
    return await examine_http(name, spec, limits)


class _Watched(TransportWrapper):
    """Notes the id of every request sent, and closes the stdout watch before the server is
    stopped (what it writes while stopping is counted apart)."""

    def __init__(self, inner: Transport, watch: StdoutWatch) -> None:
        super().__init__(inner)
        #: (id, method) of each request sent, in order.
        self.sent: list[tuple[object, str]] = []
        self.stdout_watch = watch

    async def send(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message and len(self.sent) < MAX_SENT:
            self.sent.append((message["id"], str(message["method"])))
        await super().send(message)

    async def aclose(self) -> None:
        self.stdout_watch.close()
        await super().aclose()


async def _examine_stdio(report: ServerReport, spec: StdioServer, limits: Limits) -> ServerReport:
    check = check_paths(report, spec)
    if check.problem is not None and check.problem != "no-shebang":
        # Certain to fail (or, for a CRLF shebang run through env, to fail confusingly):
        # say why without starting it. A file without a shebang may still be a binary
        # format exec knows (binfmt_misc), so only a failed start decides that one.
        start_failure(report, check, check.message or check.problem)
        return report
    try:
        return await _start_stdio(report, spec, limits, check)
    except ClosedOnProbe as exc:
        probe_exit = exc
    # Started again with initialize first, as paicli does: whether that works decides
    # whether the probe was the trouble (a server that dies at any start fails again).
    await _start_stdio(report, replace(spec, protocol="legacy"), limits, check)
    if not any(finding.code == "exited" for finding in report.findings):
        note_probe_exit(report, probe_exit)
    return report


async def _start_stdio(
    report: ServerReport, spec: StdioServer, limits: Limits, check: CommandCheck
) -> ServerReport:
    """Start the server once and examine it; `ClosedOnProbe` when it exited on the 2026
    discovery probe (nothing is reported for that start)."""
    name = report.name
    watch = StdoutWatch()
    marker = Marker()
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        transport = await StdioTransport.start(
            spec.command,
            spec.args,
            env={**spec.env, **marker.env()},
            cwd=spec.cwd,
            max_message_size=spec.max_message_size,
            label=name,
            stdout_tap=watch.feed,
            limits=spec.limits,
            sandbox=spec.sandbox,
        )
    except ConnectionClosed as exc:
        start_failure(report, check, str(exc))
        return report
    watched = _Watched(transport, watch)
    failed = True
    try:
        failed = not await _converse(report, spec, watched, limits, started)
        explain_stdout(report, watch, [i for i, _ in watched.sent], failed=failed)
        if not failed:
            explain_unanswered(report, watch, watched.sent)
    finally:
        await watched.aclose()
        _report_leftovers(report, marker, await _leftovers(marker))
    if not failed:
        _report_exit(report, transport.returncode, transport.stderr_lines())
    return report


def _report_exit(report: ServerReport, code: int | None, stderr: list[str]) -> None:
    """How the server ended once its stdin was closed: by itself (with status 0, or with
    an error: end of input not handled), or by a signal of the shutdown ladder (a server
    that ignores end of input)."""
    if code is None or code == 0:
        return
    if code > 0:
        tail = tuple(excerpt(line) for line in stderr[-STDERR_LINES:])
        report.add(
            "eof-error",
            "warning",
            f"exited with status {code} when its stdin closed"
            + (": its last stderr lines follow" if tail else ""),
            "treat end of input as the end: leave the read loop and exit with status 0",
            tail,
        )
        return
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    report.add(
        "ignores-eof",
        "warning",
        f"did not exit when its stdin closed: it was stopped with {name}",
        "exit when reading stdin reaches end of input (the client is gone)",
    )


async def _converse(
    report: ServerReport, spec: StdioServer, transport: _Watched, limits: Limits, started: float
) -> bool:
    """Handshake and list the tools; True if both worked."""
    name = report.name
    timeout = limits.timeout or spec.handshake_timeout
    session = ClientSession(
        transport, name=name, protocol=spec.protocol, timeouts=Timeouts(timeout, timeout)
    )
    phase = "the handshake"
    try:
        async with session:
            explain_agreement(
                report, session, asyncio.get_running_loop().time() - started, limits.slow
            )
            phase = "tools/list"
            if session.dialect == "minimal" or "tools" in session.server_capabilities:
                check_tools(report, name, await session.list_tools(timeout=timeout))
            else:
                report.add(
                    "tools", "info", "no tools (the server does not offer the tools capability)"
                )
    except RequestTimeout as exc:
        explain_silence(report, exc, transport.stdout_watch)
        return False
    except ClosedOnProbe:
        raise
    except ConnectionClosed as exc:
        explain_exit(report, exc, phase)
        _note_limits(report, spec)
        return False
    except McpError as exc:
        report.add("protocol-error", "error", f"{phase} failed: {exc}")
        return False
    return True


def _note_limits(report: ServerReport, spec: StdioServer) -> None:
    """A server that dies under configured resource limits may simply need more."""
    limits = spec.limits
    if limits is None or limits.empty:
        return
    kinds = ("memory", "cpu", "files", "processes")
    shown = ", ".join(limits.describe(kind) for kind in kinds if getattr(limits, kind) is not None)
    report.add(
        "limits",
        "info",
        f"it ran under its configured {shown}; a server that needs more fails this way",
    )


async def _leftovers(marker: Marker) -> list[Leftover]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LEFTOVER_GRACE
    found = await asyncio.to_thread(marker.leftovers)
    while found and loop.time() < deadline:
        await asyncio.sleep(LEFTOVER_POLL)
        found = await asyncio.to_thread(marker.leftovers)
    return found


def _report_leftovers(report: ServerReport, marker: Marker, found: list[Leftover]) -> None:
    if not found:
        return
    marker.kill(found)
    shown = ", ".join(f"{leftover.pid} ({leftover.name})" for leftover in found[:5])
    report.add(
        "children-left",
        "error",
        f"processes still running after the server was stopped: {shown} "
        "(they left its process group; the doctor killed them)",
        "stop child processes when stdin closes or on SIGTERM, and do not detach them "
        "(setsid, daemons)",
    )
