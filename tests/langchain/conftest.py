"""Helpers for the LangChain bridge tests: our test tool server, as a command or a config,
and the C example tool (built by tests/examples)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from paicli.mcp import StdioServer
from tests.examples.test_example_tools import c_build  # the C example tool, built once

__all__ = ["TOOL_SERVER", "c_build", "tool_server", "tool_server_entry"]

TOOL_SERVER = Path(__file__).parent / "tool_server.py"


def tool_server(**options: Any) -> StdioServer:
    """tests/langchain/tool_server.py run by this interpreter."""
    return StdioServer(sys.executable, [str(TOOL_SERVER)], **options)


def tool_server_entry(**extra: Any) -> dict[str, Any]:
    """The same server as an `mcpServers` entry."""
    return {"command": sys.executable, "args": [str(TOOL_SERVER)], **extra}
