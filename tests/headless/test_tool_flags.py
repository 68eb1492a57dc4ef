"""Claude Code's --allowedTools / --disallowedTools values as paicli's rules."""

from __future__ import annotations

from paicli.headless.tool_flags import tool_rules
from paicli.permissions.policy import flag_rules


def test_values_split_at_commas_and_spaces_outside_parentheses() -> None:
    assert tool_rules(["Bash,Read,Edit"]) == ["execute_command", "read_file", "edit_file"]
    assert tool_rules(['Bash(git commit -m "a, b") Read', "mcp__fs__read_*"]) == [
        'execute_command(git commit -m "a, b")',
        "read_file",
        "mcp__fs__read_*",
    ]
    assert tool_rules(["Bash(git diff:*),  Write(src/**)"]) == [
        "execute_command(git diff:*)",
        "write_file(src/**)",
    ]
    assert tool_rules([" , "]) == []


def test_the_rules_they_become_are_rules_paicli_reads() -> None:
    rules, problems = flag_rules(
        tool_rules(["Bash(npm run *) Read(./.env) mcp__github"]), "--allow"
    )
    assert problems == []
    assert rules == ("execute_command(npm run *)", "read_file(./.env)", "mcp__github")
