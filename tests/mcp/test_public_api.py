"""The public surface of `paicli.mcp` is a decision: adding or removing a name fails here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib

import pytest

import paicli.mcp
from tests.conftest import SERVER_PROGRAMS
from tests.imports import APP_SRC, MCP_SRC, fresh_python, imported_modules, python_modules

FAULT_SERVER = SERVER_PROGRAMS / "fault_server.py"


def test_exported_names_are_exactly_the_public_api() -> None:
    assert sorted(paicli.mcp.__all__) == [
        "AudioContent",
        "AuthenticationError",
        "BlobResourceContents",
        "CallToolResult",
        "ClientHandlers",
        "ClientSession",
        "ClosedOnProbe",
        "CommandCheck",
        "Completion",
        "ConnectionClosed",
        "ContentBlock",
        "Dialect",
        "EmbeddedResource",
        "EraCache",
        "GetPromptResult",
        "HandlerError",
        "HttpError",
        "HttpServer",
        "ImageContent",
        "Implementation",
        "Instrumentation",
        "LegacySseTransport",
        "Limits",
        "LoginRequired",
        "McpError",
        "MemoryTransport",
        "MessageTooLarge",
        "Notification",
        "OAuthError",
        "ProcessTransport",
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
        "Sandbox",
        "SandboxSupport",
        "SandboxUnavailable",
        "SandboxedCommand",
        "ServerConfigError",
        "SessionExpired",
        "Skill",
        "SkillContent",
        "SkillFile",
        "SkillVerificationError",
        "StdioServer",
        "StdioTransport",
        "StreamableHttpTransport",
        "TaskFailed",
        "TaskHandle",
        "TaskInfo",
        "TaskStatus",
        "TaskTimeout",
        "TextContent",
        "TextResourceContents",
        "Timeouts",
        "Tool",
        "TraceRecorder",
        "Transport",
        "TransportTraits",
        "TransportWatcher",
        "TransportWrapper",
        "UnknownContent",
        "UnsupportedVersion",
        "check_command",
        "check_sandbox",
        "connect",
        "instrument",
        "sandbox_command",
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


def test_the_mcp_library_never_imports_the_rest_of_paicli_or_ui_libraries() -> None:
    forbidden_ui = ("rich", "prompt_toolkit", "openai", "langchain_core")
    for root, path, _ in python_modules(MCP_SRC):
        for module in imported_modules(root, path):
            if module.startswith("paicli"):
                assert module == "paicli" or module.startswith("paicli.mcp"), (path, module)
            assert not module.startswith(forbidden_ui), (path, module)


# The layers the servers layer must never use (tests/test_layers.py ranks the rest).
NOT_BELOW_SERVERS = (
    "paicli.llm",
    "paicli.tools",
    "paicli.agent",
    "paicli.runtime",
    "paicli.ui",
    "paicli.cli",
)


def test_the_servers_layer_uses_neither_the_model_nor_the_tools_nor_anything_above() -> None:
    forbidden = ("rich", "prompt_toolkit", "openai", "langchain_core", *NOT_BELOW_SERVERS)
    for root, path, name in python_modules(APP_SRC):
        if name.startswith("paicli.servers"):
            for module in imported_modules(root, path):
                assert not module.startswith(forbidden), (path, module)


def test_the_library_distribution_needs_only_the_protocol_core_packages() -> None:
    project = tomllib.loads((MCP_SRC.parent / "pyproject.toml").read_text())["project"]
    assert project["name"] == "paicli-mcp"
    assert sorted(dep.split(">")[0] for dep in project["dependencies"]) == [
        "aiohttp",
        "multidict",
        "orjson",
    ]


@pytest.mark.real
def test_the_library_works_with_the_agent_packages_missing() -> None:
    """Every module of paicli.mcp imports, and a session runs, where the agent's packages
    cannot be imported at all and the application's source is not on the path."""
    script = textwrap.dedent(
        f"""
        import asyncio, importlib, pkgutil, sys
        sys.path = [p for p in sys.path if p != {str(APP_SRC)!r}]
        BLOCKED = ("openai", "rich", "prompt_toolkit", "jsonschema", "paicli.servers",
                   "paicli.tools", "paicli.ui", "paicli.cli", "paicli.agent", "paicli.llm")

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.startswith(BLOCKED):
                    raise ImportError("blocked: " + name)

        sys.meta_path.insert(0, Block())
        import paicli.mcp
        for info in pkgutil.walk_packages(paicli.mcp.__path__, "paicli.mcp."):
            importlib.import_module(info.name)

        async def main():
            server = paicli.mcp.StdioServer(sys.executable, args=[{str(FAULT_SERVER)!r}])
            async with paicli.mcp.connect(server) as session:
                result = await session.call_tool("echo", {{"text": "standalone"}})
                print(result.content[0].text)

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "standalone"


@pytest.mark.real
def test_importing_the_library_loads_neither_metrics_nor_telemetry_packages() -> None:
    fresh_python(
        "import sys, paicli.mcp\n"
        "loaded = [m for m in sys.modules if m.startswith(('prometheus_client', 'opentelemetry'"
        ", 'hashlib'))]\n"
        "assert not loaded, loaded\n"
    )


@pytest.mark.real
def test_importing_the_library_loads_its_errors_only_and_each_name_loads_on_first_use() -> None:
    fresh_python(
        "import sys, paicli.mcp\n"
        "heavy = ('paicli.mcp.session', 'paicli.mcp.types', 'paicli.mcp._connect', 'aiohttp')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "from paicli.mcp import *\n"
        "assert all(getattr(paicli.mcp, name) is not None for name in paicli.mcp.__all__)\n"
        "from paicli.mcp import ClientSession, connect\n"
        "assert 'paicli.mcp.session' in sys.modules\n"
    )


@pytest.mark.real
def test_dir_of_the_library_lists_every_public_name_before_it_is_loaded() -> None:
    # Completion in a REPL, `inspect`, documentation tools ask `dir()`: the lazily loaded
    # names are there before their first use, without loading them.
    fresh_python(
        "import sys, paicli.mcp\n"
        "missing = sorted(set(paicli.mcp.__all__) - set(dir(paicli.mcp)))\n"
        "assert not missing, missing\n"
        "assert 'paicli.mcp.session' not in sys.modules\n"
        "assert '__getattr__' in dir(paicli.mcp)\n"
    )


@pytest.mark.real
def test_a_name_whose_module_fails_to_load_says_why() -> None:
    # An aiohttp without what the HTTP transport uses (another version, a shadowing file):
    # `from paicli.mcp import ...` names the missing attribute, not just the name it wanted
    # (the import statement turns an AttributeError from `__getattr__` into "cannot import
    # name", dropping its cause).
    fresh_python(
        "import sys, types\n"
        "sys.modules['aiohttp'] = types.ModuleType('aiohttp')\n"
        "try:\n"
        "    from paicli.mcp import StreamableHttpTransport\n"
        "except ImportError as exc:\n"
        "    said = str(exc)\n"
        "assert 'StreamableHttpTransport' in said and 'ClientRequest' in said, said\n"
        "import paicli.mcp\n"
        "try:\n"
        "    hasattr(paicli.mcp, 'StreamableHttpTransport')\n"
        "except ImportError as exc:\n"
        "    assert 'ClientRequest' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('hasattr hid the failure')\n"
    )
