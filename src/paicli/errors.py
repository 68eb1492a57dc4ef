"""The root of every exception paicli raises on purpose, and the tree below it.

Each layer owns a subtree and translates foreign exceptions (OSError, JSON, the openai SDK, the
MCP library's `McpError`) at its one boundary, re-raising them `from exc`:

    PaicliError
    ├── ConfigFileError          paicli.config_files: a config file cannot be read as one
    │                            (not a regular file, over 1 MiB, too deep, repeated keys)
    ├── ConfigError              paicli.servers.errors: an MCP config file is unusable
    │   ├── InvalidConfig        a file or server entry cannot be used (never leaves the
    │   │                        config modules: loading turns it into a problem line)
    │   └── ConfigWriteError     `paicli mcp add/remove` left the file exactly as it was
    │       └── ServerExists     `paicli mcp add` of a name the file has, without --force
    ├── ServerError              paicli.servers.errors: a configured server cannot serve a call
    │   ├── UnknownServer        no server has that name
    │   ├── ServerNotReady       it is starting, failed, disabled or stopped
    │   └── ServerCallFailed     the request failed; the library's McpError is the cause
    ├── LoginFailed              paicli.servers.oauth: an OAuth login could not finish
    ├── TraceError               paicli.servers.traces: a trace file cannot be read
    ├── PromptProblem            paicli.servers.prompts: an MCP prompt command cannot run
    │                            (unknown, missing or too many arguments, the server failed)
    ├── FormError                paicli.asks.elicitation: a server's form cannot be shown,
    │                            or an answer does not fit its field (asked again)
    ├── RuleError                paicli.permissions.rules: a permission rule cannot be read
    │                            (also ValueError; loading turns it into a problem line)
    ├── DefinitionError          paicli.subagents.definitions: a sub-agent definition file
    │                            cannot be used (loading turns it into a problem line)
    ├── FrontMatterError         paicli.subagents.front_matter: a Markdown file's YAML front
    │                            matter cannot be read
    ├── MetricsUnavailable       paicli.observe.metrics: --metrics-port without prometheus-client
    ├── LlmError                 paicli.llm.errors: a model call failed
    │   ├── AuthenticationFailed, ModelNotFound, EndpointUnreachable,
    │   └── RequestRejected, ServiceUnavailable
    ├── ImageProblem             paicli.llm.images: bytes that are not an image the model
    │                            can take (becomes a line for the user)
    ├── UsageError               paicli.cli.errors: the command line or its input cannot
    │                            be used (a malformed `paicli mcp add`, stdin too large)
    ├── BadInputLine             paicli.headless.input: a `--input-format stream-json` line
    │                            is not a user message (names the line)
    ├── ArmExit                  paicli.ui.prompt_line: Ctrl+C at an empty prompt (the REPL
    │                            warns and leaves on the next one; never leaves the REPL)
    ├── BridgeError              paicli.langchain.errors: the bridge's subtree (drawn there)
    ├── TurnFailed               paicli.acp.session: an editor's turn could not end (the
    │                            model endpoint failed); the editor gets a JSON-RPC error
    ├── TaskFileError            paicli.batch.tasks: `paicli batch`'s tasks file cannot be
    │                            read at all (a bad line is a problem line, not this)
    ├── WorkspaceError           paicli.batch.workspace: a task's folder cannot be had (no
    │                            such folder, not a repository, a bad ref): the task fails
    ├── RayUnavailable           paicli.batch.ray_run: --ray without Ray, or its address
    │                            does not answer (one line, exit 2)
    └── ToolError                paicli.tools.errors: inside a tool call or tool listing
        ├── PathRefused          a path argument leaves the file tools' root
        ├── NotRegularFile       a file tool met a FIFO, socket or device
        ├── NotAFile             checkpoints: not a file a tool writes (TooLarge: over the cap)
        ├── ToolNameCollision    two MCP tools map to one model-facing name
        ├── UnknownToolName      no tool is offered under a model-facing name
        ├── UrlRefused           paicli.tools.web: a URL web_fetch will not reach (also
        │                        ValueError)
        ├── FetchFailed          a fetch brought no page (refused address, HTTP error,
        │                        content type, deadline)
        └── SearchFailed         web_search's provider gave no usable answer

A tool failure is data, not an exception: a `ToolError` becomes an error result the model
reads and never leaves the tools layer; a user's "no" is an outcome too. Cancellation stays
`asyncio.CancelledError`. `paicli.mcp` is a standalone library with its own root (`McpError`),
wrapped where the servers layer calls it.
"""

from __future__ import annotations

__all__ = ["PaicliError"]


class PaicliError(Exception):
    """Anything paicli raises on purpose; `str(error)` is a message fit for the user."""
