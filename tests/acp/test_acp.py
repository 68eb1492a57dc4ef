"""`paicli acp` driven as an editor drives it: the SDK's own client side talking over stdio
pipes to `paicli acp`, the real openai client against the scripted model on 127.0.0.1, and
real MCP servers the editor passes in `session/new`. `paicli acp` runs in the test process
through its entry point on live pipes (tests/in_process.py); what only a process shows (its
exit when the editor quits, raw bytes on its stdin, the SDK missing) starts a real one as
the SDK's `spawn_agent_process` does."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    EnvVariable,
    FileEditToolCallContent,
    FileSystemCapabilities,
    HttpMcpServer,
    Implementation,
    McpServerStdio,
    NewSessionResponse,
    PromptResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SseMcpServer,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process
from acp.transports import default_environment

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.http_servers import run_http_server
from tests.in_process import Piped, paicli_on_pipes
from tests.llm_server import Json, ScriptedLlm
from tests.processes import processes_with, until

pytestmark = pytest.mark.real

API_KEY = "sk-test-ACP-0123456789abcdef"


class EditorClient:
    """What an editor does: records every update, answers permission requests with
    `answer` (and says when it was asked)."""

    def __init__(self, answer: str = "allow_once") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.was_asked = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, [o.kind for o in options]))
        self.was_asked.set()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates if isinstance(u, AgentMessageChunk))

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]


def environment(project: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(project.parent / "home"),
        "PAICLI_HOME": str(project.parent / "home" / ".paicli"),
        "PAICLI_API_KEY": API_KEY,
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


class BufferEditor(EditorClient):
    """An editor with unsaved buffers, offering its fs to the agent: reads come from
    `buffers`, writes land there (and are recorded), never on disk."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__("allow_once")
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.writes.append((path, content))
        self.buffers[path] = content


@asynccontextmanager
async def editor(
    project: Path, llm: ScriptedLlm, client: EditorClient
) -> AsyncIterator[tuple[ClientSideConnection, Piped]]:
    """`paicli acp` as an editor starts it (its environment as the SDK's spawn makes it),
    in this process on live pipes, initialized; its stderr kept in a file."""
    args = ["--base-url", llm.base_url, "--model", "scripted", "acp"]
    env = {**default_environment(), **environment(project)}
    with (project.parent / "stderr.txt").open("ab") as stderr:
        async with paicli_on_pipes(args, cwd=project, environ=env, stderr=stderr) as run:
            connection = ClientSideConnection(client, run.stdin, run.stdout)  # type: ignore[arg-type]
            try:
                await initialized(connection, client)
                yield connection, run
            finally:
                await connection.close()


@asynccontextmanager
async def editor_process(
    project: Path, llm: ScriptedLlm, client: EditorClient
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """`paicli acp` started as Zed starts it, a real process, initialized; its stderr kept
    in a file."""
    args = ["-m", "paicli.cli", "--base-url", llm.base_url, "--model", "scripted", "acp"]
    with (project.parent / "stderr.txt").open("ab") as stderr:
        async with spawn_agent_process(
            client,  # type: ignore[arg-type]
            sys.executable,
            *args,
            env=environment(project),
            cwd=project,
            transport_kwargs={"stderr": stderr.fileno()},
        ) as (connection, process):
            await initialized(connection, client)
            yield connection, process


async def initialized(connection: ClientSideConnection, client: EditorClient) -> None:
    """`initialize` as an editor sends it (offering its fs when it has buffers), checked."""
    async with asyncio.timeout(60):
        answer = await connection.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(
                    read_text_file=isinstance(client, BufferEditor),
                    write_text_file=isinstance(client, BufferEditor),
                )
            ),
            client_info=Implementation(name="test-editor", version="1"),
        )
    assert answer.protocol_version == PROTOCOL_VERSION
    assert answer.agent_capabilities is not None
    assert answer.agent_capabilities.load_session


async def first_turn(
    conn: ClientSideConnection, project: Path, text: str, servers: list[Any] | None = None
) -> tuple[NewSessionResponse, PromptResponse]:
    """A new session in `project` (with the editor's `servers`) and its first turn."""
    async with asyncio.timeout(60):
        session = await conn.new_session(cwd=str(project), mcp_servers=servers or [])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
    return session, answer


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "notes.txt").write_text("old line\n")
    return root


