"""Which client identity to present to an authorization server, registering if needed.

In the order the specification recommends: a configured client id (and secret); a Client
ID Metadata Document URL when the server supports those; a registration stored earlier
for this very issuer (and redirect URI); dynamic client registration (RFC 7591, with
`application_type`). Registrations are never carried from one issuer to another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import OAuthError
from ._config import OAuth
from ._discovery import ServerMetadata
from ._fetch import OAuthHttp
from ._store import ClientInfo

__all__ = ["configured_client", "metadata_document_client", "register"]

# What we ask a server to let us use at its token endpoint, most preferred first: a CLI
# cannot keep a secret any better than a public client, so `none` when offered.
METHODS = ("none", "client_secret_basic", "client_secret_post")


def configured_client(oauth: OAuth, meta: ServerMetadata) -> ClientInfo | None:
    """The client id (and secret) from the configuration, if any."""
    if oauth.client_id is None:
        return None
    if oauth.private_key is not None:
        return ClientInfo(
            oauth.client_id,
            None,
            "private_key_jwt",
            private_key=oauth.private_key,
            signing_algorithm=oauth.signing_algorithm,
            configured=True,
        )
    if oauth.client_secret is None:
        return ClientInfo(oauth.client_id, None, "none", configured=True)
    offered = meta.token_endpoint_auth_methods
    method = (
        "client_secret_post"
        if "client_secret_basic" not in offered and ("client_secret_post" in offered)
        else "client_secret_basic"
    )
    return ClientInfo(oauth.client_id, oauth.client_secret, method, configured=True)


def configured_again(oauth: OAuth, meta: ServerMetadata, stored: ClientInfo) -> ClientInfo | None:
    """A stored client the configuration names (its secret and key were never stored),
    with what the configuration holds now, and the method it was used with; None when the
    configuration no longer names it."""
    current = configured_client(oauth, meta)
    if current is None or current.client_id != stored.client_id:
        return None
    if current.auth_method in ("none", "private_key_jwt"):
        return current
    return replace(current, auth_method=stored.auth_method)


def metadata_document_client(oauth: OAuth, meta: ServerMetadata) -> ClientInfo | None:
    """The Client ID Metadata Document identity, when both sides support it."""
    if oauth.client_metadata_url is None or not meta.client_id_metadata_document_supported:
        return None
    return ClientInfo(oauth.client_metadata_url, None, "none")


def _preferred(offered: Sequence[str]) -> str:
    return next((m for m in METHODS if m in offered), "client_secret_basic")


async def register(
    http: OAuthHttp,
    oauth: OAuth,
    meta: ServerMetadata,
    *,
    redirect_uri: str | None,
    scope: str | None,
    grant_types: Sequence[str] = ("authorization_code", "refresh_token"),
) -> ClientInfo:
    """Register this client with `meta`'s issuer (RFC 7591)."""
    if meta.registration_endpoint is None:
        raise OAuthError(
            f"{http.label}: authorization server {meta.issuer} offers no client "
            "registration; configure a client id ('oauth': {'clientId': ...})"
        )
    method = _preferred(meta.token_endpoint_auth_methods)
    request: dict[str, object] = {
        "client_name": oauth.client_name,
        "grant_types": list(grant_types),
        "token_endpoint_auth_method": method,
        # A CLI on the user's machine: "native" (required by 2026-07-28, harmless before).
        "application_type": "native",
    }
    if redirect_uri is not None:
        request["redirect_uris"] = [redirect_uri]
        request["response_types"] = ["code"]
    if scope:
        request["scope"] = scope
    reply = await http.post(meta.registration_endpoint, "client registration", json=request)
    body = reply.json or {}
    client_id = body.get("client_id")
    if reply.status not in (200, 201) or not isinstance(client_id, str) or not client_id:
        error = body.get("error")
        shown = ascii(error[:100]) if isinstance(error, str) else f"HTTP {reply.status}"
        raise OAuthError(f"{http.label}: client registration at {meta.issuer} failed: {shown}")
    secret = body.get("client_secret")
    granted = body.get("token_endpoint_auth_method")
    return ClientInfo(
        client_id,
        secret if isinstance(secret, str) else None,
        granted if isinstance(granted, str) else method,
        redirect_uri,
    )
