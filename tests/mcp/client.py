"""Drives docdex's MCP server with the official MCP Python SDK (a client nobody on the
docdex team wrote), over stdio or streamable HTTP, and checks every tool and error case.

Usage:
  client.py stdio DOCDEXD REPO [--bench N]
  client.py http URL REPO [--token T] [--bench N]

Exits non-zero with a message on the first failed check. With --bench, also times N
docdex_search calls and prints {"p50_ms": .., "p95_ms": ..} as the last line.
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp.types as types
from compat import McpError, field, http_streams, input_schema, is_error, structured  # noqa: F401

EXPECTED_TOOLS = {
    "docdex_search",
    "docdex_files",
    "docdex_index",
    "docdex_status",
    "docdex_memory_save",
    "docdex_memory_recall",
    "docdex_web_research",
    "docdex_get",
    "docdex_multi_get",
}


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def expect_error(session, tool, arguments, needle):
    """A call that must fail: either a tool error (isError) or a protocol error naming the problem."""
    try:
        result = await session.call_tool(tool, arguments)
    except McpError as err:
        check(needle in str(err), f"{tool}{arguments}: protocol error without '{needle}': {err}")
        return str(err)
    check(is_error(result), f"{tool}{arguments}: expected an error, got {text_of(result)}")
    check(needle in text_of(result), f"{tool}{arguments}: error without '{needle}': {text_of(result)}")
    return text_of(result)


async def exercise(session, repo, bench, over_http=False):
    init = await session.initialize()
    check(field(init, "serverInfo").name == "docdex", f"server name {field(init, 'serverInfo').name}")

    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(EXPECTED_TOOLS <= set(tools), f"missing tools: {EXPECTED_TOOLS - set(tools)}")
    for name in EXPECTED_TOOLS:
        description = tools[name].description or ""
        check("Example" in description, f"{name} description has no usage example")
        check(len(description.split()) < 150, f"{name} description is too long")
        check(input_schema(tools[name]).get("type") == "object", f"{name} has no object schema")

    # Index through MCP (the repo is fresh), then everything else.
    result = await session.call_tool("docdex_index", {"repo_path": repo})
    check(not is_error(result), f"index failed: {text_of(result)}")
    # The server may have indexed at startup already: then this run finds nothing changed.
    check(structured(result)["files_scanned"] == 3, f"index summary {structured(result)}")
    check(structured(result)["chunks_total"] >= 3, f"index summary {structured(result)}")

    result = await session.call_tool("docdex_status", {})
    check(not is_error(result), f"status failed: {text_of(result)}")
    check(structured(result)["indexed"] is True, "status says not indexed")

    result = await session.call_tool("docdex_search", {"query": "rate_limit per minute", "limit": 3})
    check(not is_error(result), f"search failed: {text_of(result)}")
    hits = structured(result)["hits"]
    check(hits and hits[0]["path"] == "src/throttle.rs", f"search hits {hits}")
    check("src/throttle.rs" in text_of(result), "search text block lacks the path")

    # Numbers as strings, and the project_root alias.
    result = await session.call_tool("docdex_search", {"query": "nightly_snapshot", "limit": "2", "project_root": repo})
    check(not is_error(result), f"string limit refused: {text_of(result)}")
    check(len(structured(result)["hits"]) <= 2, "limit not applied")
    # `repo`, the name every surface uses (repo_path and project_root are taken too).
    result = await session.call_tool("docdex_search", {"query": "nightly_snapshot", "repo": repo})
    check(not is_error(result) and structured(result)["hits"], f"repo refused: {text_of(result)}")

    # One search over several repos (here one, named in `repos`): each hit names its repo.
    result = await session.call_tool("docdex_search", {"query": "nightly_snapshot", "repos": [repo]})
    check(not is_error(result), f"repos refused: {text_of(result)}")
    hits = structured(result)["hits"]
    check(hits and all(h.get("repo") == os.path.realpath(repo) for h in hits), f"hits without their repo: {hits}")
    await expect_error(session, "docdex_search", {"query": "x", "group": "no_such_group"}, "no group")

    # A collection: a folder registered by name, searched like a repo, listed, removed.
    notes = os.path.join(repo, "team-notes")
    os.makedirs(notes, exist_ok=True)
    with open(os.path.join(notes, "failover.md"), "w") as f:
        f.write("# Failover\n\nPromote the standby database when the primary stops answering.\n")
    result = await session.call_tool("docdex_collection_add", {"name": "notes", "path": notes})
    check(not is_error(result), f"collection add failed: {text_of(result)}")
    check(structured(result)["files"] == 1, f"collection add: {structured(result)}")
    result = await session.call_tool("docdex_search", {"query": "standby database", "collection": "notes"})
    check(not is_error(result), f"collection search failed: {text_of(result)}")
    check(structured(result)["hits"][0]["path"] == "failover.md", f"collection hits {structured(result)}")
    result = await session.call_tool("docdex_collection_list", {})
    check([c["name"] for c in structured(result)["collections"]] == ["notes"], f"collections {structured(result)}")
    result = await session.call_tool("docdex_collection_remove", {"name": "notes"})
    check(not is_error(result), f"collection remove failed: {text_of(result)}")
    await expect_error(session, "docdex_search", {"query": "standby", "collection": "notes"}, "no collection")

    # One tool reads: docdex_get; its older name docdex_open is answered but not listed.
    check("docdex_open" not in set(tools), "docdex_open is listed beside docdex_get")
    result = await session.call_tool("docdex_get", {"path": "src/throttle.rs", "line_start": 2, "line_end": "3"})
    check(not is_error(result), f"open failed: {text_of(result)}")
    check(structured(result)["line_start"] == 2 and structured(result)["line_end"] == 3, "open range")
    # The lines are in the text block; the structured content has the range, not the text again.
    check("2 | pub fn rate_limit" in text_of(result), f"open text {text_of(result)}")
    check("text" not in structured(result), f"open repeats its text: {structured(result)}")

    # By symbol instead of lines (through the older name too).
    for tool in ("docdex_get", "docdex_open"):
        result = await session.call_tool(tool, {"symbol": "nightly_snapshot"})
        check(not is_error(result), f"{tool} by symbol failed: {text_of(result)}")
        check(structured(result)["path"] == "src/backup.rs" and "pub fn nightly_snapshot" in text_of(result), text_of(result))
    await expect_error(session, "docdex_get", {"symbol": "no_such_item_anywhere"}, "no item or section")
    await expect_error(session, "docdex_get", {"chunk_id": 1, "path": "src/backup.rs"}, "chunk_id stands alone")

    # get: a hit's chunk by id, a file by path; multi_get by glob.
    hit = structured(await session.call_tool("docdex_search", {"query": "rate_limit", "limit": 1}))["hits"][0]
    result = await session.call_tool("docdex_get", {"chunk_id": hit["chunk_id"]})
    check(not is_error(result), f"get chunk failed: {text_of(result)}")
    check(structured(result)["path"] == hit["path"] and "pub fn rate_limit" in text_of(result), text_of(result))
    result = await session.call_tool("docdex_get", {"path": "docs/colors.md"})
    check(not is_error(result) and "Teal buttons" in text_of(result), f"get path: {text_of(result)}")
    await expect_error(session, "docdex_get", {"chunk_id": 999999}, "no chunk")
    result = await session.call_tool("docdex_multi_get", {"glob": "src/*.rs"})
    check(not is_error(result), f"multi_get failed: {text_of(result)}")
    got = sorted(f["path"] for f in structured(result)["files"])
    check(got == ["src/backup.rs", "src/throttle.rs"], f"multi_get files {got}")
    check("pub fn rate_limit" in text_of(result) and "pub fn nightly_snapshot" in text_of(result), text_of(result))
    result = await session.call_tool("docdex_multi_get", {"paths": ["src/backup.rs", "src/nope.rs"]})
    check(structured(result)["missing"][0]["path"] == "src/nope.rs", f"missing {structured(result)}")

    result = await session.call_tool("docdex_files", {"glob": "src/*.rs"})
    check(not is_error(result), f"files failed: {text_of(result)}")
    paths = [f["path"] for f in structured(result)["files"]]
    check(paths == ["src/backup.rs", "src/throttle.rs"], f"files {paths}")

    result = await session.call_tool(
        "docdex_memory_save", {"text": "Rate limits are enforced per client id", "metadata": {"topic": "limits"}}
    )
    check(not is_error(result), f"memory_save failed: {text_of(result)}")
    memory_id = structured(result)["id"]
    result = await session.call_tool("docdex_memory_recall", {"query": "how are clients throttled", "limit": 3})
    check(not is_error(result), f"memory_recall failed: {text_of(result)}")
    items = structured(result)["items"]
    check(items and items[0]["id"] == memory_id, f"recall items {items}")
    check(items[0]["metadata"] == {"topic": "limits"}, f"metadata {items[0]}")
    # `k`, the name recall's limit had, is still taken.
    result = await session.call_tool("docdex_memory_recall", {"query": "how are clients throttled", "k": 1})
    check(not is_error(result) and len(structured(result)["items"]) == 1, f"recall with k: {text_of(result)}")

    # Error cases: tool errors with hints, never empty results or crashes.
    # Inside the repo the session serves (allowed), so the answer is "does not exist".
    no_such = os.path.join(repo, "no-such-subdir")
    await expect_error(session, "docdex_search", {"query": "x", "repo_path": no_such}, "does not exist")
    # A directory never indexed is mounted and indexed by the request that names it.
    unindexed = os.path.join(repo, "docs")
    result = await session.call_tool("docdex_search", {"query": "x", "repo_path": unindexed})
    check(not is_error(result), f"an unindexed directory was not indexed on demand: {text_of(result)}")
    await expect_error(session, "docdex_search", {"query": "x", "limit": 0}, "between 1 and")
    # The waterfall tool (the tests run it with the web tier off: no request leaves the machine).
    result = await session.call_tool("docdex_web_research", {"query": "rate_limit per minute", "limit": "3"})
    check(not is_error(result), f"web research failed: {text_of(result)}")
    gate = structured(result)["gate"]
    check(gate["decision"] in ("local", "web_disabled") and gate["forced"] is False, f"gate {gate}")
    check(structured(result)["hits"][0]["path"] == "src/throttle.rs", f"{structured(result)}")
    check("gate:" in text_of(result), "web research text has no gate line")
    await expect_error(session, "docdex_web_research", {"query": "x", "force_web": "true"}, "disabled")

    await expect_error(session, "docdex_search", {"query": "x", "limit": 100000}, "between 1 and")
    await expect_error(session, "docdex_search", {"query": "x", "limit": "many"}, "whole number")
    await expect_error(session, "docdex_search", {"query": "x", "mode": "fuzzy"}, "unknown mode")
    await expect_error(session, "docdex_search", {"query": "x", "colour": "blue"}, "colour")
    await expect_error(session, "docdex_search", {"limit": 3}, "query")
    await expect_error(session, "docdex_open", {"path": "../../etc/passwd"}, "not an indexed file")
    if over_http:
        # The daemon's working directory is not the client's: a relative path is refused.
        await expect_error(session, "docdex_search", {"query": "x", "repo": "src"}, "relative path")
        await expect_error(session, "docdex_search", {"query": "x", "repos": ["src"]}, "relative path")
        await expect_error(session, "docdex_callers", {"name": "x", "repo": "."}, "relative path")
        await expect_error(session, "docdex_collection_add", {"name": "n", "path": "notes"}, "relative path")
    try:
        await session.call_tool("docdex_teleport", {})
        check(False, "unknown tool accepted")
    except McpError as err:
        check("docdex_teleport" in str(err) or "not found" in str(err).lower(), f"unknown tool error: {err}")

    if bench:
        samples = []
        for i in range(bench):
            started = time.perf_counter()
            result = await session.call_tool("docdex_search", {"query": f"rate limit client {i % 7}", "mode": "lexical"})
            samples.append((time.perf_counter() - started) * 1000)
            check(not is_error(result), "bench search failed")
        samples.sort()
        p95 = samples[min(len(samples) - 1, int(0.95 * len(samples)))]
        print(json.dumps({"p50_ms": statistics.median(samples), "p95_ms": p95, "calls": len(samples)}))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target", help="docdexd binary (stdio) or MCP URL (http)")
    parser.add_argument("repo")
    parser.add_argument("--token")
    parser.add_argument("--bench", type=int, default=0)
    args = parser.parse_args()

    if args.transport == "stdio":
        params = StdioServerParameters(command=args.target, args=["mcp", "--repo", args.repo], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, args.repo, args.bench)
    else:
        async with http_streams(args.target, args.token) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, args.repo, args.bench, over_http=True)
    print("all MCP checks passed", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
