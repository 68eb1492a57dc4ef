"""Server descriptions: what to connect to and how, as typed values or config-file dicts.

`server_from_dict` accepts one entry of a Claude-Code-style `{"mcpServers": {...}}` file and
returns the typed description; a bad field raises `ServerConfigError` naming it. Timeouts in
config dicts are in seconds.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from ._limits import Limits, limits_from_dict
from ._sandbox.profile import Sandbox, sandbox_from_dict
from ._versions import KNOWN_VERSIONS
from .errors import ServerConfigError

__all__ = [
    "DEFAULT_HANDSHAKE_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "StdioServer",
    "server_from_dict",
]

if TYPE_CHECKING:
    from ._versions import ProtocolChoice
    from .auth import OAuth

log = logging.getLogger("paicli.mcp.config")

# A server that has not finished its handshake in 30 s is stuck (npx downloads included);
# 60 s covers slow tools while still surfacing hung ones.
DEFAULT_HANDSHAKE_TIMEOUT = 30.0
DEFAULT_REQUEST_TIMEOUT = 60.0

PROTOCOL_CHOICES = ("auto", "legacy", "modern", *KNOWN_VERSIONS)
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
#: How an HTTP server is reached: Streamable HTTP falling back to legacy SSE, or only one.
HttpTransportChoice = Literal["auto", "http", "sse"]
HTTP_TRANSPORTS: tuple[HttpTransportChoice, ...] = get_args(HttpTransportChoice)
# An HTTP header name (an RFC 9110 token), and what a header value cannot hold: controls but
# tab (CR and LF would start another header; the HTTP client refuses them all at send time).
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE_BREAK = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_common(where: str, server: StdioServer | HttpServer) -> None:
    if server.protocol not in PROTOCOL_CHOICES:
        raise ServerConfigError(f"{where}: 'protocol' must be one of {', '.join(PROTOCOL_CHOICES)}")
    for key in ("handshake_timeout", "request_timeout"):
        value = getattr(server, key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ServerConfigError(f"{where}: {key!r} must be a positive number of seconds")
    if (
        isinstance(server.max_message_size, bool)
        or not isinstance(server.max_message_size, int)
        or server.max_message_size <= 0
    ):
        raise ServerConfigError(f"{where}: 'max_message_size' must be a positive integer")


@dataclass(frozen=True, slots=True)
class StdioServer:
    """A local server run as a subprocess speaking MCP over stdin/stdout.

    `protocol` pins the era (`"legacy"`, `"modern"`) or an exact version; `"auto"` probes
    once and remembers the verdict for this command line. `limits` bound what the
    server's process group may use (see `Limits`); `sandbox` is what it may read, write
    and reach (see `Sandbox`), limits applying inside it.
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    name: str | None = None
    protocol: ProtocolChoice = "auto"
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    stderr_file: str | None = None
    limits: Limits | None = None
    sandbox: Sandbox | None = None
    # Each line of stderr passes through this before it is written to `stderr_file`
    # (an application's redactor, say).
    stderr_filter: Callable[[str], str] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = f"server {self.name!r}" if self.name else "stdio server"
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise ServerConfigError(f"{where}: 'limits' must be a Limits")
        if self.sandbox is not None and not isinstance(self.sandbox, Sandbox):
            raise ServerConfigError(f"{where}: 'sandbox' must be a Sandbox")
        if not isinstance(self.command, str) or not self.command:
            raise ServerConfigError(f"{where}: 'command' must be a non-empty string")
        if isinstance(self.args, str) or not all(isinstance(a, str) for a in self.args):
            raise ServerConfigError(f"{where}: 'args' must be a list of strings")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
            raise ServerConfigError(f"{where}: 'env' must map strings to strings")
        _check_process_text(where, self)
        _check_common(where, self)

    @property
    def label(self) -> str:
        """A short name for messages: the configured name or the command."""
        return self.name or self.command

    @property
    def identity(self) -> tuple[str, ...]:
        """What identifies this server for remembering its protocol era."""
        return ("stdio", self.command, *self.args, self.cwd or "")


