#!/usr/bin/env python3
"""Drive examples/hub.rs with the official Python MCP SDK while it mounts another MCP server
(in CI: @modelcontextprotocol/server-everything): two hops, both peers written by others.

    hub_client.py target/debug/examples/hub -- node .../server-everything/dist/index.js stdio

Checks: the one server `hub` lists its own tools and the remote's; a remote tool (`echo`) and
a local one (`word_count`) answer; `hub_servers` says the remote is connected; a remote
long-running tool's progress reaches this client through the hub; a remote prompt and
resource are served. Prints `N passed, M failed`; exit status 0 only when nothing failed.
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

passed = failed = 0


def check(ok: bool, what: str) -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")


def field(obj, snake: str, camel: str):
    """A field by its mcp 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        name = field(init, "server_info", "serverInfo").name
        check(name == "hub", f"serverInfo.name is hub ({name})")
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for name in ("echo", "word_count", "hub_servers", "trigger-long-running-operation"):
            check(name in tools, f"tools/list has {name}")
        echo = await session.call_tool("echo", {"message": "two hops"})
        check(not field(echo, "is_error", "isError") and "two hops" in text(echo), f"remote echo: {text(echo)!r}")
        count = await session.call_tool("word_count", {"text": "a b c d"})
        check(text(count) == "4", f"local word_count: {text(count)!r}")
        servers = await session.call_tool("hub_servers", {})
        check("remote:" in text(servers) and "Connected" in text(servers), f"hub_servers: {text(servers)!r}")

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        long = await session.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 3},
            progress_callback=on_progress,
        )
        check(not field(long, "is_error", "isError"), f"remote long-running tool: {text(long)[:80]!r}")
        check(len(progress) >= 2 and progress == sorted(progress), f"its progress relayed through the hub: {progress}")

        prompts = (await session.list_prompts()).prompts
        check(any(p.name == "simple-prompt" for p in prompts), f"prompts/list: {[p.name for p in prompts]}")
        prompt = await session.get_prompt("simple-prompt", {})
        check(len(prompt.messages) > 0, "prompts/get simple-prompt has messages")
        resources = (await session.list_resources()).resources
        check(len(resources) > 0, f"resources/list: {len(resources)} resources")
        if resources:
            read = await session.read_resource(resources[0].uri)
            check(len(read.contents) > 0, f"resources/read {resources[0].uri}")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), timeout=120))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
