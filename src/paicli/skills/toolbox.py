"""`load_skill`: the built-in tool through which the model loads a skill's instructions, or
one of its files by relative path, from the run's `SkillCatalog`.

It only reads (kind `read`: never asked about). A local skill's files are read by
`LocalSkill.read`; a server's through its session (`ClientSession.read_skill`, which verifies
every file against the skill's entry), and its text reaches the model fenced as the
server's untrusted data. A user's own skill (`~/.paicli/skills`) that lists `allowed-tools`
pre-approves those calls from the moment it is loaded until the conversation is cleared, as
Claude Code does (`granted`, read by the approving wrapper); a project's skill or a server's
grants nothing: its calls are asked about as any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from paicli.mcp import McpError, ProtocolError
from paicli.mcp.skills import split_front_matter
from paicli.skills.catalog import SkillCatalog, SkillEntry
from paicli.skills.local import SKILL_FILE, SkillError
from paicli.tools.base import ToolOutcome, ToolSpec

__all__ = ["LOAD_SKILL", "SkillToolbox"]

LOAD_SKILL = "load_skill"
SPEC = ToolSpec(
    name=LOAD_SKILL,
    description=(
        "Load a skill listed in the system prompt: without `file`, its instructions (SKILL.md) "
        "and the list of its other files; with `file`, one of those files by its path "
        "relative to the skill's folder (e.g. references/GUIDE.md)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
            "file": {"type": "string", "description": "A file of the skill, relative path."},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    kind="read",
)
# How many files of a server's skill its listing names to the model.
MAX_LISTED_FILES = 100


class SkillToolbox:
    """The `load_skill` tool over `catalog` (offered only while there is a skill)."""

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog
        # The allowed-tools of the user's skills loaded so far: skill name → rules.
        self._granted: dict[str, tuple[str, ...]] = {}

    def granted(self) -> tuple[str, ...]:
        """The calls the loaded user skills pre-approve, as permission rules."""
        return tuple(rule for rules in self._granted.values() for rule in rules)

    def end_grants(self) -> None:
        """The conversation starts again: no skill is in use any more."""
        self._granted.clear()

    def specs(self) -> list[ToolSpec]:
        return [SPEC] if self.catalog.entries() else []

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        name, file = arguments.get("name"), arguments.get("file")
        if not isinstance(name, str) or not isinstance(file, str | None):
            return ToolOutcome.refused("load_skill takes a skill `name` and an optional `file`")
        if self.catalog.find(name) is None:
            known = ", ".join(e.name for e in self.catalog.entries()) or "none"
            return ToolOutcome.refused(f"there is no skill named {name!r:.100}; skills: {known}")
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refused = self.precheck(spec, arguments)
        if refused is not None:
            return refused
        entry = self.catalog.find(str(arguments["name"]))
        assert entry is not None
        file = arguments.get("file")
        path = str(file) if file is not None else None
        if entry.local is not None:
            return await self._local(entry, path)
        return await self._remote(entry, path)

    async def _local(self, entry: SkillEntry, path: str | None) -> ToolOutcome:
        skill = entry.local
        assert skill is not None
        try:
            text = await asyncio.to_thread(skill.read, path or SKILL_FILE)
        except SkillError as exc:
            return ToolOutcome(f"load_skill failed: {exc}", is_error=True)
        if path is not None and path.removeprefix("./") != SKILL_FILE:
            return ToolOutcome(text)
        files = await asyncio.to_thread(skill.files)
        head = f"Skill {entry.name} ({entry.origin} skill, {entry.where})."
        return ToolOutcome(f"{head}{self._grant(entry)}{_files_line(files)}\n\n{text}")

    def _grant(self, entry: SkillEntry) -> str:
        tools = " ".join(entry.allowed_tools)
        if not tools:
            return ""
        if entry.origin == "user":
            self._granted[entry.name] = entry.allowed_tools
            return f" While it is in use these calls run without asking: {tools}."
        return (
            f" It lists allowed-tools ({tools}), which grant nothing for a project's skill: "
            "those calls are asked about as usual."
        )

    async def _remote(self, entry: SkillEntry, path: str | None) -> ToolOutcome:
        assert entry.remote is not None and entry.server is not None
        session = self.catalog.session_of(entry)
        source = (entry.server, f"skill {entry.name}")
        if session is None:
            return ToolOutcome(f"load_skill failed: {entry.server} is not connected", is_error=True)
        try:
            content = await session.read_skill(entry.remote, path or SKILL_FILE)
        except McpError as exc:
            return ToolOutcome(f"load_skill failed: {entry.name}: {exc}", is_error=True)
        if b"\x00" in content.data:
            return ToolOutcome(f"load_skill: {content.uri} is a binary file", is_error=True)
        if content.uri != entry.remote.uri:
            return ToolOutcome(content.text, source=source)
        try:
            body = split_front_matter(content.text)[1]
        except ProtocolError as exc:
            return ToolOutcome(f"load_skill failed: {entry.name}: {exc}", is_error=True)
        root = entry.remote.root
        files = [f.uri.removeprefix(root + "/") for f in entry.remote.files or ()]
        listed = _files_line([f for f in files if f != SKILL_FILE][:MAX_LISTED_FILES])
        head = f"Skill {entry.name} from MCP server {entry.server} ({entry.remote.uri}).{listed}"
        return ToolOutcome(f"{head}\n\n{body}", source=source)


def _files_line(files: list[str]) -> str:
    if not files:
        return ""
    return f" Its files (load_skill with `file` to read one): {', '.join(files)}."
