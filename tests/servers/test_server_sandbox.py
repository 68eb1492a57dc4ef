"""The `"sandbox"` key of mcp.json, read by paicli with the default of each config file's
scope: a repository's server is sandboxed unless its entry (approved, warned about) or the
user's config.toml says otherwise; the user's own servers opt in. What the trust question,
`--trust-project`, the server list, the doctor and a start where no sandbox works say.

In memory: the machine's sandbox support is set by each test (nothing is probed here);
tests/servers/test_server_sandbox_attacks.py runs the servers for real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import paicli.mcp as m
from paicli.cli import main
from paicli.doctor._sandbox import note_sandbox
from paicli.doctor.findings import ServerReport
from paicli.home import PaicliHome
from paicli.mcp._sandbox.support import _Cache
from paicli.servers.config import LoadedConfig, ServerEntry, load_config
from paicli.servers.containment import (
    sandbox_groups,
    sandbox_line,
    sandbox_refusal,
    sandbox_summary,
)
from paicli.servers.manager import ServerManager, ServerState
from paicli.servers.trust import TrustStore, approve_servers, skip_reason, trust_request
from paicli.ui.trust_prompt import prompt_lines
from tests.memory_connect import memory_connector

SERVER = {"command": "python3", "args": ["server.py"]}
WORKS = m.SandboxSupport(None, None, None, "macOS only", bwrap="/usr/bin/bwrap")
NOTHING = m.SandboxSupport(
    "bwrap is not installed (Debian and Ubuntu: apt install bubblewrap)",
    "the kernel offers no Landlock",
    None,
    "macOS only",
)


@dataclass
class Places:
    home: Path
    project: Path

    @property
    def paicli(self) -> PaicliHome:
        return PaicliHome(self.home / ".paicli")

    def write(self, path: Path, **servers: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"mcpServers": servers}))
        return path

    def load(self, extra: tuple[Path, ...] = ()) -> LoadedConfig:
        environ = {"HOME": str(self.home), "PATH": "/usr/bin"}
        return load_config(self.project, environ=environ, extra_files=extra)

    def project_server(self, **entry: Any) -> ServerEntry:
        self.write(self.project / ".paicli" / "mcp.json", srv={**SERVER, **entry})
        return self.load().servers["srv"]

    def user_server(self, **entry: Any) -> ServerEntry:
        self.write(self.paicli.mcp_config, mine={**SERVER, **entry})
        return self.load().servers["mine"]


@pytest.fixture
def places(tmp_path: Path) -> Places:
    home, project = tmp_path / "home", tmp_path / "repo"
    (home / ".paicli").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    return Places(home, project)


@pytest.fixture
def support(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every mechanism works (as far as paicli can tell: nothing is probed)."""
    monkeypatch.setattr(_Cache, "support", WORKS)
    yield


# Which sandbox each config file's server gets


def test_a_project_server_is_sandboxed_in_its_project_by_default(places: Places) -> None:
    entry = places.project_server()
    sandbox = entry.spec.sandbox if isinstance(entry.spec, m.StdioServer) else None
    assert sandbox is not None and entry.containment is not None
    assert entry.containment.origin == "default"
    assert sandbox.write == (str(places.project),)
    assert sandbox.network == "none" and sandbox.strict
    assert str(places.home / ".ssh") in sandbox.hide
    assert str(places.project / ".git" / "hooks") in sandbox.read_only


@pytest.mark.parametrize("file", ["claude", "local", "cli", "user"])
def test_every_config_file_reads_the_key_with_its_scope_default(places: Places, file: str) -> None:
    """A repository's `.mcp.json` is sandboxed by default like `.paicli/mcp.json`; the
    user's own files (user, local, --mcp-config) opt in, and take the same profiles."""
    paths = {
        "claude": places.project / ".mcp.json",
        "local": places.paicli.local_mcp_config(places.project),
        "cli": places.home / "extra.json",
        "user": places.paicli.mcp_config,
    }
    places.write(
        paths[file],
        plain=SERVER,
        boxed={**SERVER, "sandbox": {"write": ["out"], "network": ["example.com"]}},
    )
    config = places.load(extra=(paths["cli"],) if file == "cli" else ())
    plain, boxed = config.servers["plain"], config.servers["boxed"]
    assert isinstance(plain.spec, m.StdioServer) and isinstance(boxed.spec, m.StdioServer)
    assert (plain.spec.sandbox is not None) is (file == "claude")
    assert boxed.spec.sandbox is not None
    assert boxed.spec.sandbox.network == ("example.com",)
    # Relative paths are from the project (for a user's server without a cwd, too).
    assert boxed.spec.sandbox.write == (str(places.project / "out"),)


