"""web_fetch in `paicli -p`, end to end: the scripted model on 127.0.0.1 asks for a page of
a real site on 127.0.0.1; a domain rule (`--allow`) lets it run, without one `-p` refuses,
and the page reaches the model fenced as the web's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm
from tests.web_server import html, web_site

pytestmark = pytest.mark.real


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    config = tmp_path / "home" / ".paicli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[web]\nallow_private = ["127.0.0.1/32"]\n')
    return root


def fetching(url: str) -> list[Json]:
    call = {"id": "c1", "name": "web_fetch", "arguments": json.dumps({"url": url})}
    return [{"tool_calls": [call]}, {"text": "Done."}]


async def test_a_domain_rule_lets_p_fetch_a_page_for_the_model(project: Path) -> None:
    async with web_site({"/": html("<h1>Release notes</h1><p>Version 2.</p>")}) as site:
        async with ScriptedLlm(fetching(f"{site}/")) as llm:
            run = await paicli(
                project, "-p", "what changed?", "--allow", "WebFetch(domain:127.0.0.1)", llm=llm
            )
    assert run.code == 0, run.stderr
    assert run.stdout == "Done.\n"
    page = llm.requests[1]["messages"][-1]["content"]
    assert page.startswith(f'<web-content source="{site}/" block="')
    assert "# Release notes\n\nVersion 2." in page


async def test_without_a_rule_p_does_not_fetch(project: Path) -> None:
    fetched: list[str] = []

    async def page(request: web.Request) -> web.StreamResponse:
        fetched.append("yes")
        return web.Response(text="<p>x</p>", content_type="text/html")

    async with web_site({"/": page}) as site:
        async with ScriptedLlm(fetching(f"{site}/")) as llm:
            run = await paicli(project, "-p", "fetch it", llm=llm)
    assert run.code == 0, run.stderr
    said = llm.requests[1]["messages"][-1]["content"]
    assert said.startswith("The tool web_fetch was not run: paicli -p does not ask")
    assert fetched == []


async def test_p_searches_through_the_configured_provider(project: Path) -> None:
    async def searx(request: web.Request) -> web.StreamResponse:
        hit = {"title": "PEP 8", "url": "https://peps.python.org/pep-0008/", "content": "style"}
        return web.json_response({"results": [hit]})

    async with web_site({"/search": searx}) as site:
        config = project.parent / "home" / ".paicli" / "config.toml"
        config.write_text(f'[web.search]\nprovider = "searxng"\nurl = "{site}/search"\n')
        call = {"id": "s1", "name": "web_search", "arguments": json.dumps({"query": "pep 8"})}
        async with ScriptedLlm([{"tool_calls": [call]}, {"text": "Found it."}]) as llm:
            run = await paicli(project, "-p", "find pep 8", "--allow", "WebSearch", llm=llm)
    assert run.code == 0, run.stderr
    tools = {tool["function"]["name"] for tool in llm.requests[0]["tools"]}
    assert {"web_fetch", "web_search"} <= tools
    said = llm.requests[1]["messages"][-1]["content"]
    assert said.startswith('<web-content source="web search: pep 8" block="')
    assert "1. PEP 8\n   https://peps.python.org/pep-0008/\n   style" in said
