"""Claude Code's tool names, and paicli's tools they stand for.

A `.claude/` folder names tools as Claude Code does (`Bash`, `Edit`, `Bash(git diff:*)`):
in a command's `allowed-tools` and in a hook's `matcher`. paicli's built-in tools have names
of their own, so those words are read through this one table. MCP tools are named alike in
both (`mcp__<server>__<tool>`) and need no mapping. A Claude Code tool paicli does not have
(`NotebookEdit`, ...) stands for nothing here.
"""

from __future__ import annotations

import re

__all__ = ["CLAUDE_TOOL_NAMES", "claude_aliases", "paicli_rule"]

# Claude Code's name → paicli's built-in tool.
CLAUDE_TOOL_NAMES: dict[str, str] = {
    "Bash": "execute_command",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "list_dir",
    "WebFetch": "web_fetch",
    "WebSearch": "web_search",
}

_RULE = re.compile(r"^([A-Za-z]+)(\(.*\))?$", re.DOTALL)


def paicli_rule(text: str) -> str:
    """A Claude Code permission rule in paicli's words (`Bash(git diff:*)` →
    `execute_command(git diff:*)`); any other rule as it is."""
    found = _RULE.match(text.strip())
    if found is None or found.group(1) not in CLAUDE_TOOL_NAMES:
        return text.strip()
    return CLAUDE_TOOL_NAMES[found.group(1)] + (found.group(2) or "")


def claude_aliases(name: str) -> tuple[str, ...]:
    """The Claude Code names of paicli's tool `name` (none for an MCP tool or one Claude Code
    does not have)."""
    return tuple(claude for claude, own in CLAUDE_TOOL_NAMES.items() if own == name)
