"""The project a run belongs to: the nearest folder at or above the working folder holding
`.paicli/`, `.mcp.json` or `.git`, so paicli finds a project's servers (and keeps its
approvals and its local servers under one key) from any of its subfolders. Without one, the
working folder itself. paicli's own folder (`$PAICLI_HOME`, and `~/.paicli`) is no project's
`.paicli/`: the home folder is a project only with a `.mcp.json` or a `.git` of its own.
Standard library only: `paicli mcp list` with nothing configured asks it before any import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from paicli.home import PaicliHome, user_home

__all__ = ["project_root"]

_MARKERS = (".mcp.json", ".git")


def project_root(cwd: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The project folder `cwd` is in (see the module's docstring)."""
    env = os.environ if environ is None else environ
    not_projects = {
        os.path.realpath(PaicliHome.from_environ(env).root),
        os.path.realpath(user_home(env) / ".paicli"),
    }
    start = Path(os.path.abspath(cwd))
    for folder in (start, *start.parents):
        if any(os.path.lexists(folder / marker) for marker in _MARKERS):
            return folder
        own = folder / ".paicli"
        if os.path.isdir(own) and os.path.realpath(own) not in not_projects:
            return folder
    return start
