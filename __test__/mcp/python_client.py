"""Drives `native-shell-service mcp` with the Python `mcp` SDK's own client and prints
what it saw as one JSON object (checked by __test__/mcp/python-client.test.ts).

Usage: python3 python_client.py <node> <bin/native-shell-service.js> <project root> <io dir>
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main():
    node, bin_path, root, io_dir = sys.argv[1:5]
    server = StdioServerParameters(
        command=node, args=[bin_path, "mcp", "--project-root", root, "--io-dir", io_dir], cwd=root
    )
    methods = []

    async def on_message(message):
        # SDK 1.x wraps notifications in `.root`; later versions hand them over as they are.
        note = getattr(message, "root", message)
        method = getattr(note, "method", None)
        if method:
            methods.append(method)

    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            out["server"] = dump(init)["serverInfo"]["name"]
            out["tools"] = [dump(t) for t in (await session.list_tools()).tools]

            progress = []

            async def on_progress(value, total, message):
                progress.append({"progress": value, "message": message})

            loop = await session.call_tool(
                "run_shell_command",
                {"command": "for i in 1 2 3 4 5 6 7 8; do echo step $i; sleep 0.25; done", "ai_callback_delay": 30},
                progress_callback=on_progress,
            )
            out["loop"] = dump(loop)
            out["progress"] = progress

            repl = dump(await session.call_tool("run_shell_command", {"command": "python3 -q", "ai_callback_pattern": ">>> "}))
            handle = repl["structuredContent"]["handle"]
            out["repl"] = repl
            out["answer"] = dump(
                await session.call_tool("send_input", {"handle": handle, "input": "print(6 * 7)", "ai_callback_pattern": ">>> "})
            )
            out["jobs"] = dump(await session.call_tool("jobs", {}))
            out["kill"] = dump(await session.call_tool("kill", {"handle": handle}))

            seq = dump(await session.call_tool("run_shell_command", {"command": "seq 1 30000"}))
            out["seq_handle"] = seq["structuredContent"]["handle"]
            out["resources"] = [dump(r) for r in (await session.list_resources()).resources]
            out["templates"] = dump(await session.list_resource_templates())["resourceTemplates"]
            uri = f"shell-job://{out['seq_handle']}/stdout.txt"
            pages = []
            while uri:
                content = dump(await session.read_resource(uri))["contents"][0]
                pages.append(content["text"])
                uri = content.get("_meta", {}).get("next")
            out["pages"] = pages
            out["notifications"] = methods
    print(json.dumps(out))


asyncio.run(main())
