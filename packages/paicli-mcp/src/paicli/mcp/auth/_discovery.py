"""Finding the authorization server: protected resource metadata (RFC 9728), then the
server's metadata (RFC 8414 or OpenID discovery), with the checks that keep a hostile or
mixed-up server from steering the flow.

- PRM is tried at the URL from the challenge, then path-aware then root well-known URLs;
  its `resource` must designate this MCP server (same origin, a path prefix), and is then
  sent as the resource indicator exactly as published.
- AS metadata is tried at the path-aware well-known URLs for the issuer string taken
  verbatim; the document's `issuer` must equal it exactly, and it must offer PKCE S256.
- With no PRM at all (a 2025-03-26 server), the issuer is the MCP server's origin, its
  metadata at the root, and without metadata the default `/authorize`, `/token`,
  `/register` endpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .._http_exchange import origin_of
from ..errors import OAuthError
from ._fetch import OAuthHttp

__all__ = [
    "ResourceMetadata",
    "ServerMetadata",
    "discover_resource",
    "discover_server",
    "legacy_server",
]


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """What the MCP server publishes about itself; `found` is False for a server without
    any (then `resource` is the server URL and the issuer its origin)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    found: bool


@dataclass(frozen=True, slots=True)
class ServerMetadata:
    """The authorization server's metadata, validated; `document` keeps the rest."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] = ()
    token_endpoint_auth_methods: tuple[str, ...] = ()
    client_id_metadata_document_supported: bool = False
    iss_parameter_supported: bool = False
    # RFC 9449: the algorithms it takes DPoP proofs in (empty: it does not bind tokens).
    dpop_algorithms: tuple[str, ...] = ()
    document: dict[str, Any] = field(default_factory=dict)


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(item for item in value if isinstance(item, str))


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def _origin_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether a PRM `resource` designates the server at `server_url`: same origin, and its
    path is the server's path or a parent of it (segment-wise)."""
    try:
        if origin_of(resource) != origin_of(server_url) or urlsplit(resource).fragment:
            return False
    except ValueError:
        return False
    mine, theirs = _path(server_url), _path(resource)
    return theirs in ("", mine) or mine.startswith(theirs + "/")


async def discover_resource(
    http: OAuthHttp, server_url: str, metadata_url: str | None
) -> ResourceMetadata:
    """The server's protected resource metadata, or a `found=False` stand-in."""
    origin, path = _origin_url(server_url), _path(server_url)
    candidates = [metadata_url] if metadata_url else []
    if path:
        candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    for url in candidates:
        reply = await http.get(url, "the protected resource metadata")
        if reply.status != 200 or reply.json is None:
            continue
        document = reply.json
        resource = document.get("resource")
        servers = _strings(document.get("authorization_servers"))
        if not isinstance(resource, str) or not servers:
            continue
        if not resource_matches(resource, server_url):
            raise OAuthError(
                f"{http.label}: the protected resource metadata names resource "
                f"{resource[:200]!a}, not this server ({server_url}); refused"
            )
        for issuer in servers:
            http.policy.check(issuer, "an authorization server in the resource metadata")
        scopes = _strings(document.get("scopes_supported"))
        return ResourceMetadata(resource, servers, scopes, found=True)
    return ResourceMetadata(server_url, (origin,), None, found=False)


def _metadata_urls(issuer: str, *, legacy: bool) -> list[str]:
    origin, path = _origin_url(issuer), _path(issuer)
    if legacy:
        return [f"{origin}/.well-known/oauth-authorization-server"]
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server",
        f"{origin}/.well-known/openid-configuration",
    ]


async def discover_server(
    http: OAuthHttp, issuer: str, *, legacy: bool = False
) -> ServerMetadata | None:
    """The validated metadata of the authorization server `issuer`, or None if it publishes
    none at the well-known URLs."""
    for url in _metadata_urls(issuer, legacy=legacy):
        reply = await http.get(url, "the authorization server metadata")
        if reply.status == 200 and reply.json is not None:
            return _validated(http, issuer, reply.json)
    return None


def _validated(http: OAuthHttp, issuer: str, document: dict[str, Any]) -> ServerMetadata:
    found = document.get("issuer")
    if found != issuer:
        # RFC 8414 §3.3: a document for another issuer may be an attacker's; none of its
        # endpoints are used.
        shown = ascii(found[:200]) if isinstance(found, str) else "none"
        raise OAuthError(
            f"{http.label}: the metadata of authorization server {issuer} names issuer "
            f"{shown}; refused"
        )
    methods = _strings(document.get("code_challenge_methods_supported")) or ()
    if "S256" not in methods:
        raise OAuthError(
            f"{http.label}: authorization server {issuer} does not offer PKCE with S256; refused"
        )
    what = f"an endpoint of authorization server {issuer}"
    registration = document.get("registration_endpoint")
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=http.policy.check(document.get("authorization_endpoint"), what),
        token_endpoint=http.policy.check(document.get("token_endpoint"), what),
        registration_endpoint=http.policy.check(registration, what) if registration else None,
        scopes_supported=_strings(document.get("scopes_supported")) or (),
        token_endpoint_auth_methods=_strings(document.get("token_endpoint_auth_methods_supported"))
        or ("client_secret_basic",),
        client_id_metadata_document_supported=(
            document.get("client_id_metadata_document_supported") is True
        ),
        iss_parameter_supported=document.get("authorization_response_iss_parameter_supported")
        is True,
        dpop_algorithms=_strings(document.get("dpop_signing_alg_values_supported")) or (),
        document=document,
    )


def legacy_server(issuer: str) -> ServerMetadata:
    """The default endpoints of a 2025-03-26 server that publishes no metadata."""
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=f"{issuer}/authorize",
        token_endpoint=f"{issuer}/token",
        registration_endpoint=f"{issuer}/register",
        token_endpoint_auth_methods=("client_secret_basic", "client_secret_post", "none"),
    )


def pick_issuer(servers: Sequence[str]) -> str:
    """The authorization server to use (RFC 9728 §7.6 leaves the choice to the client)."""
    return servers[0]
