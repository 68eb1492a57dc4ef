"""Tool sources the agent can call and what they share: the toolbox interface and the
`ToolboxWrapper` base (`base`), the built-in tools (`builtin/`, one record each in
`builtin/catalog`), MCP servers' tools (`mcp/`: the toolbox, model-facing names, results),
tool search (`search/`), reading shell commands (`shell/`), the paths that always ask
(`protected`), the combination of sources (`combined`) and redaction of what reaches the
model (`redacting`). Approval (`paicli.permissions`) and audit (`paicli.audit`) wrap them."""