async def test_a_prompt_streams_text_and_an_approved_edit_with_its_diff(project: Path) -> None:
    edit = {"path": "notes.txt", "old_string": "old line", "new_string": "new line"}
    todo = {"todos": [{"content": "Edit notes", "status": "in_progress", "activeForm": "x"}]}
    script: list[Json] = [
        {"tool_calls": [{"name": "todo_write", "arguments": json.dumps(todo)}]},
        {"tool_calls": [{"name": "edit_file", "arguments": json.dumps(edit)}]},
        {"text": "I changed the note for you"},
    ]
    client = EditorClient("allow_once")
    async with ScriptedLlm(script) as llm, editor(project, llm, client) as (conn, _):
        async with asyncio.timeout(60):
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            assert session.modes is not None and session.modes.current_mode_id == "default"
            answer = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("fix the note")]
            )
    assert answer.stop_reason == "end_turn"
    assert client.text() == "I changed the note for you"
    assert (project / "notes.txt").read_text() == "new line\n"
    # The approval was the editor's, with the four ACP options and the diff.
    (asked, kinds), *_ = client.asked
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert any(isinstance(c, FileEditToolCallContent) for c in asked.content or [])
    started = [u for u in client.of(ToolCallStart) if u.title.startswith("edit_file")]
    assert started and started[0].kind == "edit"
    assert started[0].locations[0].path == str(project / "notes.txt")
    diff = started[0].content[0]
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.old_text, diff.new_text) == ("old line", "new line")
    assert asked.tool_call_id == started[0].tool_call_id
    assert started[0].status == "pending"  # until approved
    statuses = [
        u.status for u in client.of(ToolCallProgress) if u.tool_call_id == asked.tool_call_id
    ]
    assert statuses == ["in_progress", "completed"]
    (plan,) = client.of(AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [("Edit notes", "in_progress")]
    assert API_KEY not in (project.parent / "stderr.txt").read_text()


async def test_a_rejected_edit_does_not_run_and_a_saved_session_replays(project: Path) -> None:
    edit = {"path": "notes.txt", "content": "overwritten"}
    script: list[Json] = [
        {"tool_calls": [{"name": "write_file", "arguments": json.dumps(edit)}]},
        {"text": "Understood, I left it"},
    ]
    client = EditorClient("reject_once")
    async with ScriptedLlm(script) as llm:
        async with editor(project, llm, client) as (conn, _):
            session, answer = await first_turn(conn, project, "overwrite it")
        assert answer.stop_reason == "end_turn"
        assert (project / "notes.txt").read_text() == "old line\n"
        assert [u.status for u in client.of(ToolCallProgress)] == ["failed"]
        later = EditorClient()
        async with editor(project, llm, later) as (conn, _):
            async with asyncio.timeout(60):
                await conn.load_session(
                    cwd=str(project), session_id=session.session_id, mcp_servers=[]
                )
    said = [u.content.text for u in later.of(UserMessageChunk)]
    assert said == ["overwrite it"]
    assert "Understood, I left it" in later.text()


async def test_an_editor_server_runs_and_cancel_stops_its_slow_tool(
    project: Path, tmp_path: Path
) -> None:
    marker = f"acp-{uuid.uuid4().hex}"
    server = McpServerStdio(
        name="fault",
        command=sys.executable,
        args=[str(SERVER_PROGRAMS / "fault_server.py"), "--initial-stderr", marker],
        env=[EnvVariable(name="FAULT_TOKEN", value="x")],
    )
    script: list[Json] = [
        {"tool_calls": [{"name": "mcp__fault__echo", "arguments": '{"text": "hi there"}'}]},
        {"tool_calls": [{"name": "mcp__fault__sleep", "arguments": '{"seconds": 600}'}]},
        {"text": "never said"},
    ]
    client = EditorClient("allow_always")
    async with ScriptedLlm(script) as llm:
        async with editor(project, llm, client) as (conn, run):
            async with asyncio.timeout(60):
                session = await conn.new_session(cwd=str(project), mcp_servers=[server])
                # Started with the session, in the background: seen once it has exec'd.
                await until(lambda: bool(processes_with(marker)))
                turn = asyncio.ensure_future(
                    conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
                )
                # echo was allowed always; sleep is asked about: then it runs, and is cancelled.
                while len(client.asked) < 2:
                    client.was_asked.clear()
                    await client.was_asked.wait()
                await conn.cancel(session_id=session.session_id)
                answer = await turn
        assert answer.stop_reason == "cancelled"
        outputs = [str(u.raw_output) for u in client.of(ToolCallProgress)]
        assert any("hi there" in o for o in outputs)
        # The editor closed stdin: paicli ended and the server it started is gone.
        assert run.ended.done() and run.ended.result() == 0
        await until(lambda: not processes_with(marker))


async def test_nonsense_gets_json_rpc_errors_and_paicli_keeps_serving(project: Path) -> None:
    """Raw bytes on stdin, as an attacker would write them: each bad line is answered with
    an error (or, for a notification, dropped), and a good request after them still works."""
    args = ["--model", "scripted", "--base-url", "http://127.0.0.1:9/v1", "acp"]
    lines = [
        b"{not json at all\n",
        b"[1, 2, 3]\n",
        b'"just a string"\n',
        b'{"jsonrpc": "2.0", "id": 7, "method": 12}\n',
        b'{"jsonrpc": "2.0", "id": 8, "method": "no/such_method", "params": {}}\n',
        b'{"jsonrpc": "2.0", "id": 9, "method": "session/new", "params": {"cwd": 5}}\n',
        b'{"jsonrpc": "2.0", "id": 10, "method": "session/prompt", "params": {"sessionId": "n",'
        b' "prompt": [{"type": "text", "text": "hi"}]}}\n',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": 5}\n',
        b"\xff\xfe\x00garbage\n",
        b'{"jsonrpc": "2.0", "id": 12, "method": "session/new", "params": {"cwd": "rel",'
        b' "mcpServers": []}}\n',
        b'{"jsonrpc": "2.0", "id": 13, "method": "session/load", "params": {"cwd": "'
        + str(project).encode()
        + b'", "sessionId": "20260101-000000-abcdef", "mcpServers": []}}\n',
        b'{"jsonrpc": "2.0", "id": 14, "method": "session/load", "params": {"cwd": "'
        + str(project).encode()
        + b'", "sessionId": "../../etc/passwd", "mcpServers": []}}\n',
        b'{"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {"protocolVersion": 1}}\n',
    ]
    answers: dict[object, dict[str, Any]] = {}
    nulls: list[dict[str, Any]] = []
    with tempfile.TemporaryFile() as stderr:
        env = environment(project)
        async with paicli_on_pipes(args, cwd=project, environ=env, stderr=stderr) as run:
            run.stdin.write(b"".join(lines))
            await run.stdin.drain()
            async with asyncio.timeout(60):
                while not {11, 12, 13, 14} <= answers.keys():
                    line = await run.stdout.readline()
                    assert line, "paicli stopped serving"
                    message = json.loads(line)
                    if message.get("id") is None:
                        nulls.append(message)
                    else:
                        answers[message["id"]] = message
    assert [m["error"]["code"] for m in nulls] == [-32700, -32600, -32600, -32600, -32700]
    assert answers[7]["error"]["code"] == -32600
    assert answers[8]["error"]["code"] == -32601
    assert answers[9]["error"]["code"] == -32602
    assert answers[10]["error"]["code"] == -32602
    assert answers[11]["result"]["protocolVersion"] == 1
    for unknown in (12, 13, 14):
        assert answers[unknown]["error"]["code"] == -32602, answers[unknown]
    assert run.ended.result() == 0


async def test_without_the_sdk_it_says_how_to_install_it(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    # The SDK not installed, as Python sees it: its import fails.
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['acp'] = None\n")
    env = environment(project)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), env.get("PYTHONPATH")]))
    process = await zygote_process.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        "acp",
        cwd=project,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode == 2
    assert out == b""
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "paicli-cli[acp]" in lines[0]


