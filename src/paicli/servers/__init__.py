"""paicli.servers: MCP servers as a product: config files, tool naming, schema cleaning,
results for the model. Built on `paicli.mcp`; never imports the agent or the UI."""
