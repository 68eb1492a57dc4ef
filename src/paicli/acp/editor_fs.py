"""The editor's files (`fs/read_text_file`, `fs/write_text_file`), for the built-in file
tools (`tools.builtin.editor_files`) when the editor offered them in `initialize`: each as
it offered, the other to the disk. The editor's answer is hostile input: a text larger than
a file paicli would write is refused, and a failure is one line naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import RequestError
from acp.interfaces import Client
from acp.schema import ClientCapabilities

from paicli.tools.builtin.editor_files import EditorFiles

__all__ = ["ClientFiles", "client_files"]

# An editor's buffer larger than this is no text file the tools work on.
MAX_TEXT = 32 * 1024 * 1024
# An editor answers a read at once from memory; one that does not is not waited on.
READ_WAIT = 30.0


class ClientFiles:
    """`EditorFiles` through the editor `client`, for the session `session_id`."""

    def __init__(self, client: Client, session_id: str, *, reads: bool, writes: bool) -> None:
        self._client = client
        self._session_id = session_id
        self._reads = reads
        self._writes = writes

    @property
    def writes(self) -> bool:
        return self._writes

    async def read_text(self, path: Path) -> str | None:
        if not self._reads:
            return None
        try:
            async with asyncio.timeout(READ_WAIT):
                answer = await self._client.read_text_file(
                    session_id=self._session_id, path=str(path)
                )
        except (RequestError, ConnectionError, TimeoutError):
            return None  # a file the editor does not know, or no answer: the disk's
        content = answer.content
        if not isinstance(content, str) or len(content) > MAX_TEXT:
            return None
        return content

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self._client.write_text_file(
                session_id=self._session_id, path=str(path), content=text
            )
        except (RequestError, ConnectionError) as exc:
            raise OSError(f"the editor could not write it: {exc}") from None


def client_files(
    client: Client, session_id: str, capabilities: ClientCapabilities | None
) -> EditorFiles | None:
    """The editor's files as it offered them (None: it offered neither)."""
    fs = capabilities.fs if capabilities is not None else None
    reads = bool(fs and fs.read_text_file)
    writes = bool(fs and fs.write_text_file)
    if not (reads or writes):
        return None
    return ClientFiles(client, session_id, reads=reads, writes=writes)