async def test_files_go_through_the_editor_that_offers_them_within_the_path_rules(
    project: Path,
) -> None:
    (project.parent / "outside.txt").write_text("not yours\n")
    notes = str(project / "notes.txt")
    edit = {"path": "notes.txt", "old_string": "unsaved line", "new_string": "edited line"}
    script: list[Json] = [
        {"tool_calls": [{"name": "read_file", "arguments": '{"path": "notes.txt"}'}]},
        {"tool_calls": [{"name": "read_file", "arguments": '{"path": "../outside.txt"}'}]},
        {"tool_calls": [{"name": "edit_file", "arguments": json.dumps(edit)}]},
        {"text": "done"},
    ]
    client = BufferEditor({notes: "unsaved line\n"})
    async with ScriptedLlm(script) as llm, editor(project, llm, client) as (conn, _):
        _session, answer = await first_turn(conn, project, "go")
    assert answer.stop_reason == "end_turn"
    outputs = [str(u.raw_output) for u in client.of(ToolCallProgress)]
    assert "unsaved line" in outputs[0]
    # Outside the project: refused before the editor is asked.
    assert "not yours" not in outputs[1] and client.reads == [notes, notes]
    assert client.writes == [(notes, "edited line\n")]
    assert (project / "notes.txt").read_text() == "old line\n"


