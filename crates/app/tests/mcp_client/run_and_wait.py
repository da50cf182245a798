"""Lists the tools, runs a task to its end with `wait: true` (collecting the progress
notifications), then reads the files it produced as resources."""

import sys

import anyio

from session import connect, report, structured


async def main(argv):
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "total": total, "message": message})

    async with connect(argv) as session:
        tools = await session.list_tools()
        listed = [
            {
                "name": t.name,
                "description": t.description,
                "required": t.input_schema.get("required", []),
                "properties": sorted(t.input_schema.get("properties", {}).keys()),
            }
            for t in tools.tools
        ]
        result = await session.call_tool(
            "run_task",
            {"task": "write greeting.txt and count its words", "wait": True},
            read_timeout_seconds=120,
            progress_callback=on_progress,
        )
        run = structured(result)
        files = {}
        for f in (run["data"] or {}).get("files", []):
            read = await session.read_resource(f["uri"])
            files[f["path"]] = [getattr(c, "text", None) for c in read.contents]
        resources = await session.list_resources()
        templates = await session.list_resource_templates()
        outside = None
        run_id = (run["data"] or {}).get("run_id", "")
        try:
            await session.read_resource(f"planwright://runs/{run_id}/files/../planwright.db")
            outside = "read"
        except Exception as e:  # the SDK raises the server's JSON-RPC error
            outside = str(e)
        report(
            {
                "tools": listed,
                "run": run,
                "progress": progress,
                "files": files,
                "resources": [r.uri for r in resources.resources],
                "templates": [t.uri_template for t in templates.resource_templates],
                "outside": outside,
            }
        )


anyio.run(main, sys.argv[1:])
