"""The authorization code grant with PKCE, and the token endpoint.

`begin()` makes the authorization URL with a fresh PKCE verifier (S256) and `state`;
`finish()` checks the browser's return (state, then RFC 9207 `iss` exactly as recorded,
before the code goes anywhere) and redeems the code. `refresh()` uses a refresh token.
Client authentication at the token endpoint follows the registered method.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

from ..errors import OAuthError
from ._discovery import ServerMetadata
from ._dpop import DpopKey
from ._fetch import OAuthHttp
from ._jwt import ASSERTION_TYPE, client_assertion
from ._store import ClientInfo, Tokens

__all__ = ["Attempt", "begin", "finish", "refresh", "token_request"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One authorization request in flight: what `finish()` checks the answer against."""

    url: str
    state: str
    verifier: str
    issuer: str
    iss_required: bool
    redirect_uri: str
    resource: str
    scope: str | None


def begin(
    meta: ServerMetadata,
    client: ClientInfo,
    redirect_uri: str,
    resource: str,
    scope: str | None,
) -> Attempt:
    """The authorization URL for `client`, with its PKCE verifier and state."""
    verifier = secrets.token_urlsafe(48)  # 64 characters, within RFC 7636's 43-128
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge.decode().rstrip("="),
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if scope:
        query["scope"] = scope
    parts = urlsplit(meta.authorization_endpoint)
    joined = "&".join(q for q in (parts.query, urlencode(query, quote_via=quote)) if q)
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))
    return Attempt(
        url,
        state,
        verifier,
        meta.issuer,
        meta.iss_parameter_supported,
        redirect_uri,
        resource,
        scope,
    )


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1:
        raise OAuthError(f"the authorization response repeats {name!r}; refused")
    return values[0]


def authorization_code(attempt: Attempt, callback_url: str, label: str) -> str:
    """The code from the browser's return, after the state and issuer checks."""
    query = parse_qs(urlsplit(callback_url).query, keep_blank_values=True)
    if _one(query, "state") != attempt.state:
        raise OAuthError(f"{label}: the authorization response has the wrong state; refused")
    iss = _one(query, "iss")
    # RFC 9207: compared as exact strings (no case folding, no trailing-slash leniency);
    # on a mismatch nothing else in the response is used, not even its error text.
    if iss is not None and iss != attempt.issuer:
        raise OAuthError(
            f"{label}: the authorization response comes from issuer {iss[:200]!a}, "
            f"not {attempt.issuer} (possible mix-up attack); refused"
        )
    if iss is None and attempt.iss_required:
        raise OAuthError(
            f"{label}: the authorization response lacks the 'iss' parameter that "
            f"{attempt.issuer} promised; refused"
        )
    error = _one(query, "error")
    if error is not None:
        description = _one(query, "error_description") or ""
        raise OAuthError(f"{label}: authorization refused: {error[:100]!a} {description[:200]!a}")
    code = _one(query, "code")
    if not code:
        raise OAuthError(f"{label}: the authorization response has no code")
    return code


def authenticate(
    client: ClientInfo,
    form: dict[str, str],
    headers: dict[str, str],
    audience: tuple[str, ...] = (),
) -> None:
    """Add the client's credentials to a token or other endpoint request (`audience`: who a
    `private_key_jwt` assertion is for: the issuer and the endpoint)."""
    method, secret = client.auth_method, client.client_secret
    if method == "private_key_jwt" and client.private_key is not None:
        form["client_id"] = client.client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = client_assertion(
            client.client_id, client.private_key, client.signing_algorithm, audience
        )
        return
    if method == "client_secret_basic" and secret is not None:
        # RFC 6749 §2.3.1: each part form-urlencoded before base64.
        pair = f"{quote(client.client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return
    if client.client_id:  # a workload's jwt-bearer grant may have no client id at all
        form["client_id"] = client.client_id
    if method == "client_secret_post" and secret is not None:
        form["client_secret"] = secret


