"""Starting a stdio server: its sandbox and limits made ready, the minimal environment it
inherits, and, when exec fails, why, in words that say how to fix it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from ._confine import Confinement, LimitUnavailable
from ._executable import check_command
from ._limits import Limits
from .errors import ConnectionClosed

if TYPE_CHECKING:
    from ._sandbox.prepare import PreparedSandbox
    from ._sandbox.profile import Sandbox

__all__ = ["INHERITED_ENV", "build_env", "contain", "start_failure"]

# Variables a server needs to run at all (find binaries, a home, a locale, a temp dir);
# everything else, API keys included, must be passed explicitly through the server's `env`.
INHERITED_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
)


def build_env(extra: Mapping[str, str] | None, keep: Sequence[str] | None = None) -> dict[str, str]:
    """The child's environment: a minimal inherited set (only the names matching `keep`,
    when given: a sandbox's `env`) plus the server's own variables.
    An inherited value that is an exported shell function (`() { ...`, what bash exports
    with `export -f` and what Shellshock abused) is dropped: no locale or path looks so."""
    env = {
        k: v
        for k in INHERITED_ENV
        if (v := os.environ.get(k)) is not None
        and not v.lstrip().startswith("()")
        and (keep is None or any(fnmatchcase(k, pattern) for pattern in keep))
    }
    if extra:
        env.update(extra)
    return env


def start_failure(
    command: str, cwd: str | os.PathLike[str] | None, search_path: str, exc: OSError
) -> str:
    """`command`, and why exec failed in words that say how to fix it (exec's own words
    mislead for scripts)."""
    if cwd is not None and not os.path.isdir(cwd):
        return f"{command!r}: its working folder {os.fspath(cwd)!r} does not exist"
    check = check_command(command, cwd=cwd, search_path=search_path)
    return check.message or f"{command!r}: {exc.strerror or exc}"


async def contain(
    name: str, limits: Limits | None, sandbox: Sandbox | None
) -> tuple[Confinement | None, PreparedSandbox | None]:
    """The server `name`'s confinement (limits, and the cgroup a sandbox may need) and its
    prepared sandbox; `ConnectionClosed` when the limits cannot be applied."""
    prepared = None
    if sandbox is not None:
        from ._sandbox.prepare import open_for_server  # noqa: PLC0415 - when sandboxed

        prepared = await open_for_server(name, sandbox)
    track = prepared is not None and prepared.needs_cgroup
    if (limits is None or limits.empty) and not track:
        return None, prepared
    extra = prepared.overhead_tasks if prepared is not None else 0
    try:
        return Confinement.prepare(limits or Limits(), extra_tasks=extra, track=track), prepared
    except LimitUnavailable as exc:
        if prepared is not None:
            await prepared.aclose()
        raise ConnectionClosed(f"{name}: not started: {exc}") from None
