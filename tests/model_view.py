"""What the model reads of an MCP tool's result, with paicli's fence taken off (see
`paicli.tools.mcp.results.for_model`): for tests that check the server's text exactly."""

from __future__ import annotations

import re

_FENCED = re.compile(
    r'(Error:\n)?<mcp-result server="[^"\n]*" tool=[^\n]* block="([0-9a-f]{12})"'
    r' content="untrusted data from the server">\n(.*)\n</mcp-result block="\2">(.*)',
    re.S,
)


def unfenced(text: str) -> str:
    """The server's text inside the fence (`Error: ` first for an error), plus any note."""
    found = _FENCED.fullmatch(text)
    assert found, f"not fenced as an MCP result: {text!r}"
    return ("Error: " if found[1] else "") + found[3] + found[4]
