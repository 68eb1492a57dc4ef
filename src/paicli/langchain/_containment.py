"""`sandbox=` and `limits=` of `MCPTool.from_executable` and `load_tools`, put on the stdio
servers they start (HTTP servers are not processes here: both are ignored for them).

`sandbox=True` is `Sandbox.for_project(folder)`: the server's `cwd` (else the working
folder) writable and a private /tmp, the rest read-only, the user's secret stores hidden, no
network; a `Sandbox` is used as given. For `load_tools` both fill in what a server does not
set itself: its own profile wins, and its own limits go over the given ones. Where no
sandbox works, a server does not start (`ServerUnavailable`, one line saying what is
missing), as in paicli.
"""

from __future__ import annotations

import os
from dataclasses import replace

from paicli.langchain.errors import BridgeError
from paicli.mcp import HttpServer, Limits, Sandbox, StdioServer

__all__ = ["SandboxOption", "contained", "contained_stdio"]

# What `sandbox=` takes: a profile, True (the folder's profile), or False/None (none).
SandboxOption = Sandbox | bool | None


def contained(
    spec: StdioServer | HttpServer, sandbox: SandboxOption, limits: Limits | None
) -> StdioServer | HttpServer:
    """`spec` with the sandbox and limits asked for (see the module's docstring)."""
    return contained_stdio(spec, sandbox, limits) if isinstance(spec, StdioServer) else spec


def contained_stdio(
    spec: StdioServer, sandbox: SandboxOption, limits: Limits | None
) -> StdioServer:
    """The same for a stdio server."""
    if not isinstance(sandbox, Sandbox | bool | None):
        raise BridgeError(f"sandbox must be a Sandbox, True or None, not {type(sandbox).__name__}")
    if not isinstance(limits, Limits | None):
        raise BridgeError(f"limits must be a paicli.mcp.Limits, not {type(limits).__name__}")
    if spec.sandbox is None and sandbox is not None and sandbox is not False:
        folder = os.path.abspath(spec.cwd or os.getcwd())
        profile = sandbox if isinstance(sandbox, Sandbox) else Sandbox.for_project(folder)
        spec = replace(spec, sandbox=profile)
    if limits is not None:
        spec = replace(spec, limits=limits if spec.limits is None else spec.limits.over(limits))
    return spec
