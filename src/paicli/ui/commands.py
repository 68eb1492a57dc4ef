"""The slash commands: one table for `/help`, completion and `paicli --help`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    usage: str
    help: str
    subcommands: tuple[str, ...] = ()


MCP_ACTIONS = ("restart", "logs", "disable", "enable", "tools", "resources", "prompts")

COMMANDS = (
    SlashCommand("/help", "", "show the commands"),
    SlashCommand("/clear", "", "start a new conversation"),
    SlashCommand("/model", "[NAME]", "show the model, or switch to a model or provider preset"),
    SlashCommand(
        "/mcp",
        "[" + "|".join(MCP_ACTIONS) + " NAME]",
        "MCP servers: the status table, or act on one server (disable/enable: this session)",
        MCP_ACTIONS,
    ),
    SlashCommand("/audit", "[N]", "the last N tool calls from the audit log (default 10)"),
    SlashCommand("/exit", "", "leave paicli (also Ctrl+D, or Ctrl+C at an empty prompt)"),
)

BY_NAME = {command.name: command for command in COMMANDS}


def help_text() -> str:
    width = 16  # a longer usage puts its help on the next line
    lines = []
    for c in COMMANDS:
        usage = f"{c.name} {c.usage}".strip()
        if len(usage) <= width:
            lines.append(f"  {usage:<{width}}  {c.help}")
        else:
            lines += [f"  {usage}", f"  {'':<{width}}  {c.help}"]
    lines.append("")
    lines.append("  @server:uri in a prompt attaches that MCP resource (Tab completes).")
    lines.append("  Enter sends; Alt+Enter or Ctrl+J adds a line; Ctrl+C cancels a running turn.")
    return "\n".join(lines)
