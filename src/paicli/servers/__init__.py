"""paicli.servers: the configured MCP servers' lifecycle: config files (`config`), trust for
project servers (`trust`), one owner task per server (`supervisor`, behind the `manager`
facade, with `tool_caller` and `screening`), the tool catalogue and pins (`catalogue`,
`tool_pins`), and `@server:uri` mentions read from the ready servers (`mentions`). Built on
`paicli.mcp`; never imports the agent, the tools or the UI. What the model sees of a server
(tool names, results) lives in `paicli.tools.mcp`, schema cleaning per provider in
`paicli.llm.schema`."""
