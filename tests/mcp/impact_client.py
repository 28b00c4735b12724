"""Drives docdex's change impact tools over MCP (stdio or streamable HTTP) with the official
MCP Python SDK: docdex_impact's diff form, docdex_run_tests and docdex_repo_map, on the Rust
fixture repo with the discount changed (the caller edits it before starting this).

Usage: impact_client.py stdio DOCDEXD REPO | impact_client.py http URL REPO
(over HTTP the token comes from DOCDEX_TEST_TOKEN). Exits non-zero on the first failed check.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, http_streams, input_schema, is_error, structured

TOOLS = {"docdex_impact", "docdex_run_tests", "docdex_repo_map"}


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


async def refused(session, tool, arguments, needle):
    """A call that must fail, naming the problem (a tool error or a protocol error)."""
    try:
        result = await session.call_tool(tool, arguments)
        check(is_error(result), f"{tool}{arguments} answered: {text_of(result)}")
        check(needle in text_of(result), f"{tool}{arguments}: {needle!r} not in {text_of(result)}")
    except McpError as err:
        check(needle in str(err), f"{tool}{arguments}: {needle!r} not in {err}")


async def exercise(session, repo):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(TOOLS <= set(tools), f"missing tools: {TOOLS - set(tools)}")
    for name in TOOLS:
        check("Example" in (tools[name].description or ""), f"{name} has no usage example")
        check(input_schema(tools[name]).get("type") == "object", f"{name} has no object schema")

    result = await call(session, "docdex_impact", {"diff": "working", "repo": repo})
    impact = structured(result)
    check(impact["changed_symbols"][0]["name"] == "discount", f"impact {impact}")
    names = [t["name"] for t in impact["tests"]]
    check("total_subtracts_the_discount" in names and "tax_is_a_fifth" not in names, f"tests {names}")
    check("discount" in text_of(result) and "tests" in text_of(result), text_of(result))
    await refused(session, "docdex_impact", {"diff": "working", "file": "src/cart.rs", "repo": repo}, "not both")
    await refused(session, "docdex_impact", {"diff": "--output=x", "repo": repo}, "not a revision")

    result = await call(session, "docdex_run_tests", {"affected": "working", "timeout_secs": 300, "repo": repo})
    run = structured(result)
    check(run["runner"] == "cargo" and run["failed"] == 2 and run["passed"] == 0, f"run {run}")
    check("output_tail" not in run and "FAILED" in text_of(result), "the tail is in the text, not repeated")
    await refused(session, "docdex_run_tests", {"target": "../..", "repo": repo}, "not a file or folder")

    result = await call(session, "docdex_repo_map", {"budget_tokens": 200, "focus": ["src/cart.rs"], "repo": repo})
    repo_map = structured(result)
    check(repo_map["files"][0]["path"] == "src/cart.rs" and repo_map["tokens"] <= 200, f"map {repo_map}")
    check("src/cart.rs:" in text_of(result), text_of(result))


async def main():
    transport, target, repo = sys.argv[1:4]
    if transport == "stdio":
        # The SDK passes the server only a safe subset of the environment unless told otherwise.
        params = StdioServerParameters(command=target, args=["mcp"], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, repo)
    else:
        async with http_streams(target, os.environ.get("DOCDEX_TEST_TOKEN")) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, repo)
    print("all impact checks passed", file=sys.stderr)


asyncio.run(main())
