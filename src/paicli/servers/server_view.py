"""The servers as callers see them: the configured entry, the state, where a start went, a view.

`ManagedServer` is what `ServerManager.get()`/`servers()` hand out and what change callbacks
receive: the live record the supervisor keeps (`server_record.ServerRecord`), typed so that
nobody outside the supervisor changes it and nobody probes it with `getattr`. Reads are
always current: a view held across an `await` shows the server's state at the next read.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from paicli.mcp import ClientSession, HttpServer, StdioServer, Tool
    from paicli.servers.containment import Containment
    from paicli.servers.oauth import OAuthSettings
    from paicli.servers.retry import RetryPolicy

__all__ = ["ChangeCallback", "ManagedServer", "ServerEntryLike", "ServerState", "StartTimes"]


class ServerEntryLike(Protocol):
    """What the manager and its callers read of a configured server (`config.ServerEntry`)."""

    @property
    def name(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def spec(self) -> StdioServer | HttpServer | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def disabled(self) -> bool: ...
    @property
    def include_tools(self) -> tuple[str, ...] | None: ...
    @property
    def exclude_tools(self) -> tuple[str, ...] | None: ...
    @property
    def restart(self) -> str: ...
    @property
    def max_restarts(self) -> int: ...
    @property
    def lazy(self) -> bool: ...
    @property
    def trust(self) -> bool: ...
    @property
    def retry(self) -> RetryPolicy | None: ...
    @property
    def retry_tools(self) -> tuple[str, ...]: ...
    @property
    def oauth(self) -> OAuthSettings | None: ...
    @property
    def containment(self) -> Containment | None: ...
    @property
    def first_start_timeout(self) -> float: ...


class ServerState(enum.Enum):
    STARTING = "starting"
    READY = "ready"
    ERROR = "error"
    DISABLED = "disabled"
    STOPPED = "stopped"
    IDLE = "idle"  # "start": "lazy", its tools known from the catalogue: starts on first use


# A start that takes this long (seconds) is explained in `/mcp`: what it was spent on.
SLOW_START = 1.0


@dataclass(frozen=True)
class StartTimes:
    """Where a start's seconds went: waiting for a start slot, spawning and negotiating
    (of which `probe` on a discovery probe before the handshake), listing the tools."""

    queued: float
    connect: float
    probe: float | None
    tools: float

    def why_slow(self, concurrency: int) -> str | None:
        """The biggest part of a slow start, in words (None: the start was not slow)."""
        total = self.queued + self.connect + self.tools
        if total < SLOW_START:
            return None
        probe = self.probe or 0.0
        parts = {
            "queued": self.queued,
            "probe": probe,
            "connect": self.connect - probe,
            "tools": self.tools,
        }
        biggest = max(parts, key=lambda k: parts[k])
        seconds = parts[biggest]
        if biggest == "queued":
            return f"waited {seconds:.1f}s for a start slot ({concurrency} servers start at once)"
        if biggest == "probe":
            return (
                f"{seconds:.1f}s went on the 2026 discovery probe before the initialize "
                'handshake ("protocol": "legacy" skips it)'
            )
        if biggest == "tools":
            return f"the server took {seconds:.1f}s to list its tools"
        return f"the server took {seconds:.1f}s to start and answer the handshake"


class ManagedServer(Protocol):
    """One server's live state, as `paicli mcp list` and `/mcp` show it (read-only)."""

    @property
    def name(self) -> str: ...
    @property
    def entry(self) -> ServerEntryLike: ...
    @property
    def state(self) -> ServerState: ...
    @property
    def error(self) -> str | None: ...
    @property
    def tools(self) -> list[Tool]:
        """Its tools after screening and the config's filters (empty unless ready)."""

    @property
    def session(self) -> ClientSession | None: ...
    @property
    def ready_after(self) -> float | None:
        """Seconds its last start took, from the first attempt to ready."""

    @property
    def restarts(self) -> int: ...
    @property
    def stderr_tail(self) -> Sequence[str]:
        """The last stderr lines of its connection that ended last."""

    @property
    def cached_tools(self) -> Sequence[Tool] | None:
        """While it starts for the first time: its tools as the catalogue recorded them."""

    @property
    def cached_instructions(self) -> str | None:
        """... and its instructions then."""

    @property
    def start_times(self) -> StartTimes | None: ...
    @property
    def slow_start(self) -> str | None:
        """Why its last start was slow, in words (None: it was not)."""

    @property
    def left_out(self) -> Mapping[str, str]:
        """Tools it lists that are not offered, and why."""

    @property
    def last_exit(self) -> str | None:
        """How its last process ended, in words (None: none has, or not a stdio server)."""

    @property
    def needs_login(self) -> bool: ...
    def installing_note(self) -> str | None:
        """`installing fs (npx)… 12s` while its first start may be an install, else None."""

    @property
    def revive_at(self) -> float | None:
        """After a crash: when (loop time) its next call may start it again (None: not so)."""

    @property
    def will_restart(self) -> bool: ...
    @property
    def settled_news(self) -> bool: ...
    @property
    def transport(self) -> str:
        """`stdio`, `http`, `sse` (or `?`): what carries its messages."""

    @property
    def pid(self) -> int | None: ...
    @property
    def skipped_lines(self) -> int: ...
    @property
    def uptime(self) -> float | None: ...
    def failure(self) -> str | None:
        """A failed server's error as one line, with what became of the restarts."""

    def unavailable(self) -> str:
        """Why it cannot take a call now, in one sentence for the model and the user."""


ChangeCallback = Callable[[ManagedServer], object]
