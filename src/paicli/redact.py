"""Take secrets out of data before it is written anywhere (the audit log, debug output).

Three nets, applied to every string: the exact secret values paicli knows (server env and
header values, the LLM API key, secret-named variables of its environment), the values of keys
that look secret, and the shapes common keys and tokens have in free text. What is caught
becomes `[REDACTED]`; the structure stays. Tool results on their way to the model pass only
the first net (`redact_known`): the shapes would also blank out a file the model must edit.
One `Redactor` is shared by a run (audit, tool results, the screen) and `learn`s the secrets
that turn up later (a server's config, a new model key), so every surface knows them at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

import orjson
from ahocorasick_rs import AhoCorasick

from paicli.secret_names import looks_secret

__all__ = ["REDACTED", "Redactor", "environment_secrets", "is_secret_key", "is_secret_variable"]

REDACTED = "[REDACTED]"

_Data = TypeVar("_Data")

# Shorter "secrets" (a port, "true", a user name) would also blank out ordinary text.
_MIN_SECRET_LENGTH = 6
# Variables whose names the key rule takes for secrets, but which the shell sets to folders.
_NOT_SECRET_VARIABLES = frozenset({"PWD", "OLDPWD"})
# A variable so named holds where a secret is, not the secret (`DB_PASSWORD_FILE`, `SSH_AUTH_SOCK`).
_LOCATION_SUFFIXES = ("_FILE", "_DIR", "_PATH", "_SOCK")
# Parts of names that the secret-name rule flags but that name no secret where the desktop,
# terminals, editors and git use them: session ids and buses (`XDG_SESSION_TYPE`), author names
# (`GIT_AUTHOR_NAME`, `XAUTHORITY`), CA bundles (`NODE_EXTRA_CA_CERTS`), askpass helpers. A
# secret word besides them still counts (`AWS_SESSION_TOKEN`).
_HARMLESS_PARTS = ("SESSION", "AUTHOR", "CERT", "ASKPASS")
# An unquoted value after a secret key shorter than this is a word of prose.
_MIN_BARE_VALUE = 4
# A variable's value is taken as a secret only from this length: `API_KEY=dummy` or
# `SKIP_TOKEN=1` in the environment must not blank out ordinary words in every result.
_MIN_ENVIRONMENT_SECRET_LENGTH = 8

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

# Header names whose value is the secret; how much of what follows is the value depends on
# the context (see `_header_value_end`). The quote may be escaped (JSON inside a string).
_HEADER_NAME = re.compile(
    r"""(?ix)
    \b(?P<key>(?:proxy-)?authorization|set-cookie|cookie)
    (?P<sep>(?:\\?["'])?[ \t]*[:=][ \t]*)
    """
)
# Authorization schemes kept in front of a redacted credential ("Bearer [REDACTED]").
_AUTH_SCHEMES = frozenset(
    {"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey", "aws4-hmac-sha256"}
)
# `key=value` / `key: value` / `"key": "value"`, in query strings, env files, JSON text (also
# JSON inside a JSON string, where the quotes are escaped: `{\"api_key\": \"...\"}`).
_PAIR = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9_.-])
    (?P<key>[A-Za-z0-9_.-]*(?:token|secret|key|password|passwd|pwd))  # checked by is_secret_key
    (?P<sep>(?:\\?["'])?\s*[:=]\s*)
    (?P<value>\\"(?:[^"\\\r\n]|\\[^"])*\\"|"[^"\r\n]*"|'[^'\r\n]*'|[^\s&,;"'<>\\]+)
    """
)
# Query parameters that carry a signature or key under a name too plain to be a secret key
# everywhere (`key` is also a dict key, a sort key, a cache key...).
_QUERY_SECRET = re.compile(
    r"(?i)(?P<head>[?&](?:key|sig|signature|x-amz-signature|x-goog-signature)=)"
    r"(?P<value>[^&#\s\"'<>\\]+)"
)
# `curl -u user:password` (also `--user=user:password`); the user name is kept.
_CURL_USER = re.compile(
    r"""(?P<head>\bcurl\b[^\n]*?\s(?:-u[ \t]*|--user[ \t=]+)["']?[^\s:"']*:)(?P<pw>[^\s"']+)"""
)
_PEM_PRIVATE_KEY = re.compile(
    r"(?P<begin>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)"
    r".*?(?P<end>-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
# `[{"name": "Authorization", "value": "..."}]`: a header list (HAR files, some MCP configs).
_NAMED_VALUE = re.compile(
    r"""(?P<head>"name"\s*:\s*"(?P<name>[^"\\]+)"\s*,\s*"value"\s*:\s*")(?P<value>[^"\\]*)\""""
)
_SCHEME_TOKEN = re.compile(
    r"\b(?P<scheme>Bearer|Basic|bearer|basic)\s+(?P<token>[A-Za-z0-9._~+/=-]{8,})"
)
_URL_PASSWORD = re.compile(r"(?i)\b(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@")
_SHAPES = re.compile(
    r"""(?x)
      # (each shape's prefix is also in _TRIGGERS, below)
      \bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}           # OpenAI, Anthropic
    | \bgh[pousr]_[A-Za-z0-9]{20,}                      # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{20,}                    # GitHub fine-grained tokens
    | \bgl(?:pat|dt|ptt|rt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_-]{20,}  # GitLab tokens
    | \bxox[abposre]-[A-Za-z0-9-]{10,}                  # Slack tokens
    | \bxapp-[0-9]-[A-Za-z0-9-]{10,}                    # Slack app-level tokens
    | \b(?:https://)?hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}  # Slack webhooks
    | \b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}        # Stripe secret and restricted keys
    | \bwhsec_[A-Za-z0-9+/=]{16,}                       # Stripe webhook secrets
    | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b                     # AWS access key ids
    | \bAIza[0-9A-Za-z_-]{35}                           # Google API keys
    | \bya29\.[0-9A-Za-z_-]{20,}                        # Google OAuth access tokens
    | \bGOCSPX-[0-9A-Za-z_-]{20,}                       # Google OAuth client secrets
    | \bnpm_[A-Za-z0-9]{36}\b                           # npm tokens
    | \bpypi-[A-Za-z0-9_-]{50,}                         # PyPI tokens
    | \bhf_[A-Za-z0-9]{30,}                             # Hugging Face tokens
    | \beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*  # JWTs
    """
)
# An AWS secret access key has no prefix of its own: 40 characters of base64. It is caught
# near its access key id (the two are written together: credentials files, CSV exports,
# `aws configure list`, env dumps), where a 40-character run of that alphabet is no accident.
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_NEARBY = 300  # characters either side of the key id


# Every net above needs one of these in the text (lowercased; a mapping's: its JSON): a
# secret key or header name, an auth scheme, `curl`, a URL, a query signature or a token's
# prefix. Text without any of them is left as it is, without the nets' cost (message tracing
# runs every message through `redact_quickly`). Keep this in step with the nets. They are
# searched for all at once (Aho-Corasick: half a microsecond for a small message, where a
# regular expression of the same words takes several).
_TRIGGERS = (
    *("authoriz", "akia", "asia", "aiza", "bearer", "basic", "cookie", "curl", "eyj"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "gocspx-", "hooks.", "hf_"),
    *("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glft-", "glimt-", "glagent-"),
    *("key", "npm_", "passw", "pwd", "private", "pypi-", "rk_", "secret", "sig", "sk-"),
    *("sk_", "token", "whsec_", "xox", "xapp-", "ya29.", "://"),
)
_triggers: AhoCorasick | None = None


def _may_hold_secret(text: str) -> bool:
    global _triggers  # noqa: PLW0603 - built once, on first use
    if _triggers is None:
        _triggers = AhoCorasick(list(_TRIGGERS))
    return bool(_triggers.find_matches_as_indexes(text.lower()))


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
        self._secrets: list[str] = []
        self.learn(secrets)

    def learn(self, secrets: Iterable[str]) -> None:
        """Also redact `secrets` from now on, everywhere this redactor is used."""
        known = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(known.union(self._secrets), key=len, reverse=True)
        # As they appear in JSON text (`redact_quickly` looks for them there).
        self._encoded = tuple({orjson.dumps(s)[1:-1] for s in self._secrets})

    def with_secrets(self, secrets: Iterable[str]) -> Redactor:
        """A new redactor that knows this one's secrets and `secrets` too."""
        return Redactor([*self._secrets, *secrets])

    def redact_known(self, text: str) -> str:
        """`text` with the known secret values replaced, and nothing else touched."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def redact_known_in(self, value: _Data) -> _Data:
        """JSON-like `value` (a model request's messages) with the known secret values replaced
        in every string, and nothing else touched; `value` itself, uncopied, when its JSON text
        holds none of them (one scan, as in `redact_quickly`)."""
        if not self._encoded:
            return value
        text = orjson.dumps(value, default=repr)
        if not any(secret in text for secret in self._encoded):
            return value
        return cast("_Data", self._known_in(value))

    def _known_in(self, value: object) -> object:
        if isinstance(value, str):
            return self.redact_known(value)
        if isinstance(value, Mapping):
            return {key: self._known_in(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._known_in(item) for item in value]
        return value

    def redact_quickly(self, value: object) -> object:
        """What `redact` returns, except that `value` itself comes back, uncopied, when its
        JSON text holds nothing any net could catch."""
        # dict first: an ABC check (Mapping) costs more than the rest of a small message.
        if not isinstance(value, dict | str | list | tuple) and not isinstance(value, Mapping):
            return value
        text = orjson.dumps(value, default=repr)
        if not _may_hold_secret(text.decode("utf-8", "replace")) and not any(
            secret in text for secret in self._encoded
        ):
            return value
        return self.redact(value)

    def redact(self, value: object) -> object:
        """A redacted copy of JSON-like data: mappings, lists and tuples are rebuilt, strings
        scrubbed, values under secret-looking keys replaced; other values are kept."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            named = value.get("name")
            if isinstance(named, str) and is_secret_key(named) and _is_filled(value.get("value")):
                # A header list entry: {"name": "Authorization", "value": "Bearer ..."}.
                value = {**value, "value": REDACTED}
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
        text = self.redact_known(text)
        text = _redact_aws_secrets(text)
        text = _PEM_PRIVATE_KEY.sub(lambda m: f"{m['begin']}{REDACTED}{m['end']}", text)
        text = _redact_headers(text)
        text = _NAMED_VALUE.sub(_replace_named_value, text)
        text = _PAIR.sub(_replace_pair, text)
        text = _QUERY_SECRET.sub(lambda m: f"{m['head']}{REDACTED}", text)
        text = _CURL_USER.sub(lambda m: f"{m['head']}{REDACTED}", text)
        text = _SCHEME_TOKEN.sub(_replace_scheme_token, text)
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{REDACTED}@", text)
        return _SHAPES.sub(REDACTED, text)


def is_secret_variable(name: str) -> bool:
    """Whether the variable `name` holds a secret: the one secret-name rule
    (`secret_names.py`: `PGPASSWORD`, `SENTRY_DSN`, `DATABASE_URL`, ...) or a secret key
    name, less the locations and the names the desktop and git use (`_HARMLESS_PARTS`)."""
    upper = name.upper()
    if upper in _NOT_SECRET_VARIABLES or upper.endswith(_LOCATION_SUFFIXES):
        return False
    for part in _HARMLESS_PARTS:
        upper = upper.replace(part, "_")
    return looks_secret(upper) or is_secret_key(upper)


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of `environ` kept under secret names (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
    `PGPASSWORD`), long enough not to be ordinary words."""
    return [
        value
        for name, value in environ.items()
        if is_secret_variable(name) and len(value) >= _MIN_ENVIRONMENT_SECRET_LENGTH
    ]


def _redact_aws_secrets(text: str) -> str:
    spans = [m.span() for m in _AWS_KEY_ID.finditer(text)]
    if not spans:
        return text

    def near_an_id(match: re.Match[str]) -> str:
        at, end = match.span()
        near = any(start - _AWS_NEARBY <= end and at <= stop + _AWS_NEARBY for start, stop in spans)
        # A hex digest or a path is 40 characters of that alphabet too; a key mixes cases.
        value = match[0]
        mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
        return REDACTED if near and mixed else value

    return _AWS_SECRET.sub(near_an_id, text)


def _is_filled(item: object) -> bool:
    # `"token": null` or `"password": false` says nothing secret, and keeps its meaning.
    return item is not None and not isinstance(item, bool) and item != ""


def _redact_headers(text: str) -> str:
    out: list[str] = []
    done = 0
    for match in _HEADER_NAME.finditer(text):
        start = match.end()
        if match.start() < done or start >= len(text) or text[start] in "\r\n":
            continue
        end, keep = _header_value_end(text, match.start(), start)
        value = text[start + keep : end].strip(" \t\"'")
        # Already hidden: redacted, or masked (`Authorization: ***` in a config listing).
        if value == REDACTED or (value and set(value) <= {"*"}) or value.startswith("***"):
            continue
        out.append(text[done : start + keep])
        out.append(REDACTED)
        done = end
    out.append(text[done:])
    return "".join(out)


def _header_value_end(text: str, name_at: int, start: int) -> tuple[int, int]:
    """Where the secret value after a header name ends, and how many of its first characters
    stay (a quote, an auth scheme). A quoted value ends at its quote; a header inside a quoted
    argument (`-H "Authorization: Bearer x"`) at that quote; a header starting its line (an
    HTTP dump) at the line's end; one in the middle of a command line after its credential,
    so the rest of the command stays readable."""
    line_end = len(text)
    for newline in "\r\n":
        found = text.find(newline, start)
        line_end = min(line_end, found) if found != -1 else line_end
    line_start = max(text.rfind("\n", 0, name_at), text.rfind("\r", 0, name_at)) + 1
    before = text[line_start:name_at]
    for quote in ('\\"', '"', "'"):
        if text.startswith(quote, start):
            close = text.find(quote, start + len(quote), line_end)
            if close != -1:
                return close, len(quote)
    for quote in ('\\"', '"', "'"):
        if before.endswith(quote):
            close = text.find(quote, start, line_end)
            return (close if close != -1 else line_end), 0
    if not before.strip():
        return line_end, 0
    words = re.match(r"(?P<first>\S+)(?P<gap>[ \t]+)(?P<second>\S+)", text[start:line_end])
    if words and words["first"].lower() in _AUTH_SCHEMES:
        return start + words.end(), len(words["first"]) + len(words["gap"])
    first = re.match(r"\S+", text[start:line_end])
    return start + (first.end() if first else 0), 0


def _replace_named_value(match: re.Match[str]) -> str:
    if not is_secret_key(match["name"]) or not match["value"] or match["value"] == REDACTED:
        return match[0]
    return f'{match["head"]}{REDACTED}"'


def _replace_value(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith('\\"') and len(value) >= 4:
        value = f'\\"{REDACTED}\\"'
    elif value[:1] in "\"'" and len(value) >= 2:
        value = f"{value[0]}{REDACTED}{value[-1]}"
    else:
        value = REDACTED
    return f"{match['key']}{match['sep']}{value}"


def _replace_pair(match: re.Match[str]) -> str:
    value = match["value"].strip("\\\"'")
    # `API_KEY=${MY_KEY}` names where a secret comes from; it is not one. A bare word of
    # three letters or fewer after "secret:" is prose ("the secret: a ..."), not a value.
    quoted = match["value"][:1] in "\"'\\"
    if (
        not is_secret_key(match["key"])
        or value in (REDACTED, "")
        or value.startswith("$")
        or (not quoted and len(value) < _MIN_BARE_VALUE)
    ):
        return match[0]
    return _replace_value(match)


def _replace_scheme_token(match: re.Match[str]) -> str:
    if not _looks_like_credential(match["token"]):
        return match[0]
    return f"{match['scheme']} {REDACTED}"
