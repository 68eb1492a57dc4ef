"""The runtime as the REPL uses it: `/model` switching keeps the conversation, a first model
can be chosen after starting without one, and the schema profile follows the model. The
scripted model answers in memory (tests/llm_memory.py), through the HTTP client the runtime
is given and every model it switches to keeps using."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paicli.agent.events import AgentEvent
from paicli.llm.settings import ModelSettings
from paicli.runtime import schema_profile
from tests.llm_memory import MemoryLlm
from tests.runtimes import runtime_for


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PAICLI_HOME": str(tmp_path / ".paicli"),
        **extra,
    }


def ignore(event: AgentEvent) -> None:
    pass


async def test_switching_the_model_keeps_the_conversation(tmp_path: Path) -> None:
    async with MemoryLlm([{"text": "one"}, {"text": "two"}]) as llm:
        flags = {"base_url": llm.base_url, "model": "first-model", "provider": None}
        async with runtime_for(
            root=tmp_path,
            flags=flags,
            approver=None,
            environ=environ(tmp_path),
            http_client=llm.http_client(),
        ) as runtime:
            assert runtime.agent is not None
            await runtime.agent.run("hello", ignore)
            settings = await runtime.set_model("second-model")
            assert settings.model == "second-model"
            await runtime.agent.run("again", ignore)
    assert [r["model"] for r in llm.requests] == ["first-model", "second-model"]
    second = [m["content"] for m in llm.requests[1]["messages"] if m["role"] != "system"]
    assert second == ["hello", "one", "again"]


async def test_a_runtime_without_a_model_gets_one_from_model_command(tmp_path: Path) -> None:
    async with runtime_for(
        root=tmp_path, flags={}, approver=None, environ=environ(tmp_path)
    ) as runtime:
        assert runtime.agent is None
        assert "No model configured" in runtime.settings.why_not_configured()
        settings = await runtime.set_model("ollama")  # a local server needs no key
        assert settings.configured and settings.provider == "ollama"
        assert runtime.agent is not None


async def test_a_key_picked_up_by_model_command_is_redacted_from_the_audit_log(
    tmp_path: Path,
) -> None:
    key = "sk-switched-key-0123456789"
    env = environ(tmp_path, DEEPSEEK_API_KEY=key)
    flags = {"base_url": "http://127.0.0.1:9/v1", "model": "local", "provider": None}
    async with runtime_for(root=tmp_path, flags=flags, approver=None, environ=env) as runtime:
        assert runtime.settings.api_key is None  # a plain base URL never borrows a key
        settings = await runtime.set_model("deepseek")
        assert settings.api_key == key
        runtime.audit.write({"note": f"the key is {key}"})
    text = "".join(p.read_text() for p in (tmp_path / ".paicli" / "audit").glob("*.jsonl"))
    assert "the key is" in text and key not in text


async def test_a_broken_config_file_is_one_problem_naming_the_file_once(tmp_path: Path) -> None:
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli" / "mcp.json").write_text('{"mcpServers": {"a": {"command": "x",}}}')
    (tmp_path / "elsewhere").mkdir()
    async with runtime_for(
        root=tmp_path / "elsewhere", flags={}, approver=None, environ=environ(tmp_path)
    ) as runtime:
        (problem,) = runtime.problems
    assert problem.startswith("~/.paicli/mcp.json: invalid JSON at line 1, column 38")
    assert problem.count("mcp.json") == 1


def test_gemini_models_get_the_gemini_schema_profile() -> None:
    def settings(model: str, base_url: str) -> ModelSettings:
        return ModelSettings(
            provider=None, model=model, base_url=base_url, api_key=None, context_window=1000
        )

    assert schema_profile(settings("gemini-2.5-pro", "https://openrouter.ai/api/v1")) == "gemini"
    google = "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert schema_profile(settings("some-model", google)) == "gemini"
    assert schema_profile(settings("deepseek-chat", "https://api.deepseek.com")) == "default"


async def test_a_preset_without_a_key_is_refused_and_the_model_stays(tmp_path: Path) -> None:
    async with MemoryLlm([{"text": "still me"}]) as llm:
        flags = {"base_url": llm.base_url, "model": "first-model", "provider": None}
        async with runtime_for(
            root=tmp_path,
            flags=flags,
            approver=None,
            environ=environ(tmp_path),
            http_client=llm.http_client(),
        ) as runtime:
            refused = await runtime.set_model("openai")
            assert not refused.configured and "OPENAI_API_KEY" in refused.why_not_configured()
            assert runtime.settings.model == "first-model"
            assert runtime.agent is not None
            ended = await runtime.agent.run("hello", ignore)
    assert ended.text == "still me"


async def test_starting_in_the_home_folder_warns_and_the_tools_protect_paicli_home(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"  # PAICLI_HOME inside the project, not named .paicli
    async with runtime_for(
        root=tmp_path,
        flags={},
        approver=None,
        yes=True,
        environ=environ(tmp_path, PAICLI_HOME=str(state)),
    ) as runtime:
        assert [p for p in runtime.problems if "started in your home folder" in p]
        spec = next(s for s in runtime.toolbox.specs() if s.name == "write_file")
        arguments = {"path": "state/permissions.json", "content": '{"allow": ["*"]}'}
        outcome = await runtime.toolbox.call(spec, arguments)
    assert outcome.decision == "denied"
    assert "paicli's home" in outcome.text
    assert not (state / "permissions.json").exists()


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.real  # execute_command runs `env` in a process
async def test_an_approved_env_command_sends_no_secret_to_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process's own environment, as a user's shell would hand it to paicli.
    model_key = "sk-model-key-for-this-run-0123456789"
    for name, value in environ(
        tmp_path,
        DEEPSEEK_API_KEY=model_key,
        OPENAI_API_KEY="sk-another-provider-key-0123456789",
        PAICLI_API_KEY=model_key,
        AWS_SECRET_ACCESS_KEY=AWS_SECRET,
        HARMLESS_SETTING="kept-for-the-command",
    ).items():
        monkeypatch.setenv(name, value)
    call = {"name": "execute_command", "arguments": json.dumps({"command": "env"})}
    async with MemoryLlm([{"tool_calls": [call]}, {"text": "done"}]) as llm:
        flags = {"base_url": llm.base_url, "model": "m", "provider": "deepseek"}
        async with runtime_for(
            root=tmp_path,
            flags=flags,
            approver=None,
            yes=True,
            http_client=llm.http_client(),
        ) as runtime:
            assert runtime.agent is not None
            await runtime.agent.run("show me the environment", ignore)
    seen = json.dumps(llm.requests[1]["messages"])
    assert "HARMLESS_SETTING=kept-for-the-command" in seen  # the user's environment is there
    assert "AWS_SECRET_ACCESS_KEY=[REDACTED]" in seen  # the user's own secret: in, redacted
    for secret in (model_key, "sk-another-provider-key", AWS_SECRET):
        assert secret not in seen
    assert "OPENAI_API_KEY" not in seen and "PAICLI_API_KEY" not in seen


async def test_a_known_secret_in_a_tool_result_never_reaches_the_model(tmp_path: Path) -> None:
    header = "header-value-from-the-users-config-123"
    home = tmp_path / ".paicli"
    home.mkdir()
    (home / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "api": {
                        "type": "http",
                        "url": "http://127.0.0.1:9/mcp",
                        "headers": {"X-Api-Key": header},
                        "disabled": True,
                    }
                }
            }
        )
    )
    (tmp_path / "notes.txt").write_text(f"pasted by mistake: {header}\nand GITHUB={GITHUB}\n")
    call = {"name": "read_file", "arguments": json.dumps({"path": "notes.txt"})}
    async with MemoryLlm([{"tool_calls": [call]}, {"text": "done"}]) as llm:
        flags = {"base_url": llm.base_url, "model": "m", "provider": None}
        async with runtime_for(
            root=tmp_path,
            flags=flags,
            approver=None,
            environ=environ(tmp_path, GITHUB_TOKEN=GITHUB),
            http_client=llm.http_client(),
        ) as runtime:
            assert runtime.agent is not None
            await runtime.agent.run("read my notes", ignore)
    seen = json.dumps(llm.requests[1]["messages"])
    assert "pasted by mistake: [REDACTED]" in seen
    assert header not in seen and GITHUB not in seen


GITHUB = "ghp_thisIsTheUsersOwnToken0123456789"
