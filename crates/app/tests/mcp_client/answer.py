"""Runs a task that asks a question: the waiting run_task returns with the question, `answer`
delivers the reply, and get_run with `wait: true` follows the run to its end."""

import sys

import anyio

from session import connect, report, structured


async def main(argv):
    async with connect(argv) as session:
        asked = structured(
            await session.call_tool(
                "run_task",
                {"task": "ask for a colour", "wait": True},
                read_timeout_seconds=60,
            )
        )
        run_id = (asked["data"] or {}).get("run_id")
        answered = structured(
            await session.call_tool("answer", {"run_id": run_id, "text": "blue"})
        )
        ended = structured(
            await session.call_tool(
                "get_run", {"run_id": run_id, "wait": True}, read_timeout_seconds=60
            )
        )
        report({"asked": asked, "answered": answered, "ended": ended})


anyio.run(main, sys.argv[1:])
