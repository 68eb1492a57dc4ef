"""Custom slash commands: Markdown files whose name is the command and whose body is the
prompt, in Claude Code's format (YAML front matter `description`, `argument-hint`,
`allowed-tools`, `model`).

Where they live, the one that wins first: the user's `$PAICLI_HOME/commands/`, then the
project's `.paicli/commands/` and `.claude/commands/` (a name the user defined is the user's,
as Claude Code now decides for skills). A subfolder is a namespace that names where the
command comes from, not the command (`.claude/commands/frontend/component.md` is
`/component`, from `project:frontend`), as Claude Code's commands reference says; one whose
name is taken already is called with its namespace (`/frontend:component`). A project's
files are repository content: read as every config file is (`config_files`: a regular file
inside the project, bounded), never a name that could not be typed or would reach the
terminal as an escape, never one of paicli's own commands (those win, and one line says so).
Problems are one line each, naming the file; loading never raises.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.config_files import ConfigFileError, read_config_text
from paicli.escape import one_line
from paicli.plugins.manifest import Plugin, expand_root
from paicli.plugins.registry import enabled_plugins

__all__ = ["CommandSet", "CustomCommand", "load_commands"]

# A command file is a prompt: a few KiB. The cap stops a huge file before it is read whole.
MAX_COMMAND_BYTES = 256 * 1024
# Front matter is a handful of keys; a large block is a mistake (or an alias bomb).
MAX_FRONT_MATTER = 16 * 1024
# Folders deep enough for any namespace, and files enough for any real project.
MAX_DEPTH = 3
MAX_FILES = 500
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_FENCE = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
# MCP prompts are `/mcp__SERVER__PROMPT`: a file cannot take that form.
_RESERVED_PREFIX = "mcp__"


@dataclass(frozen=True)
class CustomCommand:
    """One command file, read. `scope` is `user` or `project`; `where` is how `/help` names
    its source (`project:frontend` for a subfolder)."""

    name: str  # without the slash
    path: Path
    scope: str
    where: str
    body: str
    description: str
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None

    @property
    def from_project(self) -> bool:
        """Whether it came with something other than the user's own folder (a repository,
        or a plugin): its `allowed-tools` then grant nothing."""
        return self.scope != "user"


@dataclass(frozen=True)
class CommandSet:
    """The commands found, by name, and one line per problem met."""

    commands: dict[str, CustomCommand]
    problems: tuple[str, ...] = ()

    def find(self, typed: str) -> CustomCommand | None:
        """The command `/name` (or `name`) calls, if any."""
        return self.commands.get(typed.removeprefix("/"))

    def sorted(self) -> list[CustomCommand]:
        return [self.commands[name] for name in sorted(self.commands)]


def command_folders(
    home: Path, project: Path, plugins: Sequence[Plugin] = ()
) -> list[tuple[str, Path, Path | None, str]]:
    """(scope, folder, the folder its files must stay inside, the plugin whose it is), the
    one that wins first."""
    return [
        ("user", home / "commands", None, ""),
        ("project", project / ".paicli" / "commands", project, ""),
        ("project", project / ".claude" / "commands", project, ""),
        *[("plugin", folder, p.root, p.name) for p in plugins for folder in p.commands],
    ]


def load_commands(
    home: Path,
    project: Path,
    *,
    reserved: Collection[str] = (),
    plugins: Sequence[Plugin] | None = None,
) -> CommandSet:
    """The custom commands of the user (`home`: paicli's folder), of `project` and of the
    enabled `plugins` (None: those of `home`'s registry), a plugin's as `/PLUGIN:NAME`;
    names in `reserved` (paicli's own commands, with their slash) are not taken."""
    found: dict[str, CustomCommand] = {}
    problems: list[str] = []
    if plugins is None:
        plugins = enabled_plugins(home, project)[0]
    for scope, folder, inside, plugin in command_folders(home, project, plugins):
        real = Path(os.path.realpath(folder))
        if inside is not None and not real.is_relative_to(os.path.realpath(inside)):
            problems.append(f"{one_line(str(folder), 200)}: a symbolic link out of the project")
            continue
        for path, folders in _markdown_files(folder, problems):
            # A plugin's is Claude Code's /plugin-name:command, subfolders between.
            namespace = ":".join(filter(None, (plugin, folders)))
            shown = one_line(str(path), 200)
            name = _name(path.stem, namespace, bool(plugin), found, reserved)
            if name.startswith("!"):
                problems.append(f"{shown}: {name[1:]}")
                continue
            where = f"{scope}:{namespace}" if namespace else scope
            command = _read(path, inside, shown, problems)
            if command is not None and inside is not None and plugin:
                command["body"] = expand_root(command["body"], inside)
            if command is not None:
                found[name] = CustomCommand(
                    name=name, path=path, scope=scope, where=where, **command
                )
    return CommandSet(found, tuple(problems))


def _name(
    stem: str,
    namespace: str,
    plugin: bool,
    found: Mapping[str, CustomCommand],
    reserved: Collection[str],
) -> str:
    """The name a file is called by, or `!` and why it is not loaded. A plugin's is always
    namespaced (`/plugin:name`), so it cannot stand for one of paicli's commands."""
    if not _NAME.match(stem) or stem.startswith(_RESERVED_PREFIX):
        return f"!{one_line(repr(stem), 80)} cannot be a command name"
    if f"/{stem}" in reserved and not plugin:
        return f"!/{stem} is one of paicli's commands, which wins"
    name = stem
    usable = all(map(_NAME.match, namespace.split(":"))) if namespace else True
    if plugin and not usable:
        return f"!its folder {one_line(repr(namespace), 80)} cannot be part of a command name"
    if (name in found or plugin) and namespace and usable:
        name = f"{namespace}:{name}"  # its subfolder tells it apart: /frontend:test
    if f"/{name}" in reserved or (plugin and ":" not in name):
        return f"!/{name} is one of paicli's commands, which wins"
    if name in found:
        return f"!/{name} is defined already by {found[name].path}"
    return name


def _markdown_files(folder: Path, problems: list[str]) -> Iterator[tuple[Path, str]]:
    """Each `*.md` under `folder` (at most MAX_DEPTH folders down, MAX_FILES in all) with its
    namespace (the subfolders, joined with `:`), sorted; a folder that is a symlink is not
    followed (it could lead anywhere)."""
    count = 0
    for base, dirs, files in os.walk(folder, followlinks=False):
        relative = Path(base).relative_to(folder)
        if len(relative.parts) >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
        for file in sorted(files):
            if not file.endswith(".md"):
                continue
            count += 1
            if count > MAX_FILES:
                problems.append(f"{one_line(str(folder), 200)}: over {MAX_FILES} command files")
                return
            yield Path(base) / file, ":".join(relative.parts)


def _read(
    path: Path, inside: Path | None, shown: str, problems: list[str]
) -> dict[str, Any] | None:
    """The fields a command file gives (body and front matter), or None with a problem."""
    try:
        text = read_config_text(path, shown, inside=inside, max_bytes=MAX_COMMAND_BYTES)
    except ConfigFileError as exc:
        problems.append(f"{one_line(str(exc), 300)}; not loaded")
        return None
    if text is None:
        return None
    try:
        front, body = split_front_matter(text)
    except ValueError as exc:
        problems.append(f"{shown}: {one_line(str(exc), 200)}; not loaded")
        return None
    return {
        "body": body,
        "description": _text(front.get("description")) or _first_line(body),
        "argument_hint": _hint(front.get("argument-hint")),
        "allowed_tools": _tools(front.get("allowed-tools")),
        "model": _model(front.get("model")),
    }


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """The front matter (a YAML mapping between `---` lines at the top) and the body after
    it; ValueError, in words, when the front matter is not such a mapping."""
    fence = _FENCE.match(text)
    if fence is None:
        return {}, text
    block = fence.group(1)
    if len(block) > MAX_FRONT_MATTER:
        raise ValueError(f"front matter over {MAX_FRONT_MATTER // 1024} KiB")
    import yaml  # noqa: PLC0415 - only for a file with front matter (it costs a start ~10 ms)

    try:
        value = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        # Claude Code's own examples are not always YAML (`argument-hint: [pr] [priority]`):
        # lines of `key: text` are read as such, as it does.
        value = _plain_lines(block)
        if value is None:
            mark = getattr(exc, "problem_mark", None)
            at = f" (line {mark.line + 2})" if mark is not None else ""
            raise ValueError(f"front matter is not valid YAML{at}") from exc
    except RecursionError as exc:  # PyYAML's reader recurses once per level of nesting
        raise ValueError("front matter is nested too deeply") from exc
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ValueError("front matter must be a mapping of keys to values")
    return {str(k): v for k, v in value.items()}, text[fence.end() :]


def _plain_lines(block: str) -> dict[str, object] | None:
    """Front matter read as lines of `key: text` (None when a line is not one)."""
    found: dict[str, object] = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not _KEY.match(key):
            return None
        found[key] = value.strip()
    return found


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _hint(value: object) -> str:
    """`argument-hint`: `[pr-number]` unquoted is a YAML list, and means the text."""
    if isinstance(value, list):
        return " ".join(f"[{v}]" for v in value if isinstance(v, str | int | float))
    return _text(value)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()
    return ""


def _tools(value: object) -> tuple[str, ...]:
    """`allowed-tools`: a string of names (separated by commas or spaces outside
    parentheses, as Claude Code reads it) or a list of strings."""
    if isinstance(value, list):
        return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    if not isinstance(value, str):
        return ()
    tools: list[str] = []
    depth, current = 0, ""
    for char in value:
        depth += (char == "(") - (char == ")")
        if depth <= 0 and (char == "," or char.isspace()):
            if current:
                tools.append(current)
            current, depth = "", 0
        else:
            current += char
    if current:
        tools.append(current)
    return tuple(tools)


def _model(value: object) -> str | None:
    text = _text(value)
    return None if not text or text == "inherit" else text
