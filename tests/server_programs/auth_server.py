"""An OAuth-protected MCP server and its authorization server, on 127.0.0.1, for tests.

`auth_world()` serves, on one free port of 127.0.0.1 (in the test process, on aiohttp):
- `/mcp`: a stateless legacy MCP endpoint (initialize, tools/list, tools/call `echo`) that
  answers 401 with a Bearer challenge unless the request carries a token this authorization
  server issued for it (and not expired);
- `/.well-known/oauth-protected-resource/mcp` (PRM) and the authorization server at the
  root: metadata, `/register`, `/authorize` (approves at once and redirects), `/token`
  (authorization code with PKCE S256 checked, refresh tokens).
`World` holds the knobs (token lifetime, refresh tokens, a replaced document to make the
server hostile) and records every request, so a test can check what the client sent.
Tests using it open a socket: they are in the real tier.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

Json = dict[str, Any]
HOST = "127.0.0.1"


@dataclass
class Seen:
    """One request the world received (header names lower-cased; form or JSON body)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Json


@dataclass
class World:
    base: str = ""
    # Seconds each access token lives; refresh tokens are issued when `refresh` is set.
    lifetime: int = 3600
    refresh: bool = True
    # The JWT a workload presents (jwt-bearer grant), and the public key that private_key_jwt
    # client assertions must verify with (None: such clients are refused).
    workload_jwt: str = "workload-jwt-from-the-platform"
    client_key: Any = None
    # DPoP (RFC 9449): bind tokens to the client's proof key and demand a fresh proof on
    # every MCP request; with `dpop_nonce`, both servers first answer use_dpop_nonce.
    dpop: bool = False
    dpop_nonce: str | None = None
    bound: dict[str, str] = field(default_factory=dict)  # access token -> key thumbprint
    proof_ids: list[str] = field(default_factory=list)  # jti of every proof the MCP server took
    # Replaces a route's whole response: path -> a function returning an aiohttp response.
    override: dict[str, Callable[[web.Request], web.StreamResponse]] = field(default_factory=dict)
    # Replace fields of the PRM or the AS metadata document.
    prm_patch: Json = field(default_factory=dict)
    metadata_patch: Json = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    tokens: dict[str, float] = field(default_factory=dict)  # access token -> expiry
    refresh_tokens: set[str] = field(default_factory=set)
    challenges: dict[str, str] = field(default_factory=dict)  # code -> PKCE challenge
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    codes: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.seen]

    def requests_to(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    def issue(self) -> Json:
        number = next(self.counter)
        access = f"access-{number}-secret"
        self.tokens[access] = time.time() + self.lifetime
        answer: Json = {"access_token": access, "token_type": "Bearer", "expires_in": self.lifetime}
        if self.refresh:
            refresh = f"refresh-{number}-secret"
            self.refresh_tokens.add(refresh)
            answer["refresh_token"] = refresh
        return answer


def _challenge(world: World) -> str:
    prm = f"{world.base}/.well-known/oauth-protected-resource/mcp"
    return f'Bearer error="invalid_token", resource_metadata="{prm}"'


async def _mcp(world: World, request: web.Request) -> web.StreamResponse:
    header = request.headers.get("Authorization", "")
    scheme = "DPoP " if world.dpop else "Bearer "
    token = header.removeprefix(scheme)
    if not header.startswith(scheme) or world.tokens.get(token, 0) < time.time():
        return web.json_response(
            {"error": "invalid_token"}, status=401, headers={"WWW-Authenticate": _challenge(world)}
        )
    if world.dpop:
        refused = _dpop_refusal(world, request.headers.get("DPoP"), world.url, token)
        if refused is not None:
            return refused
    message = json.loads(await request.read() or b"{}")
    if "id" not in message:
        return web.Response(status=202)
    method, params = message.get("method"), message.get("params") or {}
    result: Json
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "auth-world", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        result = {"content": [{"type": "text", "text": text}]}
    else:
        error = {"code": -32601, "message": "Method not found"}
        return web.json_response({"jsonrpc": "2.0", "id": message["id"], "error": error})
    return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})


def _prm(world: World) -> web.StreamResponse:
    document = {"resource": world.url, "authorization_servers": [world.base], **world.prm_patch}
    return web.json_response(document)


def _metadata(world: World) -> web.StreamResponse:
    base = world.base
    document = {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "authorization_response_iss_parameter_supported": True,
        **({"dpop_signing_alg_values_supported": ["ES256"]} if world.dpop else {}),
        **world.metadata_patch,
    }
    return web.json_response(document)


