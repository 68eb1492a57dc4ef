"""MCP server config files: read the three layers into typed entries, and edit one file.

Files, highest precedence first: `<project>/.paicli/mcp.json` (scope "project"),
`$PAICLI_HOME/mcp.json` (default `~/.paicli`, scope "user") and Claude Code's
`<project>/.mcp.json` (scope "claude"), each `{"mcpServers": {NAME: {...}}}`. A name in a
higher file replaces the whole entry of a lower one; fields are never merged.

`load_config` never raises for bad config: a broken file becomes a `ConfigProblem`, a broken
server stays listed with its `error`, unknown keys become `warnings`. Strings in `command`,
`args`, `env` values, `cwd`, `url` and `headers` values expand `${VAR}` and `${VAR:-default}`
(the default applies when VAR is unset or empty, as in the shell; it is taken literally);
`${PROJECT_DIR}` is the project root and `${HOME}` the user's home. `restart` is `"never"`
(the default), `"on-failure"`, or `{"policy": "never"|"on-failure", "maxRestarts": N}`: the
object form (policy defaulting to "on-failure") exists only to change the maximum (default 3),
so the common case stays a string.

Pieces live apart: reading one file in `_config_file`, expansion in `_expand`, and editing
(`add_server`, `remove_server`, `ConfigWriteError`, re-exported here) in `_config_edit`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from paicli.home import PaicliHome, user_home
from paicli.mcp import HttpServer, ServerConfigError, StdioServer, server_from_dict

from ._config_edit import ConfigWriteError, add_server, remove_server
from ._config_file import InvalidConfig, kind, read_document
from ._expand import expanded

__all__ = [
    "DEFAULT_MAX_RESTARTS",
    "ConfigProblem",
    "ConfigWriteError",
    "LoadedConfig",
    "RestartPolicy",
    "Scope",
    "ServerEntry",
    "add_server",
    "load_config",
    "remove_server",
]

Scope = Literal["user", "project", "claude"]
RestartPolicy = Literal["never", "on-failure"]

_PROJECT_CONFIG = Path(".paicli", "mcp.json")
# Enough to ride out a server that crashes now and then, few enough that one crashing at
# every start gives up quickly (the manager's backoff spaces the attempts).
DEFAULT_MAX_RESTARTS = 3

# Keys of an `mcpServers` entry that paicli reads itself (the library reads the rest).
APP_KEYS = frozenset(
    {"disabled", "includeTools", "excludeTools", "restart", "trust", "description"}
)


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A whole config file could not be used; `message` names the file."""

    source: Path
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """One configured server: its connection `spec`, or the `error` that prevented one.

    `include_tools`/`exclude_tools` are glob patterns (None: no filter). `raw` is the entry
    after variable expansion (as written when expansion failed), for the trust store's hash.
    """

    name: str
    source: Path
    scope: Scope
    spec: StdioServer | HttpServer | None = None
    error: str | None = None
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] | None = None
    restart: RestartPolicy = "never"
    max_restarts: int = DEFAULT_MAX_RESTARTS
    trust: bool = False
    raw: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """Every configured server by name, plus file-level errors and warnings."""

    servers: dict[str, ServerEntry] = field(default_factory=dict)
    errors: list[ConfigProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_config(
    project_dir: Path | None,
    *,
    home: PaicliHome | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Read the user file (in `home`, default from `environ`) and, with a project, its files."""
    env = os.environ if environ is None else environ
    home_folder = user_home(env)
    user_file = (home or PaicliHome.from_environ(env)).mcp_config
    variables = {**env, "HOME": str(home_folder)}
    layers: list[tuple[Path, Scope]] = [(user_file, "user")]
    if project_dir is not None:
        variables["PROJECT_DIR"] = str(project_dir)
        project_file = project_dir / _PROJECT_CONFIG
        layers.insert(0, (project_dir / ".mcp.json", "claude"))
        # Run from the home folder, the project file *is* the user file: read it once, as user.
        if project_file.resolve() != user_file.resolve():
            layers.append((project_file, "project"))
    config = LoadedConfig()
    for path, scope in layers:  # lowest precedence first: later files replace names
        shown = _shown(path, home_folder)
        try:
            servers = _servers_of(read_document(path, shown), shown, config.warnings)
        except InvalidConfig as exc:
            config.errors.append(ConfigProblem(path, str(exc)))
            continue
        for name, value in servers.items():
            config.servers[name] = _load_server(
                ServerEntry(name=name, source=path, scope=scope), value, shown, variables, config
            )
    return config


def _shown(path: Path, home_folder: Path) -> str:
    try:
        return "~/" + path.relative_to(home_folder).as_posix()
    except ValueError:
        return str(path)


def _servers_of(document: dict[str, object], shown: str, warnings: list[str]) -> dict[str, object]:
    servers = document.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidConfig(
            f"{shown}: 'mcpServers' must be an object of servers, got {kind(servers)}"
        )
    if "mcpServers" not in document and document:
        # VS Code's `"servers"` and a bare map of servers are common near misses.
        found = ", ".join(repr(key) for key in document)
        warnings.append(f"{shown}: no 'mcpServers' object (found {found}); no servers read")
    return servers


def _load_server(
    entry: ServerEntry,
    value: object,
    shown: str,
    variables: Mapping[str, str],
    config: LoadedConfig,
) -> ServerEntry:
    where = f"{shown}: server {entry.name!r}"
    if not isinstance(value, dict):
        return replace(entry, error=f"{where}: expected an object, got {kind(value)}")
    try:
        # Options first, so a disabled server whose variables are missing still says disabled.
        entry = _with_options(replace(entry, raw=value), value, where, config.warnings)
        resolved = expanded(value, variables, where)
        entry = replace(entry, raw=resolved)
        found: list[str] = []
        spec = server_from_dict(resolved, name=entry.name, extra_keys=APP_KEYS, warnings=found)
        config.warnings.extend(f"{shown}: {text}" for text in found)
    except InvalidConfig as exc:
        return replace(entry, error=str(exc))
    # server_from_dict checks field by field; an odd JSON type could still trip a TypeError
    # or ValueError, and no config mistake may stop paicli from starting.
    except (ServerConfigError, TypeError, ValueError) as exc:
        return replace(entry, error=f"{shown}: {exc}")
    return replace(entry, spec=spec)


def _with_options(
    entry: ServerEntry, value: dict[str, object], where: str, warnings: list[str]
) -> ServerEntry:
    disabled = value.get("disabled", False)
    trust = value.get("trust", False)
    for key, flag in (("disabled", disabled), ("trust", trust)):
        if not isinstance(flag, bool):
            raise InvalidConfig(f"{where}: {key!r} must be true or false, got {kind(flag)}")
    restart, max_restarts = _restart(value.get("restart", "never"), where, warnings)
    return replace(
        entry,
        disabled=bool(disabled),
        trust=bool(trust),
        include_tools=_patterns(value, "includeTools", where),
        exclude_tools=_patterns(value, "excludeTools", where),
        restart=restart,
        max_restarts=max_restarts,
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
