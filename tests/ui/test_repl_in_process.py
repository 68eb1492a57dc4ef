"""The REPL's own logic, in process (tests/ui/repl_in_process.py): Tab completion, history,
Ctrl+C, the permission modes, a rendered answer, a refused summary and /init, typed through
prompt_toolkit's pipe input and read off the screen. The pty tests of test_repl.py keep what
only a real terminal shows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp._sandbox.support import _Cache
from paicli.permissions.approval import Mode
from paicli.ui.commands import COMMANDS
from paicli.ui.prompt_line import PROMPT
from tests.conftest import SERVER_PROGRAMS
from tests.ui.repl_in_process import ReplInProcess, repl_in_process

MARK = PROMPT.strip()
UP = "\x1b[A"  # the arrow key, as a terminal sends it
FAULT = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


def accepted(line: str) -> re.Pattern[str]:
    """The input line as the REPL redraws it when Enter accepts it: what was really sent."""
    return re.compile(re.escape(f"{PROMPT}{line}") + r"\r*\n")


async def restarted_then_left(repl: ReplInProcess) -> None:
    """`/mcp restart fault` entered: the server comes back, then Ctrl+D leaves cleanly."""
    await repl.expect(accepted("/mcp restart fault"))
    await repl.expect("✓ fault  stdio  11 tools")
    repl.send_keys("ctrl-d")
    await repl.expect("Bye.")
    assert await repl.exit_code() == 0


async def test_tab_completes_slash_commands_subcommands_and_server_names(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    async with repl_in_process(project, home, servers={"fault": FAULT}) as repl:
        await repl.expect("✓ fault  stdio  11 tools")
        repl.send("/mc")
        repl.send_keys("tab")
        await repl.line_reads("/mcp")
        repl.send_keys("enter")
        await repl.expect(accepted("/mcp"))
        await repl.expect(re.compile(r"fault\W+ready"))
        # Two subcommands start with "re": the first Tab offers both, the second picks one.
        repl.send("/mcp re")
        repl.send_keys("tab")
        await repl.expect("restart")
        await repl.expect("resources")
        repl.send_keys("tab")
        await repl.line_reads("/mcp restart")
        repl.send(" ")
        repl.send_keys("tab")
        await repl.line_reads("/mcp restart fault")
        repl.send_keys("enter")
        await restarted_then_left(repl)


async def test_a_slash_command_that_fails_says_so_in_one_line_and_the_prompt_comes_back(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox probe breaks in a way it does not expect (its process cannot even be
    made): /mcp shows its table, one line says what failed, and the next command runs."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the probe broke")

    monkeypatch.setattr(_Cache, "support", None)  # not probed yet in this process
    monkeypatch.setattr(subprocess, "Popen", broken)
    project, home = places
    async with repl_in_process(project, home, servers={"fault": FAULT}) as repl:
        await repl.expect("✓ fault  stdio  11 tools")
        repl.line("/mcp")
        await repl.expect(re.compile(r"fault\W+ready"))
        await repl.expect("/mcp failed: RuntimeError: the probe broke")
        repl.line("/mcp restart fault")
        await restarted_then_left(repl)
    assert "Traceback" not in repl.screen.text


async def test_history_recalls_earlier_lines_across_runs(places: tuple[Path, Path]) -> None:
    project, home = places
    async with repl_in_process(project, home) as repl:
        for line in ("/help", "/mode"):
            repl.line(line)
            await repl.expect(accepted(line))
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    async with repl_in_process(project, home) as repl:
        await repl.line_reads("")  # the prompt is up, its history loaded
        repl.send(UP + UP)  # the older of the two
        await repl.line_reads("/help")
        repl.send_keys("enter")
        await repl.expect(accepted("/help"))
        await repl.expect(COMMANDS[-1].help)
        repl.send(UP)  # the line just sent
        await repl.line_reads("/help")
        repl.send_keys("ctrl-c", "ctrl-d")  # (Ctrl+D ends only an empty prompt)
        assert await repl.exit_code() == 0


async def test_an_unusable_history_file_costs_the_history_not_the_prompt(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    (home / ".paicli" / "history").mkdir(parents=True)  # neither readable nor writable
    async with repl_in_process(project, home) as repl:
        await repl.expect("History not saved:")
        repl.line("/help")
        await repl.expect(accepted("/help"))
        await repl.expect(COMMANDS[-1].help)
        repl.send_keys("ctrl-d")
        await repl.expect("Bye.")
        assert await repl.exit_code() == 0
    assert repl.screen.text.count("History not saved") == 1


async def test_ctrl_c_clears_a_typed_line_and_at_an_empty_prompt_exits(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    async with repl_in_process(project, home) as repl:
        repl.send("half a thought")
        await repl.line_reads("half a thought")
        repl.send_keys("ctrl-c")
        await repl.line_reads("")
        repl.line("/help")  # still running, and the cleared text is not part of the line
        await repl.expect(accepted("/help"))
        await repl.expect(COMMANDS[-1].help)
        repl.send_keys("ctrl-c")  # one press at an empty prompt only warns
        await repl.expect("Press Ctrl+C again to exit.")
        repl.line("/help")  # a line in between: the next press warns again
        await repl.expect(accepted("/help"))
        repl.send_keys("ctrl-c")
        await repl.expect("Press Ctrl+C again to exit.")
        await repl.expect(MARK)  # the next prompt
        repl.send_keys("ctrl-c")
        await repl.expect("Bye.")
        assert await repl.exit_code() == 0


async def test_shift_tab_cycles_the_modes_and_plan_mode_keeps_a_write_from_running(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    (project / "notes.txt").write_text("one\n")
    write = {
        "id": "call_1",
        "name": "write_file",
        "arguments": json.dumps({"path": "notes.txt", "content": "gone\n"}),
    }
    script: list[dict[str, Any]] = [{"tool_calls": [write]}, {"text": "Plan: rewrite it."}]
    async with repl_in_process(project, home, script=script) as repl:
        repl.send_keys("shift-tab", "shift-tab")  # default -> accept-edits -> plan
        await repl.expect("[plan]")
        repl.line("tidy the notes")
        await repl.expect("Plan: rewrite it.")
        repl.send_keys("shift-tab")  # plan -> default
        repl.line("/mode")
        await repl.expect("Permission mode: default")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert (project / "notes.txt").read_text() == "one\n"
    records = [
        json.loads(line)
        for path in sorted((home / ".paicli" / "audit").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert [(r["tool"], r["decision"], r["decided_by"]) for r in records if "tool" in r] == [
        ("write_file", "denied", "mode"),
    ]


async def test_yolo_mode_says_so_loudly_and_stays_on_the_prompt(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    async with repl_in_process(project, home, mode=Mode.YOLO) as repl:
        await repl.expect("YOLO MODE: every tool call runs without asking")
        await repl.expect("[yolo]")
        repl.line("/mode plan")
        await repl.expect("Permission mode: plan")
        repl.send_keys("shift-tab")  # plan -> yolo (paicli started in it)
        repl.line("/mode")
        await repl.expect("Permission mode: yolo")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


async def test_a_server_that_never_answers_its_handshake_holds_the_first_turn_3_s_at_most(
    places: tuple[Path, Path],
) -> None:
    """Issue 27: it used to hold the first turn up to 30 s. Within the start budget (3 s)
    the turn goes without its tools, one line says so, and the next turn does not wait."""
    project, home = places
    stuck = {**FAULT, "args": [*FAULT["args"], "--mode", "no_handshake"]}
    script: list[dict[str, Any]] = [{"text": "First answer."}, {"text": "Second answer."}]
    async with repl_in_process(
        project, home, servers={"fine": FAULT, "stuck": stuck}, script=script
    ) as repl:
        repl.line("hello")
        await repl.expect("MCP servers still starting (stuck); going on without their tools")
        await repl.expect("First answer.")
        repl.line("again")
        await repl.expect("Second answer.")
        assert repl.screen.text.count("still starting") == 1
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


def words(text: str) -> re.Pattern[str]:
    """`text` wherever the screen wrapped it between words."""
    return re.compile(r"\s+".join(map(re.escape, text.split())))


async def test_a_streamed_answer_renders_as_markdown_and_the_prompt_comes_back(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    text = "Two things:\n\n- alpha item\n- beta item\n\nThat is **all**."
    async with repl_in_process(project, home, script=[{"text": text}]) as repl:
        repl.line("list two things")
        await repl.expect("• alpha item")
        await repl.expect("• beta item")
        await repl.expect("That is all.")
        await repl.line_reads("")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert repl.llm is not None
    assert repl.llm.requests[0]["messages"][-1] == {"role": "user", "content": "list two things"}
    assert "**all**" not in repl.screen.text  # rendered, not shown as source


async def test_a_summary_the_model_refuses_keeps_the_first_turn_and_says_so(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    code_word = "The code word is PELICAN-42."
    (home / ".paicli").mkdir(mode=0o700)
    (home / ".paicli" / "config.toml").write_text("context_window = 4200\n")
    script: list[dict[str, Any]] = [
        {"text": "first answer"},
        {"text": "second answer"},
        {"status": 400, "error": {"message": "context length exceeded"}},
        {"text": "third answer"},
    ]
    async with repl_in_process(project, home, script=script) as repl:
        # The first turn alone is worth summarising; the two fill the window with the tools'
        # definitions, without being more than the whole window.
        for text, reply in ((f"{code_word} " + "a " * 1800, "first"), ("b " * 1400, "second")):
            await repl.line_reads("")
            repl.paste_line(text)
            await repl.expect(f"{reply} answer")
        await repl.line_reads("")
        repl.line("c " * 100)
        await repl.expect(words("summarising the 1 oldest turns failed"))
        await repl.expect(words("context length exceeded"))
        await repl.expect(words("the whole conversation is kept"))
        await repl.expect("third answer")
        await repl.line_reads("")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert repl.llm is not None
    assert code_word in json.dumps(repl.llm.requests[3]["messages"])
    assert "summarised" not in repl.screen.text and "dropp" not in repl.screen.text


async def test_init_hands_the_model_a_prompt_to_draft_the_memory_file(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    async with repl_in_process(project, home, script=[{"text": "Drafted PAICLI.md."}]) as repl:
        repl.line("/init mention the fixtures")
        await repl.expect("Asking the model to draft PAICLI.md")
        await repl.expect("Drafted PAICLI.md.")
        await repl.line_reads("")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert repl.llm is not None
    (request,) = repl.llm.requests
    asked = request["messages"][-1]
    assert asked["role"] == "user" and "Write PAICLI.md" in asked["content"]
    assert asked["content"].endswith("The user adds: mention the fixtures")
