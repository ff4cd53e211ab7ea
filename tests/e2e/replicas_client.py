#!/usr/bin/env python3
"""A load of 2026-07-28 calls through a load balancer, made with the official Python MCP SDK
(`mcp` >= 2 on PyPI: its `Client` drives multi round-trip requests itself), for
tests/replicas_lb.rs (run by .ci/e2e.sh).

    replicas_client.py --url http://127.0.0.1:PORT/mcp --work whoami|order [--workers N]
                       [--mode 2026-07-28|legacy]

`--work whoami` calls `whoami` (stateless) and counts the replicas that answered; `--work order`
calls `confirm_order`, whose elicitation the client answers (the question names the replica
that asked, the result the one that finished) and counts the requests finished elsewhere than
they were asked. `--mode legacy` makes it one 2025-11-25 session (the initialize handshake), its
requests spread over the replicas by the load balancer. Calls go on, `--workers` at a time, until stdin closes. Prints `done N` after
each call, then `report {json}` (done, failures, served_by, elsewhere). Exit status 0 unless
the script itself broke; failed calls are in the report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from typing import Any

from mcp import Client, types

CALL_TIMEOUT = 30.0


class Tally:
    def __init__(self) -> None:
        self.done = 0
        self.failures: list[str] = []
        self.served_by: Counter[str] = Counter()
        self.elsewhere = 0
        self.askers: dict[str, str] = {}

    def report(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "failures": self.failures,
            "served_by": dict(self.served_by),
            "elsewhere": self.elsewhere,
        }


def text_of(result: types.CallToolResult) -> str:
    for block in result.content:
        if isinstance(block, types.TextContent):
            return block.text
    return ""


async def one_call(client: Client, tally: Tally, work: str, i: int) -> None:
    if work == "whoami":
        result = await asyncio.wait_for(client.call_tool("whoami", {}), CALL_TIMEOUT)
        text = text_of(result)
        if result.is_error:
            raise RuntimeError(f"whoami: {text}")
        tally.served_by[text.split(" ")[0]] += 1
        return
    item = f"item-{i}"
    result = await asyncio.wait_for(client.call_tool("confirm_order", {"item": item}), CALL_TIMEOUT)
    text = text_of(result)
    prefix = f"ordered {item} (finished on "
    if result.is_error or not text.startswith(prefix) or not text.endswith(")"):
        raise RuntimeError(f"confirm_order: {text!r}")
    finished = text[len(prefix):-1]
    asked = tally.askers.pop(item, None)
    if asked is None:
        raise RuntimeError("confirm_order: the server never asked")
    tally.served_by[finished] += 1
    tally.elsewhere += int(asked != finished)


async def worker(client: Client, tally: Tally, work: str, first: int, step: int, stop: asyncio.Event) -> None:
    i = first
    while not stop.is_set():
        try:
            await one_call(client, tally, work, i)
        except Exception as e:  # noqa: BLE001 - a failed call is reported, the load goes on
            tally.failures.append(f"{type(e).__name__}: {e}")
        tally.done += 1
        print(f"done {tally.done}", flush=True)
        i += step


async def wait_for_stdin_close(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    stop.set()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--work", choices=["whoami", "order"], required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mode", default="2026-07-28")
    args = parser.parse_args()
    tally = Tally()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        # "rN asks: order ITEM?"
        who, _, rest = params.message.partition(" asks: order ")
        tally.askers[rest.rstrip("?")] = who
        return types.ElicitResult(action="accept", content={"confirm": True})

    stop = asyncio.Event()
    async with Client(args.url, mode=args.mode, elicitation_callback=elicit, cache=None) as client:
        watcher = asyncio.create_task(wait_for_stdin_close(stop))
        await asyncio.gather(*(worker(client, tally, args.work, w, args.workers, stop) for w in range(args.workers)))
        await watcher
    print("report " + json.dumps(tally.report()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
