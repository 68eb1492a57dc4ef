"""`approve=` and `audit=` route bridged calls through paicli's own approval policy and
redacted audit log. The official SDK's server runs in this process (in-memory tier)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from paicli.langchain import McpToolset
from paicli.mcp import StdioServer
from paicli.permissions.approval import Answer, ApprovalRequest, Choice
from tests.conftest import sdk_server
from tests.memory_connect import memory_connector

SECRET = "sk-live-very-secret-value-123"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "paicli-home"
    monkeypatch.setenv("PAICLI_HOME", str(folder))
    return folder


def toolset(server: StdioServer | None = None, **options: object) -> McpToolset:
    return McpToolset(
        [server or sdk_server()],
        include=["echo", "add"],
        connector=memory_connector,
        **options,  # type: ignore[arg-type]
    )


async def test_a_denied_call_never_reaches_the_server_and_raises_tool_exception(
    home: Path,
) -> None:
    asked: list[ApprovalRequest] = []

    def deny(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    async with toolset(approve=deny) as tools:
        echo = next(t for t in tools if t.name == "echo")
        with pytest.raises(ToolException, match="The user denied this tool call"):
            await echo.ainvoke({"text": "hi"})
    (request,) = asked
    assert request.spec.name.startswith("mcp__") and request.spec.tool == "echo"
    assert request.spec.server == echo.server
    assert request.arguments == {"text": "hi"}


async def test_an_approved_call_runs_and_an_async_approver_may_answer_for_the_session(
    home: Path,
) -> None:
    asked = 0

    async def allow_for_session(request: ApprovalRequest) -> Answer:
        nonlocal asked
        asked += 1
        return Answer(Choice.ALLOW_SESSION)

    async with toolset(approve=allow_for_session) as tools:
        echo = next(t for t in tools if t.name == "echo")
        assert await echo.ainvoke({"text": "one"}) == "one"
        assert await echo.ainvoke({"text": "two"}) == "two"
    assert asked == 1


@pytest.fixture
def denying_add(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text('[permissions]\ndeny = ["mcp__*__add"]\n')


@pytest.mark.usefixtures("denying_add")
async def test_the_user_s_deny_patterns_apply_without_asking() -> None:
    async with toolset(approve=lambda request: True) as tools:
        add = next(t for t in tools if t.name == "add")
        with pytest.raises(ToolException, match="rules deny this call"):
            await add.ainvoke({"a": 1, "b": 2})


async def test_arguments_that_break_the_schema_are_refused_before_approval(home: Path) -> None:
    async with toolset(approve=lambda request: pytest.fail("asked")) as tools:
        add = next(t for t in tools if t.name == "add")
        with pytest.raises(ToolException, match="do not match the tool's input schema"):
            await add.ainvoke({"a": "one", "b": 2})


async def test_audit_writes_one_redacted_private_record_per_call(home: Path) -> None:
    server = sdk_server(env={"API_TOKEN": SECRET})
    async with toolset(server, audit=True) as tools:
        echo = next(t for t in tools if t.name == "echo")
        assert await echo.ainvoke({"text": f"token {SECRET}"}) == f"token {SECRET}"
    (day_file,) = (home / "audit").iterdir()
    assert stat.S_IMODE(day_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "audit").stat().st_mode) == 0o700
    (record,) = [json.loads(line) for line in day_file.read_text().splitlines()]
    assert record["tool"].endswith("__echo") and record["outcome"] == "ok"
    assert SECRET not in day_file.read_text()


async def test_audit_records_denials_in_a_folder_of_the_caller_s_choice(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "my-audit"
    async with toolset(approve=lambda request: False, audit=folder) as tools:
        with pytest.raises(ToolException):
            await tools[0].ainvoke({"text": "x"} if tools[0].name == "echo" else {"a": 1, "b": 2})
    (day_file,) = folder.iterdir()
    (record,) = [json.loads(line) for line in day_file.read_text().splitlines()]
    assert record["decision"] == "denied" and record["decided_by"] == "user"
