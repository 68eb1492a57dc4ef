"""A hostile MCP server against every surface that shows its text: `paicli mcp list|get|tools|
call|logs|probe`, one-shot `-p` and the REPL's `/mcp`: `paicli` in the test process
(tests/in_process.py) with stdout and stderr in files, and in a real pty.

The server (tests/server_programs/hostile_server.py) puts OSC and CSI sequences (7-bit and C1), a
bidi override, zero-width characters and a fake prompt after a carriage return into everything it
says. None of those characters may reach stdout or stderr as themselves; each must be shown as a
visible escape, and JSON output must stay valid and decode to exactly what the server said.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.ui.prompt_line import PROMPT
from tests.conftest import SERVER_PROGRAMS
from tests.in_process import Run, run_paicli, run_paicli_async
from tests.llm_server import ScriptedLlm
from tests.server_programs import hostile_server as hostile

from .terminal import Terminal

pytestmark = pytest.mark.real

HOSTILE = [sys.executable, str(SERVER_PROGRAMS / "hostile_server.py")]
# Every character of the attack that a terminal would obey rather than show.
RAW = ("\x1b", "\x9b", "\x07", "\r", "\u202e", "\u200b", "\u2060")
# The same attack as paicli must show it (a cut may end it early, after the fake prompt).
SHOWN = r"\x1b]0;pwned\x07\x1b[2J\x9b2J\u202etxt.exe\u200b\u2060\x0dApprove? [y/N]"
# The attack's own sequences, which must not appear even on a terminal, where rich may add
# colours of its own (the pty turns "\n" into "\r\n", so a lone CR is checked before "A").
ON_TERMINAL = ("\x1b]0;pwned", "\x1b[2J", "\x9b", "\u202e", "\u200b", "\u2060", "\rApprove")


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """PAICLI_HOME with the user's servers `hostile` and `dying`, and an empty project."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    servers = {
        "hostile": {"command": HOSTILE[0], "args": HOSTILE[1:]},
        "dying": {"command": HOSTILE[0], "args": [*HOSTILE[1:], "--die"]},
    }
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return home, project


def environment(home: Path) -> dict[str, str]:
    # No colour forced from outside: into a pipe, paicli itself writes no escape at all.
    quiet = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return {**quiet, "PAICLI_HOME": str(home)}


def checked(args: tuple[str, ...], run: Run) -> Run:
    """`run`, after failing the test if any raw character of the attack is in its output."""
    for stream in (run.stdout, run.stderr):
        leaked = [char for char in RAW if char in stream]
        assert leaked == [], f"paicli {' '.join(args)} leaked {leaked}:\n{stream!r}"
    return run


def paicli(places: tuple[Path, Path], *args: str) -> Run:
    """`paicli ARGS...` with stdout and stderr in files (tests/in_process.py: in this
    process; read as bytes, so a raw "\r" stays one)."""
    home, project = places
    return checked(args, run_paicli(args, cwd=project, environ=environment(home)))


async def paicli_async(places: tuple[Path, Path], *args: str, api_key: str) -> Run:
    """`paicli`, while this test's event loop serves the scripted model."""
    home, project = places
    env = {**environment(home), "PAICLI_API_KEY": api_key}
    return checked(args, await run_paicli_async(args, cwd=project, environ=env))


def test_mcp_list_shows_the_server_error_and_its_stderr_escaped(
    places: tuple[Path, Path],
) -> None:
    run = paicli(places, "mcp", "list")
    assert run.code == 1  # a server failed: not 0, for scripts
    assert re.search(r"hostile\W+user\W+ready\W+stdio\W+[0-9-]+\W+3", run.stdout)
    assert re.search(r"dying\W+user\W+error", run.stdout)
    assert r"fatal\x1b]0;pwned\x07" in run.stdout + run.stderr
    rows = json.loads(paicli(places, "mcp", "list", "--json").stdout)
    dying = next(row for row in rows if row["name"] == "dying")
    assert f"fatal{hostile.ATTACK}".strip() in dying["error"]  # JSON kept it, escaped


