"""Shared test helpers: server descriptions for our fault server and the SDK server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import StdioServer, _negotiate

SERVERS = Path(__file__).parent / "servers"
REPO = Path(__file__).parent.parent


def fault_server(mode: str = "normal", *extra: str, **options: Any) -> StdioServer:
    """Our stdlib fault-injection server in `mode` (see tests/servers/fault_server.py)."""
    return StdioServer(
        sys.executable,
        args=[str(SERVERS / "fault_server.py"), "--mode", mode, *extra],
        **options,
    )


def sdk_server(**options: Any) -> StdioServer:
    """A server built on the official `mcp` SDK (dual-era)."""
    return StdioServer(sys.executable, args=[str(SERVERS / "sdk_server.py")], **options)


@pytest.fixture(autouse=True)
def _forget_protocol_verdicts() -> None:
    """Each test negotiates from scratch: the era cache is per process."""
    _negotiate._ERA_CACHE.clear()
