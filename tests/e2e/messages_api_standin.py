#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for the Claude Code CLI run offline.

The CLI is pointed at it with ANTHROPIC_BASE_URL. It answers `POST /v1/messages` (streamed as
SSE, or as one JSON message), `POST /v1/messages/count_tokens` and anything else the CLI probes
with harmless answers, records every request, and plays the model of the agent_session
example's scenario (examples/agent_session.rs, `--claude`):

  turn 1  ("turn 1" in the user's message): checks the tools offered (names `mcp__demo__*` and
          `mcp__weather__*`, descriptions, input schemas), answers with one `tool_use` per
          tool of the scenario, then checks the `tool_result`s that come back: text, structured
          content, `is_error`, the host's permission denial, and ends the turn;
  turn 2  (after the host disabled `weather` and gave `demo` a `mul` tool): checks that
          `mcp__demo__mul` is offered, calls add and mul, and `mcp__weather__forecast`, which
          the CLI must refuse without reaching the host, and ends the turn.

Every check is recorded; at exit (SIGTERM or `GET /__verdict`) the verdict is written to
--verdict as JSON ({"ok": bool, "checks": [...], "failures": [...]}) and printed.

Usage: messages_api_standin.py --port-file FILE --record FILE --verdict FILE
"""

import argparse
import json
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "claude-standin"

# What the model is offered, as the host defines it (examples/agent_session.rs).
EXPECTED_TOOLS = {
    "mcp__demo__add": ("Add two numbers", {"a", "b"}),
    "mcp__demo__divide": ("Divide a by b", {"a", "b"}),
    "mcp__demo__stats": ("Count, sum and mean of some numbers", {"numbers"}),
    "mcp__demo__fail": ("Always fails", {"reason"}),
    "mcp__demo__slow": ("Counts to three, reporting progress", set()),
    "mcp__weather__forecast": ("Tomorrow's weather for a city", {"city"}),
}
# Turn 1 leaves `mcp__weather__forecast` alone: turn 2 calls it once `weather` is disabled.

# Turn 1's tool calls: (id, name, input, check of the tool_result that comes back).
TURN1_CALLS = [
    ("toolu_add", "mcp__demo__add", {"a": 2, "b": 3}, "text"),
    ("toolu_stats", "mcp__demo__stats", {"numbers": [1, 2, 3, 6]}, "structured"),
    ("toolu_fail", "mcp__demo__fail", {"reason": "scripted"}, "error"),
    ("toolu_slow", "mcp__demo__slow", {}, "progress"),
    ("toolu_divide", "mcp__demo__divide", {"a": 1, "b": 0}, "denied"),
]
TURN2_CALLS = [
    ("toolu_add2", "mcp__demo__add", {"a": 40, "b": 2}, "text2"),
    ("toolu_mul", "mcp__demo__mul", {"a": 6, "b": 7}, "new"),
    ("toolu_forecast", "mcp__weather__forecast", {"city": "Paris"}, "gone"),
]


class Verdict:
    def __init__(self):
        self.lock = threading.Lock()
        self.checks = []
        self.failures = []

    def check(self, ok, what):
        with self.lock:
            self.checks.append({"ok": bool(ok), "what": what})
            if not ok:
                self.failures.append(what)
        print(f"standin: {'ok  ' if ok else 'FAIL'} {what}", flush=True)

    def as_json(self):
        with self.lock:
            return {
                "ok": not self.failures and bool(self.checks),
                "checks": list(self.checks),
                "failures": list(self.failures),
            }


VERDICT = Verdict()
RECORD_LOCK = threading.Lock()


def text_of(content):
    """The text of a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            parts.append(text_of(block.get("content", "")))
    return "\n".join(parts)


def tool_results(message):
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return {}
    return {
        b.get("tool_use_id"): b
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }


