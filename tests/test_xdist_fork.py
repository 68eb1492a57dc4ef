"""tests/xdist_fork.py: pytest-xdist workers forked from one warm server, in a pytest run of
their own (two workers, two tests) in a folder of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import xdist_fork
from tests.conftest import REPO
from tests.processes import processes_with

pytestmark = pytest.mark.real

LAUNCHER = REPO / "tests" / "xdist_fork.py"
CONFTEST = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import pytest
from tests import xdist_fork

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    xdist_fork.setup_nodes(config, specs)
"""
# Each test says, from its worker: whether the SDKs were there before its module ran, its
# process and its parent.
SAYS = """
import json, os, sys
PRELOADED = "openai" in sys.modules and "prompt_toolkit" in sys.modules

def test_{n}():
    from tests import processes, zygote
    forks_paicli = zygote.zygote_for(dict(os.environ))
    with open("said-{n}.json", "w") as file:
        json.dump({{"preloaded": PRELOADED, "pid": os.getpid(), "parent": os.getppid(),
                    "worker": os.environ["PYTEST_XDIST_WORKER"], "zygote": forks_paicli,
                    "zygote_parent": processes.parent_of(forks_paicli)}}, file)
"""


def test_workers_are_forked_from_one_server_that_ends_with_the_session(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for n in (1, 2):
        (tmp_path / f"test_{n}.py").write_text(SAYS.format(n=n))
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the server's socket folder: a marker
    env[xdist_fork.PRELOAD] = "paicli"  # what a paicli run imports: enough to tell
    env.pop("PAICLI_TESTS_FRESH", None)
    args = ["-n", "2", "-p", "no:randomly", "-p", "no:cacheprovider", "-q"]
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args, "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out, _ = controller.communicate(timeout=120)
    assert controller.returncode == 0, out
    said = [json.loads((tmp_path / f"said-{n}.json").read_text()) for n in (1, 2)]
    assert all(s["preloaded"] for s in said)
    assert {s["worker"] for s in said} == {"gw0", "gw1"}
    assert len({s["pid"] for s in said}) == 2
    (parent,) = {s["parent"] for s in said}  # one server's children, not the controller's
    assert parent != controller.pid
    # Both workers' paicli runs are forked from one zygote, the controller's child.
    (shared,) = {(s["zygote"], s["zygote_parent"]) for s in said}
    assert shared[0] is not None and shared[1] == controller.pid
    assert processes_with(str(tmp_path)) == []  # the server is gone with the session


def test_anything_but_a_worker_s_start_runs_a_fresh_python() -> None:
    done = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "/nonexistent", "-c", "import sys; print(sys.argv)"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout == "['-c']\n"
    no_server = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "/nonexistent", "-u", "-c", "print('fresh')"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert no_server.stdout == "fresh\n"
