"""The Streamable HTTP transport's POSTs on its own aiohttp client, made one layer below
`ClientSession.request`: aiohttp's `ClientRequest` on the connector's pool, its HTTP writer,
C parser and `ClientResponse`, without the session's per-request machinery a POST to the
configured URL on a client paicli built never uses (the total-timeout handle, trace hooks,
middlewares, proxy and netrc lookups, credentials in the URL, the redirect and retry loop).
That machinery is about 15 % of a call's instructions (bench/instructions.py). And the
request's body goes out with its headers, in the one write aiohttp's own writer makes of
both, from `send` itself (`InlineRequest`): aiohttp writes a body from a task of its own,
started eagerly on Python 3.12 and later but not on 3.11, where it costs a task, two done
callbacks and an event-loop turn a call (about 4 % of a call's instructions, and a
second `epoll_wait`).

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
from aiohttp import hdrs
from aiohttp.http import HttpVersion11, StreamWriter
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

if TYPE_CHECKING:
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace

__all__ = ["DirectPost", "InlineRequest", "direct_post", "supported"]

# The aiohttp minor releases whose request layer this was written against.
SUPPORTED = ((3, 14),)
NO_TRACES: list[Trace] = []
# The largest body `InlineRequest` writes from `send`: well under the transport's high-water
# mark (64 KiB), so that writing it never pauses the connection and `send` never waits for
# the server to read it (a larger one is aiohttp's, whose task may wait while the response
# is read: a server may answer before reading a large body).
INLINE_LIMIT = 16 * 1024


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
        self._connector = connector = client.connector
        self._jar = client.cookie_jar
        self._timeout = client.timeout
        # Bodies written with their headers (`InlineRequest`), unless the connector closes
        # every connection: aiohttp's `send` then adds the header saying so.
        self._inline = connector is not None and not connector.force_close
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
        request = InlineRequest(
            "POST",
            target,
            headers=self._merged(headers),
            data=data,
            # (An empty jar has nothing to filter: most servers set no cookies.)
            cookies=jar.filter_cookies(target) if len(jar) else None,
            loop=asyncio.get_running_loop(),
            session=client,
        )
        if self._inline:
            request.inline = data
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


class InlineRequest(aiohttp.ClientRequest):
    """aiohttp's request, whose body (`inline`: the bytes it was made with) goes out with its
    headers from `send` itself, in the one write aiohttp's `StreamWriter` makes of both. Only
    a plain one: a POST of at most INLINE_LIMIT bytes over HTTP/1.1 with a declared length,
    no compression, chunking, proxy, `Expect: 100-continue`, trace or upload tracker, on a
    connection with nothing waiting to be written; any other is sent by
    `ClientRequest.send` (as is one with `inline` None)."""

    inline: bytes | None = None

    async def send(self, conn: Connection) -> aiohttp.ClientResponse:
        body = self.inline
        protocol = conn.protocol
        transport = conn.transport
        headers = self.headers
        if (
            body is None
            or len(body) > INLINE_LIMIT
            or protocol is None
            or protocol.writing_paused
            or transport is None
            or transport.get_write_buffer_size()
            or self.method != "POST"
            or self.version != HttpVersion11
            or self.compress
            or self.chunked
            or self.proxy is not None
            or self._continue is not None
            or self._traces
            or self._upload_tracker is not None
            or hdrs.CONTENT_TYPE not in headers
            or headers.get(hdrs.CONTENT_LENGTH) != str(len(body))
        ):
            return await super().send(conn)
        writer = StreamWriter(protocol, self.loop)
        await writer.write_headers(f"POST {self.url.raw_path_qs} HTTP/1.1", headers)
        # Written at once (the transport buffers what the socket does not take, too little
        # to pause the connection: the drain in `write_eof` does not wait).
        await writer.write_eof(body)
        protocol.start_timeout()
        response = self.response_class(
            "POST",
            self.original_url,
            writer=None,
            continue100=None,
            timer=self._timer,
            request_info=self.request_info,
            traces=self._traces,
            loop=self.loop,
            session=self._session,
            stream_writer=writer,
        )
        # (aiohttp declares the attribute as None; its own `send` sets it so too.)
        self.response = response  # type: ignore[assignment]
        return response
