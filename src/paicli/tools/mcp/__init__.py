"""The MCP servers' tools as one toolbox: model-facing names, results, the toolbox itself."""
