"""The client the official MCP conformance suite drives (see tests/conformance/run.sh).

The harness runs `python client.py <server-url>` with MCP_CONFORMANCE_SCENARIO naming the
scenario, MCP_CONFORMANCE_PROTOCOL_VERSION the revision to speak, and for some scenarios
MCP_CONFORMANCE_CONTEXT (JSON) with scenario data. Exit status 0 means the client did what
the scenario asks; the harness checks the wire traffic itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, cast

import aiohttp

from paicli import mcp
from paicli.mcp._versions import ProtocolChoice
from paicli.mcp.auth import OAuth

Json = dict[str, Any]
Scenario = Callable[[mcp.ClientSession, Json], Awaitable[None]]


async def elicit(params: Json) -> Json:
    """Accept every form; fields without a default get a plain value (the client fills in
    schema defaults for the rest, SEP-1034)."""
    schema = params.get("requestedSchema") or {}
    content: Json = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or "default" in prop:
            continue
        kind = prop.get("type")
        if kind == "boolean":
            content[name] = True
        elif kind in ("number", "integer"):
            content[name] = 1
        elif kind == "string":
            content[name] = (prop.get("enum") or ["test"])[0]
    return {"action": "accept", "content": content}


async def sample(params: Json) -> Json:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "conformance"},
        "model": "paicli-conformance",
        "stopReason": "endTurn",
    }


class HeadlessRedirect:
    """The browser step without a browser: the suite's authorization endpoint approves at
    once and redirects; the redirect's `Location` is the callback (never listened on)."""

    redirect_uri = "http://localhost:3000/callback"

    async def authorize(self, url: str) -> str:
        async with (
            aiohttp.ClientSession() as client,
            client.get(url, allow_redirects=False) as response,
        ):
            location = response.headers.get("Location")
            if location is None:
                raise mcp.OAuthError(f"the authorization endpoint answered {response.status}")
            return location


# The Client ID Metadata Document URL the suite's CIMD scenarios expect.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_for(scenario: str, context: Json) -> OAuth:
    if scenario == "auth/client-credentials-basic":
        return OAuth(
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            grant="client_credentials",
        )
    if scenario == "auth/client-credentials-jwt":
        return OAuth(
            client_id=context.get("client_id"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm"),
            grant="client_credentials",
        )
    if scenario == "auth/enterprise-managed-authorization":
        return OAuth(
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            assertion=context.get("idp_id_token"),
            idp_token_endpoint=context.get("idp_token_endpoint"),
            idp_client_id=context.get("idp_client_id"),
            grant="enterprise_managed",
        )
    if scenario == "auth/wif-jwt-bearer":
        return OAuth(
            client_id=context.get("client_id"),
            assertion=context.get("valid_jwt"),
            grant="jwt_bearer",
        )
    return OAuth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_name="paicli-conformance",
        client_metadata_url=CLIENT_METADATA_URL,
        redirect=HeadlessRedirect(),
    )


HANDLERS = mcp.ClientHandlers(
    roots=[mcp.Root("file:///tmp", "tmp")], sampling=sample, elicitation=elicit
)


async def list_only(session: mcp.ClientSession, context: Json) -> None:
    await session.list_tools()


async def tools_call(session: mcp.ClientSession, context: Json) -> None:
    tools = {tool.name: tool for tool in await session.list_tools()}
    name = "add_numbers" if "add_numbers" in tools else next(iter(tools))
    await session.call_tool(name, {"a": 5, "b": 3})


async def call_named(session: mcp.ClientSession, *names: str) -> None:
    tools = {tool.name for tool in await session.list_tools()}
    for name in names:
        if name in tools:
            await session.call_tool(name, {})


async def elicitation_defaults(session: mcp.ClientSession, context: Json) -> None:
    await call_named(session, "test_client_elicitation_defaults")


async def sse_retry(session: mcp.ClientSession, context: Json) -> None:
    await call_named(session, "test_reconnection")


async def request_state(session: mcp.ClientSession, context: Json) -> None:
    await call_named(
        session,
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
    )


async def standard_headers(session: mcp.ClientSession, context: Json) -> None:
    for tool in await session.list_tools():
        await session.call_tool(tool.name, synthesize(tool.input_schema))
    for resource in await session.list_resources():
        await session.read_resource(resource.uri)
    for prompt in await session.list_prompts():
        await session.get_prompt(prompt.name, {a.name: "test" for a in prompt.arguments})


async def custom_headers(session: mcp.ClientSession, context: Json) -> None:
    await session.list_tools()
    for call in context.get("toolCalls", []):
        await session.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(session: mcp.ClientSession, context: Json) -> None:
    names = {tool.name for tool in await session.list_tools()}
    if names != {"valid_tool"}:
        raise SystemExit(f"invalid tools were offered: {sorted(names - {'valid_tool'})}")
    await session.call_tool("valid_tool", {"region": "us-west1"})


async def schema_preservation(session: mcp.ClientSession, context: Json) -> None:
    tools = {tool.name: tool for tool in await session.list_tools()}
    focal = tools.get("json_schema_2020_12_tool")
    if focal is not None and "json_schema_echo" in tools:
        await session.call_tool("json_schema_echo", {"schema": focal.input_schema})


async def skills_listed(session: mcp.ClientSession, context: Json) -> None:
    """SEP-2640, no prefetch: the skills are listed and nothing of them is read."""
    await session.list_skills()


async def skills_loaded(session: mcp.ClientSession, context: Json) -> None:
    """SEP-2640, verification: each listed skill is loaded (its SKILL.md read and
    verified), then its other files are read as a model following its references would; a
    skill that fails verification is refused, and none of its files is read."""
    for skill in await session.list_skills():
        try:
            await session.read_skill(skill)
        except mcp.SkillVerificationError as exc:
            print(f"conformance client: refused: {exc}", file=sys.stderr)
            continue
        for listed in skill.files or ():
            if listed.uri != skill.uri:
                await session.read_skill(skill, listed.uri)


async def call_test_tool(session: mcp.ClientSession, context: Json) -> None:
    await call_named(session, "test-tool")


def synthesize(schema: Json) -> Json:
    """Arguments for a tool the scenario does not describe: simple values per type."""
    values = {"string": "test", "number": 1, "integer": 1, "boolean": True, "object": {}}
    properties = schema.get("properties") or {}
    return {
        name: values.get(str(prop.get("type")), "test")
        for name, prop in properties.items()
        if isinstance(prop, dict)
    }


SCENARIOS: dict[str, Scenario] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": list_only,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_preservation,
    "auth": call_test_tool,
    "sep-2640-client-no-prefetch": skills_listed,
    "sep-2640-client-verify-digest": skills_loaded,
    "sep-2640-client-verify-size": skills_loaded,
    "sep-2640-client-verify-frontmatter": skills_loaded,
}


async def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    context: Json = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    url = sys.argv[-1]
    auth = oauth_for(scenario, context) if scenario.startswith("auth/") else None
    protocol = cast("ProtocolChoice", version)  # HttpServer refuses a version it does not know
    server = mcp.HttpServer(
        url, transport="http", protocol=protocol, handshake_timeout=20, auth=auth
    )
    run = SCENARIOS.get(scenario.split("/")[0], list_only)
    try:
        async with mcp.connect(server, handlers=HANDLERS) as session:
            await run(session, context)
    except mcp.McpError as exc:
        print(f"conformance client: {scenario}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(asyncio.run(main()))