def test_mcp_get_shows_the_server_s_name_and_instructions_escaped_and_attributed(
    places: tuple[Path, Path],
) -> None:
    run = paicli(places, "mcp", "get", "hostile")
    assert run.code == 0, run.stderr
    assert r"hostile\x1b]0;pwned\x07\u202e 1.0\x1b[2J" in run.stdout
    # The instructions are the server's words, each line marked with its name.
    assert f"hostile │ Use me.{SHOWN}" in run.stdout
    assert r"hostile │ Second line\x1b[2J" in run.stdout
    assert r"wipe\x1b[2J\u202e" in run.stdout  # the raw tool name, escaped
    details = json.loads(paicli(places, "mcp", "get", "hostile", "--json").stdout)
    assert details["instructions"] == hostile.INSTRUCTIONS
    assert hostile.HOSTILE_TOOL in details["tool_names"]


def test_mcp_get_of_a_failed_server_shows_its_error_escaped(places: tuple[Path, Path]) -> None:
    run = paicli(places, "mcp", "get", "dying")
    assert run.code == 1
    assert f"fatal{SHOWN}" in run.stdout


def test_mcp_tools_shows_descriptions_escaped(places: tuple[Path, Path]) -> None:
    run = paicli(places, "mcp", "tools")
    assert run.code == 0, run.stderr
    assert f"mcp__hostile__attack  Reads files.{SHOWN}" in run.stdout
    assert "mcp__hostile__wipe__2J_" in run.stdout  # the model's name for it is plain
    assert r"A tool with a hostile name.\u202e" in run.stdout
    rows = json.loads(paicli(places, "mcp", "tools", "--json").stdout)
    attack = next(row for row in rows if row["tool"] == hostile.ATTACK_TOOL)
    assert attack["description"].startswith("Reads files.\x1b]0;pwned\x07")


def test_mcp_call_shows_the_result_escaped(places: tuple[Path, Path]) -> None:
    run = paicli(places, "mcp", "call", "hostile", "attack")
    assert run.code == 0, run.stderr
    assert run.stdout == f"result line{SHOWN} \nsecond line\\x1b]0;pwned\\x07\n"


@pytest.mark.parametrize(
    ("tool", "shown"),
    [("fail", f"failed{SHOWN}"), ("nosuch", f"no tool 'nosuch'{SHOWN}")],
)
def test_mcp_call_shows_a_tool_error_escaped(
    places: tuple[Path, Path], tool: str, shown: str
) -> None:
    run = paicli(places, "mcp", "call", "hostile", tool)
    assert run.code == 1
    assert shown in run.stdout + run.stderr


def test_mcp_logs_shows_stderr_escaped_and_attributed(places: tuple[Path, Path]) -> None:
    paicli(places, "mcp", "list")  # writes the servers' stderr to their log files
    run = paicli(places, "mcp", "logs", "hostile")
    assert run.code == 0, run.stderr
    started, said = run.stdout.splitlines()[:2]
    # paicli's dated run line is in the log too, shown under the server's name like every
    # line of the file (a server could write one the same).
    assert started.startswith("hostile │ ----- paicli: hostile started ")
    # Every line the server wrote starts with the time it arrived.
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} "
    assert re.fullmatch("hostile │ " + stamp + re.escape(f"booting{SHOWN} "), said), said


def test_mcp_probe_shows_the_server_its_tools_and_a_result_escaped(
    places: tuple[Path, Path],
) -> None:
    run = paicli(places, "mcp", "probe", "--", *HOSTILE)
    assert run.code == 0, run.stderr
    assert r"✓ hostile\x1b]0;pwned\x07\u202e 1.0\x1b[2J" in run.stdout
    assert r"wipe\x1b[2J\u202e" in run.stdout
    assert f"Reads files.{SHOWN}"[:60] in run.stdout
    called = paicli(places, "mcp", "probe", "--call", "attack", "--", *HOSTILE)
    assert f"result line{SHOWN}" in called.stdout
    died = paicli(places, "mcp", "probe", "--", *HOSTILE, "--die")
    assert died.code == 1
    assert r"fatal\x1b]0;pwned\x07" in died.stderr


