// Drives docdex's MCP server with the official TypeScript SDK (@modelcontextprotocol/sdk,
// installed by scripts/test.sh into target/node), over stdio or streamable HTTP.
//
// Usage: node ts_client.mjs stdio DOCDEXD REPO
//        node ts_client.mjs http URL REPO [TOKEN]
// Exits non-zero with a message on the first failed check.

import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

// The SDK lives in target/node, not next to this file.
// (A directory for createRequire must end with a slash.)
const sdkRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../target/node") + "/";
const require = createRequire(sdkRoot);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

const text = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");

function noUnions(schema, where) {
  if (Array.isArray(schema)) return schema.forEach((s) => noUnions(s, where));
  if (schema && typeof schema === "object") {
    for (const key of ["anyOf", "oneOf", "allOf"]) check(!(key in schema), `${where}: ${key}`);
    check(!Array.isArray(schema.type) && schema.type !== "null", `${where}: union type ${JSON.stringify(schema.type)}`);
    for (const [key, value] of Object.entries(schema)) noUnions(value, `${where}.${key}`);
  }
}

const [transportName, target, repo, token] = process.argv.slice(2);
const transport =
  transportName === "stdio"
    ? new StdioClientTransport({ command: target, args: ["mcp", "--repo", repo], env: process.env })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
      });
const client = new Client({ name: "docdex-ts-check", version: "1.0.0" });
await client.connect(transport);
check(client.getServerVersion().name === "docdex", `server ${JSON.stringify(client.getServerVersion())}`);

const { tools } = await client.listTools();
check(tools.length >= 8, `${tools.length} tools`);
for (const tool of tools) {
  noUnions(tool.inputSchema, tool.name);
  check(tool.inputSchema.type === "object", `${tool.name} schema`);
}

const call = (name, args) => client.callTool({ name, arguments: args });

let result = await call("docdex_index", { repo_path: repo });
check(!result.isError, `index: ${text(result)}`);
result = await call("docdex_search", { query: "rate_limit per minute", limit: 3, repo_path: repo });
check(!result.isError && result.structuredContent.hits[0].path === "src/throttle.rs", `search: ${text(result)}`);
// Pages: the second hit of a ranking is the first hit at offset 1.
const full = await call("docdex_search", { query: "minute night storage", limit: 5, mode: "lexical", repo_path: repo });
const second = await call("docdex_search", { query: "minute night storage", limit: 5, mode: "lexical", offset: 1, repo_path: repo });
check(full.structuredContent.hits.length >= 2, `search hits: ${text(full)}`);
check(second.structuredContent.hits[0].path === full.structuredContent.hits[1].path, "offset does not page");
result = await call("docdex_open", { path: "src/throttle.rs", line_start: 2, line_end: 3, repo_path: repo });
check(!result.isError && text(result).includes("2 | pub fn rate_limit"), `open: ${text(result)}`);
result = await call("docdex_files", { glob: "src/*.rs", repo_path: repo });
check(!result.isError && result.structuredContent.files.length === 2, `files: ${text(result)}`);
result = await call("docdex_memory_save", { text: "Throttling is per client id.", repo_path: repo });
check(!result.isError, `memory save: ${text(result)}`);
const id = result.structuredContent.id;
result = await call("docdex_memory_recall", { query: "how are clients throttled", k: "2", repo_path: repo });
check(!result.isError && result.structuredContent.items.some((i) => i.id === id), `recall: ${text(result)}`);
result = await call("docdex_status", { repo_path: repo });
check(!result.isError && result.structuredContent.indexed === true, `status: ${text(result)}`);
// Errors are tool errors with the hint, never protocol failures.
result = await call("docdex_search", { query: "x", repo_path: path.join(os.tmpdir(), "docdex-no-such-repo") });
check(result.isError && text(result).includes("does not exist"), `unknown repo: ${text(result)}`);
result = await call("docdex_search", { query: "x", limit: 0, repo_path: repo });
check(result.isError && text(result).includes("between 1 and"), `limit 0: ${text(result)}`);

await client.close();
console.error("all TypeScript MCP checks passed");
