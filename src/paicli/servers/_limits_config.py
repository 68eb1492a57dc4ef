"""The resource limits a stdio server runs under: its own `"limits"` over the user's defaults.

The defaults are the `[limits]` table of `$PAICLI_HOME/config.toml` (same keys as a server's
`"limits"`). A server of the user's own config takes each limit it sets over the default
one. A repository's server may only tighten them: each limit is the lower of its own and the
default, and strictness is always the user's (a cloned repository cannot say
`"strict": false` to run where its limits cannot be applied). A broken `[limits]` table
keeps every stdio server from starting rather than letting them run unlimited.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from paicli.mcp import Limits, ServerConfigError, StdioServer
from paicli.user_config import UserConfig

__all__ = ["DefaultLimits", "default_limits", "limited"]


@dataclass(frozen=True, slots=True)
class DefaultLimits:
    """The user's `[limits]` (None: none set), or the `error` that makes them unusable."""

    limits: Limits | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()


def default_limits(user_config: UserConfig) -> DefaultLimits:
    table = user_config.values.get("limits")
    if table is None:
        return DefaultLimits()
    where = f"{user_config.source or 'config.toml'}: [limits]"
    warnings: list[str] = []
    try:
        limits = Limits.from_dict(table, where, unknown=warnings)
    except ServerConfigError as exc:
        return DefaultLimits(error=f"{exc} (no stdio server starts until it is fixed)")
    return DefaultLimits(limits, warnings=tuple(warnings))


def limited(
    spec: StdioServer, defaults: DefaultLimits, *, repository: bool, where: str
) -> tuple[StdioServer, str | None]:
    """`spec` with the limits it runs under, and a warning when a repository's `strict`
    was overruled. Raises ServerConfigError when the defaults are broken."""
    if defaults.error is not None:
        raise ServerConfigError(defaults.error)
    own, default = spec.limits, defaults.limits
    notice = None
    if repository and own is not None and not own.strict:
        notice = f"{where}: ignoring limits.strict (only your own config can loosen limits)"
    if default is None:
        limits = dataclasses.replace(own, strict=True) if repository and own else own
    elif own is None:
        limits = default
    else:
        limits = own.within(default) if repository else own.over(default)
    if limits is not None and limits.empty:
        limits = None
    return dataclasses.replace(spec, limits=limits), notice