def test_a_profile_takes_home_relative_paths_and_replaces_the_writable_folder(
    places: Places,
) -> None:
    entry = places.project_server(sandbox={"write": [".", "~/.npm"], "read": ["/usr", "."]})
    assert isinstance(entry.spec, m.StdioServer) and entry.spec.sandbox is not None
    assert entry.spec.sandbox.write == (str(places.project), str(places.home / ".npm"))
    assert entry.spec.sandbox.read == ("/usr", str(places.project))


def test_a_users_server_with_sandbox_true_writes_its_own_folder(places: Places) -> None:
    entry = places.user_server(sandbox=True, cwd=str(places.home / "tools"))
    assert isinstance(entry.spec, m.StdioServer) and entry.spec.sandbox is not None
    assert entry.spec.sandbox.write == (str(places.home / "tools"),)
    assert places.user_server().containment.origin == "not-asked"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("yes", "'sandbox' must be true, false or an object"),
        ({"net": "none"}, "sandbox: unknown key 'net' (it takes write, read, network, env)"),
        ({"network": "everything"}, "'network' must be"),
        ({"write": "/tmp"}, "sandbox: 'write' must be a list of paths"),
    ],
)
def test_a_bad_sandbox_is_the_entrys_error_naming_file_server_and_key(
    places: Places, value: object, said: str
) -> None:
    entry = places.project_server(sandbox=value)
    assert entry.spec is None and entry.error is not None
    assert entry.error.startswith(f"{places.project}/.paicli/mcp.json: server 'srv': ")
    assert said in entry.error


def test_sandbox_on_an_http_server_is_a_warning(places: Places) -> None:
    places.write(places.paicli.mcp_config, web={"url": "https://example.com/mcp", "sandbox": True})
    config = places.load()
    assert config.servers["web"].containment is None
    assert any(
        "ignoring 'sandbox' (an HTTP server does not run here)" in w for w in config.warnings
    )


def test_the_users_config_toml_runs_a_project_server_unsandboxed(places: Places) -> None:
    (places.home / ".paicli" / "config.toml").write_text(
        f'[projects."{places.project}"]\nunsandboxed = ["srv"]\n'
    )
    entry = places.project_server()
    assert isinstance(entry.spec, m.StdioServer) and entry.spec.sandbox is None
    assert entry.containment is not None and entry.containment.origin == "user-off"
    assert sandbox_line(entry.containment) == (
        "none (your config.toml runs it unsandboxed (projects: unsandboxed))"
    )


# What the user approves


def test_the_question_shows_the_sandbox_a_project_server_gets(places: Places) -> None:
    lines = prompt_lines(trust_request(places.project_server(), None))
    assert (
        "OS sandbox: writes the project and a private /tmp only; reads all but your secret "
        "stores (~/.ssh, ~/.aws, ...); no network"
    ) in lines
    assert not [line for line in lines if line.startswith("Warning")]


def test_a_repository_turning_its_sandbox_off_is_a_warning_and_part_of_the_approval(
    places: Places,
) -> None:
    store = TrustStore(places.paicli.trust_store)
    store.approve(places.project, places.project_server())
    off = places.project_server(sandbox=False)
    assert not store.is_approved(places.project, off)  # the approval covered the sandbox
    lines = prompt_lines(trust_request(off, store.previous(places.project, off)))
    assert "OS sandbox: none" in lines
    assert (
        'Warning: it turns its OS sandbox off ("sandbox": false): it would run with all your '
        "rights (write any file, read ~/.ssh, reach any host)"
    ) in lines
    assert '+  "sandbox": false' in "\n".join(lines)  # and the change is shown
    store.approve(places.project, off)
    assert store.is_approved(places.project, off)


def test_hosts_and_writes_outside_the_project_are_warnings(places: Places) -> None:
    entry = places.project_server(sandbox={"write": [".", "~/.npm"], "network": ["npmjs.org"]})
    lines = prompt_lines(trust_request(entry, None))
    assert "Warning: it may write outside the project: ~/.npm" in lines
    assert "Warning: it may reach the network: npmjs.org" in lines
    assert any(
        line.endswith("network to npmjs.org only (through paicli's proxy)") for line in lines
    )


