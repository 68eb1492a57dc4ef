"""OAuth for the user's HTTP servers: the `oauth` setting, where tokens are kept, and the
login that puts them there.

Every HTTP server is connected with `paicli.mcp.auth.OAuth` and the token file, unless its
config sends its own `Authorization` header: a server that answers 401 then either finds
tokens from an earlier login (refreshed as needed) or fails with `LoginRequired`, which
`/mcp` and `paicli mcp list` show as "needs login". `paicli mcp login NAME` (and `/mcp login
NAME`) runs the authorization code flow with a loopback redirect: the browser is sent to the
authorization server (the URL is printed too, for machines without one), and the answer
comes back to a one-shot HTTP listener on 127.0.0.1.

Tokens live in the system keyring when there is a usable one, else in
`~/.paicli/oauth-tokens.json` (0600 in a 0700 folder); one record per server URL, which the
library presents only to that server. They are never printed or logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paicli.errors import PaicliError
from paicli.import_turns import importing
from paicli.mcp import HttpServer, McpError
from paicli.mcp.auth import OAuth
from paicli.private_files import folder_lock, make_private_dir, write_atomically
from paicli.servers._config_file import InvalidConfig

__all__ = [
    "FileTokenStore",
    "LoginFailed",
    "LoopbackRedirect",
    "OAuthSettings",
    "SystemTokenStore",
    "log_in",
    "log_out",
    "oauth_settings",
    "with_oauth",
]

log = logging.getLogger("paicli.servers.oauth")

# How long a login waits for the browser to come back.
LOGIN_TIMEOUT = 300.0
CALLBACK_PATH = "/callback"
Record = dict[str, Any]


class LoginFailed(PaicliError):
    """A login that could not finish; the message is one line for the user."""


@dataclass(frozen=True)
class OAuthSettings:
    """A server's `"oauth": {...}` setting (all optional)."""

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] | None = None
    callback_port: int | None = None


def oauth_settings(value: object, where: str) -> OAuthSettings:
    """The `oauth` object of a server entry (already `${VAR}`-expanded); `InvalidConfig`
    naming the key for a wrong one."""
    if not isinstance(value, Mapping):
        raise InvalidConfig(f"{where}: 'oauth' must be an object")
    unknown = sorted(set(value) - {"clientId", "clientSecret", "scopes", "callbackPort"})
    if unknown:
        raise InvalidConfig(f"{where}: 'oauth' has unknown keys: {', '.join(unknown)}")
    texts = {}
    for key in ("clientId", "clientSecret"):
        item = value.get(key)
        if item is not None and (not isinstance(item, str) or not item):
            raise InvalidConfig(f"{where}: 'oauth.{key}' must be a non-empty string")
        texts[key] = item
    scopes = value.get("scopes")
    if scopes is not None and (
        not isinstance(scopes, list) or not all(isinstance(s, str) and s for s in scopes)
    ):
        raise InvalidConfig(f"{where}: 'oauth.scopes' must be a list of scope names")
    port = value.get("callbackPort")
    if port is not None and (
        not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535
    ):
        raise InvalidConfig(f"{where}: 'oauth.callbackPort' must be a port number (1-65535)")
    return OAuthSettings(
        client_id=texts["clientId"],
        client_secret=texts["clientSecret"],
        scopes=tuple(scopes) if scopes is not None else None,
        callback_port=port,
    )


def with_oauth(
    spec: HttpServer, settings: OAuthSettings | None, store: SystemTokenStore
) -> HttpServer:
    """`spec` able to answer a 401 with stored tokens (or `LoginRequired`), unless its
    headers carry their own `Authorization`."""
    if any(name.lower() == "authorization" for name in spec.headers or {}):
        return spec
    settings = settings or OAuthSettings()
    auth = OAuth(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        scopes=settings.scopes,
        store=store,
    )
    return replace(spec, auth=auth)


# The keyring service paicli's records are kept under (one entry per server URL).
KEYRING_SERVICE = "paicli-mcp-oauth"


