"""`paicli mcp login|logout` and "needs login", end to end: paicli as a process (or in this
one, tests/in_process.py), the local authorization server of
tests/server_programs/auth_server.py on 127.0.0.1 in the test process, and the test as the
browser (it opens the printed URL and follows the redirect to paicli's loopback listener)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests import zygote_process
from tests.in_process import run_paicli_async
from tests.mcp.test_oauth_flow import refusing
from tests.server_programs.auth_server import World, auth_world

pytestmark = pytest.mark.real

ROOT = Path(__file__).resolve().parents[2]

TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def environ(home: Path) -> dict[str, str]:
    return {**os.environ, "PAICLI_HOME": str(home), "NO_COLOR": "1"}


def configure(home: Path, world: World, **extra: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    entry = {"url": world.url, "type": "http", "protocol": "2025-11-25", **extra}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))


async def paicli(home: Path, cwd: Path, *args: str, process: bool = False) -> tuple[int, str, str]:
    """`paicli mcp ARGS`, in this process (tests/in_process.py) unless `process`."""
    if not process:
        run = await run_paicli_async(["mcp", *args], cwd=cwd, environ=environ(home))
        return run.code, run.stdout, run.stderr
    started = await zygote_process.create_subprocess_exec(
        sys.executable, "-m", "paicli.cli", "mcp", *args,
        cwd=cwd, env=environ(home), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await started.communicate()
    assert started.returncode is not None
    return started.returncode, out.decode(), err.decode()


async def browse(url: str) -> int:
    """What a browser does: open the authorization URL (the test server approves at once)
    and follow its redirect back to paicli's listener; the listener's status."""
    async with aiohttp.ClientSession() as client:
        async with client.get(url, allow_redirects=False) as response:
            back = response.headers["Location"]
        async with client.get(back) as response:
            await response.read()
            return response.status


async def log_in(home: Path, cwd: Path, *flags: str) -> tuple[int, str, str, str]:
    """`paicli mcp login docs --no-browser`, with the test as the browser; the exit code,
    stdout, stderr and the URL it asked the user to open."""
    process = await zygote_process.create_subprocess_exec(
        sys.executable, "-m", "paicli.cli", "mcp", "login", "docs", "--no-browser", *flags,
        cwd=cwd, env=environ(home), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None and process.stdout is not None
    seen = b""
    url = ""
    while not url:
        line = await process.stderr.readline()
        assert line, f"paicli ended before printing a URL: {seen.decode()}"
        seen += line
        if line.startswith(b"  http"):
            url = line.decode().strip()
    assert await browse(url) == 200
    out, rest = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), (seen + rest).decode(), url


async def test_login_stores_private_tokens_that_the_next_run_uses_and_logout_forgets(
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        configure(home, world)
        code, listed, errors = await paicli(home, cwd, "list")
        assert "⚠ docs  http  needs login: paicli mcp login docs" in errors
        assert not world.requests_to("/register")  # nothing done on the user's behalf

        code, out, errors, url = await log_in(home, cwd)
        assert code == 0, errors
        assert out.strip() == "✓ Logged in to docs (1 tools)."
        assert url.startswith(world.base + "/authorize?")
        tokens = home / "oauth-tokens.json"
        assert {stat.S_IMODE(p.stat().st_mode) for p in home.glob("oauth-tokens*")} == {0o600}
        record = json.loads(tokens.read_text())[world.url]
        secret = record["tokens"]["access_token"]
        assert secret.startswith("access-") and secret not in out + errors

        code, listed, errors = await paicli(home, cwd, "list")
        assert code == 0 and "needs login" not in listed + errors
        assert "docs" in listed and secret not in listed + errors
        assert len(world.requests_to("/authorize")) == 1  # the stored token was enough

        code, out, errors = await paicli(home, cwd, "logout", "docs")
        assert (code, out.strip()) == (0, "Logged out of docs.")
        assert world.url not in json.loads(tokens.read_text())
        code, listed, errors = await paicli(home, cwd, "list")
        assert "⚠ docs  http  needs login: paicli mcp login docs" in errors


async def test_a_login_again_replaces_the_tokens(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        configure(home, world)
        assert (await log_in(home, tmp_path))[0] == 0
        first = json.loads((home / "oauth-tokens.json").read_text())[world.url]["tokens"]
        assert (await log_in(home, tmp_path))[0] == 0
        second = json.loads((home / "oauth-tokens.json").read_text())[world.url]["tokens"]
    assert first["access_token"] != second["access_token"]


async def test_a_configured_callback_port_is_the_redirect_uri(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        port = free_port()
        configure(home, world, oauth={"callbackPort": port, "scopes": ["read"]})
        code, _, errors, url = await log_in(home, tmp_path)
        assert code == 0, errors
    assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback" in url
    assert "scope=read" in url


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({"command": "true"}, "'docs' is not an HTTP server"),
        (
            {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            "sends its own Authorization header",
        ),
    ],
)
async def test_login_to_what_has_no_oauth_says_why(
    tmp_path: Path, entry: dict[str, Any], complaint: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
    code, _, errors = await paicli(home, tmp_path, "login", "docs", "--no-browser")
    assert code == 1 and complaint in errors and len(errors.strip().splitlines()) == 1


async def test_a_hostile_authorization_endpoint_is_never_opened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    patch = {"authorization_endpoint": "javascript:alert(1)"}
    async with asyncio.timeout(TIMEOUT), auth_world(metadata_patch=patch) as world:
        configure(home, world)
        code, out, errors = await paicli(home, tmp_path, "login", "docs", "--no-browser")
    assert code == 1
    assert "javascript:" not in out and "must be an https URL" in errors
    assert len(errors.strip().splitlines()) == 1


async def test_with_a_system_keyring_the_tokens_go_there_not_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyring is chosen the way a user chooses one (PYTHON_KEYRING_BACKEND); the test
    backend keeps its entries in a file this test reads."""
    ring = tmp_path / "keyring.json"
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.keyring_backend.FileKeyring")
    monkeypatch.setenv("PAICLI_TEST_KEYRING", str(ring))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))
    home = tmp_path / "home"
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        configure(home, world)
        code, _, errors, _ = await log_in(home, tmp_path)
        assert code == 0, errors
        entries = json.loads(ring.read_text())
        record = json.loads(entries[f"paicli-mcp-oauth\n{world.url}"])
        assert record["tokens"]["access_token"].startswith("access-")
        assert not (home / "oauth-tokens.json").exists()
        # (Processes: the keyring a process uses is chosen once, when it first needs one.)
        code, listed, errors = await paicli(home, tmp_path, "list", process=True)
        assert code == 0 and "needs login" not in listed + errors
        code, out, _ = await paicli(home, tmp_path, "logout", "docs", process=True)
        assert out.strip() == "Logged out of docs."
    assert json.loads(ring.read_text()) == {}


async def test_a_configured_client_secret_stays_out_of_the_token_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_SECRET", "client-secret-value")
    home = tmp_path / "home"
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        configure(home, world, oauth={"clientId": "client-1", "clientSecret": "${DOCS_SECRET}"})
        code, _, errors, _ = await log_in(home, tmp_path)
        assert code == 0, errors
    stored = (home / "oauth-tokens.json").read_text()
    assert "access-1-secret" in stored and "client-secret-value" not in stored


async def test_a_server_that_refuses_every_token_points_to_login_and_names_itself_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with asyncio.timeout(TIMEOUT), auth_world() as world:
        configure(home, world)
        refusing(world)
        code, _, errors, _ = await log_in(home, tmp_path)
        assert code == 1
        assert "paicli mcp login: docs: HTTP 401" in errors
        assert "refused every OAuth access token it was given; log in again" in errors
        assert "docs: docs:" not in errors and "'headers'" not in errors
        # The tokens it got are refused on the next start too: it needs a login.
        code, _, errors = await paicli(home, tmp_path, "list")
        assert "⚠ docs  http  needs login: paicli mcp login docs" in errors
        assert "'headers'" not in errors
