"""`sandbox=` and `limits=` of the LangChain bridge: a bridged server in the OS sandbox cannot
write outside its folder or read the user's keys, and `limits=` bounds a memory hog (which
used to run unbounded until its deadline). Real processes, under whichever mechanism works
here (skipped, with why, where none does); the rules of `contained` in memory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import paicli.mcp as m
from paicli.langchain import BridgeError, MCPTool, load_tools
from paicli.langchain._containment import contained
from tests.conftest import SERVER_PROGRAMS
from tests.sandboxes import BASHRC, KEY, home, mechanism

__all__ = ["home", "mechanism"]  # fixtures

MiB = 1024 * 1024
ESCAPE = [str(SERVER_PROGRAMS / "escape_server.py")]
HOG = [str(SERVER_PROGRAMS / "hog_server.py")]
linux = pytest.mark.skipif(sys.platform != "linux", reason="Linux")


def tool(
    name: str,
    args: list[str],
    *,
    sandbox: m.Sandbox | bool | None = None,
    limits: m.Limits | None = None,
    cwd: Path | None = None,
) -> MCPTool:
    return MCPTool.from_executable(
        name=name,
        executable_path=sys.executable,
        executable_args=args,
        sandbox=sandbox,
        limits=limits,
        cwd=cwd,
    )


@pytest.mark.real
@linux
def test_a_sandboxed_bridged_server_cannot_write_outside_or_read_keys(
    mechanism: str, home: Path
) -> None:
    bashrc, key = str(home / ".bashrc"), str(home / ".ssh" / "id_ed25519")
    with tool("write_file", ESCAPE) as plain:  # first, without: the attack works here
        assert plain.invoke({"path": bashrc, "text": "evil"}) == "wrote"
    (home / ".bashrc").write_text(BASHRC)
    project = home / "project"
    with (
        tool("write_file", ESCAPE, sandbox=True, cwd=project) as write,
        tool("read_file", ESCAPE, sandbox=m.Sandbox.for_project(project)) as read,
    ):
        assert write.invoke({"path": bashrc, "text": "evil"}).startswith("refused: ")
        assert write.invoke({"path": str(project / "notes.txt"), "text": "ok"}) == "wrote"
        assert read.invoke({"path": key}).startswith("refused: ")
    assert (home / ".bashrc").read_text() == BASHRC
    assert (project / "notes.txt").read_text() == "ok"
    assert KEY not in (home / ".bashrc").read_text()


@pytest.mark.real
@linux
def test_limits_bound_a_bridged_memory_hog() -> None:
    with tool("allocate", HOG, limits=m.Limits(memory=128 * MiB)) as allocate:
        said = allocate.invoke({})
    assert said.startswith("allocated ") and said.endswith(" MiB, then MemoryError")
    assert int(said.split()[1]) < 128


@pytest.mark.real
@linux
async def test_load_tools_contains_every_stdio_server_it_starts(mechanism: str, home: Path) -> None:
    server = m.StdioServer(sys.executable, ESCAPE, cwd=str(home / "project"))
    toolset = load_tools(server, include=["write_file"], sandbox=True, limits=m.Limits(files=64))
    async with toolset as tools:
        (write,) = tools
        said = await write.ainvoke({"path": str(home / ".bashrc"), "text": "evil"})
    assert said.startswith("refused: ")
    assert (home / ".bashrc").read_text() == BASHRC


def test_a_servers_own_profile_wins_and_its_own_limits_go_over_the_given_ones(
    tmp_path: Path,
) -> None:
    own = m.Sandbox.for_project(tmp_path / "own")
    server = m.StdioServer("tool", sandbox=own, limits=m.Limits(memory=64 * MiB))
    made = contained(server, True, m.Limits(memory=512 * MiB, cpu=10))
    assert isinstance(made, m.StdioServer)
    assert made.sandbox is own
    assert made.limits == m.Limits(memory=64 * MiB, cpu=10)
    bare = contained(m.StdioServer("tool", cwd=str(tmp_path)), True, None)
    assert isinstance(bare, m.StdioServer) and bare.sandbox is not None
    assert bare.sandbox.write == (str(tmp_path),) and bare.sandbox.network == "none"
    http = m.HttpServer("https://example.com/mcp")
    assert contained(http, True, m.Limits(cpu=1)) is http
    with pytest.raises(BridgeError, match="sandbox must be a Sandbox, True or None"):
        contained(server, "yes", None)  # type: ignore[arg-type]
