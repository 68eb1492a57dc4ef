"""Plugins: folders (or git repositories) bundling commands, agents, skills, hooks and MCP
servers in Claude Code's plugin format; the installed ones and the marketplaces."""
