"""web_fetch as a hostile site or model would use it, against a real site on 127.0.0.1:
loopback in every spelling the URL check lets through to the resolver, a compressed body
that decodes to hundreds of megabytes, headers without end."""

from __future__ import annotations

import asyncio
import tracemalloc
import zlib

import pytest
from aiohttp import web

from paicli.tools.base import ToolOutcome
from paicli.tools.web.settings import WebSettings
from paicli.tools.web.toolbox import FETCH_SPEC, WebToolbox
from tests.web_server import web_site

pytestmark = pytest.mark.real

BOMB_BYTES = 256 * 1024 * 1024


async def fetch(
    url: str, *, private: bool | tuple[()] = (), max_bytes: int = 100_000
) -> ToolOutcome:
    box = WebToolbox(WebSettings(private, max_bytes, 20.0))
    async with asyncio.timeout(30):
        return await box.call(FETCH_SPEC, {"url": url})


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1.",
        "127.0.0.1..",
        "0.0.0.0.",
        "LOCALHOST",
        "localhost.",
        "\uff11\uff12\uff17.\uff10.\uff10.\uff11",  # full-width digits: NFKC makes 127.0.0.1
        "\u2460\u2461\u2466.0.0.1",  # circled digits
        "0",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
    ],
)
async def test_loopback_in_any_spelling_is_never_reached(host: str) -> None:
    seen: list[str] = []

    async def page(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        return web.Response(text="secret", content_type="text/plain")

    async with web_site({"/": page}) as site:
        port = site.rsplit(":", 1)[1]
        outcome = await fetch(f"http://{host}:{port}/")
        assert outcome.is_error, outcome.text
        assert "\n" not in outcome.text.strip()
        allowed = await fetch(f"{site}/", private=True)  # the site is there to be reached
    assert seen == ["/"] and "secret" in allowed.text


def _gzip_bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    zeros = bytes(1024 * 1024)
    parts = [packer.compress(zeros) for _ in range(BOMB_BYTES // len(zeros))]
    return b"".join(parts) + packer.flush()


async def test_a_compressed_body_is_capped_by_its_decoded_size_in_bounded_memory() -> None:
    bomb = await asyncio.to_thread(_gzip_bomb)

    async def page(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}
        )
        await response.prepare(request)
        for at in range(0, len(bomb), 65536):
            await response.write(bomb[at : at + 65536])
        return response

    async with web_site({"/": page}) as site:
        tracemalloc.start()
        try:
            outcome = await fetch(f"{site}/", private=True, max_bytes=100_000)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert not outcome.is_error and outcome.truncated, outcome.text
    assert "[The page is longer than 100000 bytes; only those were read.]" in outcome.text
    assert peak < BOMB_BYTES // 4, f"{peak} bytes at the peak"


async def test_headers_without_end_fail_in_one_line() -> None:
    async def page(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"X-Big": "a" * 200_000})
        await response.prepare(request)
        return response

    async with web_site({"/": page}) as site:
        outcome = await fetch(f"{site}/", private=True)
    assert outcome.is_error
    assert outcome.text.startswith("web_fetch failed: ") and "\n" not in outcome.text