@pytest.mark.parametrize(
    ("sandbox", "why"),
    [
        (False, 'it says "sandbox": false'),
        ({"network": ["example.com"]}, "it reaches the network"),
        ({"write": ["/var/tmp"]}, "it writes outside the project"),
    ],
)
def test_trust_project_does_not_wave_through_an_entry_that_loosens_its_sandbox(
    places: Places, sandbox: object, why: str
) -> None:
    entry = places.project_server(sandbox=sandbox)
    plain = places.project_server()
    store = TrustStore(places.paicli.trust_store)
    for candidate, runs in ((plain, True), (entry, False)):
        allowed, skipped = approve_servers(
            [candidate], places.project, store, trust_all=True, ask=None, passing=lambda e, _: e
        )
        assert bool(allowed) is runs and bool(skipped) is not runs
    assert skip_reason(entry, places.project) == (
        f"skipping project server 'srv': its entry loosens its OS sandbox ({why}), which "
        "--trust-project does not accept (approve it in a terminal, or: paicli mcp approve srv)"
    )


# Where no sandbox works


async def test_where_no_sandbox_works_a_project_server_does_not_start_and_says_how_to_fix_it(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Cache, "support", NOTHING)
    monkeypatch.setattr("shutil.which", lambda name: None)
    entry = places.project_server()
    started: list[str] = []

    def connector(spec: Any, /, **options: Any) -> Any:
        started.append(spec.label)
        return memory_connector(spec, **options)

    async with ServerManager([entry], connector=connector) as manager:
        await manager.wait_ready(timeout=10)
        server = manager.get("srv")
    assert server.state is ServerState.ERROR and started == []
    assert server.error == (
        "srv: not started: its sandbox cannot be had here; install bubblewrap (apt install "
        f'bubblewrap), or run it unsandboxed: add "srv" to unsandboxed in [projects."'
        f'{places.project}"] of ~/.paicli/config.toml (no sandbox works here (bubblewrap: '
        "bwrap is not installed (Debian and Ubuntu: apt install bubblewrap); Landlock: the "
        "kernel offers no Landlock))"
    )
    mine = places.user_server(sandbox=True)
    said = await sandbox_refusal("mine", mine.containment)
    assert said is not None and 'drop "sandbox" from its entry in ~/.paicli/mcp.json' in said
    assert await sandbox_refusal("plain", places.user_server().containment) is None


# What the list and the doctor say


def test_the_list_says_which_servers_run_sandboxed_and_by_what(places: Places) -> None:
    project = places.project_server()
    mine = places.user_server()
    line = sandbox_groups([("mine", mine.containment), ("srv", project.containment)], WORKS)
    assert line == (
        "sandboxed by bubblewrap: srv; not sandboxed: mine (paicli mcp doctor says why)"
    )
    summary = sandbox_summary(project.containment, WORKS)
    assert summary is not None and summary["mechanism"] == "bubblewrap"
    assert sandbox_groups([("web", None)], WORKS) == ""


async def test_the_doctor_names_the_mechanism_or_why_not(
    places: Places, support: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = ServerReport("srv", "stdio")
    assert await note_sandbox(report, places.project_server().containment)  # type: ignore[arg-type]
    (finding,) = report.findings
    assert finding.severity == "info"
    assert finding.message.startswith("sandboxed by bubblewrap: writes the project")

    report = ServerReport("mine", "stdio")
    assert await note_sandbox(report, places.user_server().containment)  # type: ignore[arg-type]
    (finding,) = report.findings
    assert finding.message == (
        'not sandboxed: a server of your own runs unsandboxed unless its entry says "sandbox": true'
    )
    assert finding.fix is not None and '"sandbox": true' in finding.fix

    report = ServerReport("off", "stdio")
    off = places.project_server(sandbox=False).containment
    assert await note_sandbox(report, off)  # type: ignore[arg-type]
    assert report.findings[0].message == (
        'not sandboxed: its entry says "sandbox": false, which you approved'
    )

    monkeypatch.setattr(_Cache, "support", NOTHING)
    report = ServerReport("srv", "stdio")
    assert not await note_sandbox(report, places.project_server().containment)  # type: ignore[arg-type]
    (finding,) = report.findings
    assert finding.severity == "error" and finding.code == "sandbox-unavailable"
    assert finding.message.startswith("its sandbox cannot be had here: no sandbox works here")
    assert finding.fix is not None and 'add "srv" to unsandboxed' in finding.fix


def test_mcp_approve_says_what_sandbox_the_server_is_approved_with(
    places: Places, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    places.project_server(sandbox=False)
    monkeypatch.setenv("HOME", str(places.home))
    monkeypatch.delenv("PAICLI_HOME", raising=False)
    monkeypatch.chdir(places.project)
    assert main(["mcp", "approve", "srv"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert "OS sandbox: none" in said
    assert any(
        line.startswith('Warning: it turns its OS sandbox off ("sandbox": false)') for line in said
    )
