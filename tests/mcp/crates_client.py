"""Drives docdex's library docs tools over MCP stdio with the official MCP Python SDK:
docdex_libs_fetch on a repo, then the Rust crate tools on tokio and serde at the versions
that repo locks.

Usage: crates_client.py DOCDEXD FIXTURE_REPO CARGO_REPO
Exits non-zero with a message on the first failed check.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, input_schema, is_error, structured

TOOLS = {
    "docdex_libs_fetch",
    "docdex_crate_summary",
    "docdex_crate_search",
    "docdex_crate_item",
    "docdex_crate_modules",
    "docdex_crate_examples",
    "docdex_crate_versions",
}


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    check(not is_error(result), f"{tool}{arguments} failed: {text_of(result)}")
    return result


async def exercise(session, fixture, cargo_repo):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(TOOLS <= set(tools), f"missing tools: {TOOLS - set(tools)}")
    # The older names are answered (below) but not listed beside the new ones.
    check(not {"docdex_item_doc", "docdex_module_tree"} & set(tools), "older crate tool names listed")
    for name in TOOLS:
        check("Example" in (tools[name].description or ""), f"{name} has no usage example")
        check(input_schema(tools[name]).get("type") == "object", f"{name} has no object schema")

    # libs_fetch over MCP: the fixture's npm package is indexed and searchable as a library.
    result = await call(session, "docdex_libs_fetch", {"repo_path": fixture})
    names = [lib["name"] for lib in structured(result)["libraries"]]
    check(names == ["quiet-retry"], f"libraries {names}")
    result = await call(session, "docdex_search", {"query": "exponential backoff", "source": "library", "lib": "quiet-retry", "repo_path": fixture})
    hits = structured(result)["hits"]
    check(hits and hits[0]["library"] == "quiet-retry", f"library hits {hits}")

    # Aliases: serde::Deserialize is serde::de::Deserialize.
    result = await call(session, "docdex_crate_item", {"crate_name": "serde", "path": "serde::Deserialize", "repo_path": cargo_repo})
    doc = structured(result)
    check(doc["path"] == "serde::de::Deserialize" and doc["kind"] == "trait", f"item_doc {doc}")
    check("serde::de::Deserialize" in text_of(result) and "```" in text_of(result), text_of(result))

    # A typo gets suggestions, as a tool error with the fix.
    result = await session.call_tool("docdex_crate_item", {"crate_name": "tokio", "path": "tokio::spwan", "repo_path": cargo_repo})
    check(is_error(result), f"typo answered: {text_of(result)}")
    check("did you mean: tokio::spawn" in text_of(result), f"no suggestion: {text_of(result)}")
    result = await call(session, "docdex_item_doc", {"crate_name": "tokio", "path": "tokio::spawn", "repo_path": cargo_repo})
    check(structured(result)["path"] == "tokio::task::spawn", f"tokio::spawn {structured(result)}")

    # Examples are whole code blocks; numbers may come as strings.
    result = await call(session, "docdex_crate_examples", {"crate_name": "tokio", "item": "tokio::select", "limit": "3", "repo_path": cargo_repo})
    examples = structured(result)["examples"]
    check(len(examples) == 3, f"examples {examples}")
    text = text_of(result)
    for example in examples:
        check(example["source"] == "tokio::select", f"example source {example}")
    check(text.count("```") == 6, f"not three whole blocks: {text}")
    rust_blocks = [b for b in text.split("```")[1::2] if b.startswith("rust\n")]
    check(rust_blocks, f"no Rust example: {text}")
    for block in rust_blocks:
        check(block.count("{") == block.count("}"), f"a fragment: {block}")
    check(any("tokio::select!" in b for b in rust_blocks), f"no select! example: {text}")

    result = await call(session, "docdex_crate_search", {"crate_name": "tokio", "query": "run blocking code on a thread pool", "kind": "fn", "limit": "5", "repo_path": cargo_repo})
    paths = [hit["path"] for hit in structured(result)["hits"]]
    check("tokio::task::spawn_blocking" in paths, f"search {paths}")
    check(all(hit["kind"] == "fn" for hit in structured(result)["hits"]), "kind filter")

    result = await call(session, "docdex_crate_summary", {"crate_name": "tokio", "repo_path": cargo_repo})
    summary = structured(result)
    check(summary["resolved_by"] == "locked" and summary["items"] > 500, f"summary {summary}")
    check(len(summary["description"]) <= 1000 and summary["kinds"]["fn"] > 10, f"summary {summary}")

    for tool in ("docdex_crate_modules", "docdex_module_tree"):
        result = await call(session, tool, {"crate_name": "serde", "repo_path": cargo_repo})
        modules = {m["path"]: m for m in structured(result)["modules"]}
        check(modules["serde"]["depth"] == 0 and modules["serde::de"]["items"] > 10, f"{tool} {list(modules)[:10]}")

    result = await call(session, "docdex_crate_versions", {"crate_name": "serde"})
    versions = structured(result)
    check(versions["latest"] and versions["versions"][0]["version"], f"versions {versions}")
    check(any(v["yanked"] for v in versions["versions"]) or len(versions["versions"]) > 100, "no yanked flags read")

    try:
        result = await session.call_tool("docdex_crate_search", {"crate_name": "tokio", "query": "x", "limit": 500})
        check(is_error(result) and "between 1 and 50" in text_of(result), f"limit 500: {text_of(result)}")
    except McpError as err:
        check("50" in str(err), str(err))


async def main():
    docdexd, fixture, cargo_repo = sys.argv[1:4]
    # The SDK passes the server only a safe subset of the environment unless told otherwise:
    # the test's DOCDEX_HOME must reach it.
    params = StdioServerParameters(command=docdexd, args=["mcp", "--repo", fixture], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, fixture, cargo_repo)
    print("ok")


asyncio.run(main())
