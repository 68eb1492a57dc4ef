"""What the user decided ahead of time: config patterns and saved "always allow" answers.

`Policy` is the `[permissions]` section of `$PAICLI_HOME/config.toml`: fnmatch patterns on the
model-facing tool name (a pattern with arguments, `execute_command(curl *)`, is refused at load:
rules match names only). `PermissionStore` is `$PAICLI_HOME/permissions.json`, written by
paicli when the user answers "always"; a broken file reads as empty and is never overwritten.
An MCP tool's answer is bound to the hash of the tool's definition (format 2: `tools`), so a
redefined tool is asked about again; a bare name saved by an earlier paicli covers built-in
tools only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from paicli.private_files import write_atomically
from paicli.user_config import UserConfig

_log = logging.getLogger(__name__)

_STORE_VERSION = 2


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
        if isinstance(item, str) and "(" in item:
            # Claude Code's `Bash(curl *)` form: a rule that would look like it limits the
            # arguments while matching no tool name at all.
            problems.append(
                f"{where}[{index}] {item!r}: rules match tool names only, not arguments; "
                f"ignored (write {item.split('(', 1)[0].strip()!r} to cover the whole tool)"
            )
        elif isinstance(item, str) and item.strip():
            kept.append(item.strip())
        else:
            problems.append(f"{where}[{index}] must be a non-empty string; ignored")
    return tuple(kept)


def argument_pattern_problems(patterns: Iterable[str], where: str) -> list[str]:
    """One line per pattern that tries to match arguments (`--allow 'execute_command(ls *)'`)."""
    return [
        f"{where} {p!r}: patterns match tool names only, not arguments; it matches nothing"
        for p in patterns
        if "(" in p
    ]


@dataclass(frozen=True)
class ToolGrant:
    """A saved answer for one MCP tool: the hash of the definition the user allowed, and
    that definition, to show what changed when the tool is redefined."""

    definition_hash: str
    definition: Mapping[str, object]


class PermissionStore:
    """The saved "always allow" answers in the file at `path` (`PaicliHome.permissions`):
    tool names for built-in tools, a definition-bound grant per MCP tool."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._patterns, self._grants, problem = self._read()
        self.problems: list[str] = [problem] if problem else []
        self._broken = problem is not None

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(self._patterns)

    def allows(self, name: str, definition_hash: str | None = None) -> bool:
        """Whether an answer covers the tool `name`; for an MCP tool (`definition_hash`
        given) only a grant for exactly that definition does."""
        if definition_hash is None:
            return matches_any(name, self._patterns)
        grant = self._grants.get(name)
        return grant is not None and grant.definition_hash == definition_hash

    def grant(self, name: str) -> ToolGrant | None:
        """The saved grant for the MCP tool `name`, whatever definition it was for."""
        return self._grants.get(name)

    def add(
        self,
        name: str,
        definition_hash: str | None = None,
        definition: Mapping[str, object] | None = None,
    ) -> str | None:
        """Save `name` (bound to `definition_hash` for an MCP tool); returns a problem line
        when it could not be saved (it still applies to this process)."""
        if definition_hash is not None:
            self._grants[name] = ToolGrant(definition_hash, dict(definition or {}))
        elif name not in self._patterns:
            self._patterns.append(name)
        if self._broken:
            return f"{self.path}: not saved, the file is unreadable; fix or delete it"
        # Another paicli may have saved answers since we read the file: keep them.
        on_disk, disk_grants, problem = self._read()
        if problem is not None:
            return f"{problem}; not saved"
        merged = on_disk + [p for p in self._patterns if p not in on_disk]
        grants = {**disk_grants}
        if definition_hash is not None:
            grants[name] = self._grants[name]
        try:
            self._write(merged, grants)
        except OSError as exc:
            _log.warning("cannot save %s: %s", self.path, exc)
            return f"{self.path}: cannot write: {exc.strerror or exc}"
        self._patterns, self._grants = merged, {**grants, **self._grants}
        return None

    def _read(self) -> tuple[list[str], dict[str, ToolGrant], str | None]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return [], {}, None
        except (OSError, UnicodeDecodeError) as exc:
            return [], {}, f"{self.path}: cannot read: {exc}; treated as empty"
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            return (
                [],
                {},
                (
                    f"{self.path}: invalid JSON at line {exc.lineno}, column {exc.colno}; "
                    "treated as empty"
                ),
            )
        entries = document.get("allow") if isinstance(document, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return [], {}, f'{self.path}: expected {{"allow": [tool names]}}; treated as empty'
        assert isinstance(document, dict)
        return list(entries), _grants(document.get("tools")), None

    def _write(self, patterns: list[str], grants: Mapping[str, ToolGrant]) -> None:
        tools = {
            name: {"definitionHash": g.definition_hash, "definition": g.definition}
            for name, g in sorted(grants.items())
        }
        document = {"version": _STORE_VERSION, "allow": patterns, "tools": tools}
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        write_atomically(self.path, text.encode("utf-8", "backslashreplace"))


def _grants(value: object) -> dict[str, ToolGrant]:
    """The `tools` of a format-2 file; an entry of the wrong shape is left out (and so
    asked about again), never honoured."""
    if not isinstance(value, dict):
        return {}
    grants: dict[str, ToolGrant] = {}
    for name, entry in value.items():
        if not isinstance(entry, dict):
            continue
        hashed, defined = entry.get("definitionHash"), entry.get("definition")
        if isinstance(hashed, str) and isinstance(defined, dict):
            grants[name] = ToolGrant(hashed, defined)
    return grants
