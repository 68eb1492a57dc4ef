"""Where hooks are configured and what a configuration says (Claude Code's shape).

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                "command": "...", "timeout": 10}]}]}}

Files, merged (every handler of every file runs; one written the same in several runs once):
the user's `$PAICLI_HOME/settings.json`, and the project's `.paicli/settings.json`,
`.claude/settings.json` and `.claude/settings.local.json`. The project's are repository
content: read as every config file is (`config_files`), kept as written for the approval
question, and hashed (`HookSet.digest`): they run only once the user approved exactly them.
`"disableAllHooks": true` in the user's file switches every hook off; in a project's file it
switches off the project's only (a repository cannot silence the user's own hooks).
Only `"type": "command"` handlers exist here; every other thing is one problem line naming
the file, and is skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.escape import one_line
from paicli.permissions.rules import RuleError, parse_rule
from paicli.plugins.manifest import Plugin, expand_root
from paicli.tools.claude_names import paicli_rule

if TYPE_CHECKING:
    import regex

__all__ = ["EVENTS", "HookHandler", "HookSet", "hook_files", "load_hooks", "matches"]

log = logging.getLogger("paicli.hooks")

# The events paicli runs hooks for (Claude Code has more; those are said and skipped).
EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "Notification",
)
# Claude Code's hooks reference leaves the default at 600 s; a session waiting ten minutes on
# a stuck hook is worse than one that asks for more explicitly.
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
# Claude Code gives SessionEnd hooks 1.5 s (raised to a configured timeout, at most 60 s):
# they hold the exit, and a session that takes a minute to end is a stuck one.
SESSION_END_TIMEOUT = 1.5
MAX_SESSION_END_TIMEOUT = 60.0
# A matcher of only these characters is a list of exact names; anything else is a regex.
_EXACT = re.compile(r"^[A-Za-z0-9_\- ,|]*$")
# A matcher meets names of a few hundred characters at most, which a sane pattern matches in
# microseconds. One that backtracks (a repository's `^(\w+)+Q$` against an MCP tool's long
# name) would otherwise hold paicli's event loop for minutes, so it gets this long per name.
MATCH_BUDGET = 0.1


@dataclass(frozen=True)
class HookHandler:
    """One command to run on `event` when `matcher` matches; `args` (exec form, no shell)
    or None (`command` is a shell line)."""

    event: str
    matcher: str
    command: str
    args: tuple[str, ...] | None
    timeout: float
    scope: str  # "user" or "project"
    source: Path
    # `if`: a permission rule the tool call must match too (Claude Code's names read as
    # paicli's); matched as a deny rule is, so every spelling of a command counts. A hook
    # with one never runs on an event that is not a tool call's.
    condition: str | None = None
    plugin: Path | None = None  # the installed plugin's folder, for a plugin's hook

    def key(self) -> tuple[object, ...]:
        """What makes two handlers the same one (written alike in two files)."""
        return (self.event, self.matcher, self.command, self.args, self.timeout, self.condition)

    def applies(self, names: Sequence[str], call: tuple[Mapping[str, object], Path] | None) -> bool:
        """Whether the handler runs for the tool known by `names` called with `call`
        (arguments, the folder its paths are relative to; None: not a tool call)."""
        if not matches(self.matcher, names):
            return False
        if self.condition is None:
            return True
        if call is None:
            return False
        rule = parse_rule(paicli_rule(self.condition))
        return rule.matches(names, call[0], call[1], deny=True)


@dataclass(frozen=True)
class HookSet:
    """The handlers found, the project's as written (file → its `hooks` value) for the
    approval, and one line per problem."""

    handlers: tuple[HookHandler, ...] = ()
    written: Mapping[Path, object] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def project_handlers(self) -> tuple[HookHandler, ...]:
        return tuple(h for h in self.handlers if h.scope == "project")

    @property
    def digest(self) -> str:
        """The project's hooks as written, hashed: an approval covers exactly these."""
        canonical = json.dumps(
            [[str(path), value] for path, value in sorted(self.written.items())],
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()

    def without_project(self) -> HookSet:
        return HookSet(tuple(h for h in self.handlers if h.scope == "user"), {}, self.problems)

    def for_event(
        self,
        event: str,
        names: Sequence[str] = (),
        call: tuple[Mapping[str, object], Path] | None = None,
    ) -> list[HookHandler]:
        """The handlers of `event` whose matcher matches one of `names` (tool events: the
        tool's names; other events: what Claude Code compares, e.g. the start's source) and
        whose `if` covers `call` (a tool call's arguments and folder)."""
        return [h for h in self.handlers if h.event == event and h.applies(names, call)]


def matches(matcher: str, names: Sequence[str]) -> bool:
    """Claude Code's matcher: empty or `*` matches all; letters, digits, `_`, `-`, spaces,
    `,` and `|` are exact names; anything else is an unanchored regular expression."""
    if matcher in ("", "*") or not names:
        return True
    if _EXACT.match(matcher):
        wanted = {n.strip() for n in re.split(r"[|,]", matcher) if n.strip()}
        return any(name in wanted for name in names)
    pattern = _pattern(matcher)
    if pattern is None:
        return False  # (said when loaded)
    for name in names:
        try:
            if pattern.search(name, timeout=MATCH_BUDGET):
                return True
        except TimeoutError:
            # Counted as a match: a guard hook skipped because a server chose a tool name
            # its matcher chokes on would let that tool's calls through unexamined.
            log.warning(
                "hook matcher %s takes too long on %s; the hook runs as if it matched",
                one_line(repr(matcher), 80),
                one_line(repr(name), 80),
            )
            return True
    return False


@lru_cache(maxsize=256)
def _pattern(matcher: str) -> regex.Pattern[str] | None:
    """`matcher` compiled by `regex` (Python's syntax, and a search that takes a timeout),
    or None when it is no regular expression; imported by the first matcher that is one."""
    import regex  # noqa: PLC0415

    try:
        return regex.compile(matcher)
    except regex.error:
        return None


def hook_files(home: Path, project: Path) -> list[tuple[str, Path]]:
    """(scope, file) for every file hooks are read from."""
    return [
        ("user", home / "settings.json"),
        ("project", project / ".paicli" / "settings.json"),
        ("project", project / ".claude" / "settings.json"),
        ("project", project / ".claude" / "settings.local.json"),
    ]


def load_hooks(home: Path, project: Path, plugins: Sequence[Plugin] = ()) -> HookSet:
    """Every hook configured for a run in `project` (`home`: paicli's folder), and those of
    the enabled `plugins` (the user's: installing one approved its hooks as written, and a
    plugin whose hooks changed since is not enabled, `paicli.plugins.registry`)."""
    handlers: dict[tuple[object, ...], HookHandler] = {}
    written: dict[Path, object] = {}
    problems: list[str] = []
    disabled: set[str] = set()
    for scope, path in hook_files(home, project):
        shown = one_line(str(path), 200)
        try:
            text = read_config_text(path, shown, inside=project if scope == "project" else None)
            document = parse_json(text, shown) if text is not None else None
        except ConfigFileError as exc:
            problems.append(f"{one_line(str(exc), 300)}; its hooks are ignored")
            continue
        if not isinstance(document, dict):
            if document is not None:
                problems.append(f"{shown}: expected a JSON object; its hooks are ignored")
            continue
        if document.get("disableAllHooks") is True:
            disabled.add(scope)
            if scope == "user":
                disabled.add("project")
        value = document.get("hooks")
        if value is None:
            continue
        if scope == "project":
            written[path] = value
        for handler in _handlers(value, scope, path, shown, problems):
            handlers.setdefault(handler.key(), handler)
    for plugin in plugins:
        for where, value in plugin.hooks:
            for found in _handlers(value, "user", plugin.root, where, problems):
                handler = replace(
                    found,
                    command=expand_root(found.command, plugin.root),
                    args=None
                    if found.args is None
                    else tuple(expand_root(a, plugin.root) for a in found.args),
                    plugin=plugin.root,
                )
                handlers.setdefault(handler.key(), handler)
    kept = tuple(h for h in handlers.values() if h.scope not in disabled)
    return HookSet(kept, written if "project" not in disabled else {}, tuple(problems))


def _handlers(
    value: object, scope: str, path: Path, shown: str, problems: list[str]
) -> list[HookHandler]:
    """The handlers of one file's `hooks` value; what is wrong is a problem and skipped."""
    if not isinstance(value, dict):
        problems.append(f"{shown}: hooks must be an object of events; ignored")
        return []
    found: list[HookHandler] = []
    for event, groups in value.items():
        where = f"{shown}: hooks.{one_line(str(event), 60)}"
        if event not in EVENTS:
            problems.append(f"{where}: not an event paicli runs hooks for; ignored")
            continue
        if not isinstance(groups, list):
            problems.append(f"{where} must be a list of matcher groups; ignored")
            continue
        for number, group in enumerate(groups):
            at = f"{where}[{number}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                problems.append(f"{at} must be an object with a list of hooks; ignored")
                continue
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str) or not _usable_matcher(matcher):
                problems.append(f"{at}.matcher is not a usable pattern; ignored")
                continue
            for index, raw in enumerate(group["hooks"]):
                handler = _handler(raw, f"{at}.hooks[{index}]", problems)
                if handler is not None:
                    command, args, timeout, condition = handler
                    if event == "SessionEnd":
                        configured = isinstance(raw, dict) and "timeout" in raw
                        timeout = (
                            min(timeout, MAX_SESSION_END_TIMEOUT)
                            if configured
                            else SESSION_END_TIMEOUT
                        )
                    found.append(
                        HookHandler(event, matcher, command, args, timeout, scope, path, condition)
                    )
    return found


