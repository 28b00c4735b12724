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
from mcp.client.streamable_http import streamablehttp_client
import mcp.types as types


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

    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    async with streamablehttp_client(args.url, headers=headers) as (read, write, _):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            result = await session.call_tool("docdex_search", {"query": args.query, "limit": 3})
            if result.isError:
                print("search failed: " + " ".join(getattr(b, "text", "") for b in result.content), file=sys.stderr)
                sys.exit(1)
            print(json.dumps(result.structuredContent))


if __name__ == "__main__":
    asyncio.run(main())
