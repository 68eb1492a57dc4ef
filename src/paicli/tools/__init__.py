"""Tools the agent can call: built-ins (one record each in `_catalog`), MCP servers' tools
(`mcp_toolbox`, with their model-facing names in `naming` and results in `results`), and the
wrappers around them (approval, audit), composed in `registry`."""
