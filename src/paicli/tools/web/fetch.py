"""One web_fetch request: GET a URL within the address rule, the redirect bound, the size
cap and the deadline. aiohttp is imported with this module, at the first fetch.

Pinning: the connector's resolver is `GuardedResolver`, which keeps only the addresses the
policy allows, and aiohttp connects to exactly the addresses its resolver returned (no DNS
cache, so every new connection resolves again through it): a name cannot resolve to a
public address for the check and to 127.0.0.1 for the connection. An address written in the
URL never reaches a resolver and is checked by `check_url`, before each hop. Proxies from the
environment are not used (`trust_env=False`): the address rule is ours to enforce.

Redirects are followed on the same host only (at most `max_redirects`, each checked again);
a redirect to another host ends the fetch with that URL, so the model's next call for it is
put to the user and to the domain rules like any other.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from urllib.parse import urljoin

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from paicli._version import __version__
from paicli.tools.errors import ToolError
from paicli.tools.web.address import (
    ALLOW_HINT,
    AddressPolicy,
    UrlRefused,
    WebUrl,
    check_url,
    ip_literal,
)

__all__ = ["FetchFailed", "Fetched", "GuardedResolver", "fetch", "read_capped"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
ACCEPT = "text/html, text/markdown, text/plain;q=0.9, application/json;q=0.8, text/*;q=0.7"


class FetchFailed(ToolError):
    """The fetch did not bring a page; the message says why in one line."""


@dataclass(frozen=True)
class Fetched:
    """What came back: the final URL, its status and content type, the body as read (at most
    the cap: `cut` when there was more), and where a redirect to another host leads."""

    url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    cut: bool = False
    elsewhere: str | None = None  # a redirect to another host, not followed


class GuardedResolver(AbstractResolver):
    """Resolves names through the system's resolver and keeps only the addresses `policy`
    allows; `refused` says why the last name had none."""

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        self._inner = inner or DefaultResolver()
        self.refused: str | None = None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        kept: list[ResolveResult] = []
        for entry in results:
            address = ip_literal(entry["host"])
            kind = "an unreadable address" if address is None else self._policy.refusal(address)
            if kind is None:
                kept.append(entry)
            else:
                self.refused = f"{host} resolves to {kind} ({entry['host']})"
        if not kept:
            raise OSError(self.refused or f"{host} did not resolve")
        return kept

    async def close(self) -> None:
        await self._inner.close()


async def fetch(
    url: WebUrl, policy: AddressPolicy, *, max_bytes: int, timeout: float, max_redirects: int
) -> Fetched:
    """GET `url` (already checked), following same-host redirects; `FetchFailed` on refusal,
    HTTP errors, an unreadable content type, the deadline or a network failure."""
    resolver = GuardedResolver(policy)
    connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False, limit=2)
    headers = {"User-Agent": f"paicli/{__version__} (web_fetch)", "Accept": ACCEPT}
    try:
        async with (
            asyncio.timeout(timeout),
            aiohttp.ClientSession(connector=connector, headers=headers, trust_env=False) as http,
        ):
            return await _follow(http, url, policy, max_bytes, max_redirects)
    except TimeoutError:
        raise FetchFailed(f"no complete answer within {timeout:g} s") from None
    except aiohttp.ClientConnectorError as exc:
        if resolver.refused is not None:
            raise FetchFailed(f"refused: {resolver.refused}{ALLOW_HINT}") from None
        raise FetchFailed(f"cannot connect to {url.host}: {exc.os_error.strerror or exc}") from None
    except aiohttp.ClientError as exc:
        raise FetchFailed(f"the request failed: {type(exc).__name__}: {exc}") from None
    finally:
        await resolver.close()  # the connector closes only a resolver of its own


async def _follow(
    http: aiohttp.ClientSession,
    first: WebUrl,
    policy: AddressPolicy,
    max_bytes: int,
    max_redirects: int,
) -> Fetched:
    target = first
    for _ in range(max_redirects + 1):
        requested = URL(target.url, encoded=False)
        if (requested.host or "").lower() != target.host:
            # The host the rules and the address check read must be the one connected to.
            raise FetchFailed(f"{target.url}: its host reads two ways; not fetched")
        async with http.get(requested, allow_redirects=False) as response:
            location = response.headers.get("Location")
            if response.status in _REDIRECTS and location:
                following = urljoin(str(response.url), location)
                try:
                    target_next = check_url(following, policy)
                except UrlRefused as exc:
                    raise FetchFailed(f"redirected, and refused: {exc}") from None
                if target_next.host != first.host:
                    return Fetched(
                        str(response.url),
                        response.status,
                        "",
                        None,
                        b"",
                        elsewhere=target_next.url,
                    )
                target = target_next
                continue
            if response.status >= 400:
                reason = response.reason or ""
                raise FetchFailed(f"{target.url} answered HTTP {response.status} {reason}".rstrip())
            content_type = response.content_type or ""
            if not readable(content_type):
                raise FetchFailed(
                    f"{target.url} is {content_type or 'of no stated type'}: web_fetch reads "
                    "HTML, text and JSON only"
                )
            body, cut = await read_capped(response.content, max_bytes)
            return Fetched(
                str(response.url), response.status, content_type, response.charset, body, cut
            )
    raise FetchFailed(f"more than {max_redirects} redirects, from {first.url}")


def readable(content_type: str) -> bool:
    """Whether web_fetch reads a body of this type: HTML, any text, JSON."""
    kind = content_type.lower()
    return (
        kind.startswith("text/")
        or kind in ("application/xhtml+xml", "application/json")
        or kind.endswith("+json")
    )


async def read_capped(content: aiohttp.StreamReader, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the (decompressed) body, and whether there was more; reading
    stops there, so a body without end costs no more than the cap."""
    parts: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = await content.read(min(_CHUNK, max_bytes + 1 - size))
        if not chunk:
            return b"".join(parts), False
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)[:max_bytes], True
