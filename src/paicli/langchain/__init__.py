"""paicli.langchain: MCP tools (stdio or HTTP, in any language) as LangChain tools.

    from paicli.langchain import MCPTool, load_tools

    echo = MCPTool.from_executable(name="echo", executable_path="./tools/echo.py")
    echo.invoke({"text": "hi"})

    async with load_tools("mcp.json") as tools:      # every tool, one session per server
        agent = create_agent(model, tools)

Needs the `langchain` extra (`pip install 'paicli-cli[langchain]'`: langchain-core only).
Errors follow LangChain's habits: a tool's error result raises `ToolException`, a deadline
`ToolTimeout` (a `TimeoutError`), a dead server `ServerUnavailable` (a `ConnectionError`),
after which the next call starts the server again.
"""

from paicli.langchain.errors import BridgeError, ExecutableProblem, ServerUnavailable, ToolTimeout
from paicli.langchain.tool import MCPTool
from paicli.langchain.toolset import McpToolset, load_tools

__all__ = [
    "BridgeError",
    "ExecutableProblem",
    "MCPTool",
    "McpToolset",
    "ServerUnavailable",
    "ToolTimeout",
    "load_tools",
]
