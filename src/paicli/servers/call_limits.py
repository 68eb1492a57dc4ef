"""How long a tool call may take: the timeout (no answer and no progress for that long) and
the maximum that progress notifications may extend a call to, per server, with where each
figure came from so a timed-out call can say which limit it hit and how to raise it.

The most specific wins: the server's own `timeout` / `maxTimeout` (seconds, in its mcp.json
entry) > `PAICLI_MCP_TIMEOUT` / `PAICLI_MCP_MAX_TIMEOUT` > `mcp_timeout` / `mcp_max_timeout`
in config.toml > the defaults (60 s; the maximum ten times the timeout).

Beside them, the start budget: how long the REPL's first turn and `paicli -p` wait for
servers still starting before the model is asked without them (`PAICLI_MCP_START_BUDGET` >
`mcp_start_budget` in config.toml > 3 s).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from paicli.mcp import RequestTimeout
from paicli.servers.config import ServerEntry
from paicli.user_config import UserConfig

__all__ = [
    "CallDefaults",
    "CallLimits",
    "call_defaults",
    "limits_by_server",
    "limits_for",
    "timeout_advice",
]

# The library's default request timeout (a server entry without "timeout" gets it).
DEFAULT_TIMEOUT = 60.0
ENV_TIMEOUT = "PAICLI_MCP_TIMEOUT"
ENV_MAX_TIMEOUT = "PAICLI_MCP_MAX_TIMEOUT"
ENV_START_BUDGET = "PAICLI_MCP_START_BUDGET"
# Most servers answer well within it; one that hangs or installs itself (npx) costs no more.
DEFAULT_START_BUDGET = 3.0
# A call that keeps reporting progress may run this many times its timeout by default: a
# 60 s timeout lets a long build or crawl that says how it is doing run ten minutes.
MAX_FACTOR = 10

_RAISE_TIMEOUT = f'"timeout" in the server\'s entry, {ENV_TIMEOUT}, or mcp_timeout in config.toml'
_RAISE_MAXIMUM = (
    f'"maxTimeout" in the server\'s entry, {ENV_MAX_TIMEOUT}, or mcp_max_timeout in config.toml'
)


@dataclass(frozen=True)
class CallDefaults:
    """The user's defaults for every server (None: not set), and where each was set."""

    timeout: float | None = None
    timeout_from: str = ""
    maximum: float | None = None
    maximum_from: str = ""
    # How long a run waits for servers still starting before asking the model without them.
    start_budget: float = DEFAULT_START_BUDGET


@dataclass(frozen=True)
class CallLimits:
    """One server's limits in seconds, and where each was set (for messages)."""

    timeout: float = DEFAULT_TIMEOUT
    maximum: float = DEFAULT_TIMEOUT * MAX_FACTOR
    timeout_from: str = "the default"
    maximum_from: str = f"the default, {MAX_FACTOR} times the timeout"


def call_defaults(
    environ: Mapping[str, str], user_config: UserConfig
) -> tuple[CallDefaults, list[str]]:
    """The defaults from the environment and config.toml, and one problem line per bad
    value (which is then ignored)."""
    problems: list[str] = []
    where = str(user_config.source) if user_config.source else "config.toml"

    def pick(env_name: str, key: str) -> tuple[float | None, str]:
        if env_name in environ:
            value = _seconds(environ[env_name])
            if value is not None:
                return value, env_name
            problems.append(f"{env_name}: expected a positive number of seconds; ignored")
        if key in user_config.values:
            value = _seconds(user_config.values[key])
            if value is not None:
                return value, f"{key} in {where}"
            problems.append(f"{where}: {key} must be a positive number of seconds; ignored")
        return None, ""

    timeout, timeout_from = pick(ENV_TIMEOUT, "mcp_timeout")
    maximum, maximum_from = pick(ENV_MAX_TIMEOUT, "mcp_max_timeout")
    budget, _ = pick(ENV_START_BUDGET, "mcp_start_budget")
    budget = DEFAULT_START_BUDGET if budget is None else budget
    return CallDefaults(timeout, timeout_from, maximum, maximum_from, budget), problems


def limits_for(
    name: str, entry: Mapping[str, object], request_timeout: float, defaults: CallDefaults
) -> CallLimits:
    """Server `name`'s limits: `entry` is its config entry as written, `request_timeout`
    its parsed `timeout` (the library's default when the entry has none)."""
    if "timeout" in entry:
        timeout, timeout_from = request_timeout, f'"timeout" of server {name!r}'
    elif defaults.timeout is not None:
        timeout, timeout_from = defaults.timeout, defaults.timeout_from
    else:
        timeout, timeout_from = request_timeout, "the default"
    own = _seconds(entry.get("maxTimeout"))
    if own is not None:
        maximum, maximum_from = own, f'"maxTimeout" of server {name!r}'
    elif defaults.maximum is not None:
        maximum, maximum_from = defaults.maximum, defaults.maximum_from
    else:
        maximum, maximum_from = timeout * MAX_FACTOR, f"the default, {MAX_FACTOR} times the timeout"
    # A maximum below the timeout would cut calls that never reported progress.
    return CallLimits(timeout, max(maximum, timeout), timeout_from, maximum_from)


def limits_by_server(
    servers: Iterable[ServerEntry], defaults: CallDefaults
) -> dict[str, CallLimits]:
    """Every configured server's limits (a server whose entry failed has none)."""
    return {
        entry.name: limits_for(entry.name, entry.raw, entry.spec.request_timeout, defaults)
        for entry in servers
        if entry.spec is not None
    }


def timeout_advice(error: RequestTimeout, limits: CallLimits) -> str:
    """What a timed-out call's message adds: the limit hit, who set it, how to raise it."""
    if error.limit == "maximum":
        return (
            f"The limit hit is the maximum of {limits.maximum:g}s a call may run while it "
            f"reports progress ({limits.maximum_from}); raise it with {_RAISE_MAXIMUM}."
        )
    return (
        f"The limit hit is the timeout of {limits.timeout:g}s without an answer or progress "
        f"({limits.timeout_from}); raise it with {_RAISE_TIMEOUT}."
    )


def _seconds(value: object) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value < math.inf else None
