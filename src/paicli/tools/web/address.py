"""Which URLs and addresses web_fetch may reach. The URL is the model's choice and the pages
it reads may be an attacker's, so the rule is checked before anything is asked and again at
every hop and every name resolution:

- `http` or `https` only, a host, no user name or password in the URL;
- the address must be public: loopback, private (RFC 1918, unique local), link-local (the
  cloud metadata service at 169.254.169.254), multicast, reserved, unspecified and shared
  (CGNAT) addresses are refused, also inside IPv4-mapped, 6to4 and NAT64 IPv6 addresses,
  unless the user's config allows them (`[web] allow_private`: all, or some networks).

An address written in the URL is checked here; a name is checked where it is resolved
(`fetch.GuardedResolver`), so `localhost`, `2130706433` and a name that resolves to
10.0.0.1 are caught the same way.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from paicli.tools.errors import ToolError
from paicli.tools.web.settings import Network

__all__ = ["AddressPolicy", "UrlRefused", "WebUrl", "check_url", "web_host"]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_CHARS = 4000
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# A host inet_aton may read as an IPv4 address: numbers (decimal, octal, hex) and dots.
_NUMERIC = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?$")


class UrlRefused(ToolError, ValueError):
    """A URL web_fetch will not reach; the message says why in one line."""


@dataclass(frozen=True)
class AddressPolicy:
    """Which non-public addresses may be reached: all (`private` True), or those networks."""

    private: bool | tuple[Network, ...] = ()

    def refusal(self, address: IpAddress) -> str | None:
        """Why `address` may not be reached (its kind: "a loopback address"), or None."""
        if self.private is True:
            return None
        kind = _kind(address)
        if kind is None:
            return None
        if isinstance(self.private, tuple) and any(
            address.version == net.version and address in net for net in self.private
        ):
            return None
        return kind


@dataclass(frozen=True)
class WebUrl:
    """A URL that passed the check: the text to request, its scheme and (lower-case) host."""

    url: str
    scheme: str
    host: str


def check_url(url: object, policy: AddressPolicy) -> WebUrl:
    """`url` if web_fetch may request it, else `UrlRefused`."""
    if not isinstance(url, str) or not url.strip():
        raise UrlRefused("the url is missing")
    url = url.strip()
    shown = ascii(url[:200])
    if len(url) > MAX_URL_CHARS:
        raise UrlRefused(f"the url is longer than {MAX_URL_CHARS} characters")
    if any(ord(char) < 0x21 or ord(char) == 0x7F or char == "\\" for char in url):
        # A backslash is a slash to browsers and some parsers, not to others: a host read
        # two ways could pass a rule for one and connect to the other.
        raise UrlRefused(f"the url holds spaces, backslashes or control characters: {shown}")
    try:
        parts = urlsplit(url)
        port = parts.port
        host = (parts.hostname or "").lower()
    except ValueError:
        raise UrlRefused(f"not a valid URL: {shown}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UrlRefused(f"only http and https URLs can be fetched, not {shown}")
    if not host:
        raise UrlRefused(f"the URL has no host: {shown}")
    if "%" in host:
        raise UrlRefused(f"the URL's host must not be percent-encoded: {shown}")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused(f"the URL must not carry a user name or password: {shown}")
    if port == 0:
        raise UrlRefused(f"the URL has no usable port: {shown}")
    address = ip_literal(host)
    if address is not None and (kind := policy.refusal(address)) is not None:
        raise UrlRefused(f"{shown} points to {kind}{ALLOW_HINT}")
    return WebUrl(url, scheme, host)


ALLOW_HINT = (
    " (web_fetch reaches public addresses only; [web] allow_private in the config opens others)"
)


def web_host(url: object) -> str | None:
    """The lower-case host of an http(s) `url` without a trailing dot, as rules match it
    (None: no such URL)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    try:
        return host.encode("idna").decode("ascii")  # as rules spell it: xn--bcher-kva.example
    except UnicodeError:
        return host


def ip_literal(host: str) -> IpAddress | None:
    """The address a host written as an IP address stands for (None: a name), in any form
    the C library reads as one too (`2130706433`, `0x7f.1`, `127.1`)."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        pass
    if not _NUMERIC.match(host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _kind(address: IpAddress) -> str | None:
    """What kind of non-public address this is ("a loopback address"), or None: public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and (kind := _kind(embedded)) is not None:
            return kind
    checks = (
        ("a loopback address", address.is_loopback),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("an unspecified address", address.is_unspecified),
        ("a private address", address.is_private),
        ("a reserved address", address.is_reserved),
    )
    for kind, found in checks:
        if found:
            return kind
    return None if address.is_global else "a non-public address"
