"""A variable a server's entry reads and the environment lacks is named on screen, even in a
field the redactor guards (`headers.Authorization`), while a secret that is set is still never
shown (issue 27)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.redact import Redactor, environment_secrets
from paicli.servers.config import load_config
from tests import zygote_process

SECRET = "sk-live-0123456789abcdefSECRET"


def entry() -> dict[str, object]:
    return {
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${UNSET_VAR}", "X-Api-Key": "${API_KEY}"},
        "env": {"GITHUB_TOKEN": "${UNSET_TOKEN}"},
    }


def test_the_missing_variable_is_named_through_the_redactor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"remote": entry()}}))
    environ = {"HOME": str(home), "API_KEY": SECRET}
    error = load_config(None, environ=environ).servers["remote"].error
    assert error is not None
    shown = Redactor(environment_secrets(environ)).redact_text(error)
    assert "${UNSET_VAR} is not set (in headers.Authorization)" in shown
    assert "${UNSET_TOKEN} is not set (in env.GITHUB_TOKEN)" in shown
    assert "[REDACTED] is not set" not in shown
    assert SECRET not in shown


@pytest.mark.real
def test_mcp_list_names_it_and_shows_no_secret(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"remote": entry()}}))
    env = {**os.environ, "HOME": str(home), "PAICLI_HOME": str(home / ".paicli")}
    env["API_KEY"] = SECRET
    env.pop("UNSET_VAR", None)
    env.pop("UNSET_TOKEN", None)
    done = zygote_process.run(
        [sys.executable, "-m", "paicli.cli", "mcp", "list"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    shown = done.stdout + done.stderr
    assert "${UNSET_VAR} is not set (in headers.Authorization)" in shown
    assert SECRET not in shown
