"""Servers run through a package runner (`npx`, `uvx`, `pipx run`, ...), whose first start
downloads and installs the package before the server can answer: 15-45 s is common.

Such a server's first start (no catalogue entry yet, never up in this run) is allowed its
`firstStartTimeout` (seconds, per server; 120 by default) instead of its startup timeout,
and is shown as installing, with the time it has taken so far, wherever a starting server
is shown. Nobody waits for it longer than the start budget (`call_limits`): the prompt and
the first request go without its tools, which join once it is up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from paicli.mcp import HttpServer, StdioServer
from paicli.servers._config_file import InvalidConfig

__all__ = ["DEFAULT_FIRST_START", "first_start", "first_start_timeout", "package_runner"]

# Long enough for npx to fetch a package and its dependencies on a slow line, short enough
# that a runner stuck on a prompt or a dead registry is still reported.
DEFAULT_FIRST_START = 120.0
# A config (a repository's, too) cannot make a call wait on a start for longer than this.
MAX_FIRST_START = 1800.0
# Runners that fetch the package named in their arguments when it is not cached yet.
_RUNNERS = {"npx": "npx", "bunx": "bunx", "pnpx": "pnpx", "uvx": "uvx"}
# Programs whose subcommand does the same: `pipx run`, `uv tool run`, `npm exec`, ...
_SUBCOMMANDS = {
    "pipx": ("run",),
    "uv": ("tool", "run"),
    "npm": ("exec",),
    "pnpm": ("dlx",),
    "yarn": ("dlx",),
}


def package_runner(spec: StdioServer | HttpServer | None) -> str | None:
    """The package runner `spec` starts its server with (`npx`, `pipx run`, ...), if any."""
    if not isinstance(spec, StdioServer):
        return None
    program = os.path.basename(spec.command)
    if program in _RUNNERS:
        return _RUNNERS[program]
    words = _SUBCOMMANDS.get(program)
    if words is not None and tuple(spec.args[: len(words)]) == words:
        return " ".join((program, *words))
    return None


def first_start(
    spec: StdioServer | HttpServer, timeout: float, first: bool
) -> tuple[StdioServer | HttpServer, str | None]:
    """`spec` for this start, and its package runner when it is a `first` start that may
    be an install (it then gets `timeout`, the server's `firstStartTimeout`, if longer)."""
    runner = package_runner(spec)
    if runner is None or not first:
        return spec, None
    return replace(spec, handshake_timeout=max(spec.handshake_timeout, timeout)), runner


def first_start_timeout(value: Mapping[str, object], where: str) -> float:
    """The entry's `firstStartTimeout` (seconds), or the default."""
    seconds = value.get("firstStartTimeout", DEFAULT_FIRST_START)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        seconds = -1
    if not 0 < seconds <= MAX_FIRST_START:
        raise InvalidConfig(
            f"{where}: 'firstStartTimeout' must be a positive number of seconds, at most "
            f"{MAX_FIRST_START:g}"
        )
    return float(seconds)
