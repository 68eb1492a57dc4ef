"""The LangChain bridge's sessions are traced like any other (the instrument seam)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from paicli import mcp
from paicli.langchain import MCPTool
from tests.langchain.conftest import TOOL_SERVER

pytestmark = pytest.mark.real


def test_a_bridge_tool_call_is_in_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        tool = MCPTool.from_executable(
            name="echo", executable_path=sys.executable, executable_args=[str(TOOL_SERVER)]
        )
        with tool:
            assert asyncio.run(tool.ainvoke({"text": "bridged"})) == "bridged"
    recorder.close()
    sent = [json.loads(line) for line in path.read_text().splitlines()]
    calls = [r["msg"] for r in sent if r["dir"] == "out" and r["msg"].get("method") == "tools/call"]
    assert calls[-1]["params"]["arguments"] == {"text": "bridged"}
