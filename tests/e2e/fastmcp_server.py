#!/usr/bin/env python3
"""A FastMCP server (PyPI `fastmcp`) for this project's MCP client to talk to
(tests/client_fastmcp.rs): a server no one in this project wrote.

    fastmcp_server.py                  # stdio
    fastmcp_server.py --http PORT      # Streamable HTTP on 127.0.0.1:PORT/mcp

Tools: `add` (structured output), `fail` (a tool error), `count` (progress), `ask_name`
(elicitation), `summarize` (sampling); a prompt `greet`; a resource `memo://motd` and a
template `users://{id}/card`.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-peer", instructions="A FastMCP server for the Rust client's tests.")


@mcp.tool
def add(a: int, b: int) -> dict:
    """Add two integers."""
    return {"sum": a + b}


@mcp.tool
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"failed on purpose: {reason}")


@mcp.tool
async def count(to: int, ctx: Context) -> str:
    """Counts up, reporting progress."""
    for i in range(1, to + 1):
        await ctx.report_progress(i, to, f"step {i}")
        await asyncio.sleep(0.01)
    return f"counted to {to}"


@dataclass
class Person:
    name: str


@mcp.tool
async def ask_name(ctx: Context) -> str:
    """Asks the user their name."""
    result = await ctx.elicit("What is your name?", response_type=Person)
    if result.action == "accept":
        return f"Hello, {result.data.name}!"
    return f"no name ({result.action})"


@mcp.tool
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model for a summary."""
    reply = await ctx.sample(f"Summarize: {text}", max_tokens=50)
    return f"summary: {reply.text}"


@mcp.prompt
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name} warmly."


@mcp.resource("memo://motd", mime_type="text/plain")
def motd() -> str:
    """The message of the day."""
    return "FastMCP says hi"


@mcp.resource("users://{id}/card", mime_type="application/json")
def card(id: str) -> dict:
    """A user's card."""
    return {"id": id, "name": f"user {id}"}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http:
        mcp.run(transport="http", host="127.0.0.1", port=args.http, path="/mcp", show_banner=False)
    else:
        mcp.run(show_banner=False)