def _register(world: World, body: Json) -> web.StreamResponse:
    answer = {
        "client_id": "client-1",
        "client_secret": "client-secret-value",
        "token_endpoint_auth_method": "client_secret_post",
        "redirect_uris": body.get("redirect_uris", []),
    }
    return web.json_response(answer, status=201)


def _authorize(world: World, request: web.Request) -> web.StreamResponse:
    query = request.query
    code = f"code-{next(world.codes)}"
    world.challenges[code] = query.get("code_challenge", "")
    target = {"code": code, "state": query.get("state", ""), "iss": world.base}
    raise web.HTTPFound(f"{query['redirect_uri']}?{urlencode(target)}")


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SIGNING = ["ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"]


def _dpop_proof(world: World, proof: str | None, url: str) -> tuple[Json, str] | str:
    """A DPoP proof's claims and key thumbprint, or why it is refused."""
    from joserfc import jws, jwt  # noqa: PLC0415 - only the DPoP tests need it
    from joserfc.errors import JoseError  # noqa: PLC0415
    from joserfc.jwk import ECKey  # noqa: PLC0415

    if not proof:
        return "no DPoP proof"
    try:
        header = jws.extract_compact(proof.encode()).protected
        if header.get("typ") != "dpop+jwt":
            return "typ is not dpop+jwt"
        key = ECKey.import_key(header["jwk"])
        claims = jwt.decode(proof, key, algorithms=["ES256"]).claims
    except (JoseError, ValueError, KeyError, TypeError):
        return "the proof does not verify"
    if claims.get("htm") != "POST" or claims.get("htu") != url:
        return "htm/htu do not match the request"
    if abs(time.time() - float(claims.get("iat", 0))) > 60 or not claims.get("jti"):
        return "iat or jti is missing or off"
    return claims, key.thumbprint()


def _use_nonce(world: World, status: int) -> web.StreamResponse:
    headers = {"DPoP-Nonce": str(world.dpop_nonce)}
    if status == 401:
        headers["WWW-Authenticate"] = 'DPoP error="use_dpop_nonce"'
    return web.json_response({"error": "use_dpop_nonce"}, status=status, headers=headers)


def _dpop_refusal(
    world: World, proof: str | None, url: str, token: str
) -> web.StreamResponse | None:
    checked = _dpop_proof(world, proof, url)
    if isinstance(checked, str):
        return web.json_response({"error": "invalid_dpop_proof", "why": checked}, status=401)
    claims, thumbprint = checked
    digest = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=")
    if claims.get("ath") != digest.decode() or world.bound.get(token) != thumbprint:
        return web.json_response({"error": "invalid_token", "why": "not bound"}, status=401)
    if world.dpop_nonce is not None and claims.get("nonce") != world.dpop_nonce:
        return _use_nonce(world, 401)
    if claims["jti"] in world.proof_ids:
        return web.json_response({"error": "invalid_dpop_proof", "why": "replayed"}, status=401)
    world.proof_ids.append(str(claims["jti"]))
    return None


def _token(world: World, body: Json, headers: dict[str, str]) -> web.StreamResponse:
    if world.dpop:
        checked = _dpop_proof(world, headers.get("dpop"), f"{world.base}/token")
        if isinstance(checked, str):
            return web.json_response({"error": "invalid_dpop_proof", "why": checked}, status=400)
        claims, thumbprint = checked
        if world.dpop_nonce is not None and claims.get("nonce") != world.dpop_nonce:
            return _use_nonce(world, 400)
        answer = _token_answer(world, body)
        issued = json.loads(answer.text or "{}")
        if "access_token" in issued:
            world.bound[issued["access_token"]] = thumbprint
            issued["token_type"] = "DPoP"
            return web.json_response(issued)
        return answer
    return _token_answer(world, body)


