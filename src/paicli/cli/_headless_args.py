"""The options of a headless run (`-p`) that programs drive, in Claude Code's spelling:
output and input formats, partial messages, replayed user messages, `--max-turns`,
`--allowedTools` / `--disallowedTools`, `--permission-prompt-tool`,
`--no-session-persistence`; and the checks that tie them to `-p` and to each other.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

__all__ = ["PRINT_FLAGS", "add_headless_options", "fold_tool_flags", "headless_problem", "printing"]

PRINT_FLAGS = ("-p", "--print")


def add_headless_options(parser: argparse.ArgumentParser, count: Callable[[str], int]) -> None:
    """`count` parses a positive number (`--max-turns`)."""
    group = parser.add_argument_group("headless (-p)")
    group.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="with -p: the answer as text, one JSON result object, or JSON lines of "
        "Claude Code's events (system/init, assistant, user, result)",
    )
    group.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="with -p: stream-json reads user messages as JSON lines on stdin, one turn "
        "each (needs --output-format stream-json)",
    )
    group.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with --output-format stream-json: also stream the model's deltas (stream_event)",
    )
    group.add_argument(
        "--replay-user-messages",
        action="store_true",
        help="with --input-format stream-json: echo each user message read as a user message",
    )
    group.add_argument(
        "--verbose",
        action="store_true",
        help="accepted as Claude Code's; paicli's stream-json is always complete",
    )
    group.add_argument(
        "--max-turns",
        dest="max_steps",
        type=count,
        default=argparse.SUPPRESS,  # --max-steps's default stands
        help="with -p: model turns per prompt (the same as --max-steps); ends with error_max_turns",
    )
    for flag, dest, what in (
        ("allowedTools", "allowed_tools", "--allow"),
        ("disallowedTools", "disallowed_tools", "--deny"),
    ):
        spelled = "-".join(part.lower() for part in _words(flag))
        group.add_argument(
            f"--{flag}",
            f"--{spelled}",
            dest=dest,
            action="extend",
            nargs="+",
            default=[],
            metavar="RULES",
            help=f"{what} rules, comma or space separated (Claude Code's names: "
            "Bash(git diff:*), Read, Edit, mcp__server__tool)",
        )
    group.add_argument(
        "--permission-prompt-tool",
        metavar="mcp__SERVER__TOOL",
        help="with -p: an MCP tool that decides the calls a rule does not "
        '({"tool_name", "input"} in, {"behavior": "allow"|"deny"} out)',
    )
    group.add_argument(
        "--no-session-persistence",
        action="store_true",
        help="with -p: do not save the conversation (every -p run is saved otherwise)",
    )


def _words(name: str) -> list[str]:
    words, current = [], ""
    for char in name:
        if char.isupper() and current:
            words.append(current)
            current = ""
        current += char
    return [*words, current]


def printing(args: Sequence[str]) -> bool:
    """Whether the command line asks for `-p` (its prompt may then come last, as a
    positional argument: `paicli -p -c "and now?"`)."""
    for word in args:
        if word == "--":
            return False
        if word in PRINT_FLAGS or word.startswith("--print="):
            return True
    return False


def fold_tool_flags(options: argparse.Namespace) -> None:
    """`--allowedTools` / `--disallowedTools` become `--allow` / `--deny` rules; the
    permission prompt tool is denied to the model (it decides, it is not called)."""
    from paicli.headless.tool_flags import tool_rules  # noqa: PLC0415 - only when given

    options.allow = [*options.allow, *tool_rules(options.allowed_tools)]
    options.deny = [*options.deny, *tool_rules(options.disallowed_tools)]
    if options.permission_prompt_tool:
        options.deny.append(options.permission_prompt_tool)


def headless_problem(options: argparse.Namespace) -> str | None:
    """Why the headless options cannot be used together, in one line, or None."""
    streaming = options.output_format == "stream-json"
    if options.print is None:
        for flag, given in (
            ("--input-format stream-json", options.input_format == "stream-json"),
            ("--include-partial-messages", options.include_partial_messages),
            ("--replay-user-messages", options.replay_user_messages),
            ("--permission-prompt-tool", options.permission_prompt_tool),
        ):
            if given:
                return f"{flag} needs -p"
        return None
    if options.input_format == "stream-json" and not streaming:
        return "--input-format stream-json needs --output-format stream-json"
    if options.replay_user_messages and options.input_format != "stream-json":
        return "--replay-user-messages needs --input-format stream-json"
    if options.include_partial_messages and not streaming:
        return "--include-partial-messages needs --output-format stream-json"
    tool = options.permission_prompt_tool
    if tool is not None and not tool.startswith("mcp__"):
        return f"--permission-prompt-tool {tool}: not an MCP tool name (mcp__SERVER__TOOL)"
    return None
