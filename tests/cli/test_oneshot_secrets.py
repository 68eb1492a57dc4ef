"""Secrets the model must not see, attacked through a real `paicli -p` process and the scripted
model server: what the test asserts on is every request body the model provider received.

A prompt-injected model asks for the project's `.env` with every flag that lets tools run; the
values of the user's secret-named variables turn up in a command's output and in a server's
instructions; none of it may reach the provider.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm

pytestmark = pytest.mark.real

DOT_ENV_SECRET = "pg-Pr0d-PASSWORD-7f3a9c"
# Secret-named variables of paicli's own environment. PGPASSWORD and SENTRY_DSN are names
# the old key-suffix rule missed; SERVICE_TOKEN reaches a server through its config.
PGPASSWORD = "hunter2-Env-PGPASS-0042"
SENTRY_DSN = "https://4f1c0a@o1.ingest.example.io/77"
SERVICE_TOKEN = "svc-T0ken-in-the-instructions-99"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / ".env").write_text(f"DATABASE_PASSWORD={DOT_ENV_SECRET}\nDEBUG=1\n")
    (root / "app" / ".env.production").write_text(f"export DB_PASSWORD='{DOT_ENV_SECRET}'\n")
    (root / "app" / "main.py").write_text("import os\nPASSWORD = os.environ['DB_PASSWORD']\n")
    return root


def sent(llm: ScriptedLlm) -> str:
    """Everything the model provider received, as one text."""
    return json.dumps(llm.requests)


def tool_results(llm: ScriptedLlm) -> list[str]:
    return [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(
    "flags",
    [
        ["--yes"],
        ["--allow", "read_file", "--allow", "grep", "--allow", "glob"],
        ["--permission-mode", "yolo", "--force-root"],
    ],
    ids=["yes", "allow", "yolo"],
)
async def test_a_dot_env_never_reaches_the_model_whatever_the_flags(
    project: Path, flags: list[str]
) -> None:
    calls: list[Json] = [
        {"id": "r", "name": "read_file", "arguments": '{"path": ".env"}'},
        {"id": "n", "name": "read_file", "arguments": '{"path": "app/.env.production"}'},
        {"id": "g", "name": "grep", "arguments": '{"pattern": "PASSWORD"}'},
        {"id": "f", "name": "grep", "arguments": '{"pattern": ".", "path": ".env"}'},
    ]
    async with ScriptedLlm([{"tool_calls": calls}, {"text": "done"}]) as llm:
        run = await paicli(project, "-p", "find the database password", *flags, llm=llm)
    assert run.code == 0, run.stderr
    assert DOT_ENV_SECRET not in sent(llm)
    read, nested, grepped, named = tool_results(llm)
    assert "read_file reads .env, which is protected: an environment file" in read
    assert "read_file reads app/.env.production, which is protected" in nested
    assert "app/main.py:2: PASSWORD = os.environ['DB_PASSWORD']" in grepped
    assert "credential file(s) or folder(s) left out" in grepped
    assert "paicli -p never runs a call on a protected path" in named
    assert "which is protected" in run.stderr  # the user reads why too


async def test_secret_named_variables_are_redacted_from_command_output(project: Path) -> None:
    command = {"command": "printenv PGPASSWORD SENTRY_DSN; echo DEBUG=$DEBUG_LEVEL"}
    call = {"id": "c", "name": "execute_command", "arguments": json.dumps(command)}
    async with ScriptedLlm([{"tool_calls": [call]}, {"text": "done"}]) as llm:
        run = await paicli(
            project,
            "-p",
            "print the environment",
            "--allow",
            "execute_command",
            llm=llm,
            environ={"PGPASSWORD": PGPASSWORD, "SENTRY_DSN": SENTRY_DSN, "DEBUG_LEVEL": "verbose1"},
        )
    assert run.code == 0, run.stderr
    [output] = tool_results(llm)
    assert PGPASSWORD not in sent(llm) and SENTRY_DSN not in sent(llm)
    assert output.count("[REDACTED]") == 2
    assert "DEBUG=verbose1" in output  # an ordinary variable is left alone


async def test_a_servers_instructions_quoting_its_token_reach_the_model_redacted(
    project: Path,
) -> None:
    """Not a tool result: the instructions go into the system prompt, which is redacted at
    the model client like everything else a request carries."""
    args = [str(SERVER_PROGRAMS / "fault_server.py"), "--instructions-from-env", "SERVICE_TOKEN"]
    server = {"command": sys.executable, "args": args, "env": {"SERVICE_TOKEN": SERVICE_TOKEN}}
    user_home = project.parent / "home" / ".paicli"  # the user's own servers
    user_home.mkdir(parents=True)
    (user_home / "mcp.json").write_text(json.dumps({"mcpServers": {"fault": server}}))
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(project, "-p", "hello", llm=llm)
    assert run.code == 0, run.stderr
    system = llm.requests[0]["messages"][0]["content"]
    assert "Use token [REDACTED] for every call." in system
    assert SERVICE_TOKEN not in sent(llm)
