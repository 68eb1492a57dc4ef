"""A secret file the user lets the model read, in a real REPL on a pseudo-terminal: the read
asks first, and once paicli has seen the file its values never reach the model provider (nor
the screen), neither in that result nor in a command that prints the file later."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.llm_server import ScriptedLlm

from .test_repl import MARK, Places, answer, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name

DOT_ENV_SECRET = "pg-Pr0d-PASSWORD-7f3a9c"


async def test_an_approved_dot_env_read_teaches_paicli_its_values(places: Places) -> None:
    (places.project / ".env").write_text(f"DATABASE_PASSWORD={DOT_ENV_SECRET}\n")
    read = {"id": "r", "name": "read_file", "arguments": '{"path": ".env"}'}
    cat = {"id": "c", "name": "execute_command", "arguments": '{"command": "cat .env"}'}
    script: list[dict[str, Any]] = [
        {"tool_calls": [read]},
        {"tool_calls": [cat]},
        {"text": "The password is set."},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("what is the database password?")
        await term.expect("Warning: read_file reads .env, which is protected: an environment file")
        await answer(term, "y", "read_file")
        await answer(term, "y", "execute_command")
        await term.expect("The password is set.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert DOT_ENV_SECRET not in json.dumps(llm.requests)
    assert DOT_ENV_SECRET not in term.raw
    read_result = llm.requests[1]["messages"][-1]["content"]
    cat_result = llm.requests[2]["messages"][-1]["content"]
    assert read_result == "     1\tDATABASE_PASSWORD=[REDACTED]"
    assert "DATABASE_PASSWORD=[REDACTED]" in cat_result