def user_turn(messages):
    """The number N of the latest 'turn N' the user asked for, or None."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        match = re.search(r"\bturn (\d+)\b", text_of(message.get("content", "")))
        if match and not tool_results(message):
            return int(match.group(1))
    return None


class Scenario:
    """Plays the model; one instance for the whole run."""

    def __init__(self):
        self.lock = threading.Lock()
        self.offered_checked = set()

    def check_offered(self, turn, tools):
        if turn in self.offered_checked:
            return
        self.offered_checked.add(turn)
        by_name = {t.get("name"): t for t in tools if isinstance(t, dict)}
        mcp = sorted(n for n in by_name if str(n).startswith("mcp__"))
        print(f"standin: turn {turn}: tools offered: {mcp}", flush=True)
        expected = dict(EXPECTED_TOOLS)
        if turn >= 2:
            # The CLI keeps a definition it once offered in later requests (the model's
            # context stays stable), but refuses to call it: checked on the tool_result.
            expected["mcp__demo__mul"] = ("Multiply two numbers", {"a", "b"})
            print(
                "standin: turn 2: mcp__weather__forecast still defined in the request: "
                f"{'mcp__weather__forecast' in by_name}",
                flush=True,
            )
        for name, (description, properties) in expected.items():
            tool = by_name.get(name)
            if tool is None:
                VERDICT.check(False, f"turn {turn}: {name} offered")
                continue
            schema = tool.get("input_schema") or {}
            VERDICT.check(
                description in str(tool.get("description", ""))
                and schema.get("type") == "object"
                and set((schema.get("properties") or {}).keys()) == properties,
                f"turn {turn}: {name} offered with its description and input schema "
                f"(properties {sorted(properties)})",
            )
        stats = by_name.get("mcp__demo__stats", {}).get("input_schema", {})
        numbers = (stats.get("properties") or {}).get("numbers", {})
        VERDICT.check(
            numbers.get("type") == "array"
            and numbers.get("items", {}).get("type") == "number"
            and "numbers" in stats.get("required", []),
            f"turn {turn}: mcp__demo__stats schema: `numbers` is a required array of numbers",
        )

    def check_results(self, calls, results):
        for tool_id, name, _input, kind in calls:
            result = results.get(tool_id)
            if result is None:
                VERDICT.check(False, f"tool_result for {name} ({tool_id}) came back")
                continue
            text = text_of(result.get("content", ""))
            is_error = bool(result.get("is_error"))
            if kind == "text":
                ok, what = text == "5" and not is_error, "text result '5'"
            elif kind == "text2":
                ok, what = text == "42" and not is_error, "text result '42'"
            elif kind == "new":
                ok, what = text == "42" and not is_error, "the tool added between turns answers '42'"
            elif kind == "gone":
                ok = is_error and "No such tool available" in text
                what = "refused by the CLI after the host disabled `weather`"
            elif kind == "structured":
                ok = not is_error and '"mean":3' in text.replace(" ", "") and '"count":4' in text.replace(" ", "")
                what = "structured result {count: 4, sum: 12, mean: 3}"
            elif kind == "error":
                ok, what = is_error and "scripted" in text, "is_error result naming the failure"
            elif kind == "progress":
                ok, what = text == "counted to 3" and not is_error, "result after its progress reports"
            elif kind == "denied":
                ok = is_error and "host policy: no dividing" in text
                what = "the host's permission denial, its message seen by the model"
            else:
                ok, what = False, f"unknown check {kind}"
            VERDICT.check(ok, f"{name}: {what} (got is_error={is_error}, text={text[:120]!r})")

    def answer(self, body):
        """The assistant message for one /v1/messages request: a list of content blocks and
        a stop reason."""
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        offered = [t for t in tools if isinstance(t, dict) and str(t.get("name", "")).startswith("mcp__")]
        turn = user_turn(messages)
        if not offered or turn is None:
            # A side request (title, summary, quota probe, ...): a short harmless answer.
            return [{"type": "text", "text": "ok"}], "end_turn"
        last = messages[-1] if messages else {}
        results = tool_results(last)
        with self.lock:
            if not results:
                self.check_offered(turn, tools)
                calls = TURN1_CALLS if turn == 1 else TURN2_CALLS
                return [
                    {"type": "tool_use", "id": tid, "name": name, "input": args}
                    for tid, name, args, _ in calls
                ], "tool_use"
            calls = TURN1_CALLS if turn == 1 else TURN2_CALLS
            self.check_results(calls, results)
            return [{"type": "text", "text": f"turn {turn} done"}], "end_turn"


SCENARIO = Scenario()


def sse(handler, event, data):
    handler.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    record = None
    counter = 0

    def log_message(self, *args):
        pass

    def reply_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record_request(self, body):
        with RECORD_LOCK:
            with open(self.record, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def do_GET(self):
        self.record_request(None)
        if self.path.startswith("/__verdict"):
            self.reply_json(200, VERDICT.as_json())
        else:
            self.reply_json(200, {})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw[:200].decode("utf-8", "replace")}
        self.record_request(body)
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self.reply_json(200, {"input_tokens": 100})
        elif path.endswith("/v1/messages"):
            self.messages(body if isinstance(body, dict) else {})
        else:
            self.reply_json(200, {})

    def messages(self, body):
        blocks, stop = SCENARIO.answer(body)
        Handler.counter += 1
        message = {
            "id": f"msg_standin_{Handler.counter}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", MODEL),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            message.update(content=blocks, stop_reason=stop)
            self.reply_json(200, message)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        sse(self, "message_start", {"type": "message_start", "message": message})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            sse(self, "content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            sse(self, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            sse(self, "content_block_stop", {"type": "content_block_stop", "index": index})
        sse(self, "message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        })
        sse(self, "message_stop", {"type": "message_stop"})
        self.wfile.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--verdict", required=True)
    args = parser.parse_args()
    Handler.record = args.record
    open(args.record, "w").close()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True

    def finish(*_):
        verdict = VERDICT.as_json()
        with open(args.verdict, "w", encoding="utf-8") as f:
            json.dump(verdict, f, indent=1)
        print(f"standin: {len(verdict['checks'])} checks, {len(verdict['failures'])} failed", flush=True)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    with open(args.port_file, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    print(f"standin: listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    sys.exit(0 if VERDICT.as_json()["ok"] else 1)


if __name__ == "__main__":
    main()
