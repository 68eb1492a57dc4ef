"""web_fetch against a real site on 127.0.0.1 (tests/web_server.py): the page as Markdown,
redirects (bounded, checked at every hop, another host not followed), the size cap, the
deadline, content types, and names that resolve to private addresses. The loopback site is
reachable only because these tests allow 127.0.0.1 (`[web] allow_private`); without that,
the same fetches are refused."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from paicli.permissions.approval import ApprovingToolbox, PermissionStore, Policy
from paicli.permissions.request import Answer, Choice
from paicli.tools.base import ToolOutcome
from paicli.tools.web.address import AddressPolicy
from paicli.tools.web.fetch import GuardedResolver
from paicli.tools.web.settings import DEFAULT_MAX_BYTES, Network, WebSettings
from paicli.tools.web.toolbox import FETCH_SPEC, WebToolbox
from tests.permissions.test_approval import ScriptedApprover
from tests.web_server import html, redirect, web_site

pytestmark = pytest.mark.real

LOOPBACK_ONLY = (ipaddress.ip_network("127.0.0.1/32"),)
PAGE = """<html><head><title>The  page</title><style>p {}</style>
<script>alert("x")</script></head><body><nav>Menu</nav>
<main><h1>Heading</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p>
<ul><li>one</li><li>two</li></ul></main><footer>foot</footer></body></html>"""


async def fetch(
    url: str,
    *,
    private: bool | tuple[Network, ...] = LOOPBACK_ONLY,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = 30.0,
) -> ToolOutcome:
    box = WebToolbox(WebSettings(private, max_bytes, timeout))
    async with asyncio.timeout(30):
        return await box.call(FETCH_SPEC, {"url": url})


async def test_an_html_page_is_read_as_markdown() -> None:
    async with web_site({"/": html(PAGE)}) as site:
        outcome = await fetch(f"{site}/")
    assert not outcome.is_error, outcome.text
    assert outcome.origin == f"{site}/"
    head, _, body = outcome.text.partition("\n\n")
    assert head == f"URL: {site}/\nContent-Type: text/html\nTitle: The page"
    assert body == "# Heading\n\nSome **bold** text and [a link](/next).\n\n- one\n- two"


async def test_text_and_json_come_as_they_are_other_types_are_refused() -> None:
    async def data(request: web.Request) -> web.StreamResponse:
        return web.json_response({"a": [1, 2]})

    async def image(request: web.Request) -> web.StreamResponse:
        return web.Response(body=b"\x89PNG....", content_type="image/png")

    async with web_site({"/data": data, "/image": image}) as site:
        json_page = await fetch(f"{site}/data")
        picture = await fetch(f"{site}/image")
    assert json_page.text.endswith('\n\n{"a": [1, 2]}')
    assert picture.is_error and picture.text == (
        f"web_fetch failed: {site}/image is image/png: web_fetch reads HTML, text and JSON only"
    )


async def test_without_allow_private_loopback_and_localhost_are_refused() -> None:
    async with web_site({"/": html(PAGE)}) as site:
        port = site.rsplit(":", 1)[1]
        direct = await fetch(f"{site}/", private=())
        named = await fetch(f"http://localhost:{port}/", private=())
    assert direct.decision == "refused" and "points to a loopback address" in direct.text
    assert named.is_error and "localhost resolves to a loopback address" in named.text
    assert "allow_private" in named.text


async def test_redirects_are_followed_on_the_same_host_and_checked_at_every_hop() -> None:
    async with web_site(
        {
            "/start": redirect("/middle"),
            "/middle": redirect("/end", 301),
            "/end": html("<p>arrived</p>"),
            "/private": redirect("http://10.0.0.1/admin"),
            "/loopback": redirect("http://127.0.0.2:80/"),
            "/scheme": redirect("file:///etc/passwd"),
        }
    ) as site:
        followed = await fetch(f"{site}/start")
        private = await fetch(f"{site}/private")
        loopback = await fetch(f"{site}/loopback")
        scheme = await fetch(f"{site}/scheme")
    assert followed.text.startswith(f"URL: {site}/end\n(redirected from {site}/start)")
    assert followed.text.endswith("\n\narrived")
    assert private.is_error and "redirected, and refused" in private.text
    assert "points to a private address" in private.text
    assert loopback.is_error and "'http://127.0.0.2:80/' points to a loopback address" in (
        loopback.text
    )
    assert scheme.is_error and "only http and https" in scheme.text


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("http://[::1]:{port}/", "'http://[::1]:{port}/' points to a loopback address"),
        ("http://2130706434:{port}/", "'http://2130706434:{port}/' points to a loopback address"),
        ("http://[::ffff:10.0.0.1]/", "points to a private address"),
        ("http://169.254.169.254/latest", "points to a link-local address"),
    ],
)
async def test_redirects_to_loopback_in_any_spelling_are_refused(target: str, said: str) -> None:
    async with web_site({"/": html("<p>home</p>")}) as site:
        port = site.rsplit(":", 1)[1]
        async with web_site({"/go": redirect(target.format(port=port))}) as other:
            outcome = await fetch(f"{other}/go")
    assert outcome.is_error and "redirected, and refused: " in outcome.text
    assert said.format(port=port) in outcome.text


async def test_a_redirect_to_localhost_is_handed_back_and_then_refused() -> None:
    async with web_site({"/": html("<p>home</p>")}) as site:
        port = site.rsplit(":", 1)[1]
        async with web_site({"/go": redirect(f"http://localhost:{port}/")}) as other:
            handed = await fetch(f"{other}/go")
            again = await fetch(f"http://localhost:{port}/", private=())
    assert f"redirects to another host: http://localhost:{port}/" in handed.text
    assert again.is_error and "localhost resolves to a loopback address" in again.text


async def test_a_redirect_to_another_host_is_not_followed() -> None:
    async with web_site({"/away": redirect("https://example.com/elsewhere")}) as site:
        outcome = await fetch(f"{site}/away")
    assert not outcome.is_error
    assert outcome.text == (
        f"{site}/away redirects to another host: https://example.com/elsewhere\n"
        "It was not followed; call web_fetch with that URL to read it."
    )


async def test_redirects_are_bounded() -> None:
    routes = {f"/{n}": redirect(f"/{n + 1}") for n in range(10)}
    async with web_site(routes) as site:
        outcome = await fetch(f"{site}/0")
    assert outcome.is_error and outcome.text == (
        f"web_fetch failed: more than 5 redirects, from {site}/0"
    )


async def test_a_body_without_end_is_read_up_to_the_cap() -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        while True:  # until the client goes away (handler_cancellation)
            await response.write(b"x" * 65536)

    async with web_site({"/": endless}) as site:
        outcome = await fetch(f"{site}/", max_bytes=200_000)
    assert not outcome.is_error and outcome.truncated
    body = outcome.text.split("\n\n")[1]
    assert body == "x" * 100_000  # one part shown; `offset` reads on
    assert "[The page is longer than 200000 bytes; only those were read.]" in outcome.text
    assert "call web_fetch with offset=100000 to read on" in outcome.text


async def test_a_body_that_never_ends_times_out() -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<p>the start")
        await asyncio.Event().wait()  # never more
        return response

    async with web_site({"/": slow}) as site:
        outcome = await fetch(f"{site}/", timeout=0.5)
    assert outcome.is_error and outcome.text == "web_fetch failed: no complete answer within 0.5 s"


async def test_an_http_error_is_one_line() -> None:
    async with web_site({"/": html("<p>gone</p>", status=404)}) as site:
        outcome = await fetch(f"{site}/missing")
    assert outcome.is_error and outcome.text == (
        f"web_fetch failed: {site}/missing answered HTTP 404 Not Found"
    )


async def test_a_domain_rule_lets_a_fetch_run_without_asking(tmp_path: Path) -> None:
    approver = ScriptedApprover(Answer(Choice.ALLOW_SESSION))
    approvals = ApprovingToolbox(
        WebToolbox(WebSettings(private=LOOPBACK_ONLY)),
        policy=Policy(allow=("WebFetch(domain:127.0.0.1)",)),
        store=PermissionStore(tmp_path / "permissions.json"),
        approver=approver,
    )
    async with web_site({"/": html("<p>ok</p>")}) as site:
        ruled = await approvals.call(FETCH_SPEC, {"url": f"{site}/"})
        port = site.rsplit(":", 1)[1]
        asked = await approvals.call(FETCH_SPEC, {"url": f"http://localhost:{port}/"})
    assert (ruled.decided_by, ruled.text.endswith("\n\nok")) == ("policy", True)
    # Another host is asked about; "this session" covers that host only.
    assert asked.decided_by == "user"
    assert approver.requests[0].covers == "web_fetch(domain:localhost)"
    assert approvals.session_rules == ("web_fetch(domain:localhost)",)


class Rebinding(AbstractResolver):
    """A name server that answers a public address first, then loopback (DNS rebinding)."""

    def __init__(self) -> None:
        self.answers = [["93.184.215.14", "127.0.0.1"], ["127.0.0.1"]]

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host, host=address, port=port, family=socket.AF_INET, proto=0, flags=0
            )
            for address in self.answers.pop(0)
        ]

    async def close(self) -> None:
        pass


async def test_the_resolver_keeps_only_allowed_addresses_at_every_resolution() -> None:
    resolver = GuardedResolver(AddressPolicy(), Rebinding())
    first = await resolver.resolve("rebind.example", 80)
    assert [entry["host"] for entry in first] == ["93.184.215.14"]  # what is connected to
    with pytest.raises(OSError, match=r"rebind.example resolves to a loopback address \(127"):
        await resolver.resolve("rebind.example", 80)
