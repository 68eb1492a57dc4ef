"""paicli: an MCP-native terminal agent and MCP client library."""

__version__ = "0.1.0"
