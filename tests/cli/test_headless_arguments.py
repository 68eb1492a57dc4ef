"""How a headless run's command line is read (no process: the parser and the checks only)."""

from __future__ import annotations

import argparse

import pytest

from paicli.cli import build_parser, headless_options
from paicli.cli._headless_args import printing


def read(*args: str) -> tuple[argparse.Namespace, str | None]:
    options = build_parser(prompt_last=printing(args)).parse_args(list(args))
    return options, headless_options(options)


@pytest.mark.parametrize(
    ("args", "prompt"),
    [
        (("-p", "hi"), "hi"),
        (("-p", "-c", "and now?"), "and now?"),  # Claude Code's order
        (("-c", "-p", "and now?"), "and now?"),
        (("--print", "--output-format", "json", "last"), "last"),
        (("-p",), ""),  # read from a pipe, if any
        (("-p", "-"), "-"),
    ],
)
def test_the_prompt_comes_after_p_or_last(args: tuple[str, ...], prompt: str) -> None:
    options, problem = read(*args)
    assert problem is None and options.print == prompt


def test_without_p_the_commands_are_there_and_a_p_after_dashes_is_no_flag() -> None:
    assert printing(["mcp", "add", "x", "--", "tool", "-p"]) is False
    options, problem = read("mcp", "list")
    assert problem is None and options.command == "mcp"


def test_claude_codes_flags_become_rules_and_max_turns_the_step_limit() -> None:
    options, problem = read(
        "-p",
        "go",
        *("--allowedTools", "Bash(git diff:*),Read", "mcp__fs__read"),
        *("--disallowed-tools", "Write", "--permission-prompt-tool", "mcp__perm__ok"),
        *("--max-turns", "3", "--allow", "grep"),
    )
    assert problem is None
    assert options.allow == ["grep", "execute_command(git diff:*)", "read_file", "mcp__fs__read"]
    assert options.deny == ["write_file", "mcp__perm__ok"]  # the decider is never the model's
    assert options.max_steps == 3


def test_max_steps_keeps_its_default_without_max_turns() -> None:
    options, _ = read("-p", "go")
    assert options.max_steps == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("-p", "a", "b"), "two prompts given"),
        (("-p", "a", "--input-format", "stream-json"), "needs --output-format stream-json"),
        (("-p", "a", "--include-partial-messages"), "needs --output-format stream-json"),
        (("-p", "a", "--permission-prompt-tool", "x"), "not an MCP tool name"),
        (("--include-partial-messages",), "--include-partial-messages needs -p"),
        (("--permission-prompt-tool", "mcp__a__b"), "--permission-prompt-tool needs -p"),
    ],
)
def test_options_that_cannot_go_together_are_one_line(args: tuple[str, ...], said: str) -> None:
    _, problem = read(*args)
    assert problem is not None and said in problem
