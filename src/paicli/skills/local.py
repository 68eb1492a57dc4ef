"""Skills on disk: each subfolder of a skill folder (`folders.definition_folders("skills")`)
holding a `SKILL.md`, its front matter read once at the start (`name`, `description`,
`allowed-tools`), its body and files read when the model loads them.

Everything in a skill folder is hostile input when it comes with a repository: a file is read
only if it is a regular file inside its skill's folder (a symbolic link out of it is refused),
UTF-8 text without NUL bytes, and at most MAX_FILE_BYTES; a path is relative, without `..`;
a project's or a plugin's skill folder is not a symbolic link (as command folders are not
followed), since its files are read wherever it leads.
A broken `SKILL.md` is one problem line naming it, and the other skills still load.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from paicli.config_files import ConfigFileError, read_config_text
from paicli.errors import PaicliError
from paicli.mcp import ProtocolError
from paicli.mcp.skills import split_front_matter, valid_name
from paicli.plugins.manifest import Plugin
from paicli.skills.folders import Scope, definition_folders, subfolders_with
from paicli.tools.claude_names import CLAUDE_TOOL_NAMES

__all__ = ["LocalSkill", "SkillError", "local_skills", "skill_tools"]

SKILL_FILE = "SKILL.md"
# A SKILL.md is meant to stay under 500 lines; a supporting file is read whole into the
# model's context. Either larger than this is refused rather than read.
MAX_FILE_BYTES = 256 * 1024
# What the listing of a skill's files shows the model at most.
MAX_LISTED_FILES = 100
MAX_DESCRIPTION = 1024
_TOOL_ITEM = re.compile(r"[^\s,()]+(?:\([^)]*\))?")


class SkillError(PaicliError):
    """A skill or one of its files cannot be used; the message names it, on one line."""


@dataclass(frozen=True)
class LocalSkill:
    name: str
    description: str
    folder: Path
    scope: Scope
    shown: str  # the folder as the user knows it: `.claude/skills/changelog`
    allowed_tools: tuple[str, ...]  # as paicli rules (`execute_command(git diff:*)`)

    def read(self, path: str = SKILL_FILE) -> str:
        """The text of the skill's file at `path` (relative to its folder; SKILL.md's body
        without its front matter); SkillError saying why it cannot be read."""
        parts = path.replace("\\", "/").removeprefix("./").split("/")
        if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise SkillError(f"{path!r:.200} is not a path inside the skill {self.name}")
        shown = f"{self.shown}/{'/'.join(parts)}"
        try:
            text = read_config_text(
                self.folder.joinpath(*parts), shown, inside=self.folder, max_bytes=MAX_FILE_BYTES
            )
        except ConfigFileError as exc:
            raise SkillError(str(exc)) from exc
        if text is None:
            raise SkillError(f"{shown}: no such file")
        if "\x00" in text:
            raise SkillError(f"{shown}: a binary file")
        if parts == [SKILL_FILE]:
            try:
                return split_front_matter(text)[1]
            except ProtocolError as exc:
                raise SkillError(f"{shown}: {exc}") from exc
        return text

    def files(self) -> list[str]:
        """The skill's other files, relative to its folder (at most MAX_LISTED_FILES)."""
        found: list[str] = []
        for path in _walk(self.folder):
            relative = path.relative_to(self.folder).as_posix()
            if relative != SKILL_FILE:
                found.append(relative)
            if len(found) >= MAX_LISTED_FILES:
                break
        return sorted(found)


def local_skills(
    user_root: Path, project: Path, plugins: Sequence[Plugin] = ()
) -> tuple[list[LocalSkill], list[str]]:
    """The skills of the user (`~/.paicli/skills`), the project (`.paicli/skills`,
    `.claude/skills`) and the enabled `plugins` (`PLUGIN:NAME`), and one problem line per
    skill that could not be read. A name taken already (the user's wins, then `.paicli`'s)
    is a problem naming both."""
    skills: dict[str, LocalSkill] = {}
    problems: list[str] = []
    for folder in definition_folders("skills", user_root, project, plugins):
        found, trouble = subfolders_with(folder, SKILL_FILE)
        problems += trouble
        for path in found:
            shown = f"{folder.shown}/{path.name}"
            try:
                skill = _read_skill(path, shown, folder.scope, folder.inside)
            except SkillError as exc:
                problems.append(f"skill not loaded: {exc}")
                continue
            if folder.namespace:  # Claude Code's /plugin-name:skill
                skill = replace(skill, name=f"{folder.namespace}:{skill.name}")
            if skill.name in skills:
                problems.append(
                    f"skill {skill.name} of {shown} is not used: "
                    f"{skills[skill.name].shown} has the same name"
                )
                continue
            skills[skill.name] = skill
    return list(skills.values()), problems


def skill_tools(value: object) -> tuple[str, ...]:
    """`allowed-tools` (a string, space or comma separated, or a list) as paicli rules:
    Claude Code's names (`Read`, `Bash(git diff:*)`) become paicli's (`read_file`,
    `execute_command(git diff:*)`); other names are kept as written."""
    items: list[str] = []
    for entry in value if isinstance(value, list) else [value]:
        if isinstance(entry, str):
            items += _TOOL_ITEM.findall(entry)
    rules = []
    for item in items:
        name, paren, rest = item.partition("(")
        rules.append(CLAUDE_TOOL_NAMES.get(name, name) + paren + rest)
    return tuple(rules)


def _read_skill(path: Path, shown: str, scope: Scope, inside: Path | None) -> LocalSkill:
    where = f"{shown}/{SKILL_FILE}"
    try:
        text = read_config_text(
            path / SKILL_FILE, where, inside=inside or path.parent, max_bytes=MAX_FILE_BYTES
        )
        front, body = split_front_matter(text or "")
    except (ConfigFileError, ProtocolError) as exc:
        shown = str(exc) if isinstance(exc, ConfigFileError) else f"{where}: {exc}"
        raise SkillError(shown) from exc
    if inside is not None and path.is_symlink():
        # Its files are read wherever the link leads, by a tool that is never asked about:
        # a link to the project's root would open `.env` to it, past read_file's rules.
        raise SkillError(f"{shown}: a symbolic link; a project's skill must be a real folder")
    name = front.get("name", path.name)
    if not isinstance(name, str) or not valid_name(name):
        raise SkillError(f"{where}: the name {name!r:.80} is not lowercase letters, digits, -")
    description = front.get("description")
    if description is None:  # Claude Code falls back to the body's first paragraph
        description = body.strip().split("\n\n", 1)[0]
    if not isinstance(description, str) or not description.strip():
        raise SkillError(f"{where}: no description")
    return LocalSkill(
        name=name,
        description=" ".join(description.split())[:MAX_DESCRIPTION],
        folder=Path(os.path.realpath(path)),
        scope=scope,
        shown=shown,
        allowed_tools=skill_tools(front.get("allowed-tools")),
    )


def _walk(folder: Path) -> Iterator[Path]:
    """The regular files under `folder`, symbolic links not followed."""
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(top) / name
            if path.is_file() and not path.is_symlink():
                yield path
