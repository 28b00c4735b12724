"""Drives docdex's code intelligence tools over MCP (stdio or streamable HTTP) with the
official MCP Python SDK: docdex_symbols, docdex_references, docdex_callers (both
directions), docdex_impact and docdex_ast_query on a repo of the Rust and Python fixture
projects, their paging and their errors.

Usage: code_client.py stdio DOCDEXD REPO | code_client.py http URL REPO
(over HTTP the token comes from DOCDEX_TEST_TOKEN). Exits non-zero on the first failed check.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, http_streams, input_schema, is_error, structured

TOOLS = {"docdex_symbols", "docdex_references", "docdex_callers", "docdex_impact", "docdex_ast_query"}


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

    await call(session, "docdex_index", {"repo": repo})

    result = await call(session, "docdex_symbols", {"name": "Cart", "kind": "struct", "repo": repo})
    symbols = structured(result)["symbols"]
    check(symbols and symbols[0]["path"] == "rust/src/cart.rs" and symbols[0]["line"] == 6, f"symbols {symbols}")
    check("pub struct Cart" in text_of(result), text_of(result))
    # Paging: a page of one, then the next.
    result = await call(session, "docdex_symbols", {"name": "*", "limit": 1, "repo": repo})
    first = structured(result)
    check(len(first["symbols"]) == 1 and first["next_offset"] == 1, f"first page {first}")
    result = await call(session, "docdex_symbols", {"name": "*", "limit": "1", "offset": 1, "repo": repo})
    check(structured(result)["symbols"][0] != first["symbols"][0], "the second page repeats the first")

    result = await call(session, "docdex_references", {"name": "check", "path": "rust/src/util/strings.rs", "line": 2, "repo": repo})
    refs = structured(result)["references"]
    check(any(r["path"] == "rust/src/cart.rs" and r["line"] == 21 and r["resolution"] == "import" for r in refs), f"references {refs}")

    result = await call(session, "docdex_callers", {"name": "check", "path": "rust/src/util/strings.rs", "line": 2, "repo": repo})
    callers = structured(result)["callers"]
    check(callers and callers[0]["name"] == "add" and callers[0]["call_line"] == 21, f"callers {callers}")
    result = await call(session, "docdex_callers", {"name": "Cart::add", "direction": "callees", "repo": repo})
    callees = [c["name"] for c in structured(result)["callees"]]
    check("check" in callees and "log" in callees, f"callees {callees}")

    result = await call(session, "docdex_impact", {"file": "python/shop/cart.py", "repo": repo})
    impact = structured(result)
    check([e["path"] for e in impact["imports"]] == ["python/shop/helpers.py"], f"impact {impact}")
    check(any(e["path"] == "python/main.py" for e in impact["imported_by"]), f"impact {impact}")

    result = await call(session, "docdex_ast_query", {"language": "python", "query": "(class_definition name: (identifier) @name)", "repo": repo})
    matches = structured(result)["matches"]
    check(any(m["path"] == "python/shop/cart.py" and m["line"] == 5 for m in matches), f"matches {matches}")
    check("Cart" in text_of(result), text_of(result))

    # Errors name the problem and the fix.
    await refused(session, "docdex_symbols", {"name": "Cart", "kind": "klass", "repo": repo}, "kind")
    await refused(session, "docdex_symbols", {"nme": "Cart", "repo": repo}, "nme")
    await refused(session, "docdex_references", {"name": "NoSuchThing", "repo": repo}, "NoSuchThing")
    await refused(session, "docdex_callers", {"name": "check", "direction": "sideways", "repo": repo}, "direction")
    await refused(session, "docdex_impact", {"file": "nope.py", "repo": repo}, "nope.py")
    await refused(session, "docdex_ast_query", {"language": "python", "query": "(class_definition nam: (identifier) @n)", "repo": repo}, "query")


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
    print("all code checks passed", file=sys.stderr)


asyncio.run(main())
