"""Tools the agent can call: built-ins, MCP servers' tools, and the wrappers around them."""
