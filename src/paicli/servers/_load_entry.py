"""One server entry of a config file made into a `ServerEntry`: what a repository's entry may
not set dropped, `${VAR}` expanded (secrets not agreed to withheld), the library's checks,
then what paicli adds: limits over the user's defaults, the sandbox of its scope, OAuth.

A mistake in the entry becomes the entry's `error`, never an exception: no config mistake
may stop paicli from starting.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from paicli.mcp import ServerConfigError, StdioServer, server_from_dict
from paicli.servers._config_file import InvalidConfig, kind
from paicli.servers._entry_options import entry_options
from paicli.servers._expand import expanded, references
from paicli.servers._limits_config import DefaultLimits, limited
from paicli.servers._project_rules import ProjectRules
from paicli.servers._repository import (
    cwd_inside_project,
    refuse_secrets_in_query,
    unallowed_secrets,
    without_user_only_keys,
)
from paicli.servers._sandbox_entry import MISSING, read_containment
from paicli.servers.entry import REPOSITORY_SCOPES, ServerEntry
from paicli.servers.oauth import SystemTokenStore, oauth_settings, with_oauth

__all__ = ["APP_KEYS", "LoadContext", "load_server"]

# Keys of an `mcpServers` entry that paicli reads itself (the library reads the rest).
APP_KEYS = frozenset(
    {
        "oauth",
        "disabled",
        "includeTools",
        "excludeTools",
        "restart",
        "trust",
        "description",
        "trace",
        "maxTimeout",
        "start",
        "retry",
        "retryTools",
        "firstStartTimeout",
    }
)


@dataclass(frozen=True, slots=True)
class LoadContext:
    """What loading one server needs beyond its entry."""

    variables: Mapping[str, str]
    project_dir: Path | None
    rules: ProjectRules
    limits: DefaultLimits
    tokens: SystemTokenStore  # OAuth tokens of the user's logins (paicli mcp login)
    home_folder: Path  # how files are named in messages (`~/...`)
    settings_file: str = "~/.paicli/config.toml"  # the user's settings, as named in fixes


def load_server(
    entry: ServerEntry,
    value: object,
    shown: str,
    context: LoadContext,
    warnings: list[str],
    *,
    passed: Collection[str] = (),
) -> ServerEntry:
    """The entry `value` of a file (`shown`), with the secret-looking variables a repository's
    entry reads withheld except those `passed`; warnings go to `warnings`."""
    where = f"{shown}: server {entry.name!r}"
    if not isinstance(value, dict):
        return replace(entry, error=f"{where}: expected an object, got {kind(value)}")
    entry = replace(entry, raw=value)
    repository = entry.scope in REPOSITORY_SCOPES
    usable: dict[str, object] = value
    if repository:
        usable, ignored = without_user_only_keys(value, where)
        entry = replace(entry, ignored=ignored)
    uses = references(usable)
    entry = replace(entry, variables=uses)
    if repository:
        secrets = unallowed_secrets(uses, context.rules.allow_secrets)
        withheld = tuple(name for name in secrets if name not in passed)
        entry = replace(entry, unallowed_secrets=secrets, withheld=withheld)
    try:
        # Options first, so a disabled server whose variables are missing still says disabled.
        entry = replace(entry, **entry_options(usable, where, warnings))
        if repository:
            entry = replace(entry, trust=entry.name in context.rules.trust)
            refuse_secrets_in_query(usable, context.variables, where)
        resolved = expanded(usable, context.variables, where, entry.withheld)
        if repository:
            resolved, notice = cwd_inside_project(resolved, where, context.project_dir)
            if notice is not None:
                entry = replace(entry, ignored=(*entry.ignored, notice))
        entry = _connection(entry, resolved, shown, context, warnings)
    except InvalidConfig as exc:
        return _with_ignored(replace(entry, error=str(exc)), warnings)
    # server_from_dict checks field by field; an odd JSON type could still trip a TypeError
    # or ValueError, and no config mistake may stop paicli from starting.
    except (ServerConfigError, TypeError, ValueError) as exc:
        return _with_ignored(replace(entry, error=f"{shown}: {exc}"), warnings)
    return _with_ignored(entry, warnings)


def _connection(
    entry: ServerEntry,
    resolved: dict[str, object],
    shown: str,
    context: LoadContext,
    warnings: list[str],
) -> ServerEntry:
    """`entry` with its `spec` (and, for a stdio server, its limits and sandbox)."""
    where = f"{shown}: server {entry.name!r}"
    # The sandbox is paicli's to read: its default depends on the file's scope.
    sandbox = resolved.pop("sandbox", MISSING)
    found: list[str] = []
    spec = server_from_dict(resolved, name=entry.name, extra_keys=APP_KEYS, warnings=found)
    warnings.extend(f"{shown}: {text}" for text in found)
    if not isinstance(spec, StdioServer):
        if sandbox is not MISSING:
            warnings.append(f"{where}: ignoring 'sandbox' (an HTTP server does not run here)")
        settings = None
        if "oauth" in resolved:
            settings = oauth_settings(resolved["oauth"], where)
            entry = replace(entry, oauth=settings)
        return replace(entry, spec=with_oauth(spec, settings, context.tokens))
    if entry.scope == "user" and _from_where_paicli_runs(spec):
        warnings.append(
            f"{where}: 'command' {spec.command!r} is a path from the folder paicli runs in, "
            "where a repository can put a file of that name; give its full path"
        )
    repository = entry.scope in REPOSITORY_SCOPES
    spec, notice = limited(spec, context.limits, repository=repository, where=where)
    if notice is not None:
        entry = replace(entry, ignored=(*entry.ignored, notice))
    project = context.project_dir or Path(os.getcwd())
    if repository:
        fix = (
            f'add "{entry.name}" to unsandboxed in [projects."{project}"] of '
            f"{context.settings_file}"
        )
    else:
        fix = f'drop "sandbox" from its entry in {shown}'
    containment = read_containment(
        sandbox,
        name=entry.name,
        repository=repository,
        cwd=spec.cwd,
        project=project,
        home=context.home_folder,
        unsandboxed=entry.name in context.rules.unsandboxed,
        fix=fix,
    )
    spec = replace(spec, sandbox=containment.sandbox)
    return replace(entry, spec=spec, containment=containment)


def _from_where_paicli_runs(spec: StdioServer) -> bool:
    """Whether `spec`'s command is a relative path (`./x`, `bin/x`) taken from paicli's own
    folder (a relative `cwd` is taken from there too), not looked up on PATH."""
    command, cwd = spec.command, spec.cwd
    return "/" in command and not os.path.isabs(command) and not (cwd and os.path.isabs(cwd))


def _with_ignored(entry: ServerEntry, warnings: list[str]) -> ServerEntry:
    warnings.extend(entry.ignored)
    return entry
