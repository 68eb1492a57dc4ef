"""What the user decided ahead of time: rules in the config and saved "always allow" answers.

`Policy` holds allow and deny rules (`rules.py`: a tool name pattern, optionally limited by
the call's arguments, `execute_command(git diff:*)`), from the `[permissions]` section of
`$PAICLI_HOME/config.toml`, a project's `.paicli/settings.json` and the command line; deny
wins. `PermissionStore` is `$PAICLI_HOME/permissions.json`, written by paicli when the user
answers "always" (for every project, or for one: `projects`); a broken file reads as empty and
is never overwritten. An MCP tool's answer is bound to the hash of the tool's definition
(`tools`), so a redefined tool is asked about again; a rule saved for a built-in tool may
carry arguments.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.permissions.rules import READ_TOOL, Rule, RuleError, parse_rule, parse_rules
from paicli.private_files import write_atomically
from paicli.user_config import UserConfig

_log = logging.getLogger(__name__)

_STORE_VERSION = 2
PROJECT_SETTINGS = Path(".paicli", "settings.json")


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether the tool `name` matches one of the fnmatch `patterns` (case-sensitive)."""
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _rules(texts: Iterable[str]) -> tuple[Rule, ...]:
    return tuple(rule for rule in map(_parsed, texts) if rule is not None)


@cache
def _parsed(text: str) -> Rule | None:
    """`text` as a rule, parsed once per process (saved answers are matched on every call);
    None when it is not one: the loaders report those, a hand-made Policy just skips them."""
    try:
        return parse_rule(text)
    except RuleError:
        return None


