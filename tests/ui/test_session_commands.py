"""`/resume`, `/usage`, `/model` and `/doctor` at the REPL (issue 27): their logic in process
(the REPL in the test process, the model in memory; no terminal, so lists are printed rather
than picked). The picker itself is tested in a real terminal (test_pickers.py)."""

from __future__ import annotations

import re
from pathlib import Path

from paicli.ui.session_commands import web_search_line
from paicli.user_config import UserConfig
from tests.ui.repl_in_process import repl_in_process


async def test_resume_by_id_carries_on_a_saved_conversation(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    script = [{"text": "First answer."}, {"text": "Second answer."}]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("remember the word pelican")
        await repl.expect("First answer.")
        repl.line("/resume")  # the only conversation is this one
        await repl.expect("No other saved conversation in this folder.")
        repl.line("/clear")
        await repl.expect("Started a new conversation.")
        repl.line("/resume")
        listed = await repl.expect(re.compile(r"(\d{8}-\d{6}-[0-9a-f]+)\s+\S+ \S+\s+remember"))
        await repl.expect("Choose one with: /resume ID")
        repl.line(f"/resume {listed.group(1)}")
        await repl.expect(f"Resumed {listed.group(1)} (1 turns): remember the word pelican")
        repl.line("/resume nosuchid")
        await repl.expect("No saved conversation 'nosuchid'.")
        repl.line("what was the word?")
        await repl.expect("Second answer.")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


async def test_usage_and_cost_count_the_tokens_the_model_reported(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    usage = {"prompt_tokens": 1200, "completion_tokens": 34}
    script = [{"text": "One.", "usage": usage}, {"text": "Two.", "usage": usage}]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("/usage")
        await repl.expect("No tokens used yet in this session.")
        for prompt, said in (("one", "One."), ("two", "Two.")):
            repl.line(prompt)
            await repl.expect(said)
        repl.line("/usage")
        await repl.expect("This session: 2,400 prompt + 68 completion = 2,468 tokens")
        repl.line("/cost")
        await repl.expect("This session: 2,400 prompt + 68 completion = 2,468 tokens")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


async def test_model_lists_the_presets_and_whether_each_is_usable(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    async with repl_in_process(project, home, script=[]) as repl:
        repl.line("/model")
        await repl.expect(re.compile(r"Model: .* scripted"))
        await repl.expect("The endpoint offers 1 model(s):")
        await repl.expect("scripted-model")
        await repl.expect(re.compile(r"deepseek\s+deepseek-chat\s+No API key for deepseek"))
        await repl.expect(re.compile(r"ollama\s+\S+\s+ready"))
        await repl.expect("Switch with /model NAME")
        repl.line("/model ollama")
        await repl.expect(re.compile(r"Model: .*ollama"))
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


async def test_doctor_says_whether_web_search_is_set_up(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".paicli").mkdir(parents=True)
    async with repl_in_process(project, home, script=[]) as repl:
        repl.line("/doctor")
        await repl.expect(
            "Web search: off (set a provider in [web.search] of ~/.paicli/config.toml)"
        )
        await repl.expect("No MCP servers configured.")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    searx: dict[str, object] = {
        "web": {"search": {"provider": "searxng", "url": "http://localhost:8888/search"}}
    }
    line = web_search_line(UserConfig(searx), {})
    assert line == "Web search: searxng at http://localhost:8888/search"


async def test_model_lists_what_the_endpoint_offers_escaped_or_says_why_not(
    tmp_path: Path,
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    answers = [
        ((401, '{"error": "bad key"}'), "No model list: authentication failed for "),
        ((404, "404: Not Found"), "has no model list (HTTP 404 for /models)"),
        ((200, "<html>a login page</html>"), "answered /models with no model list"),
    ]
    async with repl_in_process(project, home, script=[]) as repl:
        assert repl.llm is not None
        repl.llm.model_ids = ["scripted", "gpt-x", "evil\x1b]0;owned\x07name"]
        repl.line("/model")
        await repl.expect("The endpoint offers 3 model(s):")
        await repl.expect("\\x1b]0;owned\\x07name")  # sorted: evil, gpt-x, scripted
        await repl.expect("gpt-x")
        await repl.expect("scripted  (in use)")
        await repl.expect("preset glm")
        await repl.expect("Switch with /model NAME")
        repl.line("/model gpt-x")
        await repl.expect(re.compile(r"Model: .*gpt-x"))
        for answer, said in answers:
            repl.llm.models_answer = answer
            repl.line("/model")
            await repl.expect(said)
            await repl.expect("preset ollama")
            await repl.expect("Switch with /model NAME")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
        assert "\x1b]0;owned" not in repl.screen.getvalue()
    assert "Traceback" not in repl.screen.text
