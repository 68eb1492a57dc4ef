"""What the user decided ahead of time: config patterns and saved "always allow" answers.

`Policy` is the `[permissions]` section of `$PAICLI_HOME/config.toml`: fnmatch patterns on the
model-facing tool name. `PermissionStore` is `$PAICLI_HOME/permissions.json`, written by
paicli when the user answers "always"; a broken file reads as empty and is never overwritten.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from paicli.private_files import write_atomically
from paicli.user_config import UserConfig

_log = logging.getLogger(__name__)

_STORE_VERSION = 1


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether the tool `name` matches one of the fnmatch `patterns` (case-sensitive)."""
    return any(fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True)
class Policy:
    """Tool-name patterns the user always allows or always denies; deny wins."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def allows(self, name: str) -> bool:
        return matches_any(name, self.allow)

    def denies(self, name: str, *also: str) -> bool:
        """Deny patterns fail closed: matched without regard to case, against the model-facing
        name and any other names of the tool (`also`: e.g. `mcp__my.server__tool` before its
        dots became underscores), so a pattern written either way catches it."""
        names = [n.lower() for n in (name, *also)]
        return any(fnmatchcase(n, p.lower()) for n in names for p in self.deny)

    @classmethod
    def from_config(cls, user_config: UserConfig) -> tuple[Policy, list[str]]:
        """The `[permissions]` section (`allow = [...]`, `deny = [...]`) and one problem line
        per thing wrong with it; what is wrong is skipped, the rest still applies."""
        where = str(user_config.source) if user_config.source is not None else "config.toml"
        problems: list[str] = []
        raw = user_config.values.get("permissions")
        if raw is None:
            return cls(), problems
        if not isinstance(raw, dict):
            problems.append(f"{where}: [permissions] must be a table; ignored")
            return cls(), problems
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("allow", "deny"):
            lists[key] = _patterns(raw.get(key, []), f"{where}: permissions.{key}", problems)
        for key in sorted(set(raw) - {"allow", "deny"}):
            problems.append(f"{where}: permissions.{key} is not a known setting; ignored")
        return cls(allow=lists["allow"], deny=lists["deny"]), problems


def _patterns(value: object, where: str, problems: list[str]) -> tuple[str, ...]:
    if not isinstance(value, list):
        problems.append(f"{where} must be a list of tool names or patterns; ignored")
        return ()
    kept: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            kept.append(item.strip())
        else:
            problems.append(f"{where}[{index}] must be a non-empty string; ignored")
    return tuple(kept)


class PermissionStore:
    """The saved "always allow" tool names (or patterns) in the file at `path`
    (`PaicliHome.permissions`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._patterns, problem = self._read()
        self.problems: list[str] = [problem] if problem else []
        self._broken = problem is not None

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(self._patterns)

    def allows(self, name: str) -> bool:
        return matches_any(name, self._patterns)

    def add(self, name: str) -> str | None:
        """Save `name`; returns a problem line when it could not be saved (it still applies
        to this process)."""
        if name not in self._patterns:
            self._patterns.append(name)
        if self._broken:
            return f"{self.path}: not saved, the file is unreadable; fix or delete it"
        # Another paicli may have saved answers since we read the file: keep them.
        on_disk, problem = self._read()
        if problem is not None:
            return f"{problem}; not saved"
        merged = on_disk + [p for p in self._patterns if p not in on_disk]
        try:
            self._write(merged)
        except OSError as exc:
            _log.warning("cannot save %s: %s", self.path, exc)
            return f"{self.path}: cannot write: {exc.strerror or exc}"
        self._patterns = merged
        return None

    def _read(self) -> tuple[list[str], str | None]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return [], None
        except (OSError, UnicodeDecodeError) as exc:
            return [], f"{self.path}: cannot read: {exc}; treated as empty"
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            return [], (
                f"{self.path}: invalid JSON at line {exc.lineno}, column {exc.colno}; "
                "treated as empty"
            )
        entries = document.get("allow") if isinstance(document, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return [], f'{self.path}: expected {{"allow": [tool names]}}; treated as empty'
        return list(entries), None

    def _write(self, patterns: list[str]) -> None:
        text = json.dumps({"version": _STORE_VERSION, "allow": patterns}, indent=2) + "\n"
        write_atomically(self.path, text.encode("utf-8"))
