"""Connects to `/mcp` without the bearer token: the session must not start."""

import sys

import anyio

from session import connect, report


async def main(argv):
    try:
        async with connect(argv) as session:
            await session.list_tools()
        report({"connected": True})
    except BaseException as e:  # an ExceptionGroup from the transport's task group
        report({"connected": False, "error": repr(e)})


anyio.run(main, sys.argv[1:])
