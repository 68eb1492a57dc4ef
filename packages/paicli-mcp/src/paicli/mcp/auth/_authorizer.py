"""The OAuth side of one HTTP connection: which `Authorization` header to send, and what
to do when the server answers 401 or 403.

The transport asks `prepare()` before each request (stored tokens are loaded once and
refreshed shortly before they expire), sends `header()`, and on 401/403 calls
`challenged()`, which returns whether the request should be sent again: after a refresh,
after a full authorization (discovery, client identity, authorization code), or after a
step-up to more scopes on 403 `insufficient_scope`. A step-up that would ask for no new
scope is refused, which bounds the retries against a server that is never satisfied. One
lock serialises the flows of concurrent requests; a request whose token was replaced
meanwhile just retries.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any

from ..errors import LoginRequired, OAuthError
from ._challenge import Challenge, parse_challenges
from ._config import OAuth
from ._discovery import (
    ServerMetadata,
    discover_resource,
    discover_server,
    legacy_server,
    pick_issuer,
)
from ._dpop import DPOP_ALGORITHM, DpopKey
from ._fetch import OAuthHttp
from ._grant import begin, finish, refresh, token_request
from ._guard import UrlPolicy
from ._register import configured_again, configured_client, metadata_document_client, register
from ._store import ClientInfo, Tokens

__all__ = ["Authorizer"]

log = logging.getLogger("paicli.mcp.auth")

# Refresh this long before the access token expires, so a request does not race its expiry.
REFRESH_MARGIN = 60.0
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class Authorizer:
    """OAuth for the MCP server at `server_url`."""

    def __init__(self, oauth: OAuth, server_url: str, label: str) -> None:
        self._oauth = oauth
        self._url = server_url
        self._label = label
        self._http = OAuthHttp(label, UrlPolicy(server_url))
        self._lock = asyncio.Lock()
        self._record: dict[str, Any] | None = None
        self._tokens: Tokens | None = None
        # The scopes asked for so far; a step-up asks for their union with the challenge's.
        self._scopes: frozenset[str] = frozenset()
        # DPoP: the key the tokens are bound to, and the MCP server's latest nonce.
        self._dpop: DpopKey | None = None
        self._rs_nonce: str | None = None

    def header(self, method: str = "POST", url: str | None = None) -> dict[str, str]:
        """The headers that present the token on a `method` request to `url` (default: the
        server's URL): `Authorization`, and for a DPoP-bound token a fresh `DPoP` proof.
        None before the first authorization."""
        tokens = self._tokens
        if tokens is None:
            return {}
        if tokens.token_type.lower() == "dpop" and self._dpop is not None:
            proof = self._dpop.proof(
                method, url or self._url, access_token=tokens.access_token, nonce=self._rs_nonce
            )
            return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}
        return {"Authorization": f"Bearer {tokens.access_token}"}

    async def prepare(self) -> None:
        """Load stored tokens once; refresh them if they are about to expire."""
        if self._record is None:
            async with self._lock:
                await self._load()
        tokens = self._tokens
        if tokens is not None and tokens.refresh_token and tokens.expires_within(REFRESH_MARGIN):
            async with self._lock:
                if self._tokens is tokens:
                    await self._refresh(tokens)

    async def challenged(
        self,
        status: int,
        www_authenticate: str | None,
        sent: str | None,
        dpop_nonce: str | None = None,
    ) -> bool:
        """React to a 401/403 for a request sent with the header `sent` (and, for DPoP, the
        response's `DPoP-Nonce`); whether to resend."""
        challenge = _challenge(www_authenticate)
        async with self._lock:
            current = self.header().get("Authorization")
            if current is not None and current != sent:
                return True  # Another request renewed the token meanwhile.
            if (
                challenge.scheme == "dpop"
                and challenge.params.get("error") == "use_dpop_nonce"
                and dpop_nonce
                and self._dpop is not None
            ):
                if dpop_nonce == self._rs_nonce:
                    return False  # this nonce was already refused: another try fails alike
                self._rs_nonce = dpop_nonce
                return True
            if status == 403:
                if challenge.params.get("error") != "insufficient_scope":
                    return False
                wanted = self._scopes | frozenset(challenge.scopes)
                if wanted <= self._scopes:
                    return False  # Nothing new to ask for: another round would fail alike.
                await self._authorize(challenge, wanted)
                return True
            tokens = self._tokens
            if tokens is not None and tokens.refresh_token and await self._refresh(tokens):
                return True
            await self._authorize(challenge, None)
            return True

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- the flows -------------------------------------------------------------------------

    async def _load(self) -> None:
        record = await self._oauth.store.load(self._url)
        self._record = record if isinstance(record, dict) else {}
        tokens = Tokens.from_record(self._record.get("tokens"))
        kind = tokens.token_type.lower() if tokens is not None else ""
        if kind == "dpop":
            self._dpop = DpopKey.from_record(self._record.get("dpop_key"))
        if (
            tokens is not None
            and tokens.resource
            and (kind == "bearer" or (kind == "dpop" and self._dpop is not None))
        ):
            self._tokens = tokens
            self._scopes = frozenset((tokens.scope or "").split())

    async def _save(self) -> None:
        assert self._record is not None
        await self._oauth.store.save(self._url, self._record)

    async def _refresh(self, tokens: Tokens) -> bool:
        """New tokens for a refresh token; on failure the tokens are dropped (False)."""
        assert self._record is not None
        meta = ServerMetadata(tokens.issuer, "", tokens.token_endpoint)
        client = ClientInfo.from_record(self._record.get("token_client"))
        if client is not None and (client.configured or client.client_id == self._oauth.client_id):
            client = configured_again(self._oauth, meta, client)  # its secret was not stored
        try:
            if client is None or client.client_id != tokens.client_id:
                raise OAuthError(f"{self._label}: no client to refresh the tokens with")
            bound = self._dpop if tokens.token_type.lower() == "dpop" else None
            self._tokens = await refresh(self._http, meta, client, tokens, dpop=bound)
        except OAuthError as exc:
            log.info("%s: refreshing the access token failed: %s", self._label, exc)
            self._tokens = None
            self._record.pop("tokens", None)
            await self._save()
            return False
        self._record["tokens"] = self._tokens.to_record()
        await self._save()
        return True

    async def _authorize(self, challenge: Challenge, scopes: frozenset[str] | None) -> None:
        """The whole authorization code flow, from discovery to stored tokens."""
        assert self._record is not None
        http = self._http
        resource = await discover_resource(
            http, self._url, challenge.params.get("resource_metadata")
        )
        issuer = pick_issuer(resource.authorization_servers)
        meta = await discover_server(http, issuer, legacy=not resource.found)
        if meta is None:
            if resource.found:
                raise OAuthError(
                    f"{self._label}: authorization server {issuer} publishes no metadata"
                )
            meta = legacy_server(issuer)
        scope = self._scope(challenge, resource.scopes_supported, meta, scopes)
        if self._oauth.grant == "client_credentials":
            await self._client_credentials(meta, resource.resource, scope)
            return
        if self._oauth.grant in ("jwt_bearer", "enterprise_managed"):
            await self._jwt_bearer(meta, resource.resource, scope)
            return
        redirect = self._oauth.redirect
        if redirect is None:
            raise LoginRequired(f"{self._label}: needs login", www_authenticate=None)
        redirect_uri = redirect.redirect_uri
        client = await self._client(meta, redirect_uri, scope)
        attempt = begin(meta, client, redirect_uri, resource.resource, scope)
        log.info("%s: authorizing at %s", self._label, meta.issuer)
        callback = await redirect.authorize(attempt.url)
        tokens = await finish(http, meta, client, attempt, callback, dpop=self._dpop_for(meta))
        self._tokens = tokens
        self._scopes = frozenset((scope or "").split())
        self._record["tokens"] = tokens.to_record()
        self._record["token_client"] = client.to_record()
        await self._save()

    async def _client_credentials(
        self, meta: ServerMetadata, resource: str, scope: str | None
    ) -> None:
        """A machine client's tokens: its own credentials, no user and no browser."""
        assert self._record is not None
        client = configured_client(self._oauth, meta)
        if client is None or client.auth_method == "none":
            raise OAuthError(
                f"{self._label}: the client_credentials grant needs a client id and a "
                "secret or private key"
            )
        form = {"grant_type": "client_credentials"}
        if scope:
            form["scope"] = scope
        await self._issued(meta, client, form, resource, scope)

    async def _jwt_bearer(self, meta: ServerMetadata, resource: str, scope: str | None) -> None:
        """A workload's tokens for the JWT its platform issued it (RFC 7523 §2.1). A refusal
        is final: no retry, no other grant (the platform's token is what it is)."""
        assertion = self._oauth.assertion
        if callable(assertion):
            made = assertion()
            assertion = await made if inspect.isawaitable(made) else made
        if not isinstance(assertion, str) or not assertion:
            raise OAuthError(f"{self._label}: the {self._oauth.grant} grant needs an assertion")
        if self._oauth.grant == "enterprise_managed":
            assertion = await self._id_jag(assertion, meta, resource, scope)
        client = configured_client(self._oauth, meta) or ClientInfo("", None, "none")
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        if scope:
            form["scope"] = scope
        await self._issued(meta, client, form, resource, scope)

    async def _id_jag(
        self, id_token: str, meta: ServerMetadata, resource: str, scope: str | None
    ) -> str:
        """The enterprise identity provider's ID-JAG for `id_token` (RFC 8693 token
        exchange): a grant it issues for this authorization server and resource."""
        endpoint = self._oauth.idp_token_endpoint
        if endpoint is None:
            raise OAuthError(f"{self._label}: enterprise_managed needs idp_token_endpoint")
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": ID_JAG,
            "audience": meta.issuer,
            "resource": resource,
        }
        if scope:
            form["scope"] = scope
        if self._oauth.idp_client_id:
            form["client_id"] = self._oauth.idp_client_id
        reply = await self._http.post(endpoint, "the identity provider's token exchange", form=form)
        body = reply.json or {}
        if reply.status != 200:
            error = body.get("error")
            shown = ascii(error[:100]) if isinstance(error, str) else f"HTTP {reply.status}"
            raise OAuthError(f"{self._label}: the identity provider refused the exchange: {shown}")
        grant = body.get("access_token")
        if body.get("issued_token_type") != ID_JAG or not isinstance(grant, str) or not grant:
            raise OAuthError(f"{self._label}: the identity provider issued no ID-JAG")
        return grant

    async def _issued(
        self,
        meta: ServerMetadata,
        client: ClientInfo,
        form: dict[str, str],
        resource: str,
        scope: str | None,
    ) -> None:
        assert self._record is not None
        dpop = self._dpop_for(meta)
        tokens = await token_request(self._http, meta, client, form, resource=resource, dpop=dpop)
        self._tokens = tokens
        self._scopes = frozenset((scope or "").split())
        self._record["tokens"] = tokens.to_record()
        self._record["token_client"] = client.to_record()
        await self._save()

    def _dpop_for(self, meta: ServerMetadata) -> DpopKey | None:
        """The key to bind new tokens to: with `dpop=None`, only when the authorization
        server takes ES256 proofs. A new key per authorization, kept with the tokens."""
        wanted = self._oauth.dpop
        if wanted is False or (wanted is None and DPOP_ALGORITHM not in meta.dpop_algorithms):
            self._dpop = None
            return None
        assert self._record is not None
        self._dpop = DpopKey.generate()
        self._rs_nonce = None
        self._record["dpop_key"] = self._dpop.to_record()
        return self._dpop

    def _scope(
        self,
        challenge: Challenge,
        supported: tuple[str, ...] | None,
        meta: ServerMetadata,
        scopes: frozenset[str] | None,
    ) -> str | None:
        """The scopes to ask for: a step-up's union, else the configured ones, else the
        challenge's, else all the resource supports, else none; plus `offline_access` when
        the authorization server offers it (for a refresh token)."""
        if scopes is not None:
            chosen = sorted(scopes)
        elif self._oauth.scopes is not None:
            chosen = list(self._oauth.scopes)
        elif challenge.scopes:
            chosen = list(challenge.scopes)
        else:
            chosen = list(supported or ())
        if "offline_access" in meta.scopes_supported and "offline_access" not in chosen:
            chosen.append("offline_access")
        return " ".join(chosen) or None

    async def _client(
        self, meta: ServerMetadata, redirect_uri: str, scope: str | None
    ) -> ClientInfo:
        assert self._record is not None
        client = configured_client(self._oauth, meta) or metadata_document_client(self._oauth, meta)
        if client is not None:
            return client
        clients = self._record.setdefault("clients", {})
        stored = ClientInfo.from_record(clients.get(meta.issuer))
        if stored is not None and stored.redirect_uri == redirect_uri:
            return stored
        client = await register(
            self._http, self._oauth, meta, redirect_uri=redirect_uri, scope=scope
        )
        clients[meta.issuer] = client.to_record()
        await self._save()
        return client


def _challenge(header: str | None) -> Challenge:
    """The Bearer or DPoP challenge of a `WWW-Authenticate` header (an empty Bearer one if
    there is neither); a DPoP nonce request wins, as it is the one to act on."""
    challenges = [c for c in parse_challenges(header) if c.scheme in ("bearer", "dpop")]
    for challenge in challenges:
        if challenge.scheme == "dpop" and challenge.params.get("error") == "use_dpop_nonce":
            return challenge
    return challenges[0] if challenges else Challenge("bearer")
