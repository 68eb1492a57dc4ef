"""Secrets never reach the screen: a crashing server's stderr quoting a key, a URL with a
password or an `access_token`, the value of a header from the user's config, and an exception
nobody retrieved. Every `paicli mcp` surface (in the test process, tests/in_process.py), `-p`
stderr and the log handler, as real subprocesses with pipes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import zygote_process
from tests.in_process import run_paicli
from tests.llm_server import ScriptedLlm

pytestmark = pytest.mark.real

MODEL_KEY = "sk-this-is-the-model-key-0123456789"
CONFIG_VALUE = "value-from-the-users-own-config-42"
STDERR_SECRETS = (
    MODEL_KEY,
    "sk-proj-leakedbyserver0123456789abcdef",
    "hunter2pass",
    "abcdef0123456789token",
    CONFIG_VALUE,
)
# What the server writes to its stderr before it dies during the handshake.
DYING = (
    "import sys\n"
    "sys.stderr.write('invalid key: sk-proj-leakedbyserver0123456789abcdef\\n')\n"
    "sys.stderr.write('connecting to postgres://bob:hunter2pass@db.example/app\\n')\n"
    "sys.stderr.write('GET https://api.example/v1?access_token=abcdef0123456789token\\n')\n"
    f"sys.stderr.write('using {MODEL_KEY} and {CONFIG_VALUE}\\n')\n"
    "sys.exit(3)\n"
)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    servers = {
        "dying": {
            "command": sys.executable,
            "args": ["-c", DYING],
            "env": {"SERVICE_SETTING": CONFIG_VALUE},
        }
    }
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return home, project


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "PAICLI_HOME": str(home), "PAICLI_API_KEY": MODEL_KEY}


def assert_no_secret(text: str) -> None:
    leaked = [secret for secret in STDERR_SECRETS if secret in text]
    assert leaked == [], f"leaked {leaked}:\n{text}"


@pytest.mark.parametrize(
    "args",
    [
        ("mcp", "list"),
        ("mcp", "list", "--json"),
        ("mcp", "get", "dying"),
        ("mcp", "get", "dying", "--json"),
        ("mcp", "tools"),
    ],
)
def test_paicli_mcp_never_shows_a_secret_a_dying_server_wrote(
    places: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    home, project = places
    done = run_paicli(args, cwd=project, environ=environment(home))  # (tests/in_process.py)
    assert_no_secret(done.stdout + done.stderr)
    assert "[REDACTED]" in done.stdout + done.stderr or args[1] == "tools"
    if args[1] == "get":
        # What the server said is still there, with the secrets cut out.
        assert "invalid key: [REDACTED]" in done.stdout
        assert "postgres://bob:[REDACTED]@db.example/app" in done.stdout


def test_paicli_mcp_logs_never_shows_a_secret_from_the_log_file(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    run_paicli(["mcp", "list"], cwd=project, environ=environment(home))  # (tests/in_process.py)
    assert (home / "logs" / "mcp" / "dying.log").stat().st_mode & 0o077 == 0
    done = run_paicli(["mcp", "logs", "dying"], cwd=project, environ=environment(home))
    assert re.search(r"dying │ \S+ \S+ invalid key: \[REDACTED\]", done.stdout), done.stdout
    assert_no_secret(done.stdout + done.stderr)


async def test_one_shot_stderr_never_shows_a_secret_a_dying_server_wrote(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    async with ScriptedLlm([{"text": "done"}]) as llm:
        process = await zygote_process.create_subprocess_exec(
            sys.executable,
            "-m",
            "paicli.cli",
            "-p",
            "hello",
            "--base-url",
            llm.base_url,
            "--model",
            "m",
            cwd=project,
            env=environment(home),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(60):
            out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert "dying" in err.decode()
    assert_no_secret(out.decode() + err.decode())


def test_an_exception_nobody_retrieved_is_one_redacted_line(tmp_path: Path) -> None:
    script = (
        "import asyncio, gc\n"
        "from paicli.ui.logs import log_to_terminal\n"
        "from paicli.cli._signals import run_until_signalled\n"
        "log_to_terminal()\n"
        "async def main():\n"
        "    future = asyncio.get_running_loop().create_future()\n"
        f"    future.set_exception(ValueError('invalid key {MODEL_KEY[:-1]}X'))\n"
        "    del future\n"
        "    gc.collect()\n"
        "    return 0\n"
        "raise SystemExit(run_until_signalled(main()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PAICLI_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    assert MODEL_KEY[:-1] not in done.stderr
    assert "ValueError: invalid key [REDACTED]" in done.stderr
    # The whole story is kept for whoever debugs it, privately and redacted.
    kept = tmp_path / "home" / "logs" / "paicli.log"
    assert kept.stat().st_mode & 0o777 == 0o600
    assert "ValueError" in kept.read_text() and MODEL_KEY[:-1] not in kept.read_text()
