"""Runs a task under `--approval ask`: the waiting run_task returns with the shell command to
approve, `approve_call` lets it run, and get_run with `wait: true` follows the run to its
end."""

import sys

import anyio

from session import connect, report, structured


async def main(argv):
    async with connect(argv) as session:
        asked = structured(
            await session.call_tool(
                "run_task",
                {"task": "make a note", "wait": True},
                read_timeout_seconds=60,
            )
        )
        data = asked["data"] or {}
        run_id = data.get("run_id")
        wrong = structured(
            await session.call_tool(
                "approve_call",
                {"run_id": run_id, "call_id": data.get("pending_approval"), "decision": "maybe"},
            )
        )
        approved = structured(
            await session.call_tool(
                "approve_call",
                {
                    "run_id": run_id,
                    "call_id": data.get("pending_approval"),
                    "decision": "approve",
                },
            )
        )
        ended = structured(
            await session.call_tool(
                "get_run", {"run_id": run_id, "wait": True}, read_timeout_seconds=60
            )
        )
        report({"asked": asked, "wrong": wrong, "approved": approved, "ended": ended})


anyio.run(main, sys.argv[1:])
