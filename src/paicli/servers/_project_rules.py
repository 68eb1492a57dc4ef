"""What the user's own settings let one project do beyond what its files say.

A repository's config cannot vouch for itself. In `$PAICLI_HOME/config.toml` the user may
name a project folder and say, for that project only:

    [projects."/home/me/code/app"]
    trust = ["lint"]                 # its servers whose tools count as trusted (`trust`)
    allow_secrets = ["AWS_PROFILE"]  # secret-looking variables `--trust-project` may pass
    unsandboxed = ["legacy"]         # its servers that run without the OS sandbox

A project server runs in the OS sandbox unless its entry says `"sandbox": false` (which the
user approves) or the user names it in `unsandboxed` (where no sandbox works here, say).
`allow_secrets` takes glob patterns (`"AWS_*"`, `"*"`). The key is the project's path (`~`
allowed); it matches the project folder (`project_root`), symlinks resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paicli.user_config import UserConfig

__all__ = ["ProjectRules", "project_rules"]


@dataclass(frozen=True, slots=True)
class ProjectRules:
    """The user's `[projects."<path>"]` table for one project (empty: nothing extra)."""

    trust: frozenset[str] = frozenset()
    allow_secrets: tuple[str, ...] = ()
    unsandboxed: frozenset[str] = frozenset()
    problems: tuple[str, ...] = field(default=(), compare=False)


def project_rules(user_config: UserConfig, project: Path, home_folder: Path) -> ProjectRules:
    """The rules `user_config` sets for `project`; bad values become `problems`."""
    shown = str(user_config.source or "config.toml")
    tables = user_config.section("projects")
    wanted = _real(project)
    for key, table in tables.items():
        path = Path(home_folder, key[2:]) if key == "~" or key.startswith("~/") else Path(key)
        if not path.is_absolute() or _real(path) != wanted:
            continue
        where = f"{shown}: projects.{key!r}"
        if not isinstance(table, Mapping):
            return ProjectRules(problems=(f"{where} must be a table",))
        problems: list[str] = []
        trust = _names(table, "trust", where, problems)
        allow = _names(table, "allow_secrets", where, problems)
        unsandboxed = _names(table, "unsandboxed", where, problems)
        problems += [
            f"{where}: ignoring unknown key {k!r}" for k in sorted(table) if k not in _KEYS
        ]
        return ProjectRules(frozenset(trust), tuple(allow), frozenset(unsandboxed), tuple(problems))
    return ProjectRules()


_KEYS = ("trust", "allow_secrets", "unsandboxed")


def _names(table: Mapping[str, object], key: str, where: str, problems: list[str]) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    problems.append(f"{where}: {key!r} must be a list of strings; ignored")
    return []


def _real(path: Path) -> Path:
    return path.resolve()
