"""OAuth against a local authorization server (tests/server_programs/auth_server.py): the flow end
to end, stored and refreshed tokens, a login that cannot happen, and hostile metadata."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from aiohttp import web

from paicli import mcp
from paicli.mcp.auth import LoginRequired, MemoryTokenStore, OAuth, OAuthError
from tests.server_programs.auth_server import World, auth_world

pytestmark = pytest.mark.real


class Headless:
    """The browser step: GET the authorization URL, return where it redirects."""

    redirect_uri = "http://127.0.0.1:9/callback"

    def __init__(self) -> None:
        self.urls: list[str] = []

    async def authorize(self, url: str) -> str:
        self.urls.append(url)
        async with (
            aiohttp.ClientSession() as client,
            client.get(url, allow_redirects=False) as response,
        ):
            return response.headers["Location"]


def oauth(redirect: Headless | None = None, **options: Any) -> OAuth:
    return OAuth(redirect=redirect, **options)


async def call_echo(world: World, auth: OAuth) -> str:
    server = mcp.HttpServer(world.url, transport="http", protocol="2025-11-25", auth=auth)
    async with mcp.connect(server) as session:
        result = await session.call_tool("echo", {"text": "hi"})
    block = result.content[0]
    assert isinstance(block, mcp.TextContent)
    return block.text


async def test_a_401_runs_the_whole_flow_and_the_request_succeeds() -> None:
    redirect = Headless()
    async with auth_world() as world:
        assert await call_echo(world, oauth(redirect)) == "hi"
    assert len(world.requests_to("/authorize")) == 1
    [registration] = world.requests_to("/register")
    [token] = world.requests_to("/token")
    assert registration.body["application_type"] == "native"
    assert registration.body["redirect_uris"] == [redirect.redirect_uri]
    assert token.body["grant_type"] == "authorization_code"
    # The resource indicator is the PRM's `resource`, the same in both requests; PKCE S256
    # (the server checked the verifier against the challenge).
    query = parse_qs(urlsplit(redirect.urls[0]).query)
    assert query["resource"] == [world.url] == [token.body["resource"]]
    assert query["code_challenge_method"] == ["S256"]
    assert query["state"] and "scope" not in query
    # Every MCP request after the first carried the issued token.
    mcp_requests = world.requests_to("/mcp")
    assert "authorization" not in mcp_requests[0].headers
    assert all(r.headers["authorization"] == "Bearer access-1-secret" for r in mcp_requests[1:])


async def test_stored_tokens_are_reused_by_the_next_connection() -> None:
    auth = oauth(Headless(), store=MemoryTokenStore())
    async with auth_world() as world:
        await call_echo(world, auth)
        await call_echo(world, auth)
    assert len(world.requests_to("/authorize")) == 1
    assert len(world.requests_to("/register")) == 1


async def test_a_token_about_to_expire_is_refreshed_before_the_request() -> None:
    # Tokens living 30 s are inside the 60 s margin: each request refreshes first.
    auth = oauth(Headless())
    async with auth_world(lifetime=30) as world:
        await call_echo(world, auth)
        await call_echo(world, auth)
    grants = [r.body["grant_type"] for r in world.requests_to("/token")]
    assert grants[0] == "authorization_code"
    assert "refresh_token" in grants[1:]
    assert len(world.requests_to("/authorize")) == 1
    refreshed = [r for r in world.requests_to("/token") if r.body["grant_type"] == "refresh_token"]
    assert refreshed[0].body["resource"] == world.url


async def test_a_401_with_an_expired_token_refreshes_and_retries() -> None:
    auth = oauth(Headless())
    async with auth_world() as world:
        await call_echo(world, auth)
        world.tokens.clear()  # the server forgets every access token
        await call_echo(world, auth)
    grants = [r.body["grant_type"] for r in world.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]


async def test_a_token_refreshed_mid_session_is_the_one_the_next_call_sends() -> None:
    # The session's POST headers are built once per session; the Authorization header is
    # not among them: after a refresh inside the session, every request carries the new token.
    # The protocol version joins them once negotiated.
    auth = oauth(Headless())
    async with auth_world() as world:
        server = mcp.HttpServer(world.url, transport="http", protocol="2025-11-25", auth=auth)
        async with mcp.connect(server) as session:
            assert (await session.call_tool("echo", {"text": "a"})).text == "a"
            sent = [r.headers.get("authorization") for r in world.requests_to("/mcp")]
            old = {token for token in sent if token}  # the first asked without one
            world.tokens.clear()  # the server forgets every access token
            assert (await session.call_tool("echo", {"text": "b"})).text == "b"
            assert (await session.call_tool("echo", {"text": "c"})).text == "c"
        later = world.requests_to("/mcp")[-2:]
    assert len(old) == 1
    assert all(r.headers.get("authorization") not in old | {None} for r in later)
    assert [r.body["grant_type"] for r in world.requests_to("/token")][-1] == "refresh_token"
    # The negotiated version is sent from the first request after `initialize` on.
    posts = [r for r in world.requests_to("/mcp") if r.headers.get("authorization")]
    methods = [r.body.get("method") for r in posts]
    assert methods[0] == "initialize" and "mcp-protocol-version" not in posts[0].headers
    assert all(r.headers.get("mcp-protocol-version") == "2025-11-25" for r in posts[1:])


async def test_a_machine_client_gets_tokens_with_its_own_credentials() -> None:
    auth = oauth(
        None, client_id="machine-1", client_secret="client-secret-value", grant="client_credentials"
    )
    async with auth_world() as world:
        assert await call_echo(world, auth) == "hi"
    [token] = world.requests_to("/token")
    assert token.body["grant_type"] == "client_credentials"
    assert token.body["resource"] == world.url
    assert not world.requests_to("/authorize") and not world.requests_to("/register")


@pytest.mark.parametrize("curve", ["P-256", "P-384"])
async def test_a_machine_client_authenticates_with_a_signed_assertion(curve: str) -> None:
    from joserfc.jwk import ECKey  # noqa: PLC0415

    key = ECKey.generate_key(curve, private=True)
    pem = key.as_pem(private=True).decode()
    auth = oauth(None, client_id="machine-jwt", private_key=pem, grant="client_credentials")
    async with auth_world(client_key=key) as world:
        assert await call_echo(world, auth) == "hi"
    [token] = world.requests_to("/token")
    assert token.body["client_assertion_type"].endswith(":client-assertion-type:jwt-bearer")
    assert "client_secret" not in token.body and pem not in str(token.body)
    assert not world.requests_to("/authorize") and not world.requests_to("/register")


async def test_an_unusable_private_key_is_one_error_naming_it() -> None:
    auth = oauth(None, client_id="m", private_key="not a key", grant="client_credentials")
    async with auth_world() as world:
        with pytest.raises(OAuthError, match="the configured private key cannot be used"):
            await call_echo(world, auth)
    assert not world.requests_to("/token")


async def test_a_workload_exchanges_its_platform_jwt_for_a_token() -> None:
    calls: list[int] = []

    async def fresh_jwt() -> str:  # a platform token file, read when tokens are needed
        calls.append(1)
        return "workload-jwt-from-the-platform"

    auth = oauth(None, assertion=fresh_jwt, grant="jwt_bearer")
    async with auth_world() as world:
        assert await call_echo(world, auth) == "hi"
    [token] = world.requests_to("/token")
    assert token.body["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert token.body["assertion"] == "workload-jwt-from-the-platform"
    assert token.body["resource"] == world.url and "client_id" not in token.body
    assert calls == [1]


async def test_a_refused_workload_jwt_fails_once_without_retrying_or_another_grant() -> None:
    auth = oauth(None, assertion="an-expired-jwt", grant="jwt_bearer")
    async with auth_world() as world:
        with pytest.raises(OAuthError, match="refused: 'invalid_grant'"):
            await call_echo(world, auth)
    assert [r.body["grant_type"] for r in world.requests_to("/token")] == [
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    ]
    assert not world.requests_to("/authorize") and not world.requests_to("/register")


@pytest.mark.parametrize(
    ("id_token", "outcome"), [("id-token-of-the-user", "hi"), ("someone-elses", "refused")]
)
async def test_an_enterprise_id_token_becomes_an_id_jag_then_a_token(
    id_token: str, outcome: str
) -> None:
    async with auth_world() as world:
        auth = oauth(
            None,
            client_id="enterprise-app",
            client_secret="client-secret-value",
            assertion=id_token,
            idp_token_endpoint=f"{world.base}/idp/token",
            idp_client_id="paicli-at-the-idp",
            grant="enterprise_managed",
        )
        if outcome == "hi":
            assert await call_echo(world, auth) == "hi"
        else:
            with pytest.raises(OAuthError, match="identity provider refused the exchange"):
                await call_echo(world, auth)
    [exchange] = world.requests_to("/idp/token")
    assert exchange.body["client_id"] == "paicli-at-the-idp"
    assert exchange.body["audience"] == world.base and exchange.body["resource"] == world.url
    grants = [r.body["grant_type"] for r in world.requests_to("/token")]
    assert grants == (["urn:ietf:params:oauth:grant-type:jwt-bearer"] if outcome == "hi" else [])


@pytest.mark.parametrize("nonce", [None, "server-nonce-1"])
async def test_dpop_binds_the_token_and_every_request_carries_a_fresh_proof(
    nonce: str | None,
) -> None:
    """The authorization server offers DPoP: the token request carries a proof, the token
    comes back bound to that key, and each MCP request presents it with the DPoP scheme and
    a proof of its own (the server refuses a replayed one). With nonces, both servers first
    answer use_dpop_nonce and the client tries once more with the nonce."""
    store = MemoryTokenStore()
    async with auth_world(dpop=True, dpop_nonce=nonce) as world:
        assert await call_echo(world, oauth(Headless(), store=store)) == "hi"
        assert await call_echo(world, oauth(Headless(), store=store)) == "hi"  # stored
    tokens = world.requests_to("/token")
    assert all(r.headers.get("dpop") for r in tokens)
    assert len(tokens) == (2 if nonce else 1)  # refused without the nonce, then issued
    presented = [r for r in world.requests_to("/mcp") if "authorization" in r.headers]
    assert presented and all(r.headers["authorization"].startswith("DPoP ") for r in presented)
    assert len(world.proof_ids) == len(set(world.proof_ids)) >= 4
    assert len(world.requests_to("/authorize")) == 1  # the second connection reused the key
    record = await store.load(world.url)
    assert record is not None and record["tokens"]["token_type"] == "DPoP"
    assert "d" in record["dpop_key"]  # the private key lives only in the (private) store


async def test_dpop_can_be_turned_off_and_then_the_server_refuses() -> None:
    async with auth_world(dpop=True) as world:
        with pytest.raises(OAuthError, match="invalid_dpop_proof"):
            await call_echo(world, oauth(Headless(), dpop=False))
    assert not world.requests_to("/token")[0].headers.get("dpop")


async def test_without_a_way_to_log_in_the_connection_says_login_is_needed() -> None:
    async with auth_world() as world:
        with pytest.raises(LoginRequired, match="needs login"):
            await call_echo(world, oauth(None))
        # Nothing registered on the user's behalf, no authorization attempted.
        assert not world.requests_to("/register")
        assert not world.requests_to("/authorize")


@pytest.mark.parametrize(
    ("patch", "complaint"),
    [
        ({"authorization_endpoint": "javascript:alert(1)"}, "must be an https URL"),
        ({"authorization_endpoint": "file:///etc/passwd"}, "must be an https URL"),
        ({"token_endpoint": "http://169.254.169.254/latest"}, "must use https"),
        ({"token_endpoint": "https://169.254.169.254/latest"}, "link-local address"),
        ({"registration_endpoint": "https://10.0.0.1/register"}, "private address"),
        ({"authorization_endpoint": "https://user:pw@example.com/a"}, "user info"),
        ({"issuer": "https://attacker.example"}, "names issuer"),
        ({"code_challenge_methods_supported": ["plain"]}, "PKCE"),
    ],
)
async def test_hostile_authorization_server_metadata_is_refused(
    patch: dict[str, Any], complaint: str
) -> None:
    redirect = Headless()
    async with auth_world(metadata_patch=patch) as world:
        with pytest.raises(OAuthError, match=complaint):
            await call_echo(world, oauth(redirect))
    assert redirect.urls == []
    assert not world.requests_to("/token")


@pytest.mark.parametrize(
    ("patch", "complaint"),
    [
        ({"resource": "https://evil.example/mcp"}, "names resource"),
        ({"authorization_servers": ["http://192.168.1.1"]}, "must use https"),
        ({"authorization_servers": ["https://[fe80::1]"]}, "link-local"),
        ({"authorization_servers": ["data:text/plain,x"]}, "must be an https URL"),
    ],
)
async def test_hostile_resource_metadata_is_refused(patch: dict[str, Any], complaint: str) -> None:
    async with auth_world(prm_patch=patch) as world:
        with pytest.raises(OAuthError, match=complaint):
            await call_echo(world, oauth(Headless()))
    assert not world.requests_to("/authorize")


async def test_a_huge_metadata_document_is_refused() -> None:
    def huge(request: web.Request) -> web.StreamResponse:
        return web.Response(
            body=b"{" + b" " * (2 * 1024 * 1024) + b"}", content_type="application/json"
        )

    async with auth_world() as world:
        world.override["/.well-known/oauth-authorization-server"] = huge
        with pytest.raises(OAuthError, match="more than 1048576 bytes"):
            await call_echo(world, oauth(Headless()))


async def test_a_redirect_loop_in_discovery_is_cut_short() -> None:
    def loop(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/.well-known/oauth-authorization-server")

    async with auth_world() as world:
        world.override["/.well-known/oauth-authorization-server"] = loop
        with pytest.raises(OAuthError, match="more than 3 redirects"):
            await call_echo(world, oauth(Headless()))
    assert len(world.requests_to("/.well-known/oauth-authorization-server")) == 4


async def test_a_redirect_to_a_forbidden_address_is_not_followed() -> None:
    def away(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data")

    async with auth_world() as world:
        world.override["/.well-known/oauth-authorization-server"] = away
        with pytest.raises(OAuthError, match="must use https"):
            await call_echo(world, oauth(Headless()))


async def test_tokens_and_secrets_never_reach_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    auth = oauth(Headless())
    async with auth_world(lifetime=30) as world:
        await call_echo(world, auth)
        await call_echo(world, auth)
        world.override["/token"] = lambda request: web.json_response(
            {"error": "invalid_grant", "error_description": "refresh-9-secret"}, status=400
        )
        world.tokens.clear()
        with pytest.raises(LoginRequired):
            await call_echo(world, oauth(None, store=auth.store))
    # Several tokens were issued and refreshed, a token request was refused with one in
    # its description: none of them is in any log record.
    assert len(world.requests_to("/token")) >= 3
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert caplog.records
    assert "secret" not in logged


async def test_a_configured_client_secret_is_never_stored_and_the_configured_one_is_used() -> None:
    store = MemoryTokenStore()
    configured = {"client_id": "client-1", "store": store}
    async with auth_world() as world:
        auth = oauth(Headless(), client_secret="client-secret-value", **configured)
        assert await call_echo(world, auth) == "hi"
        record = await store.load(world.url)
        assert record is not None and "client-secret-value" not in str(record)
        # The secret rotated in the configuration: a refresh uses the configuration's.
        world.tokens.clear()
        with pytest.raises(mcp.McpError):
            await call_echo(world, oauth(None, client_secret="rotated-secret", **configured))
    refresh = [r for r in world.requests_to("/token") if r.body["grant_type"] == "refresh_token"]
    assert [r.body["client_secret"] for r in refresh] == ["rotated-secret"]


def refusing(world: World) -> None:
    """The MCP server refuses every token from now on."""

    def refuse(request: web.Request) -> web.StreamResponse:
        prm = f"{world.base}/.well-known/oauth-protected-resource/mcp"
        challenge = f'Bearer error="invalid_token", resource_metadata="{prm}"'
        return web.json_response(
            {"error": "invalid_token"}, status=401, headers={"WWW-Authenticate": challenge}
        )

    world.override["/mcp"] = refuse


async def test_a_server_that_refuses_every_token_says_to_log_in_again() -> None:
    store = MemoryTokenStore()
    async with auth_world() as world:
        assert await call_echo(world, oauth(Headless(), store=store)) == "hi"
        refusing(world)
        # With tokens from an earlier login and no way to ask for another: login needed.
        with pytest.raises(LoginRequired) as stored:
            await call_echo(world, oauth(None, store=store))
        # During a login: the fresh tokens are refused too.
        with pytest.raises(OAuthError) as fresh:
            await call_echo(world, oauth(Headless(), store=MemoryTokenStore()))
    for error in (stored.value, fresh.value):
        assert "refused every OAuth access token it was given; log in again" in str(error)
        assert "headers" not in str(error)
