"""A keyring backend for tests: a real `keyring.backend.KeyringBackend` (selected the way a
user selects any backend, with `PYTHON_KEYRING_BACKEND=tests.keyring_backend.FileKeyring`)
that keeps its entries in the JSON file `PAICLI_TEST_KEYRING` names, so a test can see what
a paicli process stored in "the system keyring" of a machine that has none."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1

    @property
    def _path(self) -> Path:
        return Path(os.environ["PAICLI_TEST_KEYRING"])

    def _entries(self) -> dict[str, str]:
        try:
            entries: dict[str, str] = json.loads(self._path.read_text())
        except FileNotFoundError:
            return {}
        return entries

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._entries()
        entries[f"{service}\n{username}"] = password
        self._path.write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._entries()
        if entries.pop(f"{service}\n{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path.write_text(json.dumps(entries))
