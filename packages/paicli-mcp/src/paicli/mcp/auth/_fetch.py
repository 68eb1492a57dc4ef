"""The HTTP client of the OAuth flow: metadata GETs and token/registration POSTs.

Its own aiohttp session, without the headers configured for the MCP server (an API key
there must not reach an authorization server), resolving names through `GuardedResolver`.
Every URL is checked by the policy first; a GET follows at most MAX_REDIRECTS redirects,
each hop checked again; a POST follows none. Bodies are capped (BODY_LIMIT) and each
exchange has a deadline. A JSON body that is not an object counts as no document.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import aiohttp
import orjson

from .._http_exchange import read_body
from ..errors import MessageTooLarge, OAuthError
from ._guard import GuardedResolver, UrlPolicy

__all__ = ["OAuthHttp", "Reply"]

log = logging.getLogger("paicli.mcp.auth")

# Metadata and token responses are a few KB; 1 MB leaves room and stops a hostile stream.
BODY_LIMIT = 1024 * 1024
# A metadata document may have moved once or twice; more is a loop.
MAX_REDIRECTS = 3
# Authorization servers answer in well under a second; a stuck one must not stall a login.
EXCHANGE_TIMEOUT = aiohttp.ClientTimeout(total=30.0, connect=10.0)
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class Reply:
    """A response: its status, its JSON object (None if the body was not one), headers."""

    status: int
    json: dict[str, Any] | None
    headers: dict[str, str]


class OAuthHttp:
    """HTTP for one MCP server's OAuth flow, under that server's URL policy."""

    def __init__(self, label: str, policy: UrlPolicy) -> None:
        self.label = label
        self.policy = policy
        self._client: aiohttp.ClientSession | None = None

    def _session(self) -> aiohttp.ClientSession:
        if self._client is None:
            connector = aiohttp.TCPConnector(resolver=GuardedResolver(self.policy), limit=10)
            self._client = aiohttp.ClientSession(connector=connector, timeout=EXCHANGE_TIMEOUT)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def get(self, url: str, what: str) -> Reply:
        """GET a metadata document, following checked redirects."""
        headers = {"Accept": "application/json"}
        here = self.policy.check(url, what)
        for _ in range(MAX_REDIRECTS + 1):
            reply, location = await self._exchange("GET", here, what, headers=headers)
            if location is None:
                return reply
            here = self.policy.check(urljoin(here, location), f"a redirect of {what}")
        raise OAuthError(f"{self.label}: more than {MAX_REDIRECTS} redirects fetching {what}")

    async def post(
        self,
        url: str,
        what: str,
        *,
        form: dict[str, str] | None = None,
        json: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """POST a form or a JSON document; a redirect is refused (it would resend secrets)."""
        url = self.policy.check(url, what)
        sent = {"Accept": "application/json", **(headers or {})}
        body: bytes | aiohttp.FormData
        if json is not None:
            body, sent["Content-Type"] = orjson.dumps(json), "application/json"
        else:
            body = aiohttp.FormData(form or {})
        reply, location = await self._exchange("POST", url, what, headers=sent, data=body)
        if location is not None:
            raise OAuthError(f"{self.label}: {what} answered with a redirect; not followed")
        return reply

    async def _exchange(
        self, method: str, url: str, what: str, **kwargs: Any
    ) -> tuple[Reply, str | None]:
        try:
            async with self._session().request(
                method, url, allow_redirects=False, **kwargs
            ) as response:
                location = response.headers.get("Location")
                if response.status in REDIRECTS and location:
                    return Reply(response.status, None, {}), location
                body = await read_body(response, BODY_LIMIT)
                headers = {k.lower(): v for k, v in response.headers.items()}
                return Reply(response.status, _json_object(body), headers), None
        except MessageTooLarge:
            raise OAuthError(
                f"{self.label}: {what} sent more than {BODY_LIMIT} bytes; refused"
            ) from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            reason = (
                "timed out" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
            )
            raise OAuthError(f"{self.label}: {what} ({url[:200]!a}) failed: {reason}") from exc


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
