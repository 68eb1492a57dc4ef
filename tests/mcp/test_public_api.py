"""The public surface of `paicli.mcp` is a decision: adding or removing a name fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import paicli.mcp

SRC = Path(paicli.mcp.__file__).parent.parent


def test_exported_names_are_exactly_the_public_api() -> None:
    assert sorted(paicli.mcp.__all__) == [
        "AudioContent",
        "AuthenticationError",
        "BlobResourceContents",
        "CallToolResult",
        "ClientHandlers",
        "ClientSession",
        "Completion",
        "ConnectionClosed",
        "ContentBlock",
        "EmbeddedResource",
        "GetPromptResult",
        "HandlerError",
        "HttpError",
        "HttpServer",
        "ImageContent",
        "Implementation",
        "McpError",
        "MessageTooLarge",
        "Notification",
        "Progress",
        "Prompt",
        "PromptArgument",
        "PromptMessage",
        "ProtocolError",
        "ReadResourceResult",
        "RequestTimeout",
        "Resource",
        "ResourceLink",
        "ResourceTemplate",
        "Root",
        "RpcError",
        "ServerConfigError",
        "StdioServer",
        "TextContent",
        "TextResourceContents",
        "Tool",
        "UnknownContent",
        "UnsupportedVersion",
        "connect",
        "server_from_dict",
    ]
    for name in paicli.mcp.__all__:
        assert hasattr(paicli.mcp, name), name


def test_every_error_derives_from_the_root() -> None:
    errors = [
        getattr(paicli.mcp, n)
        for n in paicli.mcp.__all__
        if n.endswith(("Error", "Closed", "Timeout", "Large", "Version"))
    ]
    assert errors
    for error in errors:
        assert issubclass(error, paicli.mcp.McpError), error


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    package = ".".join(path.relative_to(SRC).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module or ""]).rstrip("."))
            elif node.module:
                found.add(node.module)
    return found


def test_the_mcp_library_never_imports_the_rest_of_paicli_or_ui_libraries() -> None:
    forbidden_ui = ("rich", "prompt_toolkit", "openai", "langchain_core")
    for path in (SRC / "paicli" / "mcp").rglob("*.py"):
        for module in imported_modules(path):
            if module.startswith("paicli"):
                assert module == "paicli" or module.startswith("paicli.mcp"), (path, module)
            assert not module.startswith(forbidden_ui), (path, module)


def test_the_servers_layer_imports_only_the_mcp_library_below_it() -> None:
    forbidden_ui = ("rich", "prompt_toolkit", "openai", "langchain_core")
    for path in (SRC / "paicli" / "servers").rglob("*.py"):
        for module in imported_modules(path):
            if module.startswith("paicli"):
                assert module == "paicli" or module.startswith(("paicli.mcp", "paicli.servers")), (
                    path,
                    module,
                )
            assert not module.startswith(forbidden_ui), (path, module)
