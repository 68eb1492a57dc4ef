"""A server built on the official `mcp` SDK (someone else's implementation), for interop tests.

Speaks both eras on stdio (the SDK picks the era from the client's first request). Tools cover
plain and structured results, progress, logging, and the three client asks (elicitation,
sampling, roots), which the SDK routes as requests (legacy) or `input_required` (2026).
"""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import (
    CreateMessageResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

server = MCPServer("sdk-test-server", instructions="Test server for paicli interop.")


class Sum(BaseModel):
    total: int


class Name(BaseModel):
    name: str


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers (structured output)."""
    return Sum(total=a + b)


@server.tool()
def search(query: str, limit: int | None = None) -> str:
    """Pretend to search; an optional, nullable argument (its schema is anyOf [T, null])."""
    return f"{query}:{limit}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with a tool error."""
    raise ValueError(reason)


@server.tool()
async def wait(seconds: float) -> str:
    """Sleep for `seconds` (for deadlines and cancellation)."""
    await anyio.sleep(seconds)
    return "waited"


@server.tool()
async def count(steps: int, ctx: Context, interval: float = 0.0, then_sleep: float = 0.0) -> str:
    """Report progress `steps` times, `interval` s apart, logging each step; then sleep
    `then_sleep` s (for deadlines that progress extends)."""
    for i in range(1, steps + 1):
        if interval:
            await anyio.sleep(interval)
        await ctx.report_progress(i, steps, f"step {i}")
        await ctx.info(f"counted {i}")
    if then_sleep:
        await anyio.sleep(then_sleep)
    return f"counted to {steps}"


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask the user for a name (elicitation) and greet them."""
    return f"hello {name.name}"


def ask_model() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="say hi"))],
        max_tokens=20,
    )


@server.tool()
def think(answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Sample the client's model and return what it said."""
    content = answer.content
    return content.text if isinstance(content, TextContent) else "non-text"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the client's roots."""
    return ",".join(str(r.uri) for r in found.roots)


@server.resource("test://static/hello", mime_type="text/plain")
def hello() -> str:
    """A static text resource."""
    return "hello resource"


@server.resource("test://items/{item_id}")
def item(item_id: str) -> str:
    """A templated resource."""
    return f"item {item_id}"


@server.prompt()
def review(code: str, style: str = "short") -> str:
    """Ask for a code review."""
    return f"Review this ({style}): {code}"


if __name__ == "__main__":
    server.run("stdio")
