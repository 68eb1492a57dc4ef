"""Runtimes for tests: `runtime_for` opens one from the keywords a test names (the run's start
options, its IO callbacks, the in-memory connector and HTTP client) through the same
`load_run_settings` and `open_runtime` as paicli; `memory_runtime` is the in-memory agent
setup: the scripted model through its HTTP client, our test servers in this process,
projects trusted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.asks.server_asks import Elicitor, SampleReviewer, SamplingApprover
from paicli.permissions.approval import Approver, Mode
from paicli.run_settings import RulesAsk, RunIO, StartOptions, load_run_settings
from paicli.runtime import Runtime, open_runtime
from paicli.servers.manager import ChangeCallback, Connector
from paicli.servers.trust import TrustAsk
from tests.llm_memory import MemoryLlm
from tests.memory_connect import memory_connector

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient


def runtime_for(
    *,
    root: Path,
    flags: Mapping[str, str | None],
    approver: Approver | None,
    environ: Mapping[str, str] | None = None,
    hold_servers: bool = False,
    flag_allow: tuple[str, ...] = (),
    flag_deny: tuple[str, ...] = (),
    yes: bool = False,
    mode: Mode | None = None,
    ask_rules: RulesAsk | None = None,
    trust_project: bool = False,
    ask_trust: TrustAsk | None = None,
    on_server_change: ChangeCallback | None = None,
    max_steps: int | None = None,
    connector: Connector | None = None,
    http_client: HttpClient | None = None,
    elicit: Elicitor | None = None,
    approve_sampling: SamplingApprover | None = None,
    review_sample: SampleReviewer | None = None,
    mcp_config: Sequence[Path] = (),
    strict_mcp_config: bool = False,
) -> AbstractAsyncContextManager[Runtime]:
    options = StartOptions(
        flags=dict(flags),
        allow=flag_allow,
        deny=flag_deny,
        yes=yes,
        mode=mode,
        trust_project=trust_project,
        max_steps=max_steps,
        mcp_config=tuple(mcp_config),
        strict_mcp_config=strict_mcp_config,
        hold_servers=hold_servers,
    )
    io = RunIO(
        approver=approver,
        ask_rules=ask_rules,
        ask_trust=ask_trust,
        on_server_change=on_server_change,
        elicit=elicit,
        approve_sampling=approve_sampling,
        review_sample=review_sample,
    )
    settings = load_run_settings(root, options, environ)
    return open_runtime(settings, io, connector=connector, http_client=http_client)


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
    return runtime_for(
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
