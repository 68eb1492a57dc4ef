"""web_search through a configured provider: fake Brave Search and SearxNG endpoints on
127.0.0.1 (tests/web_server.py) answer in the providers' documented shapes. Without a
provider the tool is not offered; a provider's failures are one line."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from paicli.tools.base import ToolOutcome
from paicli.tools.mcp.results import for_model
from paicli.tools.web.settings import WebSettings, web_settings
from paicli.tools.web.toolbox import SEARCH_SPEC, WebToolbox
from paicli.user_config import UserConfig
from tests.web_server import html, web_site

KEY = "brave-key-0123456789abcdef"
BRAVE_ANSWER = {
    "type": "search",
    "web": {
        "type": "search",
        "results": [
            {
                "title": "asyncio &mdash; <strong>TaskGroup</strong>",
                "url": "https://docs.python.org/3/library/asyncio-task.html",
                "description": "Task groups combine a <strong>task</strong> creation API\n"
                " with a wait.",
            },
            {"title": "no url here"},
            {"title": "Python", "url": "javascript:alert(1)", "description": "dropped"},
            {"title": "PEP 654", "url": "https://peps.python.org/pep-0654/", "description": 3},
        ],
    },
}


def toolbox(config: dict[str, Any], environ: dict[str, str] | None = None) -> WebToolbox:
    settings, problems = web_settings(UserConfig({"web": {"search": config}}), environ or {})
    assert problems == []
    return WebToolbox(settings)


async def ask(box: WebToolbox, **arguments: object) -> ToolOutcome:
    async with asyncio.timeout(30):
        return await box.call(SEARCH_SPEC, arguments)


def test_without_a_provider_web_search_is_not_offered() -> None:
    assert [spec.name for spec in WebToolbox(WebSettings()).specs()] == ["web_fetch"]
    settings, problems = web_settings(
        UserConfig({"web": {"search": {"provider": "brave"}}}), {"OTHER": "x"}
    )
    assert settings.search is None
    assert problems == ["config.toml: web.search: BRAVE_API_KEY is not set; web_search is off"]
    _, problems = web_settings(UserConfig({"web": {"search": {"provider": "bing"}}}), {})
    assert problems == [
        "config.toml: web.search.provider must be one of brave, searxng; web_search is off"
    ]


@pytest.mark.real
async def test_brave_search_gets_the_key_and_its_hits_are_listed() -> None:
    seen: list[web.Request] = []

    async def brave(request: web.Request) -> web.StreamResponse:
        seen.append(request)
        return web.json_response(BRAVE_ANSWER)

    async with web_site({"/res/v1/web/search": brave}) as site:
        box = toolbox(
            {"provider": "brave", "url": f"{site}/res/v1/web/search", "api_key_env": "MY_KEY"},
            {"MY_KEY": KEY},
        )
        assert [spec.name for spec in box.specs()] == ["web_fetch", "web_search"]
        outcome = await ask(box, query="python task groups", count=3)
    assert seen[0].headers["X-Subscription-Token"] == KEY
    assert dict(seen[0].query) == {"q": "python task groups", "count": "3"}
    assert outcome.text == (
        "Results for 'python task groups' (brave):\n"
        "1. asyncio — TaskGroup\n"
        "   https://docs.python.org/3/library/asyncio-task.html\n"
        "   Task groups combine a task creation API with a wait.\n"
        "2. PEP 654\n"
        "   https://peps.python.org/pep-0654/"
    )
    assert for_model(outcome).startswith('<web-content source="web search: python task groups"')


@pytest.mark.real
async def test_searxng_answers_json_and_takes_no_key() -> None:
    async def searx(request: web.Request) -> web.StreamResponse:
        assert request.query["format"] == "json" and "X-Subscription-Token" not in request.headers
        return web.json_response(
            {"results": [{"title": "A", "url": "https://a.example/", "content": "alpha"}]}
        )

    async with web_site({"/search": searx}) as site:
        outcome = await ask(toolbox({"provider": "searxng", "url": f"{site}/search"}), query="a")
    assert outcome.text == "Results for 'a' (searxng):\n1. A\n   https://a.example/\n   alpha"


@pytest.mark.real
async def test_a_provider_s_failures_are_one_line() -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.Event().wait()
        return web.Response()

    routes = {"/denied": html("no", status=401), "/page": html("<p>not json</p>"), "/slow": slow}
    async with web_site(routes) as site:
        results = {}
        for path in routes:
            settings, _ = web_settings(
                UserConfig(
                    {"web": {"timeout": 0.5, "search": {"provider": "searxng", "url": site + path}}}
                ),
                {},
            )
            results[path] = await ask(WebToolbox(settings), query="q")
    assert {path: (o.is_error, o.text) for path, o in results.items()} == {
        "/denied": (True, "web_search failed: the searxng endpoint answered HTTP 401 Unauthorized"),
        "/page": (True, "web_search failed: the searxng endpoint did not answer JSON"),
        "/slow": (True, "web_search failed: no answer from the searxng endpoint within 0.5 s"),
    }