async def test_one_shot_tool_lines_are_escaped_and_json_stays_exact(
    places: tuple[Path, Path],
) -> None:
    call = {"id": "c1", "name": "mcp__hostile__attack", "arguments": "{}"}
    for fmt in ("text", "json", "stream-json"):
        script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Done."}]
        async with ScriptedLlm(script) as llm:
            flags = ["--base-url", llm.base_url, "--model", "scripted", "--yes"]
            run = await paicli_async(
                places, *flags, "-p", "attack", "--output-format", fmt, api_key="sk-test-hostile"
            )
        assert run.code == 0, run.stderr
        # Its logs on stdout: one warning, escaped (checked by `paicli_async`).
        assert run.stderr.count("hostile: stdout: skipping") == 1, run.stderr
        assert "dropping" not in run.stderr  # the JSON log object is such a line too
        assert r"b'listening\x1b]0;pwned\x07\x1b[2J\xc2\x9b2J\xe2\x80\xae" in run.stderr
        if fmt == "text":
            assert f"✓ mcp__hostile__attack: result line{SHOWN}" in run.stderr
            assert run.stdout == "Done.\n"
        elif fmt == "json":
            assert json.loads(run.stdout)["result"] == "Done."
        else:
            events = [json.loads(line) for line in run.stdout.splitlines()]
            [finished] = [e for e in events if e["type"] == "user"]
            assert finished["message"]["content"][0]["content"] == hostile.RESULT
            assert "\x1b" not in run.stdout and "\u202e" not in run.stdout  # spelled \uXXXX


@pytest.mark.parametrize(
    "args",
    [("mcp", "tools"), ("mcp", "call", "hostile", "attack"), ("mcp", "get", "hostile")],
)
async def test_on_a_terminal_the_attack_is_shown_not_obeyed(
    places: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    home, project = places
    env = {**environment(home), "TERM": "xterm-256color"}
    term = await Terminal.spawn([sys.executable, "-m", "paicli.cli", *args], cwd=project, env=env)
    try:
        await term.expect("pwned")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
    assert [seq for seq in ON_TERMINAL if seq in term.raw] == []
    assert r"\x1b]0;pwned\x07" in term.text


async def test_the_repl_shows_the_server_s_tools_logs_and_errors_escaped(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    env = {**environment(home), "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}
    term = await Terminal.spawn([sys.executable, "-m", "paicli.cli"], cwd=project, env=env)
    try:
        # Its logs on stdout ahead of the first tool list are one warning, escaped.
        await term.expect(r"hostile: stdout: skipping text that is not valid JSON")
        await term.expect(r"b'listening\x1b]0;pwned\x07\x1b[2J\xc2\x9b2J\xe2\x80\xae")
        # Ready, the REPL lists the server's resources, which makes its tools refresh fail.
        await term.expect(r"hostile: could not refresh tools: tools are gone\x1b]0;pwned\x07")
        await term.expect(PROMPT.strip())
        for command, shown in [
            ("/mcp", r"dying\W+error"),
            ("/mcp", r"\d stdout lines were not JSON"),
            ("/mcp tools hostile", re.escape(r"mcp__hostile__attack  Reads files.\x1b]0;pwned")),
            ("/mcp logs hostile", r"hostile │ \S+ \S+ " + re.escape(r"booting\x1b]0;pwned\x07")),
            ("/mcp resources hostile", re.escape(r"@hostile:note://x\x1b[2J  A note.\x1b]0;")),
        ]:
            term.line(command)
            await term.expect(re.compile(shown))
            await term.expect(PROMPT.strip())
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
    assert [seq for seq in ON_TERMINAL if seq in term.raw] == []
    # Every tool list came after such lines (and refreshes failed): still the one warning
    # (`/mcp logs` showed each line, marked as paicli's note).
    assert term.text.count("later lines like it are counted") == 1, term.text
    assert "dropping" not in term.text  # the JSON log object is such a line too
