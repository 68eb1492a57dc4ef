"""The slash-command table: one record per command feeds the REPL's dispatch, `/help`, Tab
completion and `paicli --help`. The REPL itself is exercised in a pty (test_repl.py)."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from paicli.cli import build_parser
from paicli.llm.presets import PRESETS
from paicli.ui.commands import BY_NAME, COMMANDS, help_text
from paicli.ui.completion import ReplCompleter
from paicli.ui.mcp_actions import MCP_ACTIONS


def completions(text: str) -> list[str]:
    completer = ReplCompleter(lambda: ["fs", "fault"], lambda: ["@fs:file:///a.txt"])
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [completion.text for completion in found]


def test_paicli_help_shows_every_slash_command_from_the_table() -> None:
    shown = build_parser().format_help()
    assert help_text() in shown
    for command in COMMANDS:
        assert command.help in shown


def test_every_name_and_alias_finds_its_command() -> None:
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)
    assert BY_NAME["/quit"] is BY_NAME["/exit"]
    assert all(BY_NAME[c.name] is c for c in COMMANDS)


def test_tab_completes_names_then_each_command_s_own_arguments() -> None:
    assert completions("/m") == ["/model", "/mcp", "/mode"]
    assert completions("/mcp re") == ["restart", "resources"]
    assert completions("/mcp ") == list(MCP_ACTIONS)
    assert completions("/mcp logs f") == ["fs", "fault"]
    assert completions("/mcp nonsense f") == []
    assert completions("/model ") == list(PRESETS)
    assert completions("/audit ") == []
    assert completions("read @fs:") == ["@fs:file:///a.txt"]
