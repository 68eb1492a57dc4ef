"""What each server spoke when last probed (`EraCache`), apart from the handshake that
finds it out (`_negotiate`): a program holds one before it connects anything, and need not
load the handshake to do so."""

from __future__ import annotations

from typing import Literal

__all__ = ["EraCache", "Verdict"]

#: What a probe found a server speaks: an MCP era, or the minimal dialect.
Verdict = Literal["legacy", "modern", "minimal"]


class EraCache:
    """Which era (or the minimal dialect) each server spoke when last probed, keyed by the
    server's identity.

    Only a probe's verdict is stored (a pinned protocol says nothing about the server), so a
    later `auto` connection to a legacy server (or a minimal tool) skips the probe.
    """

    def __init__(self) -> None:
        self._eras: dict[tuple[str, ...], Verdict] = {}

    def get(self, identity: tuple[str, ...]) -> Verdict | None:
        return self._eras.get(identity)

    def remember(self, identity: tuple[str, ...], era: Verdict) -> None:
        self._eras[identity] = era

    def forget(self, identity: tuple[str, ...] | None = None) -> None:
        """Forget one server's verdict, or every verdict."""
        if identity is None:
            self._eras.clear()
        else:
            self._eras.pop(identity, None)
