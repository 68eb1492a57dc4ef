"""The exceptions raised by `paicli.mcp`.

Every error the library raises derives from `McpError`:

    McpError
    ├── ServerConfigError        a server description is invalid (bad field or value)
    ├── ConnectionClosed         the transport is gone; every pending call fails with it
    │   ├── MessageTooLarge      the peer sent a message over the configured size cap
    │   └── ClosedOnProbe        a stdio server exited on the 2026 discovery probe, before
    │                            answering anything (it takes `initialize` first only)
    ├── HttpError                an HTTP exchange failed: refused, TLS, timeout, bad status
    │   ├── SessionExpired       the server forgot its session (404 / -32001); see `renewed`
    │   └── AuthenticationError  401/403: the server wants credentials, or refuses these
    │       └── OAuthError       the OAuth flow failed (bad metadata, refused grant, ...)
    │           └── LoginRequired  the server needs a user's login and none can be asked
    ├── RequestTimeout           a request passed its deadline (the server was told to cancel)
    ├── RpcError                 the server answered with a JSON-RPC error (code, message, data)
    │   └── UnsupportedVersion   -32022: the server does not speak the requested version
    ├── ProtocolError            the server broke the protocol (bad version, malformed result)
    │   └── SkillVerificationError  a skill's file is not what its entry promised (SEP-2640)
    ├── HandlerError             a 2026 server asked for input (roots, sampling, elicitation)
    │                            and the client could not give it (no handler, or it failed)
    └── SandboxUnavailable       no sandbox mechanism here can enforce a strict profile

Errors raised locally (timeouts, closed connections) are distinct types from errors the
peer sent (`RpcError`), so callers never confuse the two. Caller cancellation stays a plain
`asyncio.CancelledError`. Text the server supplied (an error body's excerpt, a JSON-RPC
error's message, a stdio server's last stderr lines) is also on `server_text`, so a caller
that must not present it as its own words (an agent, to its model) can tell it apart.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthenticationError",
    "ClosedOnProbe",
    "ConnectionClosed",
    "HandlerError",
    "HttpError",
    "LoginRequired",
    "McpError",
    "MessageTooLarge",
    "OAuthError",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "SandboxUnavailable",
    "ServerConfigError",
    "SessionExpired",
    "SkillVerificationError",
    "UnsupportedVersion",
]


class McpError(Exception):
    """Root of every exception raised by `paicli.mcp`."""

    #: The part of the message the server supplied (escaped, as quoted in it), or None.
    server_text: str | None = None


class ServerConfigError(McpError):
    """A server description is invalid; the message names the field."""


class ConnectionClosed(McpError):
    """The transport to the server is closed, with the reason it closed.

    For stdio servers `exit_code` holds the process's exit status (when known),
    `stderr_tail` its last stderr lines, and `limit` the resource limit that stopped it
    (`"memory limit (512M)"`, `"CPU limit (30 s)"`), if one did.
    """

    def __init__(
        self,
        reason: str,
        *,
        exit_code: int | None = None,
        stderr_tail: tuple[str, ...] = (),
        limit: str | None = None,
    ) -> None:
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.limit = limit
        if stderr_tail:
            self.server_text = " | ".join(stderr_tail[-5:])
        super().__init__(self._render())

    def _render(self) -> str:
        text = self.reason
        if self.exit_code is not None:
            text += f" (exit code {self.exit_code})"
        if self.stderr_tail:
            text += "; last stderr: " + " | ".join(self.stderr_tail[-5:])
        return text


class MessageTooLarge(ConnectionClosed):
    """The peer sent a message larger than the configured maximum."""


class ClosedOnProbe(ConnectionClosed):
    """A stdio server exited on the 2026 `server/discover` probe before answering anything.

    Servers built on SDKs that predate the 2026 revision (the Rust SDK before rmcp 3.0, for
    one) exit when their first message is not `initialize`. `connect()` starts such a
    server again once with `initialize` (and remembers the verdict in its `EraCache`); a
    session built directly on a transport raises this, and `"protocol": "legacy"` avoids
    the probe altogether.
    """

    @classmethod
    def of(cls, exc: ConnectionClosed) -> ClosedOnProbe:
        return cls(
            exc.reason, exit_code=exc.exit_code, stderr_tail=exc.stderr_tail, limit=exc.limit
        )


class HttpError(McpError):
    """An HTTP request to a remote server failed; `status` is set when one was received,
    `server_text` when the message quotes the server's answer (an escaped excerpt)."""

    def __init__(
        self, message: str, *, status: int | None = None, server_text: str | None = None
    ) -> None:
        self.status = status
        self.server_text = server_text or None
        super().__init__(message)


