"""The interactive REPL as a user meets it: `paicli` in a real pseudo-terminal (120x40), keys
typed, the screen read back; the scripted model on 127.0.0.1 and real MCP server processes.
The REPL's logic alone is tested in process as well (test_repl_in_process.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paicli._version import __version__
from paicli.ui.commands import COMMANDS
from paicli.ui.prompt_line import PROMPT
from tests.audit_records import audit_records as read_audit
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced
from tests.processes import parent_of, processes_with, state_of
from tests.server_programs.auth_server import auth_world
from tests.servers.test_oauth_login import browse
from tests.zygote import CONSOLE_SCRIPT

from .terminal import Terminal

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

FAULT = str(SERVER_PROGRAMS / "fault_server.py")
SDK = str(SERVER_PROGRAMS / "sdk_server.py")
MARK = PROMPT.strip()  # a new prompt: the mark is drawn alone, the cursor moved after it
# Terminal control sequences a hostile model or server might slip into tool arguments.
HOSTILE = "clear\x1b[2Jscreen\rreturn\u202ereversed"


@dataclass
class Places:
    home: Path  # HOME
    project: Path  # the working directory
    marker: str  # an argument only this test's servers carry, to find them in /proc

    @property
    def paicli_home(self) -> Path:
        return self.home / ".paicli"


@pytest.fixture
def places(tmp_path: Path) -> Places:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return Places(home, project, f"paicli-repl-test-{os.getpid()}-{tmp_path.name}")


def add_servers(places: Places, *names: str) -> None:
    """Project servers: `fault` (our stdlib server) and/or `sdk` (the official SDK's)."""
    known = {
        "fault": [FAULT, "--initial-stderr", places.marker],
        "sdk": [SDK],
    }
    servers = {name: {"command": sys.executable, "args": known[name]} for name in names}
    folder = places.project / ".paicli"
    folder.mkdir(exist_ok=True)
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def terminal_env(places: Places) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(places.home),
        "PAICLI_HOME": str(places.paicli_home),
        "TERM": "xterm-256color",
        # Our pty answers no cursor position requests; without this prompt_toolkit waits for
        # one and then warns on screen that the terminal does not support them.
        "PROMPT_TOOLKIT_NO_CPR": "1",
        # The code under test, when it is not the installed one (a worktree's).
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


@asynccontextmanager
async def paicli(
    places: Places,
    llm: ScriptedLlm | None = None,
    *args: str,
    python: tuple[str, ...] = (),
    script: bool = False,
    **more_env: str,
) -> AsyncIterator[Terminal]:
    """`paicli` (the REPL) with no API key in its environment at all; `python`: options for
    the interpreter (`-X importtime`); `script`: the installed console script, not
    `python -m paicli.cli` (either way a fresh interpreter, not a zygote's fork)."""
    env = {**more_env, **terminal_env(places)}
    flags = ["--base-url", llm.base_url, "--model", "scripted"] if llm else []
    program = [str(CONSOLE_SCRIPT)] if script else [sys.executable, *python, "-m", "paicli.cli"]
    term = await Terminal.spawn(
        [*program, *flags, "--trust-project", *args],
        cwd=places.project,
        env=env,
    )
    try:
        yield term
    finally:
        await term.aclose()


async def ready(term: Terminal, name: str, tools: int) -> None:
    """Wait until server `name` is ready and the prompt is up again (it is redrawn below the
    server's line). A server ready before the banner shows in its status line instead."""
    await term.expect(re.compile(rf"✓ {name}  stdio  {tools} tools|MCP servers: 1/1 ready"))
    await term.expect(MARK)


async def answer(term: Terminal, reply: str, tool: str) -> None:
    """Wait for the approval prompt for `tool`, then type `reply`."""
    await term.expect(f"Tool: {tool}")
    await term.expect("Allow?")
    term.line(reply)


async def goodbye(term: Terminal) -> int:
    term.send_keys("ctrl-d")
    await term.expect("Bye.")
    return await term.exit_code()


def accepted(line: str) -> re.Pattern[str]:
    """The input line as the REPL redraws it when Enter accepts it: what was really sent."""
    return re.compile(re.escape(f"{PROMPT}{line}") + r"\r*\n")


def words(text: str) -> re.Pattern[str]:
    """`text` wherever the screen wrapped it between words."""
    return re.compile(r"\s+".join(map(re.escape, text.split())))


def audit_records(places: Places) -> list[dict[str, Any]]:
    """The tool call records (and tool changes), not the session start and end."""
    return read_audit(places.paicli_home / "audit")


async def test_without_a_model_or_servers_the_banner_says_how_and_ctrl_d_exits(
    places: Places,
) -> None:
    """Through the console script `paicli`, as a user starts it."""
    async with paicli(places, script=True) as term:
        await term.expect(f"paicli {__version__}")
        await term.expect("No model configured")
        await term.expect("🔌 MCP server: not configured")
        await term.expect(MARK)
        term.line("/help")
        for command in COMMANDS:
            await term.expect(command.help)
        await term.expect(MARK)
        term.line("/mcp")
        await term.expect("Add one with: paicli mcp add")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert term.text.count("No model configured") == 1
    assert "--base-url" in term.text


async def test_the_prompt_is_drawn_before_the_model_sdk_loads(
    places: Places,
) -> None:
    """Issue 13: the openai SDK is most of a start's time, so it loads (in the background)
    only once the prompt is on the screen, as the servers start (tests/servers/test_catalogue.py
    holds them in memory). `-X importtime` writes a line as each module finishes loading."""
    add_servers(places, "fault")
    loaded = re.compile(r"\|\s+openai\s*$", re.M)
    async with ScriptedLlm([{"text": "Fine."}]) as llm:
        async with paicli(places, llm, python=("-X", "importtime")) as term:
            prompt = await term.expect(MARK)
            before_prompt = term.text[: prompt.start()]
            assert "paicli.ui.repl" in before_prompt  # the import lines do reach the screen
            assert not loaded.search(before_prompt)
            await term.expect(loaded)
            term.line("hello")
            await term.expect("Fine.")
            await term.expect(MARK)
            assert await goodbye(term) == 0
    # The turn waited for the server started after the prompt: its tools went with it.
    assert "mcp__fault__echo" in {t["function"]["name"] for t in llm.requests[0]["tools"]}


async def test_with_nothing_to_ask_first_the_prompt_comes_before_paicli_loads(
    places: Places,
) -> None:
    """Issue 13: with no project servers or rules to trust, the prompt is drawn with
    prompt_toolkit alone; the runtime (MCP, tools, agent) loads behind it, the banner appears
    above it, and a line typed meanwhile is kept and answered."""
    runtime = re.compile(r"\|\s+paicli\.runtime\s*$", re.M)
    async with ScriptedLlm([{"text": "Fine."}]) as llm:
        async with paicli(places, llm, python=("-X", "importtime")) as term:
            prompt = await term.expect(MARK)
            loaded = re.findall(r"\|\s+(\S+)\s*$", term.text[: prompt.start()], re.M)
            assert "prompt_toolkit" in loaded
            late = ("paicli.runtime", "paicli.mcp", "paicli.agent", "rich", "openai")
            assert [m for m in loaded if m.startswith(late)] == []
            term.line("typed at once")
            await term.expect(runtime)
            await term.expect(f"paicli {__version__}")
            await term.expect("Fine.")
            await term.expect(MARK)
            term.send_keys("shift-tab")
            term.line("/mode")
            await term.expect("Permission mode: accept-edits")
            await term.expect(MARK)
            assert await goodbye(term) == 0
    assert llm.requests[0]["messages"][-1] == {"role": "user", "content": "typed at once"}


@pytest.mark.fresh_paicli  # "before paicli has loaded": a fork has everything loaded
async def test_keys_pressed_before_paicli_has_loaded_still_count(places: Places) -> None:
    """Shift+Tab, Ctrl+C and Ctrl+D at the quick prompt, before the runtime is open: the mode
    switch is made when it opens, the first Ctrl+C warns, and Ctrl+D leaves cleanly."""
    async with paicli(places) as term:
        await term.expect(MARK)
        term.send_keys("shift-tab", "shift-tab")  # default -> accept-edits -> plan
        await term.expect("[plan]")
        term.send_keys("ctrl-c")
        await term.expect("Press Ctrl+C again to exit.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    async with paicli(places) as term:
        await term.expect(MARK)
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    assert "Traceback" not in term.text


# paicli, with the import of its runtime held until a byte is written to the FIFO argv[1]
# (the quick start imports it in a thread behind the live prompt): "while paicli loads",
# for as long as a test needs it.
# (It waits in the module's loading, not in finding it: finders run under the global import
# lock, and a wait there would hold up every import of the other thread.)
HELD_START = r"""
import importlib.abc, importlib.machinery, runpy, sys
gate = sys.argv.pop(1)
class Held(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        with open(gate, "rb") as fifo:
            fifo.read(1)
        self.loader.exec_module(module)
class Gate(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "paicli.runtime":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Held(spec.loader)
        return spec
sys.meta_path.insert(0, Gate())
runpy.run_module("paicli.cli", run_name="__main__", alter_sys=True)
"""


@asynccontextmanager
async def held_paicli(places: Places, llm: ScriptedLlm) -> AsyncIterator[tuple[Terminal, Path]]:
    """`paicli` whose loading waits for `go(gate)`."""
    gate = places.home / "gate"
    os.mkfifo(gate)
    flags = ["--base-url", llm.base_url, "--model", "scripted"]
    command = [sys.executable, "-c", HELD_START, str(gate), *flags]
    term = await Terminal.spawn(command, cwd=places.project, env=terminal_env(places))
    try:
        yield term, gate
    finally:
        await term.aclose()


async def go(gate: Path) -> None:
    await asyncio.to_thread(gate.write_bytes, b"x")


async def test_keys_typed_while_paicli_loads_wait_for_the_prompt_as_they_were(
    places: Places,
) -> None:
    """After a first line is entered, and until paicli has loaded, the terminal keeps keys
    as typed: the second line is not echoed above the banner, its Enter still sends it (not
    a new line in the input), and the Ctrl+D after it is a key, not a lost end of file."""
    async with ScriptedLlm([{"text": "One."}, {"text": "Two."}]) as llm:
        async with held_paicli(places, llm) as (term, gate):
            await term.expect(MARK)
            term.line("first")
            await term.expect(accepted("first"))
            await term.expect("paicli is still loading")
            term.line("second")
            term.send_keys("ctrl-d")
            await go(gate)
            banner = await term.expect(f"paicli {__version__}")
            await term.expect("One.")
            await term.expect(accepted("second"))
            await term.expect("Two.")
            await term.expect("Bye.")
            assert await term.exit_code() == 0
    assert "second" not in term.text[: banner.start()]
    said = [r["messages"][-1]["content"] for r in llm.requests]
    assert said == ["first", "second"]


async def test_ctrl_c_while_paicli_loads_takes_the_first_line_back_or_leaves(
    places: Places,
) -> None:
    async with ScriptedLlm([]) as llm:
        async with held_paicli(places, llm) as (term, gate):
            await term.expect(MARK)
            term.line("never mind")
            await term.expect(accepted("never mind"))
            await term.expect("paicli is still loading; your line goes once it is ready")
            term.send_keys("ctrl-c")
            await go(gate)
            await term.expect("Interrupted.")
            await term.expect(MARK)
            assert await goodbye(term) == 0
        places.home.joinpath("gate").unlink()
        async with held_paicli(places, llm) as (term, gate):
            await term.expect(MARK)
            term.send_keys("ctrl-c")  # at the empty prompt: the first press
            await term.expect("Press Ctrl+C again to exit.")
            term.send_keys("ctrl-c")  # while paicli loads: the second
            await go(gate)
            await term.expect("Bye.")
            assert await term.exit_code() == 0
    assert llm.requests == []
    assert "stopped" not in term.text


async def test_once_a_projects_servers_are_answered_its_prompt_comes_first_too(
    places: Places,
) -> None:
    """The first start asks about the project's server before any prompt; the next one, with
    the files unchanged, asks nothing and draws the prompt before paicli loads; a new server
    in the file means asking first again."""
    add_servers(places, "fault")
    runtime = re.compile(r"\|\s+paicli\.runtime\s*$", re.M)
    command = [sys.executable, "-X", "importtime", "-m", "paicli.cli"]

    async def start() -> tuple[Terminal, str]:
        term = await Terminal.spawn(command, cwd=places.project, env=terminal_env(places))
        first = await term.expect(re.compile(f"Allow it\\? \\[y/N\\]|{MARK}"))
        return term, term.text[: first.end()]

    term, before = await start()
    try:
        assert "Allow it?" in before and MARK not in before
        term.line("y")
        await ready(term, "fault", 11)
        assert await goodbye(term) == 0
    finally:
        await term.aclose()
    term, before = await start()
    try:
        assert "Allow it?" not in before and not runtime.search(before)
        await ready(term, "fault", 11)
        assert await goodbye(term) == 0
    finally:
        await term.aclose()
    add_servers(places, "fault", "sdk")
    other = places.home / "other.json"
    other.write_text(json.dumps({"mcpServers": {}}))
    command += ["--strict-mcp-config", "--mcp-config", str(other)]
    term, before = await start()  # the project's servers are not loaded: nothing asked
    try:
        assert await goodbye(term) == 0
    finally:
        await term.aclose()
    del command[-3:]  # and such a start is not one to remember as answered
    term, before = await start()
    try:
        assert "Allow it?" in before and "sdk" in before and MARK not in before
        term.line("n")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    finally:
        await term.aclose()


async def test_tab_completes_slash_commands_subcommands_and_server_names(places: Places) -> None:
    add_servers(places, "fault")
    async with paicli(places) as term:
        await ready(term, "fault", 11)
        term.send("/mc")
        await term.expect("/mc")
        term.send_keys("tab")
        await term.expect("p")  # the completion drawn after what was typed
        term.send_keys("enter")
        await term.expect(accepted("/mcp"))  # the line as accepted
        await term.expect(re.compile(r"fault\W+ready"))
        await term.expect(MARK)
        # Two subcommands start with "re": the first Tab offers both, the second picks one.
        term.send("/mcp re")
        term.send_keys("tab")
        await term.expect("restart")
        await term.expect("resources")
        term.send_keys("tab")
        term.send(" ")
        term.send_keys("tab")
        await term.expect("fault")
        term.send_keys("enter")
        await term.expect(accepted("/mcp restart fault"))
        await term.expect("✓ fault  stdio  11 tools")
        await term.expect(MARK)
        assert await goodbye(term) == 0


@pytest.mark.parametrize(
    ("reply", "decision", "result"),
    [
        ("y", "allowed", HOSTILE),
        ("n", "denied", "The user denied this tool call."),
    ],
)
async def test_the_approval_prompt_shows_hostile_arguments_escaped_and_records_the_answer(
    places: Places, reply: str, decision: str, result: str
) -> None:
    add_servers(places, "fault")
    call = {"id": "call_1", "name": "mcp__fault__echo", "arguments": json.dumps({"text": HOSTILE})}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Done with the tool."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term, "fault", 11)
        term.line("echo something nasty")
        await term.expect("Tool call needs approval")
        found = await term.expect(re.compile(r'"text": "(.*)"'))
        assert found.group(1) == r"clear\u001b[2Jscreen\rreturn\u202ereversed"
        await term.expect("Allow?")
        term.line(reply)
        await term.expect("⎿ mcp__fault__echo: ")
        await term.expect("Done with the tool.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    # Not one of the sequences reached the terminal as itself.
    assert "\x1b[2J" not in term.raw
    assert "\u202e" not in term.raw
    sent = dict(llm.requests[1]["messages"][-1])
    content = sent.pop("content")
    assert sent == {"role": "tool", "tool_call_id": "call_1"}
    assert (unfenced(content) if decision == "allowed" else content) == result
    [record] = audit_records(places)
    assert record["tool"] == "mcp__fault__echo"
    assert record["decision"] == decision and record["decided_by"] == "user"
    assert record["arguments"] == {"text": HOSTILE}


async def test_ctrl_c_cancels_a_slow_mcp_call_and_the_server_is_told(places: Places) -> None:
    add_servers(places, "fault")
    # The model asks for a long sleep and a quick echo at once. The calls run in parallel, so
    # once the echo's result is on screen the sleep is surely running in the server.
    sleep = {"id": "call_s", "name": "mcp__fault__sleep", "arguments": '{"seconds": 60}'}
    echo = {"id": "call_e", "name": "mcp__fault__echo", "arguments": '{"text": "still here"}'}
    ask = {"id": "call_c", "name": "mcp__fault__cancelled_ids", "arguments": "{}"}
    script: list[dict[str, Any]] = [
        {"tool_calls": [sleep, echo]},
        {"tool_calls": [ask]},
        {"text": "Checked."},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term, "fault", 11)
        # The server, and bwrap's two processes around it (a project server is sandboxed):
        # paicli reaps its own child; the rest the kernel ends with the sandbox.
        found = processes_with(places.marker)
        servers = [pid for pid in found if parent_of(pid) == term.process.pid]
        assert len(servers) == 1, found
        term.line("nap, then echo")
        await answer(term, "y", "mcp__fault__sleep")
        await answer(term, "y", "mcp__fault__echo")
        await term.expect("⎿ mcp__fault__echo: still here")
        term.send_keys("ctrl-c")
        await term.expect("Interrupted.", timeout=10)
        await term.expect(MARK)
        term.line("which calls were cancelled?")
        await answer(term, "y", "mcp__fault__cancelled_ids")
        await term.expect("Checked.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    # The interrupted call was answered for the model; the server heard of the cancellation.
    after = llm.requests[1]["messages"]
    assert {"role": "tool", "tool_call_id": "call_s"}.items() <= after[-3].items()
    assert {"role": "tool", "tool_call_id": "call_e"}.items() <= after[-2].items()
    assert unfenced(after[-2]["content"]) == "still here"
    cancelled = llm.requests[2]["messages"][-1]
    assert cancelled["tool_call_id"] == "call_c"
    assert json.loads(unfenced(cancelled["content"])) != []
    # Exiting stopped the server and reaped it (a zombie would linger: PID 1 here reaps none).
    assert processes_with(places.marker) == []
    assert all(state_of(pid) is None for pid in servers)


async def test_ctrl_c_at_the_approval_prompt_denies_the_call_and_ends_the_turn(
    places: Places,
) -> None:
    add_servers(places, "fault")
    call = {"id": "call_1", "name": "mcp__fault__echo", "arguments": '{"text": "hi"}'}
    async with ScriptedLlm([{"tool_calls": [call]}]) as llm, paicli(places, llm) as term:
        await ready(term, "fault", 11)
        term.line("echo hi")
        await term.expect("Allow?")
        term.send_keys("ctrl-c")
        await term.expect("Interrupted.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert len(llm.requests) == 1  # the turn ended; the model was not asked again
    [record] = audit_records(places)
    assert record["decision"] == "denied" and record["decided_by"] == "user"


async def test_ctrl_c_clears_a_typed_line_and_at_an_empty_prompt_exits(places: Places) -> None:
    async with paicli(places) as term:
        await term.expect(MARK)
        term.send("half a thought")
        await term.expect("half a thought")
        term.send_keys("ctrl-c")
        term.line("/help")  # still running, and the cleared text is not part of the line
        await term.expect(accepted("/help"))
        await term.expect(COMMANDS[-1].help)
        await term.expect(MARK)
        term.send_keys("ctrl-c")  # one press at an empty prompt only warns
        await term.expect("Press Ctrl+C again to exit.")
        await term.expect(MARK)  # a new prompt (what is typed before it is not a line yet)
        term.line("/help")  # a line in between: the next press warns again
        await term.expect(accepted("/help"))
        await term.expect(MARK)
        term.send_keys("ctrl-c")
        await term.expect("Press Ctrl+C again to exit.")
        await term.expect(MARK)
        term.send_keys("ctrl-c")
        await term.expect("Bye.")
        assert await term.exit_code() == 0


async def test_mcp_disable_enable_and_tools_act_on_one_server(places: Places) -> None:
    add_servers(places, "fault")
    async with paicli(places) as term:
        await ready(term, "fault", 11)
        term.line("/mcp")
        await term.expect(re.compile(r"NAME\W+STATE"))
        await term.expect(re.compile(r"fault\W+ready\W+stdio\W+2025-11-25\W+11"))
        await term.expect(MARK)
        term.line("/mcp disable fault")
        await term.expect("Disabled fault for this session")
        await term.expect(MARK)
        term.line("/mcp")
        await term.expect(re.compile(r"fault\W+disabled"))
        await term.expect(MARK)
        term.line("/mcp enable fault")
        await term.expect("✓ fault  stdio  11 tools")
        await term.expect(MARK)
        term.line("/mcp")
        await term.expect(re.compile(r"fault\W+ready\W+stdio\W+2025-11-25\W+11"))
        await term.expect(MARK)
        term.line("/mcp tools fault")
        await term.expect("mcp__fault__echo  Return the text argument.")
        await term.expect(MARK)
        # The whole of one tool, as the server wrote it, its schema too.
        term.line("/mcp schema fault echo")
        await term.expect("fault │ Return the text argument.")
        await term.expect("fault │ input schema: {")
        await term.expect(MARK)
        term.line("/mcp schema fault nothing")
        await term.expect("fault has no tool 'nothing'")
        await term.expect(MARK)
        assert await goodbye(term) == 0


async def test_an_at_mention_completes_and_attaches_the_resource(places: Places) -> None:
    add_servers(places, "sdk")
    async with ScriptedLlm([{"text": "It says hello."}]) as llm, paicli(places, llm) as term:
        await ready(term, "sdk", 9)
        # Listing the resources here waits out the REPL's own listing for completion, which
        # started (on the same connection) when the server became ready.
        term.line("/mcp resources sdk")
        await term.expect("@sdk:test://static/hello")
        await term.expect(MARK)
        term.send("summarise @sdk:")
        term.send_keys("tab")
        await term.expect("test://static/hello")
        term.send_keys("enter")
        await term.expect(accepted("summarise @sdk:test://static/hello"))
        await term.expect("attached @sdk:test://static/hello")
        await term.expect("It says hello.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    sent = llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith('<resource server="sdk" uri="test://static/hello">\nhello resource\n')
    assert sent.endswith("\n\nsummarise @sdk:test://static/hello")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_stops_the_repl_and_every_server_with_it(
    places: Places, sig: signal.Signals
) -> None:
    add_servers(places, "fault")
    async with paicli(places) as term:
        await ready(term, "fault", 11)
        # The server, and bwrap's two processes around it (a project server is sandboxed):
        # paicli reaps its own child; the rest the kernel ends with the sandbox.
        found = processes_with(places.marker)
        servers = [pid for pid in found if parent_of(pid) == term.process.pid]
        assert len(servers) == 1, found
        os.kill(term.process.pid, sig)  # paicli alone: the server has its own process group
        assert await term.exit_code() == 130
    assert "servers shut down" in term.text
    assert processes_with(places.marker) == []
    assert all(state_of(pid) is None for pid in servers)


async def test_ctrl_c_while_the_model_streams_stops_the_stream_and_keeps_the_session(
    places: Places,
) -> None:
    script: list[dict[str, Any]] = [{"text": "Thinking about it", "hang": True}, {"text": "Fresh."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("take your time")
        await term.expect("Thinking")
        term.send_keys("ctrl-c")
        await term.expect("Interrupted.")
        async with asyncio.timeout(10):
            await llm.disconnected.wait()  # the HTTP stream was closed, not left hanging
        await term.expect(MARK)
        term.line("again")
        await term.expect("Fresh.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    second = llm.requests[1]["messages"]
    assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
    assert "[interrupted]" in second[2]["content"]


async def test_a_long_mcp_call_shows_a_live_line_with_time_bar_and_message(
    places: Places,
) -> None:
    add_servers(places, "fault")
    arguments = json.dumps({"steps": 6, "interval": 0.4, "no_total": False})
    call = {"id": "call_p", "name": "mcp__fault__progress", "arguments": arguments}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "All six steps done."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term, "fault", 11)
        term.line("run the long tool")
        await term.expect("Allow?")
        term.line("y")
        await term.expect(re.compile(r"mcp__fault__progress  \ds  █+░+ [1-5]/6  step [1-5]"))
        await term.expect(re.compile(r"mcp__fault__progress  [1-9]s  █+░* [2-6]/6  step [2-6]"))
        await term.expect("⎿ mcp__fault__progress: done")
        await term.expect("All six steps done.")
        await term.expect(MARK)
        assert await goodbye(term) == 0


async def test_mcp_login_logs_in_through_the_browser_and_restarts_the_server(
    places: Places,
) -> None:
    """A user server behind OAuth: the REPL says it needs login; `/mcp login docs` prints
    the URL (and runs $BROWSER, here `true`); the test plays the browser; the server comes
    up with its tool. `/mcp logout docs` forgets the tokens."""
    async with asyncio.timeout(90), auth_world() as world:
        places.paicli_home.mkdir(mode=0o700)
        entry = {"url": world.url, "type": "http", "protocol": "2025-11-25"}
        (places.paicli_home / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
        async with paicli(places, BROWSER="true") as term:
            await term.expect("⚠ docs  http  needs login: paicli mcp login docs")
            await term.expect(MARK)
            term.line("/mcp login docs")
            shown = await term.expect(re.compile(r"  (http://127\.0\.0\.1:\d+/authorize\?\S+)"))
            assert await browse(shown.group(1)) == 200
            await term.expect("✓ Logged in to docs (1 tools); restarting it.")
            await term.expect("✓ docs  http  1 tools")
            await term.expect(MARK)
            term.line("/mcp logout docs")
            await term.expect("Logged out of docs.")
            await term.expect(MARK)
            assert await goodbye(term) == 0


async def test_a_conversation_is_saved_and_continue_carries_it_on(places: Places) -> None:
    """Turn one tells a code word; paicli exits; `paicli --continue` answers turn two with
    turn one in the request. /context and /compact work on the resumed conversation."""
    async with ScriptedLlm([{"text": "Noted."}]) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("the code word is KIWI")
        await term.expect("Noted.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    (saved,) = (places.paicli_home / "sessions").glob("*.json")
    script: list[Json] = [{"text": "It was KIWI."}, {"text": "Summary: the code word is KIWI."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm, "--continue") as term:
        await term.expect(f"Resumed {saved.stem} (1 turns): the code word is KIWI")
        await term.expect(MARK)
        term.line("what was the code word?")
        await term.expect("It was KIWI.")
        await term.expect(MARK)
        term.line("/context")
        await term.expect(re.compile(r"Context: about [\d,]+ of [\d,]+ tokens"))
        await term.expect(re.compile(r"conversation \(2 turns\)"))
        await term.expect(MARK)
        term.line("/cost")
        await term.expect(re.compile(r"This session: [\d,]+ prompt \+ [\d,]+ completion"))
        await term.expect(MARK)
        term.line("/compact keep the code word")
        await term.expect("Compacted 2 turns (4 messages) into a summary.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    first, summary = llm.requests
    said = [m["content"] for m in first["messages"] if m["role"] == "user"]
    assert said == ["the code word is KIWI", "what was the code word?"]
    assert "keep the code word" in summary["messages"][0]["content"]
    kept = json.loads(saved.read_text())["messages"]
    assert [m["role"] for m in kept] == ["user"]  # the compacted conversation was saved
    assert kept[0]["content"].startswith("Summary of the earlier conversation:")


async def test_shift_tab_switches_to_plan_mode_and_an_edit_is_shown_as_a_coloured_diff(
    places: Places,
) -> None:
    (places.project / "notes.txt").write_text("one\ntwo\nthree\n")
    write = {
        "id": "call_1",
        "name": "write_file",
        "arguments": json.dumps({"path": "notes.txt", "content": "gone\n"}),
    }
    edit = {
        "id": "call_2",
        "name": "edit_file",
        "arguments": json.dumps({"path": "notes.txt", "old_string": "two", "new_string": "TWO"}),
    }
    script: list[dict[str, Any]] = [
        {"tool_calls": [write]},
        {"text": "Plan: rewrite notes.txt."},
        {"tool_calls": [edit]},
        {"text": "Edited."},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.send_keys("shift-tab", "shift-tab")  # default -> accept-edits -> plan
        await term.expect("[plan]")
        term.line("tidy the notes")
        await term.expect("Plan: rewrite notes.txt.")
        await term.expect(MARK)
        term.send_keys("shift-tab")  # plan -> default: the mark goes back to the plain one
        term.line("/mode")
        await term.expect("Permission mode: default")
        await term.expect(MARK)
        term.line("now do it")
        await term.expect("Edit notes.txt")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("Edited.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert (places.project / "notes.txt").read_text() == "one\nTWO\nthree\n"
    # The model was told why the write did not run, and the system prompt said plan mode.
    refused = llm.requests[1]["messages"][-1]["content"]
    assert "plan mode" in refused
    assert "Permission mode: plan" in llm.requests[0]["messages"][0]["content"]
    # The diff's lines are coloured: red for the old line, green for the new.
    assert re.search(r"\x1b\[31m[^\n]*-two", term.raw)
    assert re.search(r"\x1b\[32m[^\n]*\+TWO", term.raw)
    records = audit_records(places)
    assert [(r["tool"], r["decision"], r["decided_by"]) for r in records] == [
        ("write_file", "denied", "mode"),
        ("edit_file", "allowed", "user"),
    ]


async def test_a_prompt_typed_while_a_turn_runs_is_sent_when_the_turn_ends(
    places: Places,
) -> None:
    script: list[dict[str, Any]] = [
        {"text": "first answer arrives slowly", "chunk_delay": 0.2},
        {"text": "second answer"},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("one")
        await term.expect("first")
        term.line("two")  # typed ahead: Enter must send it, not start a second line
        await term.expect("second answer")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert llm.requests[1]["messages"][-1] == {"role": "user", "content": "two"}


async def test_a_projects_allow_rules_apply_once_accepted_and_are_not_asked_again(
    places: Places,
) -> None:
    folder = places.project / ".paicli"
    folder.mkdir()
    rules = {"allow": ["execute_command(echo:*)", "write_file(\x1b[2Jsrc/**)"]}
    (folder / "settings.json").write_text(json.dumps({"permissions": rules}))
    call = {"id": "c", "name": "execute_command", "arguments": '{"command": "echo hi"}'}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Ran it."}]
    env = terminal_env(places)
    async with ScriptedLlm(script) as llm:
        command = [sys.executable, "-m", "paicli.cli", "--base-url", llm.base_url, "--model", "m"]
        term = await Terminal.spawn(command, cwd=places.project, env=env)
        try:
            await term.expect("would let these calls run without asking")
            await term.expect("Apply these rules?")
            term.line("y")
            await term.expect(MARK)
            term.line("say hi")
            await term.expect("Ran it.")
            await term.expect(MARK)
            assert await goodbye(term) == 0
        finally:
            await term.aclose()
        assert "\x1b[2J" not in term.raw and "\\x1b[2Jsrc/**" in term.text
        again = await Terminal.spawn(command, cwd=places.project, env=env)
        try:
            await again.expect(MARK)
            assert await goodbye(again) == 0
        finally:
            await again.aclose()
        assert "Apply these rules?" not in again.text
    [record] = audit_records(places)
    assert (record["tool"], record["decision"], record["decided_by"]) == (
        "execute_command",
        "allowed",
        "policy",
    )


async def test_yolo_mode_says_so_loudly_and_stays_on_the_prompt(places: Places) -> None:
    async with paicli(places, None, "--permission-mode", "yolo", "--force-root") as term:
        await term.expect("YOLO MODE: every tool call runs without asking")
        await term.expect("[yolo]")
        term.line("/mode plan")
        await term.expect("Permission mode: plan")
        await term.expect(MARK)
        term.send_keys("shift-tab")  # plan -> yolo (paicli started in it)
        term.line("/mode")
        await term.expect("Permission mode: yolo")
        await term.expect(MARK)
        assert await goodbye(term) == 0


async def test_new_project_servers_are_one_question_and_mcp_approve_starts_a_declined_one(
    places: Places,
) -> None:
    add_servers(places, "fault", "sdk")
    command = [sys.executable, "-m", "paicli.cli"]
    term = await Terminal.spawn(command, cwd=places.project, env=terminal_env(places))
    try:
        await term.expect("2 project servers want to run:")
        await term.expect("Allow them? [a]ll, [c]hoose one by one, [N]one? [a/c/N]")
        term.line("c")
        await term.expect("Allow 'fault'? [y/N]")
        term.line("n")
        await term.expect("Allow 'sdk'? [y/N]")
        term.line("y")
        await term.expect(words("project server 'fault' is not started: you declined it"))
        await term.expect(MARK)
        term.line("/mcp approve fault")
        await term.expect("Approved fault as it is now; starting it.")
        await term.expect("✓ fault  stdio  11 tools")
        await term.expect(MARK)
        term.line("/mcp approve fault")
        await term.expect("it is not waiting for approval")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    finally:
        await term.aclose()
    again = await Terminal.spawn(command, cwd=places.project, env=terminal_env(places))
    try:
        await again.expect(MARK)
        assert await goodbye(again) == 0
    finally:
        await again.aclose()
    assert "want to run" not in again.text and "not approved" not in again.text


async def test_mcp_config_runs_a_files_servers_for_one_repl_and_strict_runs_only_those(
    places: Places,
) -> None:
    add_servers(places, "sdk")  # a project server, approved below with --trust-project
    extra = places.home / "extra.json"
    server = {"command": sys.executable, "args": [FAULT, "--initial-stderr", places.marker]}
    extra.write_text(json.dumps({"mcpServers": {"extra": server}}))
    async with paicli(places, None, "--mcp-config", str(extra), "--strict-mcp-config") as term:
        await ready(term, "extra", 11)
        term.line("/mcp")
        await term.expect(re.compile(r"extra \(cli\)"))
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "sdk" not in term.text