def _token_answer(world: World, body: Json) -> web.Response:
    grant = body.get("grant_type")
    if grant == JWT_BEARER:  # workload identity: the platform's JWT is the whole identity
        if body.get("assertion") == world.workload_jwt:
            return web.json_response(world.issue())
        # Enterprise-managed: the identity provider's ID-JAG, with the client's credentials.
        if body.get("assertion") == ID_JAG_ISSUED and body.get("client_secret") == (
            "client-secret-value"
        ):
            return web.json_response(world.issue())
        return web.json_response({"error": "invalid_grant"}, status=400)
    if body.get("client_assertion_type") == CLIENT_ASSERTION:
        if grant == "client_credentials" and _assertion_valid(world, body):
            return web.json_response(world.issue())
        return web.json_response({"error": "invalid_client"}, status=401)
    if body.get("client_secret") != "client-secret-value":
        return web.json_response({"error": "invalid_client"}, status=401)
    if grant == "authorization_code":
        verifier = str(body.get("code_verifier", "")).encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if world.challenges.pop(str(body.get("code")), None) != digest.decode():
            return web.json_response({"error": "invalid_grant"}, status=400)
        return web.json_response(world.issue())
    if grant == "client_credentials" and body.get("client_id") == "machine-1":
        return web.json_response(world.issue())
    if grant == "refresh_token" and body.get("refresh_token") in world.refresh_tokens:
        world.refresh_tokens.discard(body["refresh_token"])
        return web.json_response(world.issue())
    return web.json_response({"error": "invalid_grant"}, status=400)


ID_TOKEN = "id-token-of-the-user"
ID_JAG_ISSUED = "id-jag-for-this-server"


def _idp_token(world: World, body: Json) -> web.StreamResponse:
    """The enterprise identity provider (SEP-990): an ID token exchanged (RFC 8693) for an
    ID-JAG naming this authorization server and the MCP server."""
    wanted = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": ID_TOKEN,
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": world.base,
        "resource": world.url,
    }
    if any(body.get(key) != value for key, value in wanted.items()):
        return web.json_response({"error": "invalid_grant"}, status=400)
    issued = {
        "access_token": ID_JAG_ISSUED,
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    }
    return web.json_response(issued)


def _assertion_valid(world: World, body: Json) -> bool:
    """A private_key_jwt client assertion: signed by `world.client_key`, by and about the
    client named in the request, for this authorization server, not expired."""
    from joserfc import jwt  # noqa: PLC0415 - only the tests of private_key_jwt need it
    from joserfc.errors import JoseError  # noqa: PLC0415

    if world.client_key is None:
        return False
    try:
        token = jwt.decode(str(body.get("client_assertion")), world.client_key, algorithms=SIGNING)
    except (JoseError, ValueError):
        return False
    claims = token.claims
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    client = body.get("client_id")
    return (
        claims.get("iss") == claims.get("sub") == client
        and world.base in audiences
        and isinstance(claims.get("exp"), int)
        and claims["exp"] > time.time()
        and isinstance(claims.get("jti"), str)
    )


@asynccontextmanager
async def auth_world(**knobs: Any) -> AsyncIterator[World]:
    """Serve the protected MCP server and its authorization server for the block."""
    world = World(**knobs)

    @web.middleware
    async def record(
        request: web.Request, handler: Callable[[web.Request], Any]
    ) -> web.StreamResponse:
        raw = await request.read()
        if request.content_type == "application/x-www-form-urlencoded":
            body: Json = dict((await request.post()).items())
        else:
            try:
                parsed = json.loads(raw) if raw else {}
            except ValueError:
                parsed = {}
            body = parsed if isinstance(parsed, dict) else {}
        headers = {k.lower(): v for k, v in request.headers.items()}
        world.seen.append(Seen(request.method, request.path, headers, body))
        if request.path in world.override:
            return world.override[request.path](request)
        response: web.StreamResponse = await handler(request)
        return response

    async def route(request: web.Request) -> web.StreamResponse:
        path, body = request.path, world.seen[-1].body
        if path == "/mcp" and request.method == "POST":
            return await _mcp(world, request)
        if path == "/.well-known/oauth-protected-resource/mcp":
            return _prm(world)
        if path == "/.well-known/oauth-authorization-server":
            return _metadata(world)
        if path == "/register" and request.method == "POST":
            return _register(world, body)
        if path == "/authorize":
            return _authorize(world, request)
        if path == "/token" and request.method == "POST":
            return _token(world, body, world.seen[-1].headers)
        if path == "/idp/token" and request.method == "POST":
            return _idp_token(world, body)
        raise web.HTTPNotFound()

    app = web.Application(middlewares=[record])
    app.router.add_route("*", "/{tail:.*}", route)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # aiohttp keeps the bound socket here
    world.base = f"http://{HOST}:{port}"
    try:
        yield world
    finally:
        await runner.cleanup()
