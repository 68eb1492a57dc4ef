#!/usr/bin/env node
// echo, word_count and now as an MCP server over stdio: Node.js (18 or newer), no packages.
//
// Full MCP (the `initialize` handshake, protocol versions 2024-11-05 to 2025-11-25): one JSON
// message per line on stdin, one answer per line on stdout, logs on stderr only (console.error,
// never console.log). Run it with `paicli mcp probe -- node examples/tools/node/tools.js`.
"use strict";
const readline = require("node:readline");

const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const TEXT_ARGUMENT = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
};
const TOOLS = [
  { name: "echo", description: "Return the text unchanged.", inputSchema: TEXT_ARGUMENT },
  {
    name: "word_count",
    description: "Count the words of a text (runs of non-blank characters).",
    inputSchema: TEXT_ARGUMENT,
    outputSchema: {
      type: "object",
      properties: { words: { type: "integer" } },
      required: ["words"],
    },
  },
  {
    name: "now",
    description: "The current time in UTC, as ISO 8601 (2026-01-31T12:00:00Z).",
    inputSchema: { type: "object", properties: {} },
  },
];

// The result of one tool call (an MCP CallToolResult).
function call(name, args) {
  if (name === "echo") {
    return { content: [{ type: "text", text: String(args.text ?? "") }] };
  }
  if (name === "word_count") {
    const words = String(args.text ?? "").split(/\s+/).filter((w) => w !== "").length;
    return {
      content: [{ type: "text", text: JSON.stringify({ words }) }],
      structuredContent: { words },
    };
  }
  if (name === "now") {
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    return { content: [{ type: "text", text: stamp }] };
  }
  return { content: [{ type: "text", text: `unknown tool: ${name}` }], isError: true };
}

// The result of one request, or undefined for a method we do not have.
function answer(method, params) {
  if (method === "initialize") {
    const asked = params.protocolVersion;
    return {
      protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[0],
      capabilities: { tools: {} },
      serverInfo: { name: "example-tools-node", version: "1.0.0" },
    };
  }
  if (method === "ping") return {};
  if (method === "tools/list") return { tools: TOOLS };
  if (method === "tools/call") return call(params.name, params.arguments ?? {});
  return undefined;
}

function send(message) {
  // One line per message. Writes to a pipe are synchronous in Node on Linux and macOS, so
  // nothing is lost when the process exits.
  process.stdout.write(JSON.stringify(message) + "\n");
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
    return;
  }
  if (request === null || typeof request !== "object" || !("id" in request)) return;
  const result = answer(request.method, request.params ?? {});
  if (result === undefined) {
    const error = { code: -32601, message: `method not found: ${request.method}` };
    send({ jsonrpc: "2.0", id: request.id, error });
  } else {
    send({ jsonrpc: "2.0", id: request.id, result });
  }
});
// End of input: the client closed our stdin, so we are done.
lines.on("close", () => process.exit(0));
