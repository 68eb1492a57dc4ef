"""How a user configures OAuth for one HTTP server, and the seam for the browser step.

Everything is optional: with no client id the client registers itself (Client ID Metadata
Document when the server supports one and a URL is configured, else dynamic registration);
with no scopes it takes them from the server's challenge or metadata. Without a `redirect`
no user login can happen during a connection: a server that needs one raises
`LoginRequired`, and the application runs its login command (which supplies one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ._store import MemoryTokenStore, TokenStore

__all__ = ["OAuth", "Redirect"]


class Redirect(Protocol):
    """The user-agent step of the authorization code flow.

    `redirect_uri` is where the authorization server sends the browser back (registered
    with it); `authorize(url)` has the user visit `url` and returns the full URL the
    browser was redirected to (with `code`, `state`, and perhaps `iss` or `error`)."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str) -> str: ...


@dataclass(frozen=True, slots=True)
class OAuth:
    """OAuth settings for one HTTP server (`HttpServer(auth=OAuth(...))`)."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scopes: Sequence[str] | None = None
    client_name: str = "paicli"
    client_metadata_url: str | None = None
    # "authorization_code" (a user logs in through `redirect`), "client_credentials" (a
    # machine client: `client_id` with `client_secret` or `private_key` is the identity, no
    # user), "jwt_bearer" (workload identity, RFC 7523: `assertion` is a JWT the platform
    # issued to this workload, exchanged for an access token; errors are final) or
    # "enterprise_managed" (see `idp_token_endpoint`).
    grant: str = "authorization_code"
    # `private_key_jwt` client authentication: a PEM private key (EC, RSA or Ed25519) and,
    # optionally, the algorithm (default from the key: ES256, RS256, EdDSA, ...). Needs the
    # `jose` extra (joserfc).
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    # "jwt_bearer": the workload's JWT; "enterprise_managed": the user's ID token from the
    # enterprise identity provider. Either as is, or a function returning a fresh one
    # (sync or async), called each time tokens are needed.
    assertion: str | Callable[[], str | Awaitable[str]] | None = field(
        default=None, repr=False, compare=False
    )
    # "enterprise_managed" (SEP-990): the identity provider's token endpoint, where the ID
    # token is exchanged (RFC 8693) for an ID-JAG that the MCP server's authorization
    # server takes in a jwt-bearer grant; and the client id paicli has at that provider.
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    # DPoP (RFC 9449) token binding: None uses it when the authorization server offers ES256
    # proofs, True insists (an error if it does not), False never sends proofs. Needs the
    # `jose` extra (joserfc).
    dpop: bool | None = None
    redirect: Redirect | None = field(default=None, compare=False)
    store: TokenStore = field(default_factory=MemoryTokenStore, compare=False)
