"""Connects the official MCP Python SDK to Planwright, over stdio or streamable HTTP.

    --stdio PLANWRIGHT ARGS...   start `PLANWRIGHT ARGS...` (e.g. `mcp serve`) as the server
    --http URL [--token TOKEN]   the `/mcp` endpoint of `planwright serve`

Used by crates/app/tests/mcp_server.rs; each scenario script prints one JSON object on
stdout for the Rust test to check.
"""

import contextlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


@contextlib.asynccontextmanager
async def connect(argv):
    """An initialized ClientSession to the server named by `argv` (see the module doc)."""
    if argv[0] == "--stdio":
        params = StdioServerParameters(
            command=argv[1], args=argv[2:], env=dict(os.environ), cwd=os.getcwd()
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session
    elif argv[0] == "--http":
        headers = {}
        if len(argv) > 3 and argv[2] == "--token":
            headers["Authorization"] = f"Bearer {argv[3]}"
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(argv[1], http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session
    else:
        raise SystemExit(f"usage: {sys.argv[0]} --stdio CMD ARGS... | --http URL [--token T]")


def structured(result):
    """A tool result as {is_error, text, data}."""
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {
        "is_error": bool(result.is_error),
        "text": text,
        "data": result.structured_content,
    }


def report(value):
    print(json.dumps(value), flush=True)
