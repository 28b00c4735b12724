"""An MCP client (the official Python SDK) that shares its workspace root, as editors do, and
searches without naming a repo: the daemon must bind the root as the session's default
repo, mount it (its first index run starts) and answer once it is searchable.

Usage: roots_client.py URL REPO QUERY [--token T]
Prints the search's structured result as JSON.
"""

import argparse
import asyncio
import json
import pathlib
import sys

from mcp import ClientSession
import mcp.types as types
from compat import McpError, field, http_streams, input_schema, is_error, structured  # noqa: F401


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("repo")
    parser.add_argument("query")
    parser.add_argument("--token")
    args = parser.parse_args()
    root_uri = pathlib.Path(args.repo).resolve().as_uri()

    async def list_roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=root_uri, name="workspace")])

    async with http_streams(args.url, args.token) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            result = await session.call_tool("docdex_search", {"query": args.query, "limit": 3})
            if is_error(result):
                print("search failed: " + " ".join(getattr(b, "text", "") for b in result.content), file=sys.stderr)
                sys.exit(1)
            print(json.dumps(structured(result)))


if __name__ == "__main__":
    asyncio.run(main())
