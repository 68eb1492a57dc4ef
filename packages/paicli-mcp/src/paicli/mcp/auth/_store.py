"""Where tokens and client registrations live between connections.

A `TokenStore` keeps one JSON-compatible record per MCP server URL:
`{"tokens": {...} | null, "clients": {<issuer>: {...}}}`. Tokens name the issuer, token
endpoint, resource and client they were issued for, so they are only ever presented to
that server and refreshed at that issuer; registrations are keyed by issuer, so a server
that moves to another authorization server gets a new registration there. The store
interface knows nothing of that shape: an application can keep records in a keyring or
a file (paicli does), a test in memory.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

__all__ = ["ClientInfo", "MemoryTokenStore", "TokenStore", "Tokens"]

Record = dict[str, Any]


class TokenStore(Protocol):
    """Keeps one record per server URL (`key`); records are JSON-compatible dicts and
    hold secrets: a store keeps them private and never logs them."""

    async def load(self, key: str) -> Record | None: ...

    async def save(self, key: str, record: Record) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """A store that lasts as long as the process (the default)."""

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}

    async def load(self, key: str) -> Record | None:
        record = self._records.get(key)
        return copy.deepcopy(record) if record is not None else None

    async def save(self, key: str, record: Record) -> None:
        self._records[key] = copy.deepcopy(record)

    async def delete(self, key: str) -> None:
        self._records.pop(key, None)


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """A client identity at one authorization server."""

    client_id: str
    client_secret: str | None = None
    # none, client_secret_basic, client_secret_post, private_key_jwt
    auth_method: str = "none"
    redirect_uri: str | None = None
    # private_key_jwt: the PEM key and algorithm (from the configuration; never stored).
    private_key: str | None = None
    signing_algorithm: str | None = None
    # From the configuration: its secret is never stored either (the configuration holds
    # it, and rotating or unsetting it there must count).
    configured: bool = False

    def __repr__(self) -> str:
        return f"ClientInfo(client_id={self.client_id!r}, auth_method={self.auth_method!r})"

    @classmethod
    def from_record(cls, value: object) -> ClientInfo | None:
        if not isinstance(value, dict) or not isinstance(value.get("client_id"), str):
            return None
        secret = value.get("client_secret")
        method = value.get("auth_method")
        redirect = value.get("redirect_uri")
        return cls(
            value["client_id"],
            secret if isinstance(secret, str) else None,
            method if isinstance(method, str) else "none",
            redirect if isinstance(redirect, str) else None,
            configured=value.get("configured") is True,
        )

    def to_record(self) -> Record:
        record = asdict(self)
        del record["private_key"], record["signing_algorithm"]  # the config holds them
        if self.configured:
            record["client_secret"] = None  # and this
        return record


@dataclass(frozen=True, slots=True)
class Tokens:
    """Tokens issued for one resource by one authorization server."""

    access_token: str
    token_type: str
    issuer: str
    token_endpoint: str
    resource: str
    client_id: str
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None

    def __repr__(self) -> str:
        return f"Tokens(issuer={self.issuer!r}, scope={self.scope!r}, expires_at={self.expires_at})"

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() < seconds

    @classmethod
    def from_record(cls, value: object) -> Tokens | None:
        if not isinstance(value, dict):
            return None
        try:
            tokens = cls(**value)
        except TypeError:
            return None
        text = (tokens.access_token, tokens.token_type, tokens.issuer, tokens.token_endpoint)
        if not all(isinstance(item, str) for item in text):
            return None
        return tokens

    def to_record(self) -> Record:
        return asdict(self)