class SystemTokenStore:
    """The store paicli uses: the system keyring when one is usable (a desktop's Secret
    Service, macOS Keychain, ...), else `FileTokenStore` at `path`. Which one is decided on
    first use, off the event loop (importing keyring and asking D-Bus is slow); a record
    left in the file from before a keyring appeared is still read, and moves on its next
    change."""

    def __init__(self, path: Path) -> None:
        self.file = FileTokenStore(path)
        self._ring: Any = None
        self._decided = False

    @property
    def path(self) -> Path:
        return self.file.path

    async def load(self, key: str) -> Record | None:
        ring = await self._keyring()
        if ring is not None:
            text = await asyncio.to_thread(ring.get_password, KEYRING_SERVICE, key)
            if text is not None:
                try:
                    record = json.loads(text)
                except ValueError:
                    record = None
                return record if isinstance(record, dict) else None
        return await self.file.load(key)

    async def save(self, key: str, record: Record) -> None:
        ring = await self._keyring()
        if ring is None:
            await self.file.save(key, record)
            return
        await asyncio.to_thread(ring.set_password, KEYRING_SERVICE, key, json.dumps(record))
        if self.file.has(key):
            await self.file.delete(key)

    async def delete(self, key: str) -> None:
        ring = await self._keyring()
        if ring is not None:
            await asyncio.to_thread(_forget, ring, key)
        if self.file.has(key):
            await self.file.delete(key)

    async def holds(self, key: str) -> bool:
        return await self.load(key) is not None

    async def where(self) -> str:
        """Where records go, in words for the user."""
        ring = await self._keyring()
        return "the system keyring" if ring is not None else str(self.path)

    async def _keyring(self) -> Any:
        if not self._decided:
            self._ring = await asyncio.to_thread(importing(_usable_keyring))
            self._decided = True
        return self._ring


def _usable_keyring() -> Any:
    """The system keyring backend, or None when there is no usable one."""
    try:
        import keyring  # noqa: PLC0415 - slow (entry points), and only for OAuth
        from keyring.backends import fail, null  # noqa: PLC0415

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring | null.Keyring) or backend.priority <= 0:
            return None
        return backend
    except Exception as exc:  # a broken keyring setup must not cost the login
        log.info("the system keyring is not usable (%s); using the token file", exc)
        return None


def _forget(ring: Any, key: str) -> None:
    from keyring.errors import PasswordDeleteError  # noqa: PLC0415

    with contextlib.suppress(PasswordDeleteError):
        ring.delete_password(KEYRING_SERVICE, key)


class FileTokenStore:
    """`TokenStore` records in one private JSON file, keyed by server URL. Each change is a
    locked read-modify-write, replaced atomically, so two paicli processes never tear it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def load(self, key: str) -> Record | None:
        return await asyncio.to_thread(lambda: self._read().get(key))

    async def save(self, key: str, record: Record) -> None:
        await asyncio.to_thread(self._change, key, record)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._change, key, None)

    def has(self, key: str) -> bool:
        return key in self._read()

    def _read(self) -> dict[str, Record]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s); logins there are ignored", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def _change(self, key: str, record: Record | None) -> None:
        make_private_dir(self.path.parent)
        with folder_lock(self.path.parent):
            records = self._read()
            if record is None:
                records.pop(key, None)
            else:
                records[key] = record
            write_atomically(self.path, json.dumps(records, indent=1).encode())


class LoopbackRedirect:
    """The browser step of a login: a one-shot HTTP listener on 127.0.0.1 that the
    authorization server redirects back to. Use as `async with LoopbackRedirect(...)`."""

    def __init__(
        self,
        show: Callable[[str], None],
        *,
        port: int | None = None,
        open_browser: bool = True,
        timeout: float = LOGIN_TIMEOUT,
    ) -> None:
        self._show = show
        self._port = port or 0
        self._open_browser = open_browser
        self._timeout = timeout
        self._answer: asyncio.Future[str] | None = None
        self.redirect_uri = ""

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[LoopbackRedirect]:
        from aiohttp import web  # noqa: PLC0415 - only for a login

        self._answer = asyncio.get_running_loop().create_future()

        async def callback(request: web.Request) -> web.Response:
            if self._answer is not None and not self._answer.done():
                self._answer.set_result(str(request.url))
            return web.Response(
                text="paicli: you can close this tab and go back to the terminal.\n"
            )

        app = web.Application()
        app.router.add_get(CALLBACK_PATH, callback)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self._port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise LoginFailed(f"cannot listen on 127.0.0.1:{self._port}: {exc.strerror}") from None
        port = runner.addresses[0][1]
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        try:
            yield self
        finally:
            await runner.cleanup()

    async def authorize(self, url: str) -> str:
        problem = _unsafe_url(url)
        if problem is not None:
            raise LoginFailed(f"refusing the authorization URL: {problem}")
        self._show(url)
        if self._open_browser and _graphical():
            import webbrowser  # noqa: PLC0415 - only a login needs it, not every start

            # A list of arguments to a browser, never a shell; False when there is none.
            await asyncio.to_thread(webbrowser.open, url)
        assert self._answer is not None, "use `async with redirect.listening()`"
        try:
            async with asyncio.timeout(self._timeout):
                return await self._answer
        except TimeoutError:
            raise LoginFailed(
                f"no answer from the browser within {self._timeout:.0f}s; login abandoned"
            ) from None


def _graphical() -> bool:
    """Whether a browser can open beside the terminal: a desktop session, macOS, or a
    `BROWSER` the user chose. Elsewhere (SSH, a console) `webbrowser` could start a text
    browser inside paicli's own terminal; the printed URL is the way then."""
    if sys.platform == "darwin":
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))


