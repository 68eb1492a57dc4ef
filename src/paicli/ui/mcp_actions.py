"""The actions `/mcp ACTION NAME` takes: the slash-command table completes them and the `/mcp`
view runs them, so both read this one list (and neither imports the other)."""

__all__ = ["MCP_ACTIONS"]

MCP_ACTIONS = (
    "approve",
    "restart",
    "logs",
    "disable",
    "enable",
    "tools",
    "schema",
    "resources",
    "prompts",
    "login",
    "logout",
)
