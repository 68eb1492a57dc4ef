"""`/skills`: the run's skills (the user's, the project's and the MCP servers'), where each
comes from, what its allowed-tools do, and why skills on disk were not loaded. Every name
and description is the skill author's text: it passes the console's escaping, on one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from paicli.escape import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.runtime import Runtime

__all__ = ["skills_command"]

# What /skills shows of a description.
DESCRIPTION_CHARS = 160
# How long /skills waits for servers still starting, whose skills it would list (as /mcp).
SERVER_WAIT = 5.0


async def skills_command(runtime: Runtime, console: Console) -> None:
    toolbox = runtime.skills
    if toolbox is None:
        return
    catalog = toolbox.catalog
    await runtime.manager.wait_ready(runtime.manager.starting(), timeout=SERVER_WAIT)
    await catalog.refresh()
    entries = catalog.entries()
    if not entries:
        console.print(
            "No skills. A skill is a folder with a SKILL.md in ~/.paicli/skills/, the "
            "project's .paicli/skills/ or .claude/skills/, or one an MCP server serves."
        )
    granted = set(toolbox.granted())
    for entry in entries:
        where = f"MCP server {entry.server}" if entry.server else entry.where
        line = Text(one_line(entry.name, 80), style="bold")
        line.append(f"  {one_line(where, 80)}", style="dim")
        console.print(line)
        console.print(Text(f"  {one_line(entry.description, DESCRIPTION_CHARS)}"))
        if entry.allowed_tools:
            tools = one_line(" ".join(entry.allowed_tools), 160)
            if entry.origin != "user":
                note = "a project's skill grants nothing: asked as usual"
            elif granted.issuperset(entry.allowed_tools):
                note = "pre-approved now: the skill is in use"
            else:
                note = "pre-approved once the skill is loaded"
            console.print(Text(f"  allowed-tools: {tools} ({note})", style="dim"))
    for problem in catalog.problems:
        console.print(Text(one_line(problem, 300), style="yellow"))
