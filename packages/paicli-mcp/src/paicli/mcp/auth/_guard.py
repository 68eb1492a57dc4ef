"""Which URLs taken from a server the OAuth flow may contact (every one is hostile input).

The rule, applied to protected resource metadata, issuers, endpoints and redirects alike:
- `https`, or `http` to a loopback host only (`localhost`, 127.0.0.0/8, ::1); no user info
  and no fragment;
- the address must be public, or on the same kind of network as the MCP server itself: a
  server on loopback may send us to loopback, a server on a private network (10/8,
  172.16/12, 192.168/16, fc00::/7, ...) to that kind of network; link-local addresses
  (169.254/16 with the cloud metadata service, fe80::/10) only for a link-local server.
Host names are checked where they are resolved (`GuardedResolver`), and the connection goes
to exactly the addresses checked, so a name cannot resolve one way for the check and
another way for the connection.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Literal
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from ..errors import OAuthError

__all__ = ["GuardedResolver", "UrlPolicy", "network_of"]

Network = Literal["public", "private", "loopback", "link-local"]
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def network_of(address: IpAddress) -> Network:
    """The kind of network `address` is on."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_global:
        return "public"
    return "private"  # RFC 1918, unique local, reserved, unspecified, multicast, CGNAT ...


def _ip_literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def _is_loopback_host(host: str) -> bool:
    address = _ip_literal(host)
    return host == "localhost" or (address is not None and network_of(address) == "loopback")


class UrlPolicy:
    """The URL rule for the OAuth traffic of one MCP server."""

    def __init__(self, server_url: str) -> None:
        host = (urlsplit(server_url).hostname or "").lower()
        self.server_host = host
        address = _ip_literal(host)
        self.allowed: set[Network] = {"public"}
        if address is not None:
            self.allowed.add(network_of(address))
        elif host == "localhost":
            self.allowed.add("loopback")
        self.server_resolved = address is not None or host == "localhost"

    def check(self, url: object, what: str) -> str:
        """`url` itself if the flow may use it, else an `OAuthError` naming `what`."""
        if not isinstance(url, str) or not url:
            raise OAuthError(f"{what} is missing or not a string")
        shown = ascii(url[:200])
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise OAuthError(f"{what} is not a valid URL: {shown}") from None
        host = (parts.hostname or "").lower()
        scheme = parts.scheme.lower()
        if scheme not in ("https", "http") or not host:
            raise OAuthError(f"{what} must be an https URL, not {shown}")
        if scheme == "http" and not _is_loopback_host(host):
            raise OAuthError(f"{what} must use https (http only on loopback): {shown}")
        if parts.username is not None or parts.password is not None or parts.fragment:
            raise OAuthError(f"{what} must not carry user info or a fragment: {shown}")
        if port == 0:
            raise OAuthError(f"{what} has no usable port: {shown}")
        address = _ip_literal(host)
        if address is not None and network_of(address) not in self.allowed:
            raise OAuthError(
                f"{what} points to a {network_of(address)} address, and the MCP server is "
                f"not on such a network: {shown}"
            )
        return url


class GuardedResolver(AbstractResolver):
    """Resolves names for the OAuth traffic, keeping only addresses the policy allows."""

    def __init__(self, policy: UrlPolicy) -> None:
        self._policy = policy
        self._inner = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        policy = self._policy
        if not policy.server_resolved and policy.server_host:
            # The MCP server's own network, learnt once: the first OAuth request resolves it.
            for entry in await self._inner.resolve(policy.server_host, 0, socket.AF_UNSPEC):
                address = _ip_literal(entry["host"])
                if address is not None:
                    policy.allowed.add(network_of(address))
            policy.server_resolved = True
        results = await self._inner.resolve(host, port, family)
        kept = [
            entry
            for entry in results
            if (address := _ip_literal(entry["host"])) is not None
            and network_of(address) in policy.allowed
        ]
        if not kept:
            raise OSError(f"{host} resolves only to addresses the OAuth flow may not contact")
        return kept

    async def close(self) -> None:
        await self._inner.close()
