"""Checks that docdex's MCP results stay within their token budget on a large repo and that
paging returns everything exactly once, with the official MCP Python SDK over stdio.

Usage: budget_client.py DOCDEXD REPO BUDGET_TOKENS EXPECTED_HITS_JSON LARGEST_FILE
       (DOCDEXD may be http://…/v1/mcp: then the running daemon is used, with DOCDEX_TEST_TOKEN)
  EXPECTED_HITS_JSON: a file with the CLI's `search --json --mode lexical --limit 200` answer
  LARGEST_FILE: repo-relative path of the file to page through
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from compat import McpError, field, http_streams, input_schema, is_error, structured  # noqa: F401

QUERY = "spawn a task on the runtime"


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def size_of(result):
    text = "".join(getattr(block, "text", "") for block in result.content)
    return len(text) + len(json.dumps(structured(result) or {}, separators=(",", ":")))


def check_unions(schema, where):
    if isinstance(schema, dict):
        for key in ("anyOf", "oneOf", "allOf"):
            check(key not in schema, f"{where}: {key}")
        check(not isinstance(schema.get("type"), list), f"{where}: a list of types")
        check(schema.get("type") != "null", f"{where}: a null type")
        for key, value in schema.items():
            check_unions(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for item in schema:
            check_unions(item, where)


async def main():
    binary, repo, budget, expected_path, largest = sys.argv[1:6]
    budget_chars = int(budget) * 3
    expected = json.load(open(expected_path))["hits"]
    if binary.startswith("http"):
        async with http_streams(binary, os.environ.get("DOCDEX_TEST_TOKEN")) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, repo, budget_chars, expected, largest)
    else:
        params = StdioServerParameters(command=binary, args=["mcp", "--repo", repo], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, repo, budget_chars, expected, largest)


async def exercise(session, repo, budget_chars, expected, largest):
    await session.initialize()
    for tool in (await session.list_tools()).tools:
        check_unions(input_schema(tool), tool.name)

    # Every page of a 200-hit search within the budget; the pages together are the
    # ranking, each hit once, in order.
    seen, offset, pages = [], 0, 0
    while offset is not None:
        result = await session.call_tool(
            "docdex_search", {"query": QUERY, "limit": 200, "mode": "lexical", "offset": offset, "repo_path": repo}
        )
        check(not is_error(result), f"search failed: {result.content}")
        check(size_of(result) <= budget_chars, f"search page at {offset}: {size_of(result)} > {budget_chars}")
        hits = structured(result)["hits"]
        check(hits, f"an empty page at offset {offset}")
        seen += [(h["path"], h["line_start"], h.get("chunk_id")) for h in hits]
        offset = structured(result).get("next_offset")
        pages += 1
    want = [(h["path"], h["line_start"], h.get("chunk_id")) for h in expected]
    check(len(set(seen)) == len(seen), "a hit came twice")
    check(seen == want, f"pages differ from the ranking: {len(seen)} vs {len(want)} hits")
    check(pages > 1, "the budget never made a second page")

    # The largest file, page by page: every line once.
    lines, line_start = [], 1
    while line_start is not None:
        result = await session.call_tool("docdex_open", {"path": largest, "line_start": line_start, "repo_path": repo})
        check(not is_error(result), f"open failed: {result.content}")
        check(size_of(result) <= budget_chars, f"open page at {line_start}: {size_of(result)} > {budget_chars}")
        content = structured(result)
        check(content["line_start"] == line_start, f"page starts at {content['line_start']}")
        text = result.content[0].text
        body = text.split("\n", 1)[1]
        numbered = [l for l in body.split("\n") if " | " in l]
        lines += [int(l.split(" | ", 1)[0]) for l in numbered]
        line_start = content.get("next_line_start")
    total = content["total_lines"]
    check(lines == list(range(1, total + 1)), f"lines read {len(lines)} of {total}, or out of order")
    print(json.dumps({"search_pages": pages, "hits": len(seen), "open_lines": total}))


if __name__ == "__main__":
    asyncio.run(main())
