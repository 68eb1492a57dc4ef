"""The Streamable HTTP transport's POSTs on its own aiohttp client, made one layer below
`ClientSession.request`: aiohttp's `ClientRequest` on the connector's pool, its HTTP writer,
C parser and `ClientResponse`, without the session's per-request machinery a POST to the
configured URL on a client paicli built never uses (the total-timeout handle, trace hooks,
middlewares, proxy and netrc lookups, credentials in the URL, the redirect and retry loop).
That machinery is about 15 % of a call's instructions (bench/instructions.py).

What `ClientSession._request` does that such a POST needs is done the same way here: the
client's default headers merged under the request's, its cookie jar read and updated, the
connect timeout, aiohttp's error types. aiohttp does not document this layer, so it is used
only with the aiohttp releases it was written and tested against (`supported`); with any
other, and for a closed client, every request goes through `ClientSession.request`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

if TYPE_CHECKING:
    from aiohttp.tracing import Trace

__all__ = ["DirectPost", "direct_post", "supported"]

# The aiohttp minor releases whose request layer this was written against.
SUPPORTED = ((3, 14),)
NO_TRACES: list[Trace] = []


def supported(version: str | None = None) -> bool:
    """Whether aiohttp `version`'s (default: the installed one's) request layer is one this
    module was written for."""
    release = aiohttp.__version__ if version is None else version
    try:
        major, minor = (int(part) for part in release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) in SUPPORTED


def direct_post(client: aiohttp.ClientSession, url: str) -> DirectPost | None:
    """The direct POSTs to `url` on `client` (which paicli made: no tracing, middlewares,
    proxies or other per-request options), or None where they cannot be used."""
    if client.timeout.total is not None or not supported():
        return None
    try:
        target = URL(url)
    except ValueError:
        return None  # `ClientSession.request` says what is wrong with it
    if target.scheme not in ("http", "https") or not target.raw_host:
        return None
    if target.raw_user is not None or target.raw_password is not None or target.raw_fragment:
        return None  # `ClientSession.request` turns credentials into a header, drops fragments
    return DirectPost(client, url, target)


class DirectPost:
    """POSTs to one URL on one client (see the module's docstring)."""

    def __init__(self, client: aiohttp.ClientSession, url: str, target: URL) -> None:
        self.url = url
        self._client = client
        self._target = target
        # What a client keeps for its life (read once, not through its properties a call).
        self._connector = client.connector
        self._jar = client.cookie_jar
        self._timeout = client.timeout
        # The last request headers seen and the same merged under the client's defaults:
        # a session sends the same header object with every call.
        self._headers_in: Mapping[str, str] | None = None
        self._headers_out: Mapping[str, str] = {}

    async def post(self, headers: Mapping[str, str], data: bytes) -> aiohttp.ClientResponse:
        """One POST of `data` to the URL; its response, not yet read (release it)."""
        client = self._client
        connector = self._connector
        if connector is None or connector.closed:
            # `ClientSession.request` says what is wrong.
            return await client.request(
                "POST", self.url, headers=headers, data=data, allow_redirects=False
            )
        target = self._target
        jar = self._jar
        request = aiohttp.ClientRequest(
            "POST",
            target,
            headers=self._merged(headers),
            data=data,
            # (An empty jar has nothing to filter: most servers set no cookies.)
            cookies=jar.filter_cookies(target) if len(jar) else None,
            loop=asyncio.get_running_loop(),
            session=client,
        )
        timeout = self._timeout
        try:
            try:
                connection = await connector.connect(request, traces=NO_TRACES, timeout=timeout)
            except TimeoutError as exc:
                raise aiohttp.ConnectionTimeoutError(
                    f"Connection timeout to host {target}"
                ) from exc
            protocol = connection.protocol
            assert protocol is not None
            # The client's defaults (paicli's client sets none of these), read to the end.
            protocol.set_response_params(read_until_eof=True, read_timeout=timeout.sock_read)
            try:
                response = await request.send(connection)
                try:
                    await response.start(connection)
                except BaseException:
                    response.close()
                    raise
            except BaseException:
                connection.close()
                raise
        except aiohttp.ClientError:
            raise
        except OSError as exc:
            if exc.errno is None and isinstance(exc, TimeoutError):
                raise
            raise aiohttp.ClientOSError(*exc.args) from exc
        cookies = response.headers.getall("Set-Cookie", ())
        if cookies:
            jar.update_cookies_from_headers(cookies, response.url)
        return response

    def _merged(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        """`headers` over the client's default headers, as `ClientSession.request` merges
        them (a name given again in `headers` replaces the default)."""
        if headers is self._headers_in:
            return self._headers_out
        defaults = self._client.headers
        merged: Mapping[str, str] = headers
        if defaults:
            result = CIMultiDict(defaults)
            given = headers if isinstance(headers, CIMultiDictProxy) else CIMultiDict(headers)
            added: set[str] = set()
            for name, value in given.items():
                if name in added:
                    result.add(name, value)
                else:
                    result[name] = value
                    added.add(name)
            merged = CIMultiDictProxy(result)
        self._headers_in, self._headers_out = headers, merged
        return merged
