"""A plugin's folder made readable in a command sandbox.

Installed plugins live in `~/.paicli/plugins/`, and the command sandbox hides `~/.paicli`
whole (it holds tokens and approvals). A plugin's hook must still read the scripts it names,
so its sandbox hides that folder entry by entry instead, around the plugin's own folder:
every other file and folder of `~/.paicli` stays hidden (those made after the sandbox was
set up are not: the profile is made for each run of a hook).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from paicli.mcp import Sandbox

__all__ = ["reaching"]


def reaching(profile: Sandbox, root: Path) -> Sandbox:
    """`profile` with `root` (a plugin's folder) readable though a hidden path holds it."""
    target = Path(os.path.realpath(root))
    hide: list[str] = []
    for path in profile.hide:
        hidden = Path(os.path.realpath(path))
        if target != hidden and target.is_relative_to(hidden):
            hide += _around(hidden, target)
        else:
            hide.append(path)
    # Bound read-only too: a folder under a private /tmp would not be seen otherwise.
    return replace(profile, hide=tuple(hide), read_only=(*profile.read_only, str(target)))


def _around(hidden: Path, keep: Path) -> list[str]:
    """Each entry of `hidden`, and of its folders on the way down to `keep`, but those
    leading to `keep`."""
    found: list[str] = []
    current = hidden
    for part in keep.relative_to(hidden).parts:
        try:
            with os.scandir(current) as entries:
                found += [e.path for e in entries if e.name != part]
        except OSError:
            return [str(hidden)]  # cannot list it: hide it whole, as before
        current = current / part
    return found
