"""`paicli -p` as programs drive it, for real: a subprocess, the openai client against the
scripted model on 127.0.0.1, real MCP servers (the fault server, and an approval server
for --permission-prompt-tool). Every JSON line it prints is checked against the schema that
ships in docs/stream-json.schema.json."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests import zygote_process
from tests.cli.test_oneshot import API_KEY, paicli
from tests.conftest import SERVER_PROGRAMS
from tests.in_process import Run
from tests.llm_server import Json, ScriptedLlm
from tests.processes import processes_with

pytestmark = pytest.mark.real

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "stream-json.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def messages(run: Run) -> list[dict[str, Any]]:
    """Every stdout line of `run`, each checked against the schema."""
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    for line in lines:
        VALIDATOR.validate(line)
    return lines


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".paicli").mkdir(parents=True)
    fault = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"fault": fault}}))
    return root


def sessions(project: Path) -> list[Path]:
    return sorted((project.parent / "home" / ".paicli" / "sessions").glob("*.json"))


async def test_a_stream_json_run_speaks_claude_codes_messages_and_fits_the_schema(
    project: Path,
) -> None:
    echo = {"id": "e1", "name": "mcp__fault__echo", "arguments": '{"text": "hi"}'}
    script: list[Json] = [
        {"text": "Calling.", "tool_calls": [echo]},
        {"reasoning": "it said hi", "text": "It said hi."},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(
            project,
            *("-p", "echo hi", "--output-format", "stream-json", "--verbose"),
            *("--trust-project", "--yes", "--include-partial-messages"),
            llm=llm,
        )
    assert run.code == 0, run.stderr
    lines = messages(run)
    init, *middle, result = lines
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["mcp_servers"] == [{"name": "fault", "status": "connected"}]
    assert "mcp__fault__echo" in init["tools"] and init["model"] == "scripted"
    assert init["cwd"] == str(project) and init["permissionMode"] == "default"
    assert {line["session_id"] for line in lines} == {init["session_id"]}
    assert len({line["uuid"] for line in lines}) == len(lines)
    kinds = [m["type"] for m in middle if m["type"] not in ("stream_event", "tool_progress")]
    assert kinds == ["assistant", "user", "assistant"]
    call, answer = (m["message"] for m in middle if m["type"] == "assistant")
    assert call["content"] == [
        {"type": "text", "text": "Calling."},
        {"type": "tool_use", "id": "e1", "name": "mcp__fault__echo", "input": {"text": "hi"}},
    ]
    assert call["stop_reason"] == "tool_use" and answer["stop_reason"] == "end_turn"
    assert answer["content"] == [
        {"type": "thinking", "thinking": "it said hi"},
        {"type": "text", "text": "It said hi."},
    ]
    [tool_result] = next(m for m in middle if m["type"] == "user")["message"]["content"]
    assert tool_result["tool_use_id"] == "e1" and "hi" in tool_result["content"]
    assert tool_result["is_error"] is False
    # The partial messages rebuild the same replies, delta by delta.
    deltas = [m["event"] for m in middle if m["type"] == "stream_event"]
    text = "".join(e["delta"].get("text", "") for e in deltas if e["type"] == "content_block_delta")
    assert text == "Calling.It said hi."
    assert [e["type"] for e in deltas].count("message_stop") == 2
    starts = [e["message"]["id"] for e in deltas if e["type"] == "message_start"]
    assert starts == [call["id"], answer["id"]]
    assert result["subtype"] == "success" and result["result"] == "It said hi."
    assert result["num_turns"] == 2 and result["usage"] == {"input_tokens": 20, "output_tokens": 10}
    assert result["duration_ms"] >= result["duration_api_ms"]
    # The run was saved under the id the messages name.
    assert [p.stem for p in sessions(project)] == [init["session_id"]]


async def test_json_prints_the_result_object_alone_and_diagnostics_go_to_stderr(
    project: Path,
) -> None:
    write = {"id": "w", "name": "write_file", "arguments": '{"path": "a.txt", "content": "x"}'}
    async with ScriptedLlm([{"tool_calls": [write]}, {"text": "Could not."}]) as llm:
        run = await paicli(project, "-p", "write", "--output-format", "json", llm=llm)
    assert run.code == 0, run.stderr
    [result] = messages(run)
    assert result["type"] == "result" and result["result"] == "Could not."
    assert result["permission_denials"] == [
        {
            "tool_name": "write_file",
            "tool_use_id": "w",
            "tool_input": {"path": "a.txt", "content": "x"},
        }
    ]
    assert "skipping unapproved project server 'fault'" in run.stderr


async def test_every_run_is_saved_continue_and_resume_carry_it_on(project: Path) -> None:
    script: list[Json] = [{"text": "Noted."}, {"text": "KIWI."}, {"text": "Still KIWI."}]
    async with ScriptedLlm(script) as llm:
        first = await paicli(project, "-p", "the word is KIWI", "--output-format", "json", llm=llm)
        # Claude Code's order: -p as a flag, the prompt last.
        second = await paicli(project, "-p", "-c", "what was it?", llm=llm)
        session = json.loads(first.stdout)["session_id"]
        third = await paicli(
            project, "-p", "and now?", "--resume", session, "--output-format", "json", llm=llm
        )
        apart = await paicli(project, "-p", "x", "--no-session-persistence", llm=llm)
    assert (first.code, second.code, third.code, apart.code) == (0, 0, 0, 1), apart.stderr
    asked = [[m["content"] for m in r["messages"] if m["role"] == "user"] for r in llm.requests]
    assert asked[1] == ["the word is KIWI", "what was it?"]
    assert asked[2] == ["the word is KIWI", "what was it?", "and now?"]
    assert json.loads(third.stdout)["session_id"] == session
    assert [p.stem for p in sessions(project)] == [session]  # (the fourth saved nothing)


async def test_max_turns_ends_with_error_max_turns(project: Path) -> None:
    call = {"id": "l", "name": "list_dir", "arguments": "{}"}
    async with ScriptedLlm([{"tool_calls": [call]}]) as llm:
        run = await paicli(
            project, "-p", "ls", "--max-turns", "1", "--output-format", "stream-json", llm=llm
        )
    assert run.code == 3, run.stderr
    result = messages(run)[-1]
    assert result["subtype"] == "error_max_turns" and result["is_error"]
    assert result["num_turns"] == 1 and "--max-turns" in result["errors"][0]


def user_line(content: object) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})


async def stream_json(project: Path, llm: ScriptedLlm, stdin: str, *args: str) -> Run:
    """`paicli -p --input-format stream-json --output-format stream-json ARGS`, fed `stdin`."""
    streams = ("--input-format", "stream-json", "--output-format", "stream-json")
    return await paicli(project, "-p", *streams, *args, llm=llm, stdin=stdin)


async def test_stream_json_input_runs_one_turn_per_line(project: Path) -> None:
    stdin = "\n".join(
        [
            user_line("the word is PEAR"),
            "",
            user_line([{"type": "text", "text": "what"}, {"type": "text", "text": "was it?"}]),
        ]
    )
    async with ScriptedLlm([{"text": "Noted."}, {"text": "PEAR."}]) as llm:
        run = await stream_json(project, llm, stdin + "\n", "--replay-user-messages")
    assert run.code == 0, run.stderr
    lines = messages(run)
    assert [m["type"] for m in lines] == [
        "system",
        *("user", "assistant", "result"),
        *("user", "assistant", "result"),
    ]
    assert lines[1]["message"]["content"] == [{"type": "text", "text": "the word is PEAR"}]
    assert [m["result"] for m in lines if m["type"] == "result"] == ["Noted.", "PEAR."]
    asked = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "user"]
    assert asked == ["the word is PEAR", "what\n\nwas it?"]


async def test_unpaired_surrogates_from_stdin_or_the_model_do_not_break_the_conversation(
    project: Path,
) -> None:
    """JSON can spell an unpaired surrogate (`\\udcff`), which no request can carry: a stdin
    line or a model reply with one was an internal error, there and in every later turn."""
    stdin = user_line("from stdin \udcff") + "\n" + user_line("next") + "\n"
    async with ScriptedLlm([{"text": "model \ud800"}, {"text": "fine"}]) as llm:
        run = await stream_json(project, llm, stdin)
    assert run.code == 0, run.stderr
    results = [m["result"] for m in messages(run) if m["type"] == "result"]
    assert results == ["model \ufffd", "fine"]
    sent = [(m["role"], m["content"]) for m in llm.requests[1]["messages"][1:]]
    assert sent == [
        ("user", "from stdin \ufffd"),
        ("assistant", "model \ufffd"),
        ("user", "next"),
    ]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{not json", "stdin line 2: not JSON"),
        ('["user"]', "stdin line 2: expected a JSON object, got list"),
        ('{"type": "control_request"}', "stdin line 2: expected a message of type 'user'"),
        (user_line([{"type": "image"}]), "stdin line 2: content block 0 is 'image'"),
        ("[" * 100_000, "stdin line 2: not JSON"),
    ],
)
async def test_a_malformed_input_line_is_one_error_result_naming_it(
    project: Path, line: str, said: str
) -> None:
    stdin = user_line("first") + "\n" + line + "\n" + user_line("never") + "\n"
    async with ScriptedLlm([{"text": "one"}, {"text": "two"}]) as llm:
        run = await stream_json(project, llm, stdin)
    assert run.code == 2, run.stderr
    *_, answered, failed = messages(run)
    assert answered["result"] == "one"
    assert failed["subtype"] == "error_during_execution" and said in failed["errors"][0]
    assert said in run.stderr and "Traceback" not in run.stderr
    assert len(llm.requests) == 1  # the line after it never ran


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("-p", "x", "--output-format", "xml"), "argument --output-format: invalid choice"),
        (("-p", "x", "--input-format", "stream-json"), "needs --output-format stream-json"),
        (("-p", "x", "--include-partial-messages"), "needs --output-format stream-json"),
        (("-p", "x", "--permission-prompt-tool", "approve"), "not an MCP tool name"),
        (("-p", "x", "y"), "two prompts given"),
        (("--input-format", "stream-json"), "--input-format stream-json needs -p"),
    ],
)
async def test_bad_headless_options_are_one_line_and_exit_2(
    project: Path, args: tuple[str, ...], said: str
) -> None:
    run = await paicli(project, *args)
    assert run.code == 2
    assert said in run.stderr and "Traceback" not in run.stderr
    assert run.stdout == ""


def approval_config(project: Path, *flags: str) -> Path:
    log = project.parent / "questions.jsonl"
    server = {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "approval_server.py"), str(log), *flags],
    }
    path = project.parent / "approval.json"
    path.write_text(json.dumps({"mcpServers": {"perm": server}}))
    return path


async def test_the_permission_prompt_tool_decides_what_rules_do_not(project: Path) -> None:
    config = approval_config(project, "--allow", "write_file")
    calls = [
        {"id": "w", "name": "write_file", "arguments": '{"path": "a.txt", "content": "x"}'},
        {"id": "c", "name": "execute_command", "arguments": '{"command": "touch pwned"}'},
        {"id": "p", "name": "mcp__perm__approve", "arguments": '{"tool_name": "x", "input": {}}'},
        {"id": "r", "name": "list_dir", "arguments": "{}"},
    ]
    async with ScriptedLlm([{"tool_calls": calls}, {"text": "done"}]) as llm:
        run = await paicli(
            project,
            *("--mcp-config", str(config), "-p", "go", "--output-format", "stream-json"),
            *("--permission-prompt-tool", "mcp__perm__approve", "--sandbox", "off"),
            llm=llm,
        )
    assert run.code == 0, run.stderr
    lines = messages(run)
    assert {"name": "perm", "status": "connected"} in lines[0]["mcp_servers"]
    results = {
        block["tool_use_id"]: block["content"]
        for m in lines
        if m["type"] == "user"
        for block in m["message"]["content"]
    }
    assert (project / "a.txt").read_text() == "x"
    assert "not on the list: execute_command" in results["c"]
    assert not (project / "pwned").exists()
    assert "denied by --deny" in results["p"]  # the model cannot call the decider itself
    assert ".paicli/" in results["r"]  # a read needs no question
    questions = [
        json.loads(q) for q in (project.parent / "questions.jsonl").read_text().splitlines()
    ]
    assert [q["tool_name"] for q in questions] == ["write_file", "execute_command"]
    assert questions[0]["input"] == {"path": "a.txt", "content": "x"}
    denials = lines[-1]["permission_denials"]
    assert {d["tool_use_id"] for d in denials} == {"c", "p"}
    # This test's own server (its log path is in its arguments; other tests run the program)
    assert processes_with(str(project.parent / "questions.jsonl")) == []


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--answer", "yes\x1b]0;pwned\x07"), "the answer is not JSON"),
        (("--answer", '{"behavior": "maybe"}'), 'neither "allow" nor "deny"'),
        (("--allow", "write_file", "--change-input"), "changed the call's input"),
    ],
)
async def test_a_prompt_tool_answer_that_is_no_clear_allow_is_a_denial(
    project: Path, flags: tuple[str, ...], said: str
) -> None:
    config = approval_config(project, *flags)
    write = {"id": "w", "name": "write_file", "arguments": '{"path": "a.txt", "content": "x"}'}
    async with ScriptedLlm([{"tool_calls": [write]}, {"text": "no"}]) as llm:
        run = await paicli(
            project,
            *("--mcp-config", str(config), "-p", "go", "--output-format", "stream-json"),
            *("--permission-prompt-tool", "mcp__perm__approve"),
            llm=llm,
        )
    assert run.code == 0, run.stderr
    [result] = [m for m in messages(run) if m["type"] == "user"]
    assert said in result["message"]["content"][0]["content"]
    assert not (project / "a.txt").exists()
    assert "\x1b" not in run.stdout + run.stderr


async def test_a_missing_prompt_tool_is_one_line_and_nothing_runs(project: Path) -> None:
    config = approval_config(project)
    async with ScriptedLlm([{"text": "never"}]) as llm:
        run = await paicli(
            project,
            *("--mcp-config", str(config), "-p", "go", "--output-format", "json"),
            *("--permission-prompt-tool", "mcp__perm__nothing"),
            llm=llm,
        )
        unknown = await paicli(
            project, "-p", "go", "--permission-prompt-tool", "mcp__nowhere__x", llm=llm
        )
    assert run.code == 2 and unknown.code == 2
    assert "--permission-prompt-tool mcp__perm__nothing: no such tool" in run.stderr
    assert json.loads(run.stdout)["errors"][0].endswith("no such tool (perm: ready)")
    assert "no configured MCP server has that tool" in unknown.stderr
    assert llm.requests == []


async def test_claude_codes_tool_flags_are_rules(project: Path) -> None:
    calls = [
        {"id": "w", "name": "write_file", "arguments": '{"path": "a.txt", "content": "x"}'},
        {"id": "e", "name": "mcp__fault__echo", "arguments": '{"text": "hi"}'},
        {
            "id": "d",
            "name": "edit_file",
            "arguments": '{"path": "a.txt", "old_string": "x", "new_string": "y"}',
        },
    ]
    async with ScriptedLlm([{"tool_calls": calls}, {"text": "done"}]) as llm:
        run = await paicli(
            project,
            *("-p", "go", "--trust-project", "--output-format", "json"),
            *("--allowedTools", "Write,mcp__fault__echo Edit", "--disallowed-tools", "Edit"),
            llm=llm,
        )
    assert run.code == 0, run.stderr
    results = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert (project / "a.txt").read_text() == "x"
    assert "hi" in results[1]
    assert "denied by --deny" in results[2]


async def test_secrets_and_control_bytes_never_reach_the_stream(project: Path) -> None:
    """The model repeats the API key and writes escape sequences: each message stays valid
    JSON with the key replaced and the controls spelled as escapes."""
    said = f"key {API_KEY} \x1b]0;pwned\x07\u202e end"
    async with ScriptedLlm([{"text": said}]) as llm:
        run = await paicli(
            project,
            *("-p", "x", "--output-format", "stream-json", "--include-partial-messages"),
            llm=llm,
        )
    assert run.code == 0, run.stderr
    assert API_KEY not in run.stdout and "\x1b" not in run.stdout and "\u202e" not in run.stdout
    result = messages(run)[-1]
    assert result["result"].startswith("key ") and result["result"].endswith("\u202e end")
    assert "\x1b]0;pwned\x07" in result["result"]


async def test_a_signal_while_waiting_for_stdin_ends_the_run_at_once(project: Path) -> None:
    async with ScriptedLlm([{"text": "Noted."}]) as llm:
        process = await zygote_process.create_subprocess_exec(
            sys.executable,
            *("-m", "paicli.cli", "--base-url", llm.base_url, "--model", "scripted"),
            *("-p", "--input-format", "stream-json", "--output-format", "stream-json"),
            cwd=project,
            env={
                "PATH": os.environ.get("PATH", ""),
                "PAICLI_HOME": str(project.parent / "home"),
                "PAICLI_API_KEY": API_KEY,
            },
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((user_line("remember PLUM") + "\n").encode())
        await process.stdin.drain()
        async with asyncio.timeout(30):
            seen: list[dict[str, Any]] = []
            while not seen or seen[-1]["type"] != "result":
                seen.append(json.loads(await process.stdout.readline()))
            process.send_signal(signal.SIGTERM)  # stdin is still open: a read is blocked
            out, _ = await process.communicate()
    assert process.returncode == 130
    assert seen[-1]["result"] == "Noted." and out == b""


async def test_a_bare_p_reads_its_prompt_from_a_pipe(project: Path) -> None:
    async with ScriptedLlm([{"text": "Piped."}]) as llm:
        run = await paicli(project, "-p", "--output-format", "json", llm=llm, stdin="from a pipe\n")
    assert run.code == 0, run.stderr
    assert messages(run)[0]["result"] == "Piped."
    assert llm.requests[0]["messages"][-1]["content"] == "from a pipe\n"


async def test_stream_json_input_with_no_message_is_an_error_result(project: Path) -> None:
    async with ScriptedLlm([]) as llm:
        run = await stream_json(project, llm, "\n\n")
    assert run.code == 2, run.stderr
    init, result = messages(run)
    assert init["subtype"] == "init" and result["errors"] == ["paicli -p: no user message on stdin"]