def _names(names: str | Sequence[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


@dataclass(frozen=True)
class Policy:
    """Rules the user (or the project) set: calls they always allow or always deny; deny
    wins. `allow` and `deny` are the rules as written."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    _allow: tuple[Rule, ...] = field(init=False, repr=False, compare=False)
    _deny: tuple[Rule, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_allow", _rules(self.allow))
        object.__setattr__(self, "_deny", _rules(self.deny))

    def allows(
        self,
        names: str | Sequence[str],
        arguments: Mapping[str, object] | None = None,
        root: Path | None = None,
        anchor: Path | None = None,
        also: Sequence[Path] = (),
    ) -> bool:
        """Whether an allow rule covers the call; its path is relative to `root` (default
        the working folder), a relative path rule to `anchor` (default `root`); `also`: the
        folders --add-dir added."""
        where = root or Path.cwd()
        return any(
            r.matches(_names(names), arguments or {}, where, anchor=anchor, also=also)
            for r in self._allow
        )

    def denies(
        self,
        names: str | Sequence[str],
        *also: str,
        arguments: Mapping[str, object] | None = None,
        root: Path | None = None,
        anchor: Path | None = None,
    ) -> bool:
        """Deny rules fail closed: matched without regard to case, against the model-facing
        name and any other names of the tool (`also`: e.g. `mcp__my.server__tool` before its
        dots became underscores), so a rule written either way catches it. `root` and
        `anchor` as for `allows`."""
        every = _names(names) + also
        where = root or Path.cwd()
        return any(
            r.matches(every, arguments or {}, where, deny=True, anchor=anchor) for r in self._deny
        )

    def denies_reading(self, path: Path, root: Path, anchor: Path | None = None) -> bool:
        """Whether a deny rule keeps read_file from `path` (a search leaves it out)."""
        call = {"path": str(path)}
        rules = (r for r in self._deny if r.argument is not None)
        return any(r.matches((READ_TOOL,), call, root, deny=True, anchor=anchor) for r in rules)

    def denies_every_call(self, names: str | Sequence[str], *also: str) -> bool:
        """Whether a deny rule without arguments names the tool (`also` as for `denies`):
        every call of it is denied."""
        every = _names(names) + also
        return any(
            r.argument is None and r.matches(every, {}, Path.cwd(), deny=True) for r in self._deny
        )

    def __or__(self, other: Policy) -> Policy:
        return Policy(self.allow + other.allow, self.deny + other.deny)

    @classmethod
    def from_config(cls, user_config: UserConfig) -> tuple[Policy, list[str]]:
        """The `[permissions]` section (`allow = [...]`, `deny = [...]`) and one problem line
        per thing wrong with it; what is wrong is skipped, the rest still applies."""
        where = str(user_config.source) if user_config.source is not None else "config.toml"
        return cls.from_table(user_config.values.get("permissions"), f"{where}: permissions")

    @classmethod
    def from_table(cls, raw: object, where: str) -> tuple[Policy, list[str]]:
        """The rules of a `{"allow": [...], "deny": [...]}` table, and its problems."""
        problems: list[str] = []
        if raw is None:
            return cls(), problems
        if not isinstance(raw, dict):
            problems.append(f"{where} must be a table; ignored")
            return cls(), problems
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("allow", "deny"):
            rules = parse_rules(raw.get(key, []), f"{where}.{key}", problems)
            lists[key] = tuple(rule.text for rule in rules)
        for key in sorted(set(raw) - {"allow", "deny", "mode"}):
            problems.append(f"{where}.{key} is not a known setting; ignored")
        return cls(allow=lists["allow"], deny=lists["deny"]), problems


def flag_rules(values: Iterable[str], flag: str) -> tuple[tuple[str, ...], list[str]]:
    """The rules given with `--allow` or `--deny`, and one line per one that is not a rule."""
    problems: list[str] = []
    rules = parse_rules(list(values), flag, problems)
    return tuple(rule.text for rule in rules), problems


@dataclass(frozen=True)
class ProjectSettings:
    """A project's `.paicli/settings.json` permissions. Its deny rules always apply; its allow
    rules come with the repository, so they apply only once the user accepted exactly these
    (`digest`), or with `--trust-project`."""

    path: Path
    policy: Policy
    problems: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        return hashlib.sha256("\n".join(self.policy.allow).encode()).hexdigest()


def project_settings(root: Path) -> ProjectSettings:
    """The permissions in `root/.paicli/settings.json` (none when there is no such file). The
    repository wrote it: read as every config file is (`config_files`: a regular file in the
    project, bounded, no key twice)."""
    path = root / PROJECT_SETTINGS
    try:
        text = read_config_text(path, str(path), inside=root)
        document = parse_json(text, str(path)) if text is not None else {}
    except ConfigFileError as exc:
        return ProjectSettings(path, Policy(), (f"{exc}; ignored",))
    if not isinstance(document, dict):
        return ProjectSettings(path, Policy(), (f"{path}: expected a JSON object; ignored",))
    table = document.get("permissions")
    policy, problems = Policy.from_table(table, f"{path}: permissions")
    if isinstance(table, dict) and "mode" in table:
        problems.append(f"{path}: permissions.mode is the user's choice only; ignored")
    return ProjectSettings(path, policy, tuple(problems))


@dataclass(frozen=True)
class ToolGrant:
    """A saved answer for one MCP tool: the hash of the definition the user allowed, and
    that definition, to show what changed when the tool is redefined."""

    definition_hash: str
    definition: Mapping[str, object]


@dataclass
class _Answers:
    """The saved answers of one scope: rules (built-in tools, arguments allowed) and
    definition-bound MCP grants."""

    rules: list[str] = field(default_factory=list)
    grants: dict[str, ToolGrant] = field(default_factory=dict)
    settings: str | None = None  # the digest of the project settings the user accepted

    def allows(
        self,
        names: Sequence[str],
        definition_hash: str | None,
        arguments: Mapping[str, object],
        root: Path,
        anchor: Path,
    ) -> bool:
        if definition_hash is None:
            return any(r.matches(names, arguments, root, anchor=anchor) for r in _rules(self.rules))
        grant = self.grants.get(names[0])
        return grant is not None and grant.definition_hash == definition_hash

    def to_json(self) -> dict[str, object]:
        tools = {
            name: {"definitionHash": g.definition_hash, "definition": g.definition}
            for name, g in sorted(self.grants.items())
        }
        document: dict[str, object] = {"allow": self.rules, "tools": tools}
        if self.settings is not None:
            document["settings"] = self.settings
        return document


class PermissionStore:
    """The saved "always allow" answers in the file at `path` (`PaicliHome.permissions`):
    rules for built-in tools, a definition-bound grant per MCP tool, for every project and,
    under `projects`, for the project at `project` only (its root folder: `project_root`).

    Earlier versions keyed a project's answers by the folder paicli was started in, which may
    be a subfolder of the project. `earlier(folder)` says whether answers kept under `folder` (a
    folder inside `project`) belong to this project; those are read as the project's, and
    left as they are in the file (new answers go under `project`)."""

    def __init__(
        self,
        path: Path,
        project: Path | None = None,
        *,
        earlier: Callable[[Path], bool] | None = None,
    ) -> None:
        self.path = path
        self.project = str(project.resolve()) if project is not None else None
        self._earlier = earlier
        document, problem = self._read()
        self._everywhere, self._here, self._older = self._scopes(document)
        self.problems: list[str] = [problem] if problem else []
        self._broken = problem is not None

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(self._everywhere.rules)

    @property
    def project_patterns(self) -> tuple[str, ...]:
        rules = [r for scope in (self._here, *self._older) for r in scope.rules]
        return tuple(dict.fromkeys(rules))

    def allows(
        self,
        name: str | Sequence[str],
        definition_hash: str | None = None,
        arguments: Mapping[str, object] | None = None,
        root: Path | None = None,
    ) -> bool:
        """Whether a saved answer covers this call of the tool `name`; for an MCP tool
        (`definition_hash` given) only a grant for exactly that definition does. The call's
        path is relative to `root` (default the project), a relative path rule to the
        project (or `root` without one)."""
        names = _names(name)
        where = root or Path(self.project or Path.cwd())
        anchor = Path(self.project) if self.project is not None else where
        return any(
            scope.allows(names, definition_hash, arguments or {}, where, anchor)
            for scope in (self._everywhere, self._here, *self._older)
        )

    def grant(self, name: str) -> ToolGrant | None:
        """The saved grant for the MCP tool `name`, whatever definition it was for."""
        for scope in (self._here, *self._older, self._everywhere):
            if (found := scope.grants.get(name)) is not None:
                return found
        return None

    def settings_accepted(self, digest: str) -> bool:
        """Whether the user accepted project settings with exactly these allow rules."""
        return any(scope.settings == digest for scope in (self._here, *self._older))

    def accept_settings(self, digest: str) -> str | None:
        """Remember that the user accepted this project's settings (`digest`)."""
        return self._save(lambda scope: setattr(scope, "settings", digest), project=True)

    def add(
        self,
        name: str,
        definition_hash: str | None = None,
        definition: Mapping[str, object] | None = None,
        *,
        project: bool = False,
    ) -> str | None:
        """Save the rule `name` (for an MCP tool: its name, bound to `definition_hash`), for
        every project or for this one; returns a problem line when it could not be saved (it
        still applies to this process)."""

        def change(scope: _Answers) -> None:
            if definition_hash is not None:
                scope.grants[name] = ToolGrant(definition_hash, dict(definition or {}))
            elif name not in scope.rules:
                scope.rules.append(name)

        return self._save(change, project=project)

    def _save(self, change: Callable[[_Answers], None], *, project: bool) -> str | None:
        if project and self.project is None:
            return "no project to save the answer for"
        change(self._here if project else self._everywhere)
        if self._broken:
            return f"{self.path}: not saved, the file is unreadable; fix or delete it"
        # Another paicli may have saved answers since we read the file: keep them.
        document, problem = self._read()
        if problem is not None:
            return f"{problem}; not saved"
        everywhere, here, older = self._scopes(document)
        change(here if project else everywhere)
        document["version"] = _STORE_VERSION
        document.update(everywhere.to_json())
        if self.project is not None and (here.rules or here.grants or here.settings):
            projects = document.get("projects")
            projects = projects if isinstance(projects, dict) else {}
            projects[self.project] = here.to_json()
            document["projects"] = projects
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        try:
            write_atomically(self.path, text.encode("utf-8", "backslashreplace"))
        except OSError as exc:
            _log.warning("cannot save %s: %s", self.path, exc)
            return f"{self.path}: cannot write: {exc.strerror or exc}"
        # What this process allowed stays allowed even if the file no longer says so.
        everywhere.rules += [r for r in self._everywhere.rules if r not in everywhere.rules]
        here.rules += [r for r in self._here.rules if r not in here.rules]
        everywhere.grants = {**everywhere.grants, **self._everywhere.grants}
        here.grants = {**here.grants, **self._here.grants}
        here.settings = self._here.settings or here.settings
        self._everywhere, self._here, self._older = everywhere, here, older
        return None

    def _scopes(
        self, document: Mapping[str, object]
    ) -> tuple[_Answers, _Answers, tuple[_Answers, ...]]:
        """Every project's answers, this project's, and those an older paicli kept for it
        under one of its subfolders."""
        everywhere = _answers(document)
        projects = document.get("projects")
        if not isinstance(projects, dict) or self.project is None:
            return everywhere, _Answers(), ()
        mine = projects.get(self.project)
        here = _answers(mine) if isinstance(mine, dict) else _Answers()
        older = tuple(
            _answers(answers)
            for folder, answers in sorted(projects.items())
            if isinstance(answers, dict) and self._older_key(folder)
        )
        return everywhere, here, older

    def _older_key(self, folder: object) -> bool:
        if self._earlier is None or self.project is None or not isinstance(folder, str):
            return False
        path = Path(folder)
        inside = path.is_absolute() and path.is_relative_to(self.project)
        return inside and path != Path(self.project) and self._earlier(path)

    def _read(self) -> tuple[dict[str, object], str | None]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}, None
        except (OSError, UnicodeDecodeError) as exc:
            return {}, f"{self.path}: cannot read: {exc}; treated as empty"
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            return {}, f"{self.path}: invalid JSON at {where}; treated as empty"
        entries = document.get("allow") if isinstance(document, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return {}, f'{self.path}: expected {{"allow": [tool names]}}; treated as empty'
        assert isinstance(document, dict)
        return document, None


def _answers(document: Mapping[str, object]) -> _Answers:
    """One scope's answers; an entry of the wrong shape is left out (asked about again)."""
    rules = document.get("allow")
    kept = [r for r in rules if isinstance(r, str)] if isinstance(rules, list) else []
    settings = document.get("settings")
    return _Answers(
        kept, _grants(document.get("tools")), settings if isinstance(settings, str) else None
    )


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


def permission_policy(
    user_config: UserConfig,
    project: ProjectSettings,
    store: PermissionStore,
    *,
    trust: bool,
    ask: Callable[[ProjectSettings], bool] | None,
) -> tuple[Policy, list[str]]:
    """The user's rules plus the project's: its deny rules always, its allow rules once the
    user accepted exactly these (asked through `ask`, remembered) or with `trust`."""
    policy, problems = Policy.from_config(user_config)
    problems += project.problems
    policy = policy | Policy(deny=project.policy.deny)
    allow = project.policy.allow
    if not allow:
        return policy, problems
    if trust or store.settings_accepted(project.digest):
        return policy | Policy(allow=allow), problems
    if ask is not None and ask(project):
        if (problem := store.accept_settings(project.digest)) is not None:
            problems.append(problem)
        return policy | Policy(allow=allow), problems
    problems.append(
        f"{project.path}: its {len(allow)} allow rule(s) are not applied until you accept "
        "them (paicli asks in a terminal; --trust-project applies them for one run)"
    )
    return policy, problems