def _unsafe_url(url: str) -> str | None:
    """Why `url` must not be opened in a browser (None: https, or http to loopback)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "it is not a URL"
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return "it holds spaces or control characters"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and (host == "localhost" or _loopback(host)):
        return None
    return f"it must be https (or http to this machine), not {parts.scheme or 'no'} scheme"


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _login_target(spec: object, name: str) -> tuple[HttpServer, OAuth]:
    if not isinstance(spec, HttpServer):
        raise LoginFailed(f"{name!r} is not an HTTP server: login is for OAuth-protected URLs")
    if not isinstance(spec.auth, OAuth) or not isinstance(spec.auth.store, SystemTokenStore):
        raise LoginFailed(
            f"{name!r} sends its own Authorization header (its 'headers'); there is nothing "
            "to log in to"
        )
    return spec, spec.auth


async def log_in(
    spec: object,
    name: str,
    *,
    show: Callable[[str], None],
    callback_port: int | None = None,
    open_browser: bool = True,
    timeout: float = LOGIN_TIMEOUT,
) -> int:
    """Log in to server `name` (its config's `spec`): the authorization code flow through the
    browser and a loopback redirect, then a connection with the new tokens. Returns how many
    tools it offers; `LoginFailed` (one line) when it cannot be done. Tokens from an earlier
    login are replaced, or kept when this one fails."""
    server, auth = _login_target(spec, name)
    store = auth.store
    assert isinstance(store, SystemTokenStore)
    before = await store.load(server.url)
    if before is not None:  # forget the old tokens (not the registration) so the flow runs
        await store.save(server.url, {**before, "tokens": None})
    redirect = LoopbackRedirect(
        show, port=callback_port, open_browser=open_browser, timeout=timeout
    )
    try:
        async with redirect.listening():
            target = replace(server, auth=replace(auth, redirect=redirect))
            from paicli.mcp import connect  # noqa: PLC0415 - loaded when a login runs

            async with connect(target) as session:
                tools = await session.list_tools()
    except (LoginFailed, McpError) as exc:
        if before is not None and before.get("tokens") is not None:
            await store.save(server.url, before)
        if isinstance(exc, LoginFailed):
            raise
        # The library names the server first; every caller of this names it already.
        raise LoginFailed(str(exc).removeprefix(f"{server.label}: ")) from None
    return len(tools)


async def log_out(spec: object, name: str) -> bool:
    """Forget server `name`'s tokens and registration; False when there were none."""
    server, auth = _login_target(spec, name)
    assert isinstance(auth.store, SystemTokenStore)
    if not await auth.store.holds(server.url):
        return False
    await auth.store.delete(server.url)
    return True
