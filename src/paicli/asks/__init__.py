"""What MCP servers ask of paicli (roots, elicitation forms, sampling) and how it answers."""
