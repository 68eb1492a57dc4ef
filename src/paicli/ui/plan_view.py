"""The model's todo list as a compact checklist (shown each time the list changes) and
`/agents`, the sub-agents a run offers. Every word from a model or a definition file passes
`one_line`, and is printed as plain `Text`."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from paicli.agent.events import TodoItem
from paicli.escape import one_line
from paicli.subagents.definitions import AgentCatalog

__all__ = ["agents_lines", "print_agents", "todo_lines"]

MAX_ITEM_CHARS = 120
_MARKS = {"completed": ("☒", "dim strike"), "in_progress": ("◼", "bold"), "pending": ("☐", "")}


def todo_lines(items: Sequence[TodoItem], indent: str = "  ") -> list[Text]:
    """The checklist: done items struck through, the one in progress in its active form."""
    if not items:
        return [Text(f"{indent}(the todo list is empty)", style="dim")]
    lines = []
    for item in items:
        mark, style = _MARKS[item.status]
        words = item.active_form if item.status == "in_progress" else item.content
        lines.append(Text(f"{indent}{mark} {one_line(words, MAX_ITEM_CHARS)}", style=style))
    return lines


def agents_lines(catalog: AgentCatalog) -> list[Text]:
    """`/agents`: each sub-agent, where it comes from, its tools and model; then the
    problems met reading the definitions."""
    lines = []
    for agent in catalog.agents.values():
        title = Text(one_line(agent.name, 64), style="bold")
        source = "" if agent.scope == "built-in" else f": {one_line(agent.source, 100)}"
        title.append(f"  ({agent.scope}{source})", style="dim")
        lines.append(title)
        lines.append(Text(f"  {one_line(agent.description, 200)}"))
        tools = "all of the main agent's" if agent.tools is None else ", ".join(agent.tools)
        if agent.disallowed:
            tools += f"; never {', '.join(agent.disallowed)}"
        if agent.servers is not None:
            tools += f"; MCP servers: {', '.join(agent.servers) or 'none'}"
        lines.append(Text(f"  tools: {one_line(tools or 'none', 200)}", style="dim"))
        model = agent.model or "the main agent's"
        lines.append(Text(f"  model: {one_line(model, 100)}", style="dim"))
        lines += [Text(f"  note: {one_line(note, 200)}", style="yellow") for note in agent.notes]
    lines += [Text(one_line(problem, 300), style="yellow") for problem in catalog.problems]
    return lines


def print_agents(console: Console, catalog: AgentCatalog) -> None:
    for line in agents_lines(catalog):
        console.print(line)
