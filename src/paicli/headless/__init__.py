"""Headless runs that programs read: `paicli -p` speaking Claude Code's `stream-json` and
`json` formats (`transcript`), user turns as JSON lines on stdin (`input`), an MCP tool that
decides approvals (`prompt_tool`), and Claude Code's tool-rule flags (`tool_flags`).

Nothing here writes to the terminal: the UI's printer writes what `Transcript` returns
(`paicli.ui.stream_output`). `docs/stream-json.schema.json` is the schema of every message.
"""
