"""Where Markdown-defined extensions live, and the walk that finds them: one folder per user
(`~/.paicli/<kind>/`) and two per project (`.paicli/<kind>/`, `.claude/<kind>/`), read in that
order (a user's definition wins a name over the project's, as in Claude Code).

A project's folders are repository content: one that leads out of the project through a
symbolic link is not read. The walk reads names only (no file is opened) and stops at
MAX_ENTRIES per folder, so a folder of a million entries costs a bounded listing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paicli.plugins.manifest import Plugin

__all__ = ["MAX_ENTRIES", "DefinitionFolder", "definition_folders", "subfolders_with"]

# A plugin's folders are the user's choice (installed), but its content is no more trusted
# to widen permissions than a repository's.
Scope = Literal["user", "project", "plugin"]
# More skills (or commands, agents) than anyone keeps in one folder; a larger folder is read
# this far, with a problem saying so.
MAX_ENTRIES = 500


@dataclass(frozen=True)
class DefinitionFolder:
    """One folder of definitions: where it is, whose it is, and how it is shown."""

    path: Path
    scope: Scope
    shown: str  # `~/.paicli/skills`, `.claude/skills`
    inside: Path | None  # a project's folder must stay in the project (None: the user's)
    namespace: str = ""  # a plugin's name: its definitions are `PLUGIN:NAME`


def definition_folders(
    kind: Literal["skills", "commands", "agents"],
    user_root: Path,
    project: Path,
    plugins: Sequence[Plugin] = (),
) -> list[DefinitionFolder]:
    """The folders of `kind`, the user's first, the enabled `plugins`' last."""
    return [
        DefinitionFolder(user_root / kind, "user", f"~/.paicli/{kind}", None),
        DefinitionFolder(project / ".paicli" / kind, "project", f".paicli/{kind}", project),
        DefinitionFolder(project / ".claude" / kind, "project", f".claude/{kind}", project),
        *[
            DefinitionFolder(
                folder,
                "plugin",
                f"plugin {plugin.name}: {folder.relative_to(plugin.root).as_posix()}",
                plugin.root,
                plugin.name,
            )
            for plugin in plugins
            for folder in getattr(plugin, kind)
        ],
    ]


def subfolders_with(folder: DefinitionFolder, marker: str) -> tuple[list[Path], list[str]]:
    """The subfolders of `folder` holding a file `marker` (sorted by name), and problems: the
    folder leads out of the project, or holds more than MAX_ENTRIES entries."""
    problems: list[str] = []
    if folder.inside is not None and not _within(folder.path, folder.inside):
        if os.path.lexists(folder.path):
            problems.append(f"{folder.shown}: not read: it leads out of the project")
        return [], problems
    found: list[Path] = []
    for count, entry in enumerate(_entries(folder.path)):
        if count >= MAX_ENTRIES:
            problems.append(f"{folder.shown}: only the first {MAX_ENTRIES} entries are read")
            break
        if entry.is_dir() and os.path.lexists(Path(entry.path) / marker):
            found.append(Path(entry.path))
    return sorted(found, key=lambda p: p.name), problems


def _entries(path: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            yield from entries
    except OSError:
        return  # missing, not a folder, unreadable: nothing there


def _within(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
