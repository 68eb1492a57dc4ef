"""The `[web]` section of the user's config.toml: how far web_fetch may reach, and the search
provider web_search uses (none: the tool is not offered).

    [web]
    allow_private = false        # true, or a list of networks: ["10.1.0.0/16", "127.0.0.1/32"]
    max_bytes = 2_000_000        # the most of a body that is read
    timeout = 30                 # seconds for a whole fetch, redirects included

    [web.search]
    provider = "brave"           # or "searxng"
    api_key_env = "BRAVE_API_KEY"  # brave: the variable holding the key
    url = "https://searx.example/search"  # searxng: the instance's search endpoint

Only the user's own config is read here: a repository cannot open private addresses to the
model or point searches elsewhere. Anything wrong is a problem line and its default.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from paicli.user_config import UserConfig

__all__ = ["DEFAULT_MAX_BYTES", "SearchSettings", "WebSettings", "web_settings"]

DEFAULT_MAX_BYTES = 2_000_000  # a long documentation page is a few hundred kB of HTML
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
PROVIDERS = ("brave", "searxng")
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class SearchSettings:
    """A configured search provider: its kind, endpoint, and the variable with its key."""

    provider: str
    url: str
    api_key_env: str | None = None


@dataclass(frozen=True)
class WebSettings:
    """What web_fetch may reach and read. `private` True: every address; a tuple: those
    networks besides the public ones; empty: public addresses only."""

    private: bool | tuple[Network, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = DEFAULT_TIMEOUT
    max_redirects: int = MAX_REDIRECTS
    search: SearchSettings | None = None
    environ: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


def web_settings(config: UserConfig, environ: Mapping[str, str]) -> tuple[WebSettings, list[str]]:
    """The `[web]` section as settings, and one line per thing wrong with it."""
    where = f"{config.source or 'config.toml'}: web"
    raw = config.values.get("web")
    problems: list[str] = []
    if raw is None:
        return WebSettings(environ=environ), problems
    if not isinstance(raw, dict):
        return WebSettings(environ=environ), [f"{where} must be a table; ignored"]
    private = _private(raw.get("allow_private", False), f"{where}.allow_private", problems)
    max_bytes = _number(raw, "max_bytes", DEFAULT_MAX_BYTES, where, problems)
    timeout = _number(raw, "timeout", DEFAULT_TIMEOUT, where, problems)
    search = _search(raw.get("search"), f"{where}.search", problems, environ)
    for key in sorted(set(raw) - {"allow_private", "max_bytes", "timeout", "search"}):
        problems.append(f"{where}.{key} is not a known setting; ignored")
    settings = WebSettings(private, int(max_bytes), float(timeout), search=search, environ=environ)
    return settings, problems


def _private(value: object, where: str, problems: list[str]) -> bool | tuple[Network, ...]:
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        problems.append(f"{where} must be true, false or a list of networks; ignored")
        return ()
    networks: list[Network] = []
    for item in value:
        try:
            networks.append(ipaddress.ip_network(str(item), strict=False))
        except ValueError:
            problems.append(f"{where}: {str(item)[:60]!r} is not a network (10.0.0.0/8); ignored")
    return tuple(networks)


def _number(
    raw: Mapping[str, object], key: str, default: float, where: str, problems: list[str]
) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.append(f"{where}.{key} must be a positive number; using {default:g}")
        return default
    return value


def _search(
    raw: object, where: str, problems: list[str], environ: Mapping[str, str]
) -> SearchSettings | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(f"{where} must be a table; web_search is off")
        return None
    provider = raw.get("provider")
    if provider not in PROVIDERS:
        problems.append(
            f"{where}.provider must be one of {', '.join(PROVIDERS)}; web_search is off"
        )
        return None
    url = raw.get("url", BRAVE_URL if provider == "brave" else None)
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        problems.append(f"{where}.url must be the provider's http(s) URL; web_search is off")
        return None
    key_env = raw.get("api_key_env", "BRAVE_API_KEY" if provider == "brave" else None)
    if key_env is not None and not isinstance(key_env, str):
        problems.append(f"{where}.api_key_env must be a variable name; web_search is off")
        return None
    for key in sorted(set(raw) - {"provider", "url", "api_key_env"}):
        problems.append(f"{where}.{key} is not a known setting; ignored")
    if key_env and not environ.get(key_env):
        problems.append(f"{where}: {key_env} is not set; web_search is off")
        return None
    return SearchSettings(str(provider), url, key_env)
