"""Claude Code's `--allowedTools` / `--disallowedTools` values as paicli's `--allow` /
`--deny` rules.

Claude Code takes one argument holding several rules (`"Bash,Read,Edit"`,
`"Bash(git log:*) Read"`) or several arguments; a rule's parentheses may hold commas and
spaces (`Bash(git commit -m "a, b")`), so values are split at commas and spaces outside
them only. Its built-in tool names become paicli's (`Bash(npm test)` is
`execute_command(npm test)`); MCP names (`mcp__server__tool`) are the same in both.
"""

from __future__ import annotations

from collections.abc import Iterable

from paicli.tools.claude_names import CLAUDE_TOOL_NAMES

__all__ = ["tool_rules"]


def tool_rules(values: Iterable[str]) -> list[str]:
    """Every rule in `values`, split and renamed (see the module)."""
    rules: list[str] = []
    for value in values:
        rules += [_renamed(rule) for rule in _split(value)]
    return rules


def _split(value: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                parts.append(current)
            current = ""
            continue
        current += char
    if current:
        parts.append(current)
    return parts


def _renamed(rule: str) -> str:
    name, paren, rest = rule.partition("(")
    paicli = CLAUDE_TOOL_NAMES.get(name)
    if paicli is None:
        return rule
    return paicli + paren + rest
