"""MCP server config files: read the layers into typed entries, and edit one file.

Files: `$PAICLI_HOME/mcp.json` (default `~/.paicli`, scope "user"), and a project's
`<project>/.paicli/mcp.json` (scope "project") and Claude Code's `<project>/.mcp.json` (scope
"claude"), the user's own servers for this project only, `$PAICLI_HOME/local/.../mcp.json`
(scope "local", never committed), and the files of `--mcp-config` (scope "cli"), each
`{"mcpServers": {NAME: {...}}}`. A later one of these replaces a whole entry of an earlier
one by name (local over user; cli over all); fields are never merged. A repository's server
never takes the name of one of the user's (user, local or cli): the user's keeps it, the
repository's is renamed `NAME-project` (one warning names both files). Names are 1-64
letters, digits, `_` or `-`, without `__` (`_names`); another name is refused with one line
naming the file.

A repository's files are not the user's: they cannot set `trust` or `stderrFile`, nor a `cwd`
outside the project (`_repository`: each is ignored with a warning naming file and server);
the user's own config.toml can trust a project's server or let it read secret-looking
variables (`_project_rules`). `raw` keeps an entry exactly as written, never expanded: it is
what the trust prompt shows and what an approval covers.

`load_config` never raises for bad config: a broken file becomes a `ConfigProblem`, a broken
server stays listed with its `error`, unknown keys become `warnings`. Strings in `command`,
`args`, `env` values, `cwd`, `url` and `headers` values expand `${VAR}` and `${VAR:-default}`
(the default applies when VAR is unset or empty, as in the shell; it is taken literally);
`${PROJECT_DIR}` is the project root and `${HOME}` the user's home. `restart` is `"never"`
(the default), `"on-failure"`, or `{"policy": "never"|"on-failure", "maxRestarts": N}`: the
object form (policy defaulting to "on-failure") exists only to change the maximum (default 3),
so the common case stays a string. `retry` and `retryTools` say which failed calls are
tried again (`retry`).
`limits` (stdio only, parsed by the library) go over the defaults of config.toml `[limits]`
(`_limits_config`; a repository's server can only tighten them). `sandbox` (stdio only) is
read by paicli with the default of its scope (`_sandbox_entry`): a repository's server runs
in the OS sandbox of its project unless its entry, approved, or the user's config.toml says
otherwise; the user's own servers opt in.

Pieces live apart: `ServerEntry` and the scopes in `entry`, one entry loaded in
`_load_entry`, reading one file in `_config_file` (on `paicli.config_files`), expansion
in `_expand`, the options paicli reads itself (`restart`, `start`, tool filters, ...) in
`_entry_options`, names in `_names`, what a repository's entry cannot do in `_repository`,
resource limits in `_limits_config`, a project's own rules in `_project_rules`, and editing
(`add_server`, `remove_server`, `ConfigWriteError`, re-exported here) in `_config_edit`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from paicli.home import PaicliHome, user_home
from paicli.plugins.manifest import Plugin
from paicli.plugins.registry import enabled_plugins
from paicli.servers._config_edit import ConfigWriteError, ServerExists, add_server, remove_server
from paicli.servers._config_file import InvalidConfig, kind, read_document
from paicli.servers._entry_options import DEFAULT_MAX_RESTARTS, RestartPolicy
from paicli.servers._expand import VariableUse
from paicli.servers._limits_config import default_limits
from paicli.servers._load_entry import APP_KEYS, LoadContext, load_server
from paicli.servers._names import name_problem, project_name, shown_name
from paicli.servers._project_rules import ProjectRules, project_rules
from paicli.servers.entry import REPOSITORY_SCOPES, Scope, ServerEntry
from paicli.servers.oauth import SystemTokenStore
from paicli.user_config import UserConfig, load_user_config

__all__ = [
    "APP_KEYS",
    "DEFAULT_MAX_RESTARTS",
    "REPOSITORY_SCOPES",
    "ConfigProblem",
    "ConfigWriteError",
    "LoadedConfig",
    "RestartPolicy",
    "Scope",
    "ServerEntry",
    "ServerExists",
    "VariableUse",
    "add_server",
    "check_entry",
    "load_config",
    "name_problem",
    "read_servers_file",
    "remove_server",
    "shown_name",
]

_PROJECT_CONFIG = Path(".paicli", "mcp.json")


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A whole config file could not be used; `message` names the file."""

    source: Path
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """Every configured server by name, plus file-level errors and warnings."""

    servers: dict[str, ServerEntry] = field(default_factory=dict)
    errors: list[ConfigProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # What the entries were loaded with, to load one again (`passing`).
    _context: LoadContext | None = field(default=None, repr=False, compare=False)

    def passing(self, entry: ServerEntry, names: Collection[str]) -> ServerEntry:
        """`entry` loaded again with the withheld variables among `names` passed (the user
        agreed to each one, `trust`); `entry` itself when none of them is withheld."""
        if self._context is None or not set(names) & set(entry.withheld):
            return entry
        base = ServerEntry(name=entry.name, source=entry.source, scope=entry.scope)
        shown = _shown(entry.source, self._context.home_folder)
        return load_server(base, entry.raw, shown, self._context, [], passed=names)

    def with_servers(self, servers: Mapping[str, object], source: Path) -> LoadedConfig:
        """This config and `servers` (values as an `mcpServers` object holds them), loaded as
        the user's own (scope "cli", as `--mcp-config`'s) and winning a name: the servers an
        editor passes (`paicli acp`). A refused name or entry is an error naming `source`."""
        if self._context is None:
            raise ValueError("with_servers needs a config made by load_config")
        config = LoadedConfig(
            dict(self.servers), list(self.errors), list(self.warnings), self._context
        )
        shown = str(source)
        for name, value in servers.items():
            problem = name_problem(name)
            if problem is not None:
                message = f"{shown}: server {shown_name(name)} refused: {problem}"
                config.errors.append(ConfigProblem(source, message))
                continue
            entry = ServerEntry(name=name, source=source, scope="cli")
            config.servers[name] = load_server(entry, value, shown, self._context, config.warnings)
        return config


def load_config(
    project_dir: Path | None,
    *,
    home: PaicliHome | None = None,
    environ: Mapping[str, str] | None = None,
    user_config: UserConfig | None = None,
    extra_files: Sequence[Path] = (),
    only_extra: bool = False,
    plugins: Sequence[Plugin] | None = None,
) -> LoadedConfig:
    """Read the user file (in `home`, default from `environ`) and, with a project, its files
    and the user's local servers for it; then `extra_files` (`--mcp-config`), which win a
    name. `only_extra` (`--strict-mcp-config`) reads those alone.

    `user_config` holds the user's `[projects]` rules (read from `home` when not given).
    The enabled `plugins` (None: those of `home`'s registry) add their servers as
    `plugin_PLUGIN_SERVER` (Claude Code's names), `${CLAUDE_PLUGIN_ROOT}` their folder.
    """
    env = os.environ if environ is None else environ
    home_folder = user_home(env)
    paicli_home = home or PaicliHome.from_environ(env)
    user_file = paicli_home.mcp_config
    variables = {**env, "HOME": str(home_folder)}
    layers: list[tuple[Path, Scope]] = [(user_file, "user")]
    rules = ProjectRules()
    settings = user_config if user_config is not None else load_user_config(paicli_home)
    if project_dir is not None:
        variables["PROJECT_DIR"] = str(project_dir)
        project_file = project_dir / _PROJECT_CONFIG
        layers.insert(0, (project_dir / ".mcp.json", "claude"))
        # Run from the home folder, the project file *is* the user file: read it once, as user.
        if project_file.resolve() != user_file.resolve():
            layers.append((project_file, "project"))
        layers.append((paicli_home.local_mcp_config(project_dir), "local"))
        rules = project_rules(settings, project_dir, home_folder)
    if only_extra:
        layers = []
    layers += [(path, "cli") for path in extra_files]
    limits = default_limits(settings)
    tokens = SystemTokenStore(paicli_home.oauth_tokens)
    settings_file = _shown(settings.source or paicli_home.settings_files[0], home_folder)
    context = LoadContext(variables, project_dir, rules, limits, tokens, home_folder, settings_file)
    config = LoadedConfig(_context=context)
    config.warnings.extend([*rules.problems, *limits.warnings])
    files: list[_File] = []
    for path, scope in layers:
        shown = _shown(path, home_folder)
        inside = project_dir if scope in REPOSITORY_SCOPES else None
        try:
            document = read_document(path, shown, inside=inside)
            files.append(_File(path, scope, shown, _servers_of(document, shown, config.warnings)))
        except InvalidConfig as exc:
            config.errors.append(ConfigProblem(path, str(exc)))
    user_names = {
        name: f.shown for f in files if f.scope not in REPOSITORY_SCOPES for name in f.servers
    }
    for file in files:  # lowest precedence first: a later file replaces a name
        for written, value in file.servers.items():
            name = _name_for(written, file, user_names, config)
            if name is not None:
                entry = ServerEntry(name=name, source=file.path, scope=file.scope)
                config.servers[name] = load_server(
                    entry, value, file.shown, context, config.warnings
                )
    if plugins is None:
        plugins = enabled_plugins(paicli_home.root, project_dir)[0]
    if not only_extra:
        for plugin in plugins:
            _plugin_servers(plugin, context, config)
    return config


def _plugin_servers(plugin: Plugin, context: LoadContext, config: LoadedConfig) -> None:
    root = str(plugin.root)
    variables = {**context.variables, "CLAUDE_PLUGIN_ROOT": root, "PAICLI_PLUGIN_ROOT": root}
    mine = replace(context, variables=variables)
    shown = f"plugin {plugin.name}"
    for written, value in plugin.servers.items():
        name = f"plugin_{plugin.name}_{written}"
        problem = name_problem(name)
        if problem is None and name in config.servers:
            problem = "a configured server has that name"
        if problem is not None:
            message = f"{shown}: server {shown_name(str(written))} refused: {problem}"
            config.errors.append(ConfigProblem(plugin.root, message))
            continue
        entry = ServerEntry(name=name, source=plugin.root, scope="plugin")
        config.servers[name] = load_server(entry, value, shown, mine, config.warnings)


def read_servers_file(path: Path) -> str | None:
    """Why the `mcpServers` file at `path` (`--mcp-config`) cannot be used, in one line
    naming it (with line and column for bad JSON), or None when it can."""
    shown = _shown(path, user_home())
    if not path.exists():
        return f"{shown}: cannot read: no such file"
    warnings: list[str] = []
    try:
        _servers_of(read_document(path, shown), shown, warnings)
    except InvalidConfig as exc:
        return str(exc)
    return warnings[0] if warnings else None


def check_entry(
    name: str,
    value: object,
    *,
    scope: Scope,
    source: Path,
    project_dir: Path | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[str | None, list[str]]:
    """Why `value` cannot be server `name`'s entry in the file `source` of `scope` (None
    when it can), and the warnings loading it would give: the loader's own checks, for an
    entry about to be written (`paicli mcp add-json`, `paicli mcp import`). A `${VAR}` that
    is not set now is no mistake in the entry: it stays as written for the checks."""
    problem = name_problem(name)
    if problem is not None:
        return problem, []
    env = os.environ if environ is None else environ
    home = PaicliHome.from_environ(env)
    settings = load_user_config(home)
    variables = _AsWritten({**env, "HOME": str(user_home(env))})
    if project_dir is not None:
        variables.known["PROJECT_DIR"] = str(project_dir)
    context = LoadContext(
        variables,
        project_dir,
        ProjectRules(),
        default_limits(settings),
        SystemTokenStore(home.oauth_tokens),
        user_home(env),
    )
    checked = LoadedConfig()
    shown = _shown(source, user_home(env))
    entry = ServerEntry(name=name, source=source, scope=scope)
    entry = load_server(entry, value, shown, context, checked.warnings)
    return entry.error, checked.warnings


class _AsWritten(Mapping[str, str]):
    """Variables for checking an entry: those not set expand to themselves, as written."""

    def __init__(self, known: dict[str, str]) -> None:
        self.known = known

    def __getitem__(self, key: str) -> str:
        return self.known.get(key, "${" + key + "}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.known)

    def __len__(self) -> int:
        return len(self.known)


@dataclass(frozen=True, slots=True)
class _File:
    """One config file that parsed, and its servers as written."""

    path: Path
    scope: Scope
    shown: str
    servers: dict[str, object]


def _name_for(
    name: str, file: _File, user_names: Mapping[str, str], config: LoadedConfig
) -> str | None:
    """The name server `name` of `file` is loaded under, or None when it is refused.

    `user_names` maps the names of the user's servers to the file they are in."""
    path, shown = file.path, file.shown
    problem = name_problem(name)
    if problem is not None:
        config.errors.append(
            ConfigProblem(path, f"{shown}: server {shown_name(name)} refused: {problem}")
        )
        return None
    if file.scope not in REPOSITORY_SCOPES or name not in user_names:
        return name
    # A repository's server must not pass for the user's own (same tool names, same log).
    renamed = project_name(name, user_names.keys() | file.servers.keys())
    user_file = user_names[name]
    if renamed is None:
        message = f"{shown}: server {name!r} refused: {user_file} has a server of that name"
        config.errors.append(ConfigProblem(path, f"{message} and no other name is free"))
        return None
    config.warnings.append(
        f"{shown}: server {name!r} is also in {user_file}, which keeps the name; "
        f"this one is {renamed!r}"
    )
    return renamed


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
