"""`ClientSession`'s SEP-2640 skill methods (`paicli.mcp.skills`), kept beside the session's
module. Listing reads entries only; a skill's files are fetched one by one, when asked, and
verified against the entry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .skills import Skill, SkillContent, verified

__all__ = ["SkillCalls"]


class SkillCalls:
    """Mixed into `ClientSession`: `skills/list`, `skills/get` and a skill's files."""

    request: Callable[..., Any]
    read_resource: Callable[..., Any]
    _paginate: Callable[..., Any]

    async def list_skills(self, *, timeout: float | None = None) -> list[Skill]:
        """Every well-formed skill entry of `skills/list` (see `paicli.mcp.skills`)."""
        skills: list[Skill] = await self._paginate(
            "skills/list", "skills", Skill.from_wire, timeout
        )
        return skills

    async def get_skill(self, uri: str, *, timeout: float | None = None) -> Skill:
        """The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`)."""
        result = await self.request("skills/get", {"uri": uri}, timeout=timeout)
        return Skill.from_wire(result.get("skill"))

    async def read_skill(
        self, skill: Skill, path: str = "SKILL.md", *, timeout: float | None = None
    ) -> SkillContent:
        """One listed file of `skill` (relative to its folder), verified against the entry;
        `SkillVerificationError` when it is not listed or not what the entry promised."""
        listed = skill.file(path)
        return verified(skill, listed, await self.read_resource(listed.uri, timeout=timeout))
