"""Take secrets out of data before it is written anywhere (the audit log, debug output).

Three nets, applied to every string: the exact secret values paicli knows (server env and
header values, the LLM API key), the values of keys that look secret, and the shapes common
keys and tokens have in free text. What is caught becomes `[REDACTED]`; the structure stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["REDACTED", "Redactor", "is_secret_key"]

REDACTED = "[REDACTED]"

# Shorter "secrets" (a port, "true", a user name) would also blank out ordinary text.
_MIN_SECRET_LENGTH = 6

_SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "x_api_key",
        "api_key",
        "apikey",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "private_key",
    }
)
_SECRET_SUFFIXES = ("_token", "_secret", "_key", "_password", "_apikey")

# Headers whose whole value is the secret (it may contain spaces: "Bearer abc", cookies).
_HEADER_VALUE = re.compile(
    r"""(?ix)
    \b(?P<key>(?:proxy-)?authorization|set-cookie|cookie)
    (?P<sep>["']?\s*[:=]\s*)
    (?P<value>"[^"\r\n]*"|'[^'\r\n]*'|[^\r\n]+)
    """
)
# `key=value` / `key: value` / `"key": "value"`, in query strings, env files, JSON text.
_PAIR = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9_.-])
    (?P<key>[A-Za-z0-9_.-]*(?:token|secret|key|password|passwd|pwd))  # checked by is_secret_key
    (?P<sep>["']?\s*[:=]\s*)
    (?P<value>"[^"\r\n]*"|'[^'\r\n]*'|[^\s&,;"'<>]+)
    """
)
_SCHEME_TOKEN = re.compile(
    r"\b(?P<scheme>Bearer|Basic|bearer|basic)\s+(?P<token>[A-Za-z0-9._~+/=-]{8,})"
)
_URL_PASSWORD = re.compile(r"(?i)\b(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@")
_SHAPES = re.compile(
    r"""(?x)
      \bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}           # OpenAI, Anthropic
    | \bgh[pousr]_[A-Za-z0-9]{20,}                      # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{20,}                    # GitHub fine-grained tokens
    | \bxox[abposr]-[A-Za-z0-9-]{10,}                   # Slack
    | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b                     # AWS access key ids
    | \bAIza[0-9A-Za-z_-]{35}                           # Google API keys
    | \beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*  # JWTs
    """
)


def is_secret_key(key: str) -> bool:
    """Whether a mapping key or header name names a secret (`Authorization`, `api-key`,
    `GITHUB_TOKEN`, `client_secret`, ...); case and `-`/`_` do not matter."""
    normal = key.strip().lower().replace("-", "_")
    return normal in _SECRET_KEYS or normal.endswith(_SECRET_SUFFIXES)


def _looks_like_credential(token: str) -> bool:
    # "Basic usage" and "Bearer tokens" are prose; a credential has digits, symbols or a
    # capital letter after its first character.
    return any(c.isdigit() or c in "+/=._~-" for c in token) or any(c.isupper() for c in token[1:])


class Redactor:
    """Replaces known secret values and secret-looking data with `[REDACTED]`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        known = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(known, key=len, reverse=True)

    def with_secrets(self, secrets: Iterable[str]) -> Redactor:
        """A redactor that also knows `secrets` (servers connect after start-up)."""
        return Redactor([*self._secrets, *secrets])

    def redact(self, value: object) -> object:
        """A redacted copy of JSON-like data: mappings, lists and tuples are rebuilt, strings
        scrubbed, values under secret-looking keys replaced; other values are kept."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            return {key: self._redact_entry(key, item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact(item) for item in value]
        return value

    def _redact_entry(self, key: object, item: object) -> object:
        if isinstance(key, str) and is_secret_key(key) and _is_filled(item):
            return REDACTED
        return self.redact(item)

    def redact_text(self, text: str) -> str:
        """`text` with known secrets, credential shapes and secret `key=value` pairs replaced."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _HEADER_VALUE.sub(_replace_value, text)
        text = _PAIR.sub(_replace_pair, text)
        text = _SCHEME_TOKEN.sub(_replace_scheme_token, text)
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{REDACTED}@", text)
        return _SHAPES.sub(REDACTED, text)


def _is_filled(item: object) -> bool:
    # `"token": null` or `"password": false` says nothing secret, and keeps its meaning.
    return item is not None and not isinstance(item, bool) and item != ""


def _replace_value(match: re.Match[str]) -> str:
    value = match["value"]
    if value[:1] in "\"'" and len(value) >= 2:
        value = f"{value[0]}{REDACTED}{value[-1]}"
    else:
        value = REDACTED
    return f"{match['key']}{match['sep']}{value}"


def _replace_pair(match: re.Match[str]) -> str:
    if not is_secret_key(match["key"]) or match["value"].strip("\"'") == REDACTED:
        return match[0]
    return _replace_value(match)


def _replace_scheme_token(match: re.Match[str]) -> str:
    if not _looks_like_credential(match["token"]):
        return match[0]
    return f"{match['scheme']} {REDACTED}"