@dataclass(frozen=True, slots=True)
class HttpServer:
    """A remote server reached over HTTP.

    `transport` is `"auto"` (Streamable HTTP, falling back to the legacy HTTP+SSE transport
    of 2024-11-05 when the server refuses it), `"http"` (Streamable HTTP only) or `"sse"`
    (legacy HTTP+SSE only). `headers` go on every request (for example an API key).
    `auth` enables OAuth (`paicli.mcp.auth.OAuth`) on Streamable HTTP.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: HttpTransportChoice = "auto"
    name: str | None = None
    protocol: ProtocolChoice = "auto"
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    auth: OAuth | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = f"server {self.name!r}" if self.name else "http server"
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise ServerConfigError(f"{where}: 'url' must be an http:// or https:// URL")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()):
            raise ServerConfigError(f"{where}: 'headers' must map strings to strings")
        _check_url_and_headers(where, self)
        if self.transport not in HTTP_TRANSPORTS:
            raise ServerConfigError(f"{where}: 'type' must be 'http' or 'sse'")
        _check_common(where, self)

    @property
    def label(self) -> str:
        return self.name or self.url

    @property
    def identity(self) -> tuple[str, ...]:
        return ("http", self.url)


ServerSpec = StdioServer | HttpServer


def _check_process_text(where: str, server: StdioServer) -> None:
    """What the OS cannot take in a command line or an environment, refused here (by name,
    never by value: a value may be a secret) rather than when the process is started."""
    fields = {"command": [server.command], "args": list(server.args), "cwd": [server.cwd or ""]}
    fields["env"] = list(server.env.values())
    for key, values in fields.items():
        if any("\0" in value for value in values):
            raise ServerConfigError(f"{where}: {key!r} cannot contain a NUL character")
    for variable in server.env:
        if not variable or "=" in variable or "\0" in variable:
            raise ServerConfigError(
                f"{where}: 'env' has {_cut(variable)}, which is not a variable name"
            )


def _check_url_and_headers(where: str, server: HttpServer) -> None:
    """A URL that parses, with a host and a port in range, and headers an HTTP client sends
    as written; the URL itself is never quoted (it may carry a password)."""
    try:
        parts = urlsplit(server.url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise ServerConfigError(f"{where}: 'url' is not a valid URL ({exc})") from None
    if not parts.hostname:
        raise ServerConfigError(f"{where}: 'url' has no host")
    for name, value in server.headers.items():
        if not _HEADER_NAME.fullmatch(name):
            raise ServerConfigError(f"{where}: 'headers' has {_cut(name)}, not a header name")
        if _HEADER_VALUE_BREAK.search(value):
            raise ServerConfigError(
                f"{where}: header {name!r} has a control character (CR, LF, NUL...) in its value"
            )


def _cut(text: str) -> str:
    return repr(text[:64]) + ("..." if len(text) > 64 else "")


_COMMON_KEYS = {"type", "protocol", "startupTimeout", "timeout", "maxMessageSize"}
_STDIO_KEYS = _COMMON_KEYS | {"command", "args", "env", "cwd", "stderrFile", "limits", "sandbox"}
_HTTP_KEYS = _COMMON_KEYS | {"url", "headers"}


def server_from_dict(
    entry: Mapping[str, Any],
    *,
    name: str | None = None,
    extra_keys: Collection[str] = (),
    warnings: list[str] | None = None,
) -> ServerSpec:
    """Build a server description from one `mcpServers` entry of a config file.

    Keys this library does not know are ignored with a warning, except `extra_keys` (keys an
    application reads from the same entry). Warnings go to `warnings` when given, else to
    the `paicli.mcp.config` logger.
    """
    where = f"server {name!r}" if name else "server"
    if not isinstance(entry, Mapping):
        raise ServerConfigError(f"{where}: expected an object, got {type(entry).__name__}")
    kind = entry.get("type", "http" if "url" in entry else "stdio")
    if kind not in ("stdio", "http", "streamable-http", "sse"):
        raise ServerConfigError(
            f"{where}: unknown 'type' {kind!r} (expected 'stdio', 'http' or 'sse')"
        )
    common: dict[str, Any] = {
        "name": name,
        "protocol": entry.get("protocol", "auto"),
        "handshake_timeout": entry.get("startupTimeout", DEFAULT_HANDSHAKE_TIMEOUT),
        "request_timeout": entry.get("timeout", DEFAULT_REQUEST_TIMEOUT),
        "max_message_size": entry.get("maxMessageSize", DEFAULT_MAX_MESSAGE_SIZE),
    }
    if kind == "stdio":
        _warn_unknown(where, entry, _STDIO_KEYS | set(extra_keys), warnings)
        return _stdio_from_dict(where, entry, common)
    _warn_unknown(where, entry, _HTTP_KEYS | set(extra_keys), warnings)
    if "url" not in entry:
        raise ServerConfigError(f"{where}: missing 'url'")
    headers = entry.get("headers", {})
    if not isinstance(headers, Mapping):
        raise ServerConfigError(f"{where}: 'headers' must be an object of strings")
    # A plain `url` (or "type": "http") lets paicli fall back to legacy SSE when needed.
    transport: HttpTransportChoice = (
        "sse" if kind == "sse" else ("http" if "type" in entry else "auto")
    )
    return HttpServer(url=entry["url"], headers=dict(headers), transport=transport, **common)


def _warn_unknown(
    where: str, entry: Mapping[str, Any], known: set[str], warnings: list[str] | None
) -> None:
    for key in sorted(entry.keys() - known):
        text = f"{where}: ignoring unknown key {key!r}"
        if warnings is None:
            log.warning("%s", text)
        else:
            warnings.append(text)


def _stdio_from_dict(where: str, entry: Mapping[str, Any], common: dict[str, Any]) -> StdioServer:
    if "command" not in entry:
        raise ServerConfigError(f"{where}: missing 'command'")
    args = entry.get("args", [])
    env = entry.get("env", {})
    if not isinstance(args, list):
        raise ServerConfigError(f"{where}: 'args' must be a list of strings")
    if not isinstance(env, Mapping):
        raise ServerConfigError(f"{where}: 'env' must be an object of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ServerConfigError(f"{where}: 'cwd' must be a string")
    stderr_file = entry.get("stderrFile")
    if stderr_file is not None and not isinstance(stderr_file, str):
        raise ServerConfigError(f"{where}: 'stderrFile' must be a string")
    limits = entry.get("limits")
    sandbox = entry.get("sandbox", False)
    return StdioServer(
        command=entry["command"],
        args=tuple(args),
        env=dict(env),
        cwd=cwd,
        stderr_file=stderr_file,
        limits=None if limits is None else limits_from_dict(limits, where),
        sandbox=sandbox_from_dict(sandbox, where, cwd=cwd),
        **common,
    )
