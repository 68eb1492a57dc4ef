"""One configured server as paicli reads it (`ServerEntry`), and the scopes of config files.

The loader (`config`, `_load_entry`) makes entries; the trust question, the manager and
every view read them. Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from paicli.mcp import HttpServer, StdioServer
from paicli.servers._entry_options import DEFAULT_MAX_RESTARTS, RestartPolicy
from paicli.servers._expand import VariableUse
from paicli.servers.cold_start import DEFAULT_FIRST_START
from paicli.servers.containment import Containment
from paicli.servers.oauth import OAuthSettings
from paicli.servers.retry import RetryPolicy

__all__ = ["REPOSITORY_SCOPES", "Scope", "ServerEntry"]

Scope = Literal["user", "project", "claude", "local", "cli", "plugin"]
# Scopes whose files come with a repository: their servers run only once approved
# (`trust`), and they cannot set what only the user may (`_repository`). "local" (this
# user's servers for one project, kept in `$PAICLI_HOME`) and "cli" (`--mcp-config`
# files) are the user's own, like "user"; so is "plugin" (an installed plugin's servers,
# approved as written by the install, `paicli.plugins`).
REPOSITORY_SCOPES: frozenset[Scope] = frozenset({"project", "claude"})


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """One configured server: its connection `spec`, or the `error` that prevented one.

    `include_tools`/`exclude_tools` are glob patterns (None: no filter). `raw` is the entry
    exactly as written in its file, never expanded: the trust prompt shows it and the trust
    store hashes it. `variables` are the `${VAR}` references it reads; `unallowed_secrets`
    the secret-looking ones among them that the user's config does not allow for this
    project (always empty for the user's own servers), and `withheld` those of them `spec`
    does not pass (all of them, until `LoadedConfig.passing` rebuilds the entry with the ones
    the user agreed to, `trust`); `ignored` the warnings about keys of a repository's entry
    that paicli ignored. `containment` is how a stdio server is sandboxed and why (None for
    an HTTP server or a broken entry); its profile is `spec.sandbox`.
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
    trace: bool = False
    lazy: bool = False  # "start": "lazy": start on first use when its tools are known
    retry: RetryPolicy | None = None
    retry_tools: tuple[str, ...] = ()
    # A package runner's (npx, uvx) first start may take this long: it installs first.
    first_start_timeout: float = DEFAULT_FIRST_START
    raw: Mapping[str, object] = field(default_factory=dict)
    oauth: OAuthSettings | None = None  # an HTTP server's "oauth" setting
    variables: tuple[VariableUse, ...] = ()
    unallowed_secrets: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    containment: Containment | None = None
