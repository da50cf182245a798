"""Starts a task without waiting, cancels it, waits for its end; then the tools' errors:
an unknown run, an answer to a run that asks nothing, bad arguments, an ended run."""

import sys

import anyio

from session import connect, report, structured


async def main(argv):
    async with connect(argv) as session:
        started = structured(await session.call_tool("run_task", {"task": "a long task"}))
        run_id = (started["data"] or {}).get("run_id")
        cancelled = structured(await session.call_tool("cancel_run", {"run_id": run_id}))
        ended = structured(
            await session.call_tool(
                "get_run", {"run_id": run_id, "wait": True}, read_timeout_seconds=60
            )
        )
        listed = structured(await session.call_tool("list_runs", {}))
        errors = {
            "unknown": structured(
                await session.call_tool("get_run", {"run_id": "run_nope"})
            ),
            "not_waiting": structured(
                await session.call_tool("answer", {"run_id": run_id, "text": "yes"})
            ),
            "bad_arguments": structured(await session.call_tool("run_task", {"wait": True})),
            "cancel_again": structured(
                await session.call_tool("cancel_run", {"run_id": run_id})
            ),
        }
        report(
            {
                "started": started,
                "cancelled": cancelled,
                "ended": ended,
                "listed": listed,
                "errors": errors,
            }
        )


anyio.run(main, sys.argv[1:])
