"""What differs between the official MCP Python SDK's 1.x and 2.x for these test clients:
attribute names (1.x camelCase, 2.x snake_case), the error class, and how the streamable
HTTP transport takes headers. The clients run unchanged on both."""

import contextlib
import re

import mcp.shared.exceptions as _exceptions

McpError = getattr(_exceptions, "McpError", None) or getattr(_exceptions, "MCPError")


def field(obj, camel):
    """`obj.camelName` on 1.x, `obj.camel_name` on 2.x."""
    if hasattr(obj, camel):
        return getattr(obj, camel)
    return getattr(obj, re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower())


def structured(result):
    return field(result, "structuredContent")


def is_error(result):
    return bool(field(result, "isError"))


def input_schema(tool):
    return field(tool, "inputSchema")


@contextlib.asynccontextmanager
async def http_streams(url, token=None):
    """(read, write) streams of a streamable HTTP session, with the bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        from mcp.client.streamable_http import streamablehttp_client  # 1.x
    except ImportError:
        streamablehttp_client = None
    if streamablehttp_client is not None:
        async with streamablehttp_client(url, headers=headers) as (read, write, _):
            yield read, write
        return
    from mcp.client.streamable_http import streamable_http_client  # 2.x
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            yield read, write
