"""One server's record: its state, tools, session and the story of its starts.

The supervisor (`supervisor.py`) is its only writer; everyone else reads it as a
`server_view.ManagedServer`. The sentences it makes (`failure`, `unavailable`) are the ones
`/mcp`, `paicli mcp list`, the change lines and the model all read, so they say the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paicli.mcp import HttpServer, StdioServer
from paicli.servers.server_view import ServerEntryLike, ServerState, StartTimes

if TYPE_CHECKING:
    from paicli.mcp import ClientSession, Tool

__all__ = ["ServerRecord"]


@dataclass
class ServerRecord:
    """One server's live state (`server_view.ManagedServer` is how callers see it)."""

    entry: ServerEntryLike
    state: ServerState = ServerState.STOPPED
    error: str | None = None
    tools: list[Tool] = field(default_factory=list)
    session: ClientSession | None = None
    started_at: float | None = None
    # What `started_at` was read on: the supervisor's loop's clock.
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    ready_after: float | None = None
    restarts: int = 0
    stderr_tail: list[str] = field(default_factory=list)
    # While it starts for the first time: its tools as the catalogue recorded them last run
    # (filtered), offered until it is up (None: no catalogue entry, or it has settled).
    cached_tools: list[Tool] | None = None
    # ... and its instructions then, for the system prompt (None: none, or settled).
    cached_instructions: str | None = None
    # Between a crash and the restart paicli has scheduled for it (`restart: on-failure`).
    restarting: bool = False
    # Where its last start's seconds went, and why it was slow in words (None: it was not).
    start_times: StartTimes | None = None
    slow_start: str | None = None
    # Tools it lists that are not offered, and why (`screening.screen`): unreadable, too
    # large, ...
    left_out: dict[str, str] = field(default_factory=dict)
    # Its last start failed for want of an OAuth login (`paicli mcp login NAME`).
    needs_login: bool = False
    # How its last process ended ("exited with code 1", "killed with SIGKILL: ..."), once
    # one has (stdio servers).
    last_exit: str | None = None
    # Its connection ended while it served (a crash, an exit): it is started again at the
    # next call of one of its tools, not before this time on `clock` (backoff; None: it is
    # not revived so). Its last tools stay offered meanwhile (`crash_tools`), and `crashes`
    # counts the crashes (and failed revivals) that set the backoff.
    revive_at: float | None = None
    # While its first start runs through a package runner that may be installing it: the
    # runner (`npx`); and when (on `clock`) its current start began.
    installing: str | None = None
    start_began: float | None = None
    crashes: int = 0
    crash_tools: list[Tool] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def will_restart(self) -> bool:
        """Failed, and paicli is going to start it again by itself."""
        if self.state is not ServerState.ERROR or self.entry.spec is None:
            return False
        if self.restarting:
            return True
        return self.entry.restart == "on-failure" and self.restarts < self.entry.max_restarts

    def failure(self) -> str | None:
        """A failed server's error as one line, with what became of the restarts: the one
        summary `/mcp`, `paicli mcp list` and the change lines show (None: not failed)."""
        if self.state is not ServerState.ERROR:
            return None
        if self.needs_login:
            return f"⚠ needs login: paicli mcp login {self.name}"
        error = _one_line(self.error or "failed")
        if self.revive_at is not None and not self.will_restart:
            return f"{error} (started again at its next call)"
        if self.will_restart:
            attempt = self.restarts + (0 if self.restarting else 1)
            return f"{error} (restarting: {attempt} of {self.entry.max_restarts})"
        if self.entry.restart == "on-failure" and self.restarts:
            plural = "" if self.restarts == 1 else "s"
            return f"failed after {self.restarts} restart{plural}: {error}"
        return error

    @property
    def settled_news(self) -> bool:
        """Whether this change is worth a line of its own: the first start and the first
        recovery, the first failure and the last one; a crash loop's attempts in between
        are summed up by the last (`failure()`)."""
        if self.state is ServerState.READY:
            return self.restarts <= 1
        if self.state is ServerState.ERROR:
            return self.restarts == 0 or not self.will_restart
        return False

    def unavailable(self) -> str:
        """Why this server cannot take a call now, in one sentence for the model and the
        user: what happened to it and whether it comes back by itself."""
        name = repr(self.name)
        state = self.state
        if state is ServerState.ERROR and self.needs_login:
            return (
                f"MCP server {name} needs the user to log in (paicli mcp login {self.name}); "
                "its tools are not available until then."
            )
        if state is ServerState.ERROR:
            reason = _one_line(self.error or "it failed")
            if self.will_restart:
                return (
                    f"MCP server {name} failed ({reason}); paicli is restarting it "
                    f"(restart {self.restarts + (0 if self.restarting else 1)} of "
                    f"{self.entry.max_restarts}), so its tools may return shortly."
                )
            if self.revive_at is not None:
                return (
                    f"MCP server {name} failed ({reason}); paicli starts it again at the "
                    "next call of one of its tools."
                )
            if self.entry.restart == "on-failure" and self.restarts:
                plural = "" if self.restarts == 1 else "s"
                why = f"it failed again after {self.restarts} restart{plural}"
            else:
                why = "it is not restarted automatically"
            return (
                f"MCP server {name} failed ({reason}) and {why}; its tools are gone until "
                f"the user restarts it (/mcp restart {self.name})."
            )
        if state is ServerState.DISABLED:
            return f"MCP server {name} was disabled by the user; its tools are gone."
        if state is ServerState.STARTING:
            return f"MCP server {name} is still starting; try again shortly."
        if state is ServerState.READY:
            return f"MCP server {name} is running but no longer offers this tool."
        return f"MCP server {name} is {state.value}; its tools are not available."

    @property
    def transport(self) -> str:
        """What carries its messages: the live connection's (a plain `url` may have fallen
        back to legacy SSE), else what the config asks for."""
        kind = self.session.transport.traits.kind if self.session is not None else None
        if kind in ("stdio", "http", "sse"):
            return kind
        spec = self.entry.spec
        if isinstance(spec, StdioServer):
            return "stdio"
        if isinstance(spec, HttpServer):
            return "sse" if spec.transport == "sse" else "http"
        return "?"

    @property
    def pid(self) -> int | None:
        process = self.session.process if self.session is not None else None
        return process.pid if process is not None else None

    @property
    def skipped_lines(self) -> int:
        """Lines its connection skipped as no message (banners, logs on stdout)."""
        process = self.session.process if self.session is not None else None
        return process.skipped_lines() if process is not None else 0

    def installing_note(self) -> str | None:
        """`installing fs (npx)… 12s` while its first start may be an install, else None."""
        if self.state is not ServerState.STARTING or self.installing is None:
            return None
        if self.start_began is None or self.restarting:
            return None
        return f"installing {self.name} ({self.installing})… {self.clock() - self.start_began:.0f}s"

    @property
    def uptime(self) -> float | None:
        if self.state is not ServerState.READY or self.started_at is None:
            return None
        return self.clock() - self.started_at


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
