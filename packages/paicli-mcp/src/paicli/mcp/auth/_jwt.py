"""Signed JWTs the client makes itself: the `private_key_jwt` client assertion (RFC 7523
§2.2). The signing is joserfc's (an optional dependency: `paicli-mcp[jose]`), imported only
when a configured private key is used; this module only picks the key type and the claims.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any

from ..errors import OAuthError

__all__ = ["ASSERTION_TYPE", "client_assertion"]

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# A client assertion is good for a few minutes: long enough for clock skew, too short to
# be worth stealing.
ASSERTION_LIFETIME = 300
_FAMILIES = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}


def client_assertion(
    client_id: str, private_key: str, algorithm: str | None, audience: Sequence[str]
) -> str:
    """A JWT saying "I am `client_id`" to the authorization server(s) named in `audience`,
    signed with `private_key` (PEM) by `algorithm` (default: from the key's type)."""
    key, chosen = _key(private_key, algorithm)
    from joserfc import jwt  # noqa: PLC0415 - the optional dependency, loaded by _key

    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": client_id,
        "sub": client_id,
        "aud": list(audience),
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
        "jti": secrets.token_urlsafe(16),
    }
    return jwt.encode({"alg": chosen, "typ": "JWT"}, claims, key, algorithms=[chosen])


def _key(pem: str, algorithm: str | None) -> tuple[Any, str]:
    try:
        from joserfc.jwk import ECKey, OKPKey, RSAKey  # noqa: PLC0415
    except ImportError:
        raise OAuthError(
            "a private_key_jwt client needs the joserfc package: pip install 'paicli-mcp[jose]'"
        ) from None
    kinds: dict[str, Any] = {"EC": ECKey, "RSA": RSAKey, "OKP": OKPKey}
    wanted = _FAMILIES.get((algorithm or "")[:2]) if algorithm else None
    for family, kind in kinds.items():
        if wanted not in (None, family):
            continue
        try:
            key = kind.import_key(pem)
        except Exception:  # the next key type may fit; none fitting is said below
            continue
        return key, algorithm or _default_algorithm(family, key)
    raise OAuthError(
        "the configured private key cannot be used"
        + (f" with {algorithm}" if algorithm else "")
        + " (expected a PEM EC, RSA or Ed25519 private key)"
    )


def _default_algorithm(family: str, key: Any) -> str:
    if family == "RSA":
        return "RS256"
    if family == "OKP":
        return "EdDSA"
    curve = getattr(key, "curve_name", "P-256")
    return {"P-384": "ES384", "P-521": "ES512", "secp256k1": "ES256K"}.get(curve, "ES256")