class SessionExpired(HttpError):
    """The server forgot the session it keeps for this client (HTTP 404, or the JSON-RPC
    error -32001 "Session not found"), 2025-03-26 to 2025-11-25 servers only.

    `renewed`: a new session was established (later requests go through), but this
    request was not sent again, since it may not be safe to repeat (a `tools/call`; other
    requests are repeated without raising this). When False, the new handshake failed too
    and the message says why; the next request tries once more.
    """

    def __init__(self, message: str, *, renewed: bool, status: int | None = None) -> None:
        self.renewed = renewed
        super().__init__(message, status=status)


class AuthenticationError(HttpError):
    """The server answered 401 or 403: it wants credentials this client does not have, or
    refuses this client for a reason of its own (the message quotes the server's reason)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        www_authenticate: str | None,
        server_text: str | None = None,
    ) -> None:
        self.www_authenticate = www_authenticate
        super().__init__(message, status=status, server_text=server_text)


class OAuthError(AuthenticationError):
    """Authorizing with OAuth failed: hostile or broken metadata, a refused registration or
    grant, a mismatched `state` or `iss`. The message names the server and the step; it
    never contains a token or a client secret."""

    def __init__(
        self, message: str, *, status: int = 401, www_authenticate: str | None = None
    ) -> None:
        super().__init__(message, status=status, www_authenticate=www_authenticate)


class LoginRequired(OAuthError):
    """The server needs an interactive login (a browser redirect) and this connection has no
    way to ask for one: run the application's login command, then connect again."""


class RequestTimeout(McpError):
    """A request did not complete before its deadline.

    `seconds` is the timeout (the time allowed without an answer, or since the last progress
    notification when progress extends the deadline). When progress did extend it, the
    message says how long the request ran (`elapsed`) and which limit ended it: no progress
    for `seconds`, or `maximum` (set only when that cap was the limit hit).
    """

    def __init__(
        self,
        method: str,
        seconds: float,
        *,
        server: str | None = None,
        elapsed: float | None = None,
        maximum: float | None = None,
    ) -> None:
        self.method = method
        self.seconds = seconds
        self.server = server
        self.elapsed = seconds if elapsed is None else elapsed
        self.maximum = maximum
        where = f"{server}: " if server else ""
        if maximum is not None:
            why = (
                f"timed out after {self.elapsed:.1f}s: progress kept it going, up to "
                f"its maximum of {maximum:g}s"
            )
        elif elapsed is not None and elapsed > seconds * 1.05:  # progress extended it
            why = f"timed out after {elapsed:.1f}s: no answer or progress for {seconds:g}s"
        else:
            why = f"timed out after {seconds:g}s"
        super().__init__(f"{where}{method} {why}")

    @property
    def limit(self) -> str:
        """Which limit ended the request: "maximum" or "timeout"."""
        return "maximum" if self.maximum is not None else "timeout"


class RpcError(McpError):
    """A JSON-RPC error response from the server."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.server_text = message
        super().__init__(f"{message} (code {code})")


class UnsupportedVersion(RpcError):
    """The server answered -32022: it does not support the requested protocol version."""

    @property
    def supported(self) -> tuple[str, ...]:
        data = self.data if isinstance(self.data, dict) else {}
        versions = data.get("supported")
        if not isinstance(versions, list):
            return ()
        return tuple(v for v in versions if isinstance(v, str))


class ProtocolError(McpError):
    """The server broke the protocol: an unknown version, a malformed result, and so on."""


class SkillVerificationError(ProtocolError):
    """A skill's file is not what its entry promised (size, digest, front matter), or is not
    listed in it (`paicli.mcp.skills`): its content must not be used."""


class HandlerError(McpError):
    """A server's ask for input could not be answered: no handler, or the handler failed."""


class SandboxUnavailable(McpError):
    """No sandbox mechanism on this machine can enforce the profile (and it is strict); the
    message is one line saying what is missing (`bwrap` not installed, no Landlock, ...)."""
