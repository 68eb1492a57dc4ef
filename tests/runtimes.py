"""A paicli runtime for in-memory agent tests: the scripted model through its HTTP client, the
servers through a connector (default: our test servers in this process), projects trusted."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from paicli.permissions.approval import Approver
from paicli.runtime import Runtime, open_runtime
from paicli.servers.manager import ChangeCallback, Connector
from tests.llm_memory import MemoryLlm
from tests.memory_connect import memory_connector


def memory_runtime(
    root: Path,
    environ: Mapping[str, str],
    llm: MemoryLlm,
    approver: Approver,
    *,
    connector: Connector = memory_connector,
    on_server_change: ChangeCallback | None = None,
    hold_servers: bool = False,
) -> AbstractAsyncContextManager[Runtime]:
    return open_runtime(
        root=root,
        flags={"base_url": llm.base_url, "model": "scripted", "provider": None},
        approver=approver,
        hold_servers=hold_servers,
        trust_project=True,
        environ=environ,
        connector=connector,
        on_server_change=on_server_change,
        http_client=llm.http_client(),
    )
