"""The options of a server entry that paicli reads itself, beside the connection the library
reads: `disabled`, `trust`, `trace`, `start`, `restart`, `retry`, `retryTools`,
`firstStartTimeout` and the tool filters. A value of the wrong shape raises `InvalidConfig`
naming file, server and key; an unknown key inside `restart` is a warning.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from paicli.servers._config_file import InvalidConfig, kind
from paicli.servers.cold_start import first_start_timeout
from paicli.servers.retry import retry_policy_from

__all__ = ["DEFAULT_MAX_RESTARTS", "RestartPolicy", "entry_options"]

RestartPolicy = Literal["never", "on-failure"]
# Enough to ride out a server that crashes now and then, few enough that one crashing at
# every start gives up quickly (the manager's backoff spaces the attempts).
DEFAULT_MAX_RESTARTS = 3


def entry_options(value: dict[str, object], where: str, warnings: list[str]) -> dict[str, Any]:
    """The options of `value` (an entry as written, `where` naming it), by the name of the
    `ServerEntry` field each sets."""
    disabled = value.get("disabled", False)
    trust = value.get("trust", False)
    trace = value.get("trace", False)
    for key, flag in (("disabled", disabled), ("trust", trust), ("trace", trace)):
        if not isinstance(flag, bool):
            raise InvalidConfig(f"{where}: {key!r} must be true or false, got {kind(flag)}")
    restart, max_restarts = _restart(value.get("restart", "never"), where, warnings)
    start = value.get("start", "eager")
    if start not in ("eager", "lazy"):
        raise InvalidConfig(f'{where}: \'start\' must be "eager" or "lazy", got {start!r}')
    try:
        retry = None if value.get("retry") is None else retry_policy_from(value["retry"])
    except InvalidConfig as exc:  # the message names the key, not the server
        raise InvalidConfig(f"{where}: {exc}") from None
    return dict(
        lazy=start == "lazy",
        disabled=bool(disabled),
        trust=bool(trust),
        trace=bool(trace),
        include_tools=_patterns(value, "includeTools", where),
        exclude_tools=_patterns(value, "excludeTools", where),
        restart=restart,
        max_restarts=max_restarts,
        retry=retry,
        retry_tools=_patterns(value, "retryTools", where) or (),
        first_start_timeout=first_start_timeout(value, where),
    )


def _patterns(value: dict[str, object], key: str, where: str) -> tuple[str, ...] | None:
    patterns = value.get(key)
    if patterns is None:
        return None
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise InvalidConfig(f"{where}: {key!r} must be a list of tool names or glob patterns")
    return tuple(patterns)


def _restart(value: object, where: str, warnings: list[str]) -> tuple[RestartPolicy, int]:
    policy, limit = value, DEFAULT_MAX_RESTARTS
    if isinstance(value, dict):
        for key in sorted(value.keys() - {"policy", "maxRestarts"}):
            warnings.append(f"{where}: restart: ignoring unknown key {key!r}")
        policy, limit = value.get("policy", "on-failure"), value.get("maxRestarts", limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidConfig(f"{where}: restart.maxRestarts must be a whole number >= 0")
    if policy == "never":
        return "never", limit
    if policy == "on-failure":
        return "on-failure", limit
    raise InvalidConfig(
        f'{where}: \'restart\' must be "never", "on-failure" or '
        f'{{"policy": ..., "maxRestarts": N}}, got {json.dumps(policy)}'
    )
