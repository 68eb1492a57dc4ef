"""How a configured stdio server is contained, and how that is said.

`Containment` is what the loader decided from the `"sandbox"` key of an entry and its scope
(`_sandbox_entry`): the profile the server runs in (None: none) and why. This module words
it for every place that shows it: the trust question (`sandbox_line`, `loosening`), `/mcp`
and `paicli mcp list` (`sandbox_groups`, a line under the table, and `sandbox_summary` for
`--json`), `paicli mcp doctor` (`contained_line`), and the one line of a server that does
not start because nothing here can enforce its profile (`sandbox_refusal`, with the fix).
The mechanism is the machine's (`sandbox_support`): the same profile runs under bubblewrap
here and under Landlock there.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from paicli.mcp import Sandbox

if TYPE_CHECKING:
    from paicli.mcp import SandboxSupport

__all__ = [
    "Containment",
    "Origin",
    "SandboxCheck",
    "contained_line",
    "loosened",
    "loosening",
    "sandbox_groups",
    "sandbox_line",
    "sandbox_refusal",
    "sandbox_summary",
    "sandbox_support",
    "support_for",
    "unavailable",
]

# "default": a repository's server without "sandbox" (the project's profile); "entry": the
# entry's own `true` or profile; "entry-off": its `"sandbox": false`; "user-off": the user's
# config.toml runs it unsandboxed; "not-asked": a server of the user's own without one.
Origin = Literal["default", "entry", "entry-off", "user-off", "not-asked"]
# Why server NAME cannot start for want of its sandbox here (None: it can), asked by the
# supervisor before each start: `sandbox_refusal`.
SandboxCheck = Callable[[str, "Containment | None"], Awaitable["str | None"]]


@dataclass(frozen=True, slots=True)
class Containment:
    """The sandbox a configured stdio server runs in (None: none) and why (`origin`).

    `project` is the folder its writes belong to (the project, for a repository's server);
    `home` the user's home (secret stores are named from it); `repository` whether the entry
    came with a repository; `fix` how the user lets it run unsandboxed where no sandbox
    works (in config.toml for a repository's server, in its own entry for the user's)."""

    sandbox: Sandbox | None
    origin: Origin
    project: Path
    home: Path
    repository: bool = False
    fix: str = ""

    @property
    def why_not(self) -> str:
        """Why it runs unsandboxed (empty when it does not)."""
        if self.origin == "entry-off":
            return 'its entry says "sandbox": false'
        if self.origin == "user-off":
            return "your config.toml runs it unsandboxed (projects: unsandboxed)"
        if self.origin == "not-asked":
            return 'a server of your own runs unsandboxed unless its entry says "sandbox": true'
        return ""


def _shown(path: str, containment: Containment) -> str:
    if path == str(containment.project):
        return "the project"
    home = str(containment.home)
    if path == home or path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def _network(sandbox: Sandbox) -> str:
    if sandbox.network == "none":
        return "no network"
    if sandbox.network == "loopback":
        return "its own loopback only (nothing of this machine)"
    return "network to " + ", ".join(sandbox.hosts) + " only (through paicli's proxy)"


def sandbox_line(containment: Containment) -> str:
    """The profile in one line: what it may write and read, and the network."""
    sandbox = containment.sandbox
    if sandbox is None:
        # A repository's "sandbox": false is a warning of its own in the question.
        return "none" if containment.origin == "entry-off" else f"none ({containment.why_not})"
    writes = ", ".join(_shown(path, containment) for path in sandbox.write)
    writes = f"writes {writes} and a private /tmp only" if writes else "writes a private /tmp only"
    if sandbox.read == ("/",):
        reads = "reads all but your secret stores (~/.ssh, ~/.aws, ...)"
    else:
        reads = "reads " + ", ".join(_shown(path, containment) for path in sandbox.read) + " only"
    return f"{writes}; {reads}; {_network(sandbox)}"


def _outside(containment: Containment, sandbox: Sandbox) -> list[str]:
    root = str(containment.project)
    return [path for path in sandbox.write if path != root and not path.startswith(root + os.sep)]


def loosening(containment: Containment | None) -> tuple[str, ...]:
    """What a repository's entry asks beyond its project's default sandbox, one warning
    each (worded for the trust question: "Warning: it ..."); never for the user's own."""
    if containment is None or not containment.repository:
        return ()
    if containment.origin == "entry-off":
        return (
            'turns its OS sandbox off ("sandbox": false): it would run with all your rights '
            "(write any file, read ~/.ssh, reach any host)",
        )
    sandbox = containment.sandbox
    if sandbox is None:
        return ()
    warnings = []
    if outside := _outside(containment, sandbox):
        shown = ", ".join(_shown(path, containment) for path in outside)
        warnings.append(f"may write outside the project: {shown}")
    if sandbox.hosts:
        warnings.append("may reach the network: " + ", ".join(sandbox.hosts))
    return tuple(warnings)


def loosened(containment: Containment | None) -> str:
    """`loosening` in a few words ("" when the entry asks nothing beyond the default)."""
    if not loosening(containment):
        return ""
    assert containment is not None
    if containment.sandbox is None:
        return 'it says "sandbox": false'
    parts = ["writes outside the project"] if _outside(containment, containment.sandbox) else []
    parts += ["reaches the network"] if containment.sandbox.hosts else []
    return "it " + " and ".join(parts)


def sandbox_groups(
    servers: Iterable[tuple[str, Containment | None]], support: SandboxSupport | None
) -> str:
    """The servers by how they run, on one line: `sandboxed by bubblewrap: a, b; not
    sandboxed: c` (servers not run here, HTTP, left out; "" when none is left)."""
    groups: dict[str, list[str]] = {}
    for name, containment in servers:
        if containment is None:
            continue
        sandbox = containment.sandbox
        if sandbox is None:
            key = "not sandboxed"
        elif support is None:
            key = "sandboxed"
        else:
            mechanism = support.mechanism(sandbox)
            key = f"sandboxed by {mechanism}" if mechanism else "no sandbox here for"
        groups.setdefault(key, []).append(name)
    off = groups.pop("not sandboxed", None)
    parts = [f"{key}: {', '.join(names)}" for key, names in groups.items()]
    if off:
        parts.append(f"not sandboxed: {', '.join(off)} (paicli mcp doctor says why)")
    return "; ".join(parts)


def sandbox_summary(
    containment: Containment | None, support: SandboxSupport | None
) -> dict[str, object] | None:
    """The same for `--json`: mechanism, profile line, why not; None for a server not run
    here (HTTP)."""
    if containment is None:
        return None
    sandbox = containment.sandbox
    mechanism = support.mechanism(sandbox) if sandbox and support else None
    return {
        "contained": sandbox is not None,
        "mechanism": mechanism,
        "profile": sandbox_line(containment) if sandbox else None,
        "why_not": containment.why_not or None,
    }


def contained_line(containment: Containment, support: SandboxSupport | None) -> str:
    """The doctor's line: by what it runs contained and in what, or why it is not
    (`support` None: the mechanism is not known)."""
    sandbox = containment.sandbox
    if sandbox is None:
        off = containment.repository and containment.origin == "entry-off"
        return f"not sandboxed: {containment.why_not}" + (", which you approved" if off else "")
    mechanism = support.mechanism(sandbox) if support is not None else "its OS sandbox"
    if mechanism is None:
        return f"its sandbox cannot be had here ({sandbox_line(containment)})"
    return f"sandboxed by {mechanism}: {sandbox_line(containment)}"


async def sandbox_support() -> SandboxSupport:
    """Which sandbox mechanisms work here (`paicli.mcp.check_sandbox`: probed once per
    process, by a few short processes, so off the event loop)."""
    from paicli.mcp import check_sandbox  # noqa: PLC0415 - loads the sandbox when used

    return await asyncio.to_thread(check_sandbox)


async def support_for(containments: Iterable[Containment | None]) -> SandboxSupport | None:
    """`sandbox_support()` when one of `containments` has a sandbox (to name its mechanism),
    else None: nothing is probed for servers that are not contained."""
    if any(c is not None and c.sandbox is not None for c in containments):
        return await sandbox_support()
    return None


def unavailable(containment: Containment, support: SandboxSupport) -> tuple[str, str] | None:
    """What is missing here for the server's sandbox, and the fix (install bubblewrap, or
    let it run unsandboxed); None when its sandbox can be had here or it has none."""
    if containment.sandbox is None or support.mechanism(containment.sandbox) is not None:
        return None
    how = "install bubblewrap (apt install bubblewrap)"
    if shutil.which("bwrap") is not None:
        how = "let bwrap make its namespaces (unprivileged user namespaces)"
    return support.missing(containment.sandbox), f"{how}, or run it unsandboxed: {containment.fix}"


async def sandbox_refusal(name: str, containment: Containment | None) -> str | None:
    """Why server `name` cannot start, in one line: its sandbox cannot be had here, the fix,
    then what is missing (a narrow view cuts the end of a line, not the fix); None when it
    can start."""
    if containment is None or containment.sandbox is None:
        return None
    found = unavailable(containment, await sandbox_support())
    if found is None:
        return None
    missing, fix = found
    return f"{name}: not started: its sandbox cannot be had here; {fix} ({missing})"
