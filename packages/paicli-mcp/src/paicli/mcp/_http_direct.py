"""The Streamable HTTP transport's POSTs on its own aiohttp client, made one layer below
`ClientSession.request`: aiohttp's `ClientRequest` on the connector's pool, its HTTP writer,
C parser and `ClientResponse`, without the session's per-request machinery a POST to the
configured URL on a client paicli built never uses (the total-timeout handle, trace hooks,
middlewares, proxy and netrc lookups, credentials in the URL, the redirect and retry loop).
That machinery is about 15 % of a call's instructions (bench/instructions.py).

A small POST (INLINE_LIMIT) with no cookie to send goes further (`InlineRequest`): its body
leaves with its headers, in the one write aiohttp's own `StreamWriter` makes of both, from
`send` itself, where aiohttp writes every body from a task of its own (started eagerly on
Python 3.12 and later, not on 3.11: there a task, two done callbacks, and a turn of the
event loop with its `epoll_wait`, a call); and the request is a copy of aiohttp's own one,
made once for the headers a session sends with every call, with its `Content-Length` set,
instead of a new one built header by header. The two took 24 % off a sequential call's
instructions.

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
# (Header names as text: `aiohttp.hdrs` is imported with the rest of aiohttp, at first use.)
CONTENT_LENGTH = "Content-Length"


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
        # The last request headers seen and the same merged under the client's defaults
        # (a session sends the same header object with every call).
        self._headers_in: Mapping[str, str] | None = None
        self._headers_out: Mapping[str, str] = {}
        # For them, once they come again: aiohttp's request with no body (`_bodiless`),
        # copied for each small body; None until then, or where there can be none.
        self._template: InlineRequest | None = None
        self._template_tried = False

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
        request = self._request(headers, data)
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

    def _request(self, headers: Mapping[str, str], data: bytes) -> aiohttp.ClientRequest:
        """The request POSTing `data` with `headers`. A small body with no cookies to send
        is written by the request itself (`InlineRequest`): a copy of aiohttp's own request
        made once for headers that come again (a session sends the same object with every
        call), or one made for this call (2026 requests carry headers of their own); any
        other request is aiohttp's, made anew."""
        loop = asyncio.get_running_loop()
        jar = self._jar
        again = headers is self._headers_in
        if not again:
            self._headers_in, self._headers_out = headers, self._merged(headers)
            self._template, self._template_tried = None, False
        merged = self._headers_out
        if self._inline and len(data) <= INLINE_LIMIT and not len(jar):
            if not again:
                request = self._bodiless(merged, loop)
                if request is not None:
                    return request.carrying(data)
            else:
                if not self._template_tried:
                    self._template_tried = True
                    self._template = self._bodiless(merged, loop)
                template = self._template
                if template is not None and template.loop is loop:
                    return template.made_for(data)
        return aiohttp.ClientRequest(
            "POST",
            self._target,
            headers=merged,
            data=data,
            # (An empty jar has nothing to filter: most servers set no cookies.)
            cookies=jar.filter_cookies(self._target) if len(jar) else None,
            loop=loop,
            session=self._client,
        )

    def _merged(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        """`headers` over the client's default headers, as `ClientSession.request` merges
        them (a name given again in `headers` replaces the default)."""
        defaults = self._client.headers
        if not defaults:
            return headers
        result = CIMultiDict(defaults)
        given = headers if isinstance(headers, CIMultiDictProxy) else CIMultiDict(headers)
        added: set[str] = set()
        for name, value in given.items():
            if name in added:
                result.add(name, value)
            else:
                result[name] = value
                added.add(name)
        return CIMultiDictProxy(result)

    def _bodiless(
        self, merged: Mapping[str, str], loop: asyncio.AbstractEventLoop
    ) -> InlineRequest | None:
        """aiohttp's request of a POST with `merged` headers and no body, if one with a body
        would differ from it only in its `Content-Length` (which aiohttp sets, not the
        headers; a type given, so aiohttp adds none); else None."""
        request = InlineRequest(
            "POST", self._target, headers=merged, loop=loop, session=self._client
        )
        fields = request.headers
        if CONTENT_LENGTH in merged or fields.get(CONTENT_LENGTH) != "0":
            return None
        if "Content-Type" not in fields or "Transfer-Encoding" in fields:
            return None
        if request._continue is not None:
            return None  # `Expect: 100-continue` in the headers: aiohttp waits for the 100
        return request


class InlineRequest(aiohttp.ClientRequest):
    """aiohttp's request, whose body (`inline`) goes out with its headers from `send`
    itself, in the one write aiohttp's `StreamWriter` makes of both.

    Made by aiohttp with no body and given one by `carrying`, or copied from such a
    template by `made_for`: aiohttp's own request for the POST, whose headers `DirectPost`
    checked (no length given, a type, no chunking or `Expect: 100-continue`; the request's
    defaults leave out compression, proxies, traces and upload trackers), its
    `Content-Length` set to the body's. On a connection with something still waiting to be
    written, the body is handed to aiohttp (`update_body`) and written its way. With
    `inline` None it is aiohttp's request."""

    inline: bytes | None = None

    def made_for(self, body: bytes) -> InlineRequest:
        """A request as this template (never sent itself), carrying `body`."""
        request = object.__new__(InlineRequest)
        vars(request).update(vars(self))
        request.headers = self.headers.copy()
        return request.carrying(body)

    def carrying(self, body: bytes) -> InlineRequest:
        """This request (made with no body, never sent), now carrying `body` (at most
        INLINE_LIMIT bytes): its `Content-Length` says so."""
        self.headers[CONTENT_LENGTH] = str(len(body))
        self.inline = body
        return self

    async def send(self, conn: Connection) -> aiohttp.ClientResponse:
        body = self.inline
        if body is None:
            return await super().send(conn)
        protocol = conn.protocol
        transport = conn.transport
        if (
            protocol is None
            or protocol.writing_paused
            or transport is None
            or transport.get_write_buffer_size()
        ):
            self.inline = None
            await self.update_body(body)
            return await super().send(conn)
        writer = aiohttp.http.StreamWriter(protocol, self.loop)
        await writer.write_headers(f"POST {self.url.raw_path_qs} HTTP/1.1", self.headers)
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
