"""paicli's own folder, `$PAICLI_HOME` (default `~/.paicli`), and every path in it.

`PaicliHome.from_environ` is the one place that reads `PAICLI_HOME`; everything else is given a
`PaicliHome` (or one of its paths), so a run and its tests name one folder consistently:

    mcp.json                  the user's MCP servers (paicli.servers.config)
    local/PROJECT-HASH/mcp.json  servers of one project for this user only (scope "local")
    config.toml, config.json  settings: model, permissions (paicli.user_config)
    trusted-servers.json      approved project servers (paicli.servers.trust)
    permissions.json          "always allow" answers (paicli.permissions.policy)
    answered-projects.json    projects whose start asks nothing (paicli.answered_projects)
    audit/YYYY-MM-DD.jsonl    one line per tool call (paicli.audit.log)
    tool-results/             MCP results too long for the model, saved whole
                              (paicli.tools.mcp.results)
    sessions/ID.json          saved conversations (paicli.agent.sessions)
    checkpoints/ID/           what each turn of a conversation changed (paicli.checkpoints)
    oauth-tokens.json         OAuth tokens without a usable keyring (paicli.servers.oauth)
    logs/mcp/NAME.log         each stdio server's stderr (paicli mcp logs)
    logs/paicli.log           tracebacks, never shown on the screen (paicli.ui.logs)
    catalogue/HASH.json       each server's tools at its last start (paicli.servers.catalogue)
    traces/DATE-TIME-PID.jsonl  messages of servers with "trace": true (paicli.observe.tracing)
    tool-pins.json            the tool definitions the user accepted (paicli.servers.tool_pins)
    history                   the REPL's prompt history

Files paicli writes here are private (0600, folders 0700): see `paicli.private_files`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PaicliHome", "user_home"]

# What a project's path may keep in the name of its local folder; the rest become "-".
_UNPLAIN = re.compile(r"[^A-Za-z0-9_.-]+")
_SLUG_LENGTH = 80


def user_home(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: `HOME` from `environ` when set, else `Path.home()`."""
    env = os.environ if environ is None else environ
    # Path.home() reads os.environ; an injected HOME wins so callers and tests stay hermetic.
    home = env.get("HOME")
    return Path(home) if home else Path.home()


@dataclass(frozen=True)
class PaicliHome:
    """The paicli folder at `root`, and the path of each thing kept in it."""

    root: Path

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> PaicliHome:
        """`$PAICLI_HOME`, else `~/.paicli` (from `environ`, default the process's)."""
        env = os.environ if environ is None else environ
        override = env.get("PAICLI_HOME")
        return cls(Path(override).expanduser() if override else user_home(env) / ".paicli")

    @property
    def mcp_config(self) -> Path:
        return self.root / "mcp.json"

    def local_mcp_config(self, project: Path) -> Path:
        """The servers of `project` (its root folder) that are this user's alone, never
        committed: the folder is named after the project's path (readable, and never more
        than a plain word) and its hash (so two paths never share it)."""
        path = os.path.abspath(project)
        digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        slug = _UNPLAIN.sub("-", path).strip("-.")[-_SLUG_LENGTH:].lstrip("-.")
        return self.root / "local" / f"{slug or 'root'}-{digest}" / "mcp.json"

    @property
    def settings_files(self) -> tuple[Path, ...]:
        """The settings file's possible names, the one that wins first."""
        return (self.root / "config.toml", self.root / "config.json")

    @property
    def trust_store(self) -> Path:
        return self.root / "trusted-servers.json"

    @property
    def hook_approvals(self) -> Path:
        return self.root / "approved-hooks.json"

    @property
    def permissions(self) -> Path:
        return self.root / "permissions.json"

    @property
    def answered_projects(self) -> Path:
        return self.root / "answered-projects.json"

    @property
    def audit_dir(self) -> Path:
        return self.root / "audit"

    @property
    def tool_results_dir(self) -> Path:
        return self.root / "tool-results"

    @property
    def tool_pins(self) -> Path:
        return self.root / "tool-pins.json"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def oauth_tokens(self) -> Path:
        return self.root / "oauth-tokens.json"

    @property
    def catalogue_dir(self) -> Path:
        return self.root / "catalogue"

    @property
    def mcp_logs_dir(self) -> Path:
        return self.root / "logs" / "mcp"

    def mcp_log(self, server: str) -> Path:
        """Where the stderr of the stdio server `server` is mirrored. Server names are
        checked when config is loaded; a name that could leave the folder is a bug, and
        raises ValueError rather than naming a file elsewhere."""
        if not server or server.startswith(".") or any(c in server for c in "/\\\0"):
            raise ValueError(f"not a server name: {server!r}")
        return self.mcp_logs_dir / f"{server}.log"

    @property
    def traces_dir(self) -> Path:
        return self.root / "traces"

    @property
    def history_file(self) -> Path:
        return self.root / "history"
