"""DPoP (RFC 9449): access tokens bound to a key only this client holds.

A `DpopKey` is an ES256 key made for one server's tokens and kept with them in the token
store (a stolen token is useless without it). Every token request and every request to the
MCP server carries a fresh proof: a JWT signed by the key, naming the HTTP method and URL
(without query or fragment), the time, a unique id, the server's latest nonce if it gave
one, and, towards the MCP server, the hash of the access token. joserfc signs (the `jose`
extra); this module only fills in the claims.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import OAuthError

__all__ = ["DPOP_ALGORITHM", "DpopKey"]

DPOP_ALGORITHM = "ES256"


class DpopKey:
    """One DPoP key pair. Make with `DpopKey.generate()`, or `from_record` a stored one."""

    def __init__(self, key: Any) -> None:
        self._key = key
        self._public = key.as_dict(private=False)

    @classmethod
    def generate(cls) -> DpopKey:
        return cls(_ec_key_class().generate_key("P-256", private=True))

    @classmethod
    def from_record(cls, value: object) -> DpopKey | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(_ec_key_class().import_key(value))
        except OAuthError:
            raise
        except Exception:  # a damaged record: a new key (and a new login) replaces it
            return None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = self._key.as_dict(private=True)
        return record

    def __repr__(self) -> str:
        return "DpopKey(ES256)"

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A fresh proof for one request (`method` to `url`)."""
        from joserfc import jwt  # noqa: PLC0415 - loaded by _ec_key_class already

        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method,
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": DPOP_ALGORITHM, "jwk": self._public}
        return jwt.encode(header, claims, self._key, algorithms=[DPOP_ALGORITHM])


def _ec_key_class() -> Any:
    try:
        from joserfc.jwk import ECKey  # noqa: PLC0415
    except ImportError:
        raise OAuthError(
            "this authorization server binds tokens with DPoP, which needs the joserfc "
            "package: pip install 'paicli-mcp[jose]'"
        ) from None
    return ECKey
