"""Server descriptions: what to connect to and how, as typed values or config-file dicts.

`server_from_dict` accepts one entry of a Claude-Code-style `{"mcpServers": {...}}` file and
returns the typed description; a bad field raises `ServerConfigError` naming it. Timeouts in
config dicts are in seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._stdio import DEFAULT_MAX_MESSAGE_SIZE
from ._versions import KNOWN_VERSIONS
from .errors import ServerConfigError

__all__ = [
    "DEFAULT_HANDSHAKE_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "StdioServer",
    "server_from_dict",
]

log = logging.getLogger("paicli.mcp.config")

# A server that has not finished its handshake in 30 s is stuck (npx downloads included);
# 60 s covers slow tools while still surfacing hung ones.
DEFAULT_HANDSHAKE_TIMEOUT = 30.0
DEFAULT_REQUEST_TIMEOUT = 60.0

PROTOCOL_CHOICES = ("auto", "legacy", "modern", *KNOWN_VERSIONS)


@dataclass(frozen=True, slots=True)
class StdioServer:
    """A local server run as a subprocess speaking MCP over stdin/stdout.

    `protocol` pins the era (`"legacy"`, `"modern"`) or an exact version; `"auto"` probes
    once and remembers the verdict for this command line.
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    name: str | None = None
    protocol: str = "auto"
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    stderr_file: str | None = None

    def __post_init__(self) -> None:
        where = f"server {self.name!r}" if self.name else "stdio server"
        if not isinstance(self.command, str) or not self.command:
            raise ServerConfigError(f"{where}: 'command' must be a non-empty string")
        if isinstance(self.args, str) or not all(isinstance(a, str) for a in self.args):
            raise ServerConfigError(f"{where}: 'args' must be a list of strings")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
            raise ServerConfigError(f"{where}: 'env' must map strings to strings")
        if self.protocol not in PROTOCOL_CHOICES:
            raise ServerConfigError(
                f"{where}: 'protocol' must be one of {', '.join(PROTOCOL_CHOICES)}"
            )
        for key in ("handshake_timeout", "request_timeout"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ServerConfigError(f"{where}: {key!r} must be a positive number of seconds")
        if self.max_message_size <= 0:
            raise ServerConfigError(f"{where}: 'max_message_size' must be positive")

    @property
    def label(self) -> str:
        """A short name for messages: the configured name or the command."""
        return self.name or self.command

    @property
    def identity(self) -> tuple[str, ...]:
        """What identifies this server for remembering its protocol era."""
        return ("stdio", self.command, *self.args, self.cwd or "")


_STDIO_KEYS = {
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "protocol",
    "startupTimeout",
    "timeout",
    "maxMessageSize",
    "stderrFile",
}
# Keys that belong to other layers (the server manager) and are valid in a config entry.
_MANAGER_KEYS = {"disabled", "includeTools", "excludeTools", "restart", "trust", "description"}


def server_from_dict(entry: Mapping[str, Any], *, name: str | None = None) -> StdioServer:
    """Build a server description from one `mcpServers` entry of a config file."""
    where = f"server {name!r}" if name else "server"
    if not isinstance(entry, Mapping):
        raise ServerConfigError(f"{where}: expected an object, got {type(entry).__name__}")
    kind = entry.get("type", "stdio")
    if "url" in entry or kind in ("http", "sse", "streamable-http"):
        raise ServerConfigError(f"{where}: HTTP servers are not supported yet")
    if kind != "stdio":
        raise ServerConfigError(f"{where}: unknown 'type' {kind!r} (expected 'stdio')")
    if "command" not in entry:
        raise ServerConfigError(f"{where}: missing 'command'")
    for key in entry.keys() - _STDIO_KEYS - _MANAGER_KEYS:
        log.warning("%s: ignoring unknown key %r", where, key)
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
    return StdioServer(
        command=entry["command"],
        args=tuple(args),
        env=dict(env),
        cwd=cwd,
        name=name,
        protocol=entry.get("protocol", "auto"),
        handshake_timeout=entry.get("startupTimeout", DEFAULT_HANDSHAKE_TIMEOUT),
        request_timeout=entry.get("timeout", DEFAULT_REQUEST_TIMEOUT),
        max_message_size=entry.get("maxMessageSize", DEFAULT_MAX_MESSAGE_SIZE),
        stderr_file=stderr_file,
    )
