"""The servers layer's exceptions (the whole tree is drawn in `paicli.errors`).

`ServerManager` raises the `ServerError`s: a name it does not know, a server that is not ready,
and a call that failed on the wire, which wraps the library's `McpError` (`from exc`), so its
callers never see the library's exceptions or a bare `KeyError`.
"""

from __future__ import annotations

from paicli.errors import PaicliError

__all__ = ["ConfigError", "ServerCallFailed", "ServerError", "ServerNotReady", "UnknownServer"]


class ConfigError(PaicliError):
    """An MCP config file cannot be used or changed; the message names the file."""


class ServerError(PaicliError):
    """A configured MCP server cannot serve a request; `server` is its name."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message)
        self.server = server


class UnknownServer(ServerError):
    """No configured server has this name."""

    def __init__(self, server: str) -> None:
        super().__init__(server, f"no MCP server named {server!r}")


class ServerNotReady(ServerError):
    """The server is starting, failed, disabled or stopped; `state` says which."""

    def __init__(self, server: str, state: str) -> None:
        super().__init__(server, f"server {server!r} is not ready ({state})")
        self.state = state


class ServerCallFailed(ServerError):
    """A request to a ready server failed (an error reply, a timeout, the connection lost).

    The message is the library's own; the `McpError` is `__cause__`. `server_text` is the
    part of the message the server wrote (an error page's excerpt, a JSON-RPC error's
    message, its last stderr lines), which no one may present as paicli's words.
    """

    def __init__(
        self, server: str, tool: str, message: str, *, server_text: str | None = None
    ) -> None:
        super().__init__(server, message)
        self.tool = tool
        self.server_text = server_text
