"""The `"sandbox"` key of a stdio server's entry, read with the default of its scope.

`true` is the project's profile (`Sandbox.for_project`: the folder writable, a private
/tmp, the user's secret stores hidden, the project's git hooks read-only, no network); an
object takes any of `write` and `read` (lists of paths: `~` is the home folder, a relative
path is from the folder below), `network` (`"none"`, `"loopback"` or a list of hosts) and
`env` (the inherited variables that pass); `write` replaces the folder when given. The
folder is the project for a repository's server, and for the user's own its `cwd` (else
the project). A repository's server without the key runs in the project's profile, unless
the user's config.toml names it in `unsandboxed`; the user's own run unsandboxed without
one. Every profile is strict: where nothing can enforce it, the server does not start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from paicli.mcp import Sandbox, ServerConfigError
from paicli.servers.containment import Containment, Origin

__all__ = ["MISSING", "SANDBOX_KEYS", "read_containment"]

SANDBOX_KEYS = ("write", "read", "network", "env")
# The value of an entry without the key.
MISSING: object = object()


def read_containment(
    value: object,
    *,
    name: str,
    repository: bool,
    cwd: str | None,
    project: Path,
    home: Path,
    unsandboxed: bool,
    fix: str,
) -> Containment:
    """How server `name` is contained, from its `"sandbox"` value (`MISSING` without one).
    `unsandboxed`: the user's config.toml runs this repository's server unsandboxed. Raises
    ServerConfigError naming the server for a value of the wrong shape."""
    base = project if repository or cwd is None else Path(os.path.abspath(cwd))
    try:
        sandbox = None if value is MISSING or value is False else _profile(value, base, home)
    except ServerConfigError as exc:
        raise ServerConfigError(f"server {name!r}: {exc}") from None
    origin: Origin = "entry"
    if repository and unsandboxed:
        sandbox, origin = None, "user-off"
    elif value is False:
        origin = "entry-off"
    elif value is MISSING and repository:
        sandbox, origin = Sandbox.for_project(project, home=home), "default"
    elif value is MISSING:
        origin = "not-asked"
    return Containment(sandbox, origin, project, home, repository, fix)


def _profile(value: object, base: Path, home: Path) -> Sandbox:
    default = Sandbox.for_project(base, home=home)
    if value is True:
        return default
    if not isinstance(value, Mapping):
        raise ServerConfigError("'sandbox' must be true, false or an object")
    unknown = sorted(set(value) - set(SANDBOX_KEYS))
    if unknown:
        known = ", ".join(SANDBOX_KEYS)
        raise ServerConfigError(f"sandbox: unknown key {unknown[0]!r} (it takes {known})")
    read, write = _paths(value, "read", base, home), _paths(value, "write", base, home)
    return Sandbox(
        read=default.read if read is None else read,
        write=default.write if write is None else write,
        hide=default.hide,
        read_only=default.read_only,
        network=value.get("network", "none"),
        env=value.get("env"),
    )


def _paths(value: Mapping[str, object], key: str, base: Path, home: Path) -> tuple[str, ...] | None:
    """The paths of `key` made absolute (None when the key is not given)."""
    if key not in value:
        return None
    paths = value[key]
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ServerConfigError(f"sandbox: {key!r} must be a list of paths")
    found = []
    for written in paths:
        path = written
        if written == "~" or written.startswith("~/"):
            path = os.path.join(home, written[2:])
        found.append(os.path.normpath(os.path.join(base, path)))
    return tuple(found)
