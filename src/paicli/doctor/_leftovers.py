"""Processes a server left running after it was stopped, found by a mark in their environment.

The library's shutdown ladder stops the server's whole process group; a child that left
the group (setsid, a daemon's double fork) survives it, orphaned, and nothing links it to
the server any more except what it inherited. So the doctor starts each server with a
variable holding a random token, and afterwards looks for live processes whose environment
carries it (Linux /proc; elsewhere nothing is found). What it finds it reports, then kills,
so the doctor's own run leaves nothing behind.
"""

from __future__ import annotations

import os
import secrets
import signal
from dataclasses import dataclass

from paicli.servers.leftovers import carries, state_of

__all__ = ["MARK_VARIABLE", "Leftover", "Marker"]

MARK_VARIABLE = "PAICLI_DOCTOR_RUN"


@dataclass(frozen=True, slots=True)
class Leftover:
    pid: int
    name: str


class Marker:
    """One run's token: `env` to start the server with, `leftovers()` to find what remains."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(8)
        self._needle = f"{MARK_VARIABLE}={self.token}".encode()

    def env(self) -> dict[str, str]:
        return {MARK_VARIABLE: self.token}

    def leftovers(self) -> list[Leftover]:
        """Live (not zombie) processes carrying the mark."""
        found = []
        try:
            entries = os.listdir("/proc")
        except OSError:
            return []
        for entry in entries:
            if entry.isdigit() and self._marked(entry) and state_of(entry) not in (None, "Z"):
                found.append(Leftover(int(entry), _name(entry)))
        return found

    def kill(self, leftovers: list[Leftover]) -> None:
        """SIGKILL each leftover that still carries the mark (through a pidfd, so a pid
        reused meanwhile is never hit)."""
        for leftover in leftovers:
            try:
                pidfd = os.pidfd_open(leftover.pid)
            except (AttributeError, OSError):
                continue
            try:
                if self._marked(str(leftover.pid)):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(pidfd)

    def _marked(self, pid: str) -> bool:
        return carries(pid, self._needle)


def _name(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as file:
            return file.read().strip().decode("utf-8", "replace")
    except OSError:
        return "?"
