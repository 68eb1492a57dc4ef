"""`paicli acp`: paicli as an Agent Client Protocol agent on stdio, for editors (Zed,
JetBrains, Neovim plugins), on the maintained SDK (`agent-client-protocol`, the optional
extra `paicli-cli[acp]`; only this package imports it, and only `paicli acp` imports this
package).

    wire.StdioChannel        the channel: fds 0/1 taken over, hostile lines answered
    agent.PaicliAgent        initialize, session/new|load|prompt|cancel|set_mode
    session.EditorSession    one Runtime per session; a turn's events as session/update
    updates                  agent events → message/thought chunks, tool calls, plans
    permission.EditorApprover  approvals → session/request_permission
    editor_servers           the editor's mcpServers → paicli config entries
"""

from __future__ import annotations

from paicli.acp.serve import serve

__all__ = ["serve"]