def _usable_matcher(matcher: str) -> bool:
    return bool(_EXACT.match(matcher)) or _pattern(matcher) is not None


def _handler(
    raw: object, at: str, problems: list[str]
) -> tuple[str, tuple[str, ...] | None, float, str | None] | None:
    """(command, args, timeout, if) of one handler, or None with a problem line."""
    if not isinstance(raw, dict):
        problems.append(f"{at} must be an object; ignored")
        return None
    kind = raw.get("type")
    if kind != "command":
        problems.append(f"{at}: type {one_line(repr(kind), 40)} is not run by paicli; ignored")
        return None
    command, args = raw.get("command"), raw.get("args")
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{at}.command must be a non-empty string; ignored")
        return None
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        problems.append(f"{at}.args must be a list of strings; ignored")
        return None
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        problems.append(f"{at}.timeout must be seconds above 0 and at most {MAX_TIMEOUT:g}")
        return None
    condition = raw.get("if")
    if condition is not None:
        try:
            if not isinstance(condition, str):
                raise RuleError("must be a permission rule, e.g. Bash(git *)")
            parse_rule(paicli_rule(condition))
        except RuleError as exc:
            problems.append(f"{at}.if: {one_line(str(exc), 120)}; ignored")
            return None
    return command, tuple(args) if args is not None else None, float(timeout), condition
