"""What a headless run's `init` message says, read from its `Runtime`: the folder, the
model, the tools offered, and each MCP server with its status in Claude Code's words."""

from __future__ import annotations

from paicli._version import __version__
from paicli.headless.transcript import RunFacts
from paicli.runtime import Runtime
from paicli.servers.manager import ManagedServer, ServerState

__all__ = ["run_facts", "server_status"]

STATUSES = {
    ServerState.READY: "connected",
    ServerState.STARTING: "pending",
    ServerState.IDLE: "pending",
    ServerState.ERROR: "failed",
    ServerState.DISABLED: "disabled",
    ServerState.STOPPED: "failed",
}


def server_status(server: ManagedServer) -> str:
    if server.state is ServerState.ERROR and server.needs_login:
        return "needs-auth"
    return STATUSES.get(server.state, "pending")


def run_facts(runtime: Runtime) -> RunFacts:
    """The run as it is now (its servers waited for, or known from the catalogue)."""
    servers = [(s.name, server_status(s)) for s in runtime.manager.servers()]
    # A project server not approved for this run does not start.
    servers += [(name, "disabled") for name in runtime.skipped]
    return RunFacts(
        cwd=str(runtime.root),
        model=runtime.settings.model or "",
        tools=[spec.name for spec in runtime.toolbox.specs()],
        mcp_servers=servers,
        permission_mode=runtime.approvals.mode.value,
        version=__version__,
    )
