"""Walks every docdex MCP tool with the official MCP Python SDK and calls it twice: with a
misspelt parameter and with an unknown one. Each call must fail naming the parameter, and
the misspelt one must be answered with the name the tool takes ("did you mean").

Usage: params_client.py DOCDEXD REPO. Exits non-zero on the first failed check.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, input_schema, is_error


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def refusal(session, tool, arguments):
    """The message of a call that must fail (a protocol error or a tool error)."""
    try:
        result = await session.call_tool(tool, arguments)
    except McpError as err:
        return str(err)
    check(is_error(result), f"{tool}{arguments} was answered: {text_of(result)[:300]}")
    return text_of(result)


def misspelt(name):
    """The name with its last two letters swapped: one transposition away."""
    return name[:-2] + name[-1] + name[-2]


async def exercise(session):
    await session.initialize()
    tools = (await session.list_tools()).tools
    check(len(tools) >= 20, f"only {len(tools)} tools")
    for tool in tools:
        properties = sorted((input_schema(tool).get("properties") or {}).keys())
        if not properties:
            # Nothing to misspell; an unknown parameter is still refused by name.
            message = await refusal(session, tool.name, {"zzz_unknown": 1})
            check('unknown parameter "zzz_unknown"' in message, f"{tool.name} with zzz_unknown: {message}")
            continue
        name = next((p for p in properties if len(p) >= 4 and p[-1] != p[-2]), properties[0])
        wrong = misspelt(name)
        message = await refusal(session, tool.name, {wrong: "x"})
        check(f'"{wrong}"' in message and f'did you mean "{name}"' in message, f"{tool.name} with {wrong}: {message}")
        message = await refusal(session, tool.name, {"zzz_unknown": 1})
        check('unknown parameter "zzz_unknown"' in message, f"{tool.name} with zzz_unknown: {message}")
        check(name in message, f"{tool.name}: the parameters it takes are not listed: {message}")
    print(f"{len(tools)} tools refuse misspelt and unknown parameters by name", file=sys.stderr)


async def main():
    docdexd, repo = sys.argv[1:3]
    params = StdioServerParameters(command=docdexd, args=["mcp", "--repo", repo], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session)
    print("all parameter checks passed", file=sys.stderr)


asyncio.run(main())