async def test_thoughts_modes_secrets_and_the_max_tokens_stop(project: Path) -> None:
    """Reasoning streams as thought chunks; a key the model repeats never reaches the editor;
    plan mode (set by the editor) refuses an edit without asking; a reply cut at the token
    limit ends the turn with max_tokens."""
    write = {"path": "notes.txt", "content": "overwritten"}
    script: list[Json] = [
        {"reasoning": "thinking hard", "text": f"the key is {API_KEY} ok"},
        {"tool_calls": [{"name": "write_file", "arguments": json.dumps(write)}]},
        {"text": "cut short", "finish_reason": "length"},
    ]
    client = EditorClient("allow_once")
    async with ScriptedLlm(script) as llm, editor(project, llm, client) as (conn, _):
        async with asyncio.timeout(60):
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            first = await conn.prompt(session_id=session.session_id, prompt=[text_block("a")])
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
            second = await conn.prompt(session_id=session.session_id, prompt=[text_block("b")])
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "max_tokens")
    thoughts = "".join(u.content.text for u in client.of(AgentThoughtChunk))
    assert "thinking hard" in thoughts
    assert API_KEY not in client.text() and "the key is" in client.text()
    assert client.asked == []
    assert [u.status for u in client.of(ToolCallProgress)] == ["failed"]
    assert (project / "notes.txt").read_text() == "old line\n"


async def test_closing_stdin_mid_turn_stops_paicli_and_the_editor_s_server(project: Path) -> None:
    marker = f"acp-{uuid.uuid4().hex}"
    server = McpServerStdio(
        name="fault",
        command=sys.executable,
        args=[str(SERVER_PROGRAMS / "fault_server.py"), "--initial-stderr", marker],
        env=[],
    )
    script: list[Json] = [
        {"tool_calls": [{"name": "mcp__fault__sleep", "arguments": '{"seconds": 600}'}]},
    ]
    client = EditorClient("allow_once")
    async with ScriptedLlm(script) as llm:
        async with editor_process(project, llm, client) as (conn, process):
            async with asyncio.timeout(60):
                session = await conn.new_session(cwd=str(project), mcp_servers=[server])
                turn = asyncio.ensure_future(
                    conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
                )
                await client.was_asked.wait()
                assert processes_with(marker)
                assert process.stdin is not None
                process.stdin.close()  # the editor quits in the middle of the call
                await process.wait()
                with pytest.raises(ConnectionError):  # the agent went away mid-request
                    await turn
    assert process.returncode == 0
    await until(lambda: not processes_with(marker))


async def test_an_editor_that_stops_reading_stops_paicli(project: Path) -> None:
    """The editor's reading end of paicli's stdout is gone, its writing end still open:
    paicli can answer nothing, so it ends (it served on, unread, until stdin closed)."""
    gone, stdout = os.pipe()
    os.close(gone)
    args = ["-m", "paicli.cli", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "acp"]
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            cwd=project,
            env=environment(project),
            stdin=asyncio.subprocess.PIPE,
            stdout=stdout,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        os.close(stdout)
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}\n')
    await process.stdin.drain()
    try:
        async with asyncio.timeout(60):
            said = await process.stderr.read()  # to its end: paicli exited, stdin still open
            await process.wait()
    finally:
        process.stdin.close()
    assert process.returncode == 0
    assert "Traceback" not in said.decode() and len(said.decode().splitlines()) <= 1