async def token_request(
    http: OAuthHttp,
    meta: ServerMetadata,
    client: ClientInfo,
    form: dict[str, str],
    *,
    resource: str,
    previous: Tokens | None = None,
    dpop: DpopKey | None = None,
) -> Tokens:
    """POST a grant to the token endpoint; the tokens it issues. With `dpop`, each request
    carries a proof, and a `use_dpop_nonce` answer is retried once with the nonce given."""
    form = {**form, "resource": resource}
    nonce: str | None = None
    for _ in range(2):
        headers: dict[str, str] = {}
        authenticate(client, form, headers, audience=(meta.issuer, meta.token_endpoint))
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", meta.token_endpoint, nonce=nonce)
        reply = await http.post(
            meta.token_endpoint, "the token request", form=form, headers=headers
        )
        body = reply.json or {}
        offered = {k.lower(): v for k, v in reply.headers.items()}.get("dpop-nonce")
        if dpop is None or reply.status != 400 or body.get("error") != "use_dpop_nonce":
            break
        if not offered or offered == nonce:
            break
        nonce = offered
    if reply.status != 200:
        error = body.get("error")
        shown = ascii(error[:100]) if isinstance(error, str) else f"HTTP {reply.status}"
        raise OAuthError(f"{http.label}: the token request was refused: {shown}")
    tokens = _tokens(http.label, body, meta, client.client_id, resource=resource, previous=previous)
    if dpop is not None and tokens.token_type.lower() != "dpop":
        raise OAuthError(f"{http.label}: a DPoP proof was sent but the token is not DPoP-bound")
    return tokens


def _tokens(
    label: str,
    body: dict[str, Any],
    meta: ServerMetadata,
    client_id: str,
    *,
    resource: str,
    previous: Tokens | None,
) -> Tokens:
    access, kind = body.get("access_token"), body.get("token_type")
    if not isinstance(access, str) or not access or not isinstance(kind, str):
        raise OAuthError(f"{label}: the token response holds no usable access token")
    if not access.isascii() or not access.isprintable():
        raise OAuthError(f"{label}: the access token has characters a header cannot carry")
    lifetime = body.get("expires_in")
    expires_at = (
        time.time() + lifetime
        if isinstance(lifetime, int | float) and not isinstance(lifetime, bool)
        else None
    )
    rotated = body.get("refresh_token")
    scope = body.get("scope")
    return Tokens(
        access_token=access,
        token_type=kind,
        issuer=meta.issuer,
        token_endpoint=meta.token_endpoint,
        resource=resource,
        client_id=client_id,
        expires_at=expires_at,
        # A refresh response may omit the refresh token: the old one stays valid.
        refresh_token=rotated
        if isinstance(rotated, str)
        else (previous.refresh_token if previous else None),
        scope=scope if isinstance(scope, str) else (previous.scope if previous else None),
    )


async def finish(
    http: OAuthHttp,
    meta: ServerMetadata,
    client: ClientInfo,
    attempt: Attempt,
    callback: str,
    *,
    dpop: DpopKey | None = None,
) -> Tokens:
    """Check the browser's return and redeem its code."""
    code = authorization_code(attempt, callback, http.label)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": attempt.redirect_uri,
        "code_verifier": attempt.verifier,
    }
    tokens = await token_request(http, meta, client, form, resource=attempt.resource, dpop=dpop)
    if tokens.scope is None and attempt.scope:
        tokens = Tokens(**{**tokens.to_record(), "scope": attempt.scope})
    return tokens


async def refresh(
    http: OAuthHttp,
    meta: ServerMetadata,
    client: ClientInfo,
    tokens: Tokens,
    *,
    dpop: DpopKey | None = None,
) -> Tokens:
    """New tokens for a refresh token."""
    assert tokens.refresh_token is not None
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    return await token_request(
        http, meta, client, form, resource=tokens.resource, previous=tokens, dpop=dpop
    )
