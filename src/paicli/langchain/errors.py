"""The exceptions of the LangChain bridge, each also a built-in LangChain code already handles.

    PaicliError
    └── BridgeError               paicli.langchain: a bridged tool cannot be made or called
        ├── ExecutableProblem     (also ValueError) the executable cannot run: not found, not
        │                         executable, a missing or CRLF shebang; raised at creation
        ├── ToolTimeout           (also TimeoutError) a call passed its deadline
        └── ServerUnavailable     (also ConnectionError) the server crashed, exited or cannot
                                  be reached; the next call starts it again

So `RunnableRetry(retry_if_exception_type=(TimeoutError, ConnectionError))` retries exactly
the failures worth retrying. A tool's own error result is LangChain's `ToolException`
(raised by the tool, not defined here), so `handle_tool_error` decides what the model sees.
"""

from __future__ import annotations

from paicli.errors import PaicliError

__all__ = ["BridgeError", "ExecutableProblem", "ServerUnavailable", "ToolTimeout"]


class BridgeError(PaicliError):
    """A bridged MCP tool cannot be made or called; the message names the server."""


class ExecutableProblem(BridgeError, ValueError):
    """The executable of `MCPTool.from_executable` cannot be run; the message says how to fix
    it."""


class ToolTimeout(BridgeError, TimeoutError):
    """A call did not finish before its deadline (the server was told to cancel it)."""


class ServerUnavailable(BridgeError, ConnectionError):
    """The server crashed, exited, or could not be started or reached."""