@pytest.mark.parametrize("transport", ["streamable", "sse"])
async def test_an_editor_s_http_server_is_reached_like_a_configured_one(
    project: Path, transport: str
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"name": "mcp__web__echo", "arguments": '{"text": "over http"}'}]},
        {"text": "it answered"},
    ]
    client = EditorClient("allow_once")
    async with (
        run_http_server("sdk_http_server.py", "--transport", transport) as url,
        ScriptedLlm(script) as llm,
        editor(project, llm, client) as (conn, _),
    ):
        web: HttpMcpServer | SseMcpServer = (
            HttpMcpServer(type="http", name="web", url=url, headers=[])
            if transport == "streamable"
            else SseMcpServer(type="sse", name="web", url=url, headers=[])
        )
        _session, answer = await first_turn(conn, project, "go", [web])
    assert answer.stop_reason == "end_turn"
    (done,) = [u for u in client.of(ToolCallProgress) if u.status == "completed"]
    assert "over http" in str(done.raw_output)


async def test_a_failed_model_is_a_json_rpc_error_without_the_key(project: Path) -> None:
    script: list[Json] = [{"status": 401, "error": {"message": f"bad key {API_KEY}"}}]
    client = EditorClient()
    async with ScriptedLlm(script) as llm, editor(project, llm, client) as (conn, _):
        async with asyncio.timeout(60):
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            with pytest.raises(RequestError) as failed:
                await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert failed.value.code == -32603
    assert API_KEY not in json.dumps(failed.value.data) and failed.value.data
    assert API_KEY not in (project.parent / "stderr.txt").read_text()


async def test_no_model_configured_is_said_when_a_session_opens(project: Path) -> None:
    env = environment(project)
    del env["PAICLI_API_KEY"]
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": str(project), "mcpServers": []},
    }
    with tempfile.TemporaryFile() as stderr:
        async with paicli_on_pipes(["acp"], cwd=project, environ=env, stderr=stderr) as run:
            run.stdin.write(json.dumps(request).encode() + b"\n")
            async with asyncio.timeout(60):
                answer = json.loads(await run.stdout.readline())
    assert answer["id"] == 1 and answer["error"]["code"] == -32603
    assert "paicli:" in answer["error"]["data"]["details"]
    assert run.ended.result() == 0


async def test_custom_commands_are_offered_and_a_slash_prompt_runs_one(project: Path) -> None:
    commands = project.parent / "home" / ".paicli" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nSay hello to $0.\n"
    )
    client = EditorClient()
    async with ScriptedLlm([{"text": "Hello Bob"}]) as llm:
        async with editor(project, llm, client) as (conn, _):
            _session, answer = await first_turn(conn, project, "/greet Bob")
        assert answer.stop_reason == "end_turn"
        assert llm.requests[0]["messages"][-1] == {"role": "user", "content": "Say hello to Bob.\n"}
    (offered,) = client.of(AvailableCommandsUpdate)
    (greet,) = offered.available_commands
    assert (greet.name, greet.description) == ("greet", "Greet someone")
    assert greet.input is not None and greet.input.root.hint == "NAME"


async def test_an_editor_that_quits_while_a_session_opens_leaves_nothing(project: Path) -> None:
    marker = f"acp-{uuid.uuid4().hex}"
    server = {
        "name": "fault",
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "fault_server.py"), "--initial-stderr", marker],
        "env": [],
    }
    new = {"cwd": str(project), "mcpServers": [server]}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new},
    ]
    process = await zygote_process.create_subprocess_exec(
        sys.executable,
        *["-m", "paicli.cli", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "acp"],
        cwd=project,
        env=environment(project),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    async with asyncio.timeout(30):
        await process.communicate(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert process.returncode == 0
    await until(lambda: not processes_with(marker))


async def test_the_editor_s_additional_directories_are_the_session_s_added_dirs(
    project: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "x.txt").write_text("from the shared folder\n")
    (tmp_path / "other.txt").write_text("not added\n")
    script: list[Json] = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": json.dumps({"path": str(shared / "x.txt")})}
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "read_file",
                    "arguments": json.dumps({"path": str(tmp_path / "other.txt")}),
                }
            ]
        },
        {"text": "read"},
    ]
    client = EditorClient()
    async with ScriptedLlm(script) as llm, editor(project, llm, client) as (conn, _):
        async with asyncio.timeout(60):
            with pytest.raises(RequestError) as refused:
                await conn.new_session(
                    cwd=str(project), mcp_servers=[], additional_directories=["relative"]
                )
            session = await conn.new_session(
                cwd=str(project), mcp_servers=[], additional_directories=[str(shared)]
            )
            await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert refused.value.code == -32602
    outputs = [str(u.raw_output) for u in client.of(ToolCallProgress)]
    assert "from the shared folder" in outputs[0]
    assert "not added" not in outputs[1]
