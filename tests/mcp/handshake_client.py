"""The MCP handshake completes whatever is wrong with the installation: the official Python
SDK starts `docdexd mcp`, initializes, lists the tools and calls one; prints what it saw as
JSON ({"instructions", "tools", "search_error", "search_text"}).

Usage: handshake_client.py DOCDEXD REPO
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, field, http_streams, input_schema, is_error, structured  # noqa: F401


async def main():
    binary, repo = sys.argv[1:3]
    params = StdioServerParameters(command=binary, args=["mcp", "--repo", repo], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), 30)
            tools = await asyncio.wait_for(session.list_tools(), 30)
            result = await asyncio.wait_for(session.call_tool("docdex_search", {"query": "anything"}), 60)
            print(json.dumps({
                "instructions": field(init, "instructions") or "",
                "tools": [t.name for t in tools.tools],
                "search_error": bool(is_error(result)),
                "search_text": " ".join(getattr(b, "text", "") for b in result.content),
            }))


if __name__ == "__main__":
    asyncio.run(main())
