#!/usr/bin/env python3
"""Drive the `demo` MCP server of examples/stdio_server.rs or examples/http_server.rs with the
official Python MCP SDK (the `mcp` package on PyPI), a client no one in this project wrote.

    python_client.py --stdio 'target/debug/examples/stdio_server'
    python_client.py --http http://127.0.0.1:8000/mcp [--era legacy|modern]

`--era legacy` (default) connects with the `initialize` handshake (protocol 2025-xx, an
`Mcp-Session-Id` session over HTTP); `--era modern` uses `server/discover` and the stateless
2026-07-28 protocol (needs mcp >= 2). Works with mcp 1.x and 2.x.

Checks: initialize/discover (serverInfo, protocolVersion, capabilities), ping, tools/list (names,
schemas, annotations), tools/call with structured output validated against the tool's
outputSchema (jsonschema), a tool failure (isError), bad arguments (isError), an unknown tool
(JSON-RPC error -32602), progress notifications, prompts/list and prompts/get (arguments,
a missing argument and an unknown prompt as -32602), resources/list, resources/templates/list
and resources/read (a fixed URI, a template match, an unknown URI as the revision's
not-found error: -32002 legacy, -32602 in 2026-07-28), completion/complete of a prompt argument
(and -32602 for an unknown one), log messages from a tool (`logging/setLevel` in the legacy
era, none before it; the per-request `_meta` level in 2026-07-28), concurrent calls, and
(legacy era) tools that ask the client: `wipe` sends elicitation/create (the elicitation callback
accepts, then declines) and `summarize` sampling/createMessage (the sampling callback answers);
the tool gets the callback's answer. The last line is
`N passed, M failed`; the exit status is 0 only when nothing failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import sys
import traceback
from importlib.metadata import version as package_version
from typing import Any

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

try:  # mcp >= 2
    from mcp.client.streamable_http import streamable_http_client as _http_client
except ImportError:  # mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client as _http_client

try:  # mcp >= 2
    from mcp.shared.exceptions import MCPError as McpError
except ImportError:  # mcp 1.x
    from mcp.shared.exceptions import McpError  # type: ignore[no-redef]

LEGACY_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
MODERN_VERSIONS = {"2026-07-28"}
EXPECTED_TOOLS = {"add", "countdown", "divide", "echo", "summarize", "wipe"}
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
CALL_TIMEOUT = 20.0


def wire(model: Any) -> Any:
    """A pydantic model as it travels on the wire (camelCase keys, no nulls), whatever the
    SDK version's attribute naming."""
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return model


def error_code(e: BaseException) -> Any:
    code = getattr(e, "code", None)
    if code is None and getattr(e, "error", None) is not None:
        code = getattr(e.error, "code", None)
    return code


class Checks:
    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed: list[str] = []

    def ok(self, name: str, cond: bool, detail: Any = "") -> bool:
        if cond:
            self.passed += 1
            print(f"  ok   {name}")
        else:
            self.failed.append(name)
            print(f"  FAIL {name}: {detail}")
        return cond

    @contextlib.asynccontextmanager
    async def step(self, name: str):
        """Runs a block; an exception in it is one failed check, not the end of the run."""
        try:
            yield
        except Exception as e:  # noqa: BLE001 - report and carry on
            self.failed.append(name)
            print(f"  FAIL {name}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3, file=sys.stdout)


class ScriptedUser:
    """The client side of the tools that ask: an elicitation callback answering from a script,
    a sampling callback answering as a fixed model. Records what was asked."""

    def __init__(self) -> None:
        self.elicit_answers: list[types.ElicitResult] = []
        self.asked: list[dict[str, Any]] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(wire(params))
        if self.elicit_answers:
            return self.elicit_answers.pop(0)
        return types.ElicitResult(action="cancel")

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(wire(params))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a short summary"),
            model="scripted-model",
            stopReason="endTurn",
        )


async def run_checks(
    session: ClientSession, era: str, c: Checks, logs: list[dict[str, Any]], user: ScriptedUser
) -> None:
    # --- lifecycle -------------------------------------------------------------------------
    async with c.step("connect"):
        if era == "modern":
            result = wire(await asyncio.wait_for(session.discover(), CALL_TIMEOUT))
            print(f"  discover -> {result}")
            c.ok("discover: supportedVersions has 2026-07-28",
                 "2026-07-28" in result.get("supportedVersions", []), result)
            c.ok("discover: tools capability", "tools" in result.get("capabilities", {}), result)
            c.ok("discover: prompts capability", "prompts" in result.get("capabilities", {}), result)
            c.ok("discover: resources capability", "resources" in result.get("capabilities", {}), result)
            c.ok("discover: completions capability", "completions" in result.get("capabilities", {}), result)
            c.ok("discover: logging capability", "logging" in result.get("capabilities", {}), result)
            c.ok("negotiated protocol version is modern",
                 session.protocol_version in MODERN_VERSIONS, session.protocol_version)
            info = wire(session.server_info) if session.server_info is not None else None
            if info is not None:
                c.ok("serverInfo (discover _meta) names the demo server",
                     info.get("name") == "demo", info)
        else:
            result = wire(await asyncio.wait_for(session.initialize(), CALL_TIMEOUT))
            print(f"  initialize -> {result}")
            c.ok("initialize: protocolVersion is a legacy version",
                 result.get("protocolVersion") in LEGACY_VERSIONS, result.get("protocolVersion"))
            info = result.get("serverInfo", {})
            c.ok("initialize: serverInfo.name == demo", info.get("name") == "demo", info)
            c.ok("initialize: serverInfo.version == 1.0.0", info.get("version") == "1.0.0", info)
            c.ok("initialize: tools capability", "tools" in result.get("capabilities", {}), result)
            c.ok("initialize: prompts capability", "prompts" in result.get("capabilities", {}), result)
            c.ok("initialize: resources capability, with subscriptions",
                 result.get("capabilities", {}).get("resources", {}).get("subscribe") is True, result)
            c.ok("initialize: completions capability",
                 "completions" in result.get("capabilities", {}), result)
            c.ok("initialize: logging capability", "logging" in result.get("capabilities", {}), result)
            c.ok("initialize: instructions",
                 "Arithmetic" in (result.get("instructions") or ""), result.get("instructions"))

    async with c.step("ping"):
        if era == "modern":
            # 2026-07-28 has no ping (the method is gone from its schema): -32601 is the answer.
            try:
                pong = await asyncio.wait_for(session.send_ping(), CALL_TIMEOUT)
                c.ok("ping: method not found at 2026-07-28", False, f"got a result: {wire(pong)}")
            except McpError as e:
                c.ok("ping: method not found at 2026-07-28", error_code(e) == METHOD_NOT_FOUND,
                     f"code {error_code(e)}: {e}")
        else:
            pong = wire(await asyncio.wait_for(session.send_ping(), CALL_TIMEOUT))
            c.ok("ping answers", isinstance(pong, dict), pong)

    # --- tools/list ------------------------------------------------------------------------
    tools: dict[str, dict[str, Any]] = {}
    async with c.step("tools/list"):
        listed = wire(await asyncio.wait_for(session.list_tools(), CALL_TIMEOUT))
        tools = {t["name"]: t for t in listed.get("tools", [])}
        c.ok("tools/list names", set(tools) == EXPECTED_TOOLS, sorted(tools))
        c.ok("tools/list is sorted by name", list(tools) == sorted(tools), list(tools))
        for name, tool in sorted(tools.items()):
            schema = tool.get("inputSchema", {})
            c.ok(f"{name}: inputSchema is an object schema", schema.get("type") == "object", schema)
            c.ok(f"{name}: description", bool(tool.get("description")), tool)
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
                c.ok(f"{name}: inputSchema is valid JSON Schema 2020-12", True)
            except jsonschema.SchemaError as e:
                c.ok(f"{name}: inputSchema is valid JSON Schema 2020-12", False, e.message)
        add = tools.get("add", {})
        c.ok("add: a and b are required integers",
             sorted(add.get("inputSchema", {}).get("required", [])) == ["a", "b"]
             and add["inputSchema"]["properties"]["a"].get("type") == "integer", add)
        c.ok("add: property descriptions from the doc comment",
             add.get("inputSchema", {}).get("properties", {}).get("a", {}).get("description")
             == "the left operand", add)
        c.ok("add: outputSchema declared", add.get("outputSchema", {}).get("type") == "object", add)
        c.ok("add: readOnlyHint annotation", add.get("annotations", {}).get("readOnlyHint") is True, add)
        c.ok("add: title", add.get("title") == "Add" or add.get("annotations", {}).get("title") == "Add", add)
        c.ok("echo: no outputSchema for a String tool", "outputSchema" not in tools.get("echo", {}),
             tools.get("echo"))

    # --- tools/call ------------------------------------------------------------------------
    async def call(name: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
        result = await asyncio.wait_for(session.call_tool(name, arguments, **kw), CALL_TIMEOUT)
        return wire(result)

    def validate_structured(name: str, result: dict[str, Any]) -> None:
        schema = tools.get(name, {}).get("outputSchema")
        structured = result.get("structuredContent")
        if not c.ok(f"{name}: structuredContent present", structured is not None, result):
            return
        try:
            jsonschema.validate(structured, schema, cls=jsonschema.Draft202012Validator)
            c.ok(f"{name}: structuredContent matches outputSchema", True)
        except jsonschema.ValidationError as e:
            c.ok(f"{name}: structuredContent matches outputSchema", False, e.message)
        texts = [b for b in result.get("content", []) if b.get("type") == "text"]
        c.ok(f"{name}: a text block carries the result too", bool(texts), result)

    async with c.step("call add"):
        result = await call("add", {"a": 2, "b": 3})
        c.ok("add: not an error", not result.get("isError", False), result)
        c.ok("add: structuredContent == {sum: 5}", result.get("structuredContent") == {"sum": 5}, result)
        validate_structured("add", result)

    async with c.step("call divide"):
        result = await call("divide", {"dividend": 7, "divisor": 2})
        c.ok("divide: 7 / 2 == 3.5", result.get("structuredContent") == {"quotient": 3.5}, result)
        validate_structured("divide", result)

    async with c.step("tool failure"):
        result = await call("divide", {"dividend": 1, "divisor": 0})
        c.ok("divide by zero: isError", result.get("isError") is True, result)
        text = " ".join(b.get("text", "") for b in result.get("content", []))
        c.ok("divide by zero: message names the problem", "divide by zero" in text, result)

    async with c.step("invalid arguments"):
        result = await call("add", {"a": "two", "b": 3})
        c.ok("add with a string: isError", result.get("isError") is True, result)
        text = " ".join(b.get("text", "") for b in result.get("content", []))
        c.ok("add with a string: message names the argument", "a" in text and text.strip() != "", result)
        result = await call("add", {"b": 3})
        c.ok("add without a: isError", result.get("isError") is True, result)

    async with c.step("unknown tool"):
        try:
            result = await call("no_such_tool", {})
            c.ok("unknown tool: JSON-RPC error", False, f"got a result: {result}")
        except McpError as e:
            c.ok("unknown tool: JSON-RPC error -32602", error_code(e) == INVALID_PARAMS,
                 f"code {error_code(e)}: {e}")

    async with c.step("echo"):
        text = "héllo ✓ 🦀 \"quoted\"\nnew line"
        result = await call("echo", {"text": text})
        got = [b.get("text") for b in result.get("content", []) if b.get("type") == "text"]
        c.ok("echo: unicode round trip", got == [text], result)

    async with c.step("progress"):
        updates: list[tuple[float, Any, Any]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        result = await call("countdown", {"steps": 3}, progress_callback=on_progress)
        c.ok("countdown: result", not result.get("isError", False) and "3" in str(result), result)
        await asyncio.sleep(0.2)  # a notification sent just before the reply may trail it
        c.ok("countdown: 3 progress notifications", len(updates) == 3, updates)
        c.ok("countdown: progress increases to the total",
             [u[0] for u in updates] == [1, 2, 3] and all(u[1] == 3 for u in updates), updates)
        c.ok("countdown: progress messages", [u[2] for u in updates] == ["2 left", "1 left", "0 left"],
             updates)
        if era == "modern":
            # The session's log level travels in each request's `_meta` (info): debug stays out.
            c.ok("countdown: info log messages (2026-07-28 _meta level)",
                 [(m.get("level"), m.get("logger"), m.get("data")) for m in logs]
                 == [("info", "countdown", f"{n} left") for n in (2, 1, 0)], logs)
        else:
            c.ok("countdown: no log messages before logging/setLevel", logs == [], logs)

    # --- a tool asks the client (legacy: server-to-client requests) -------------------------
    if era == "legacy":
        async with c.step("elicitation"):
            user.asked.clear()
            user.elicit_answers = [types.ElicitResult(action="accept", content={"confirm": True})]
            result = await call("wipe", {"table": "orders"})
            c.ok("wipe: the accepted form reaches the tool",
                 [b.get("text") for b in result.get("content", [])] == ["wiped orders"], result)
            asked = user.asked[0] if user.asked else {}
            c.ok("wipe: elicitation/create carries the message",
                 asked.get("message") == "Delete every row of `orders`?", asked)
            schema = asked.get("requestedSchema", {})
            c.ok("wipe: the form is a flat object with a required boolean",
                 schema.get("type") == "object"
                 and schema.get("properties", {}).get("confirm", {}).get("type") == "boolean"
                 and schema.get("required") == ["confirm"], schema)
            user.elicit_answers = [types.ElicitResult(action="decline")]
            result = await call("wipe", {"table": "orders"})
            c.ok("wipe: a declined form reaches the tool",
                 [b.get("text") for b in result.get("content", [])] == ["kept orders: declined"], result)
        async with c.step("sampling"):
            user.asked.clear()
            result = await call("summarize", {"text": "a long story"})
            c.ok("summarize: the model's message reaches the tool",
                 [b.get("text") for b in result.get("content", [])] == ["a short summary (by scripted-model)"],
                 result)
            asked = user.asked[0] if user.asked else {}
            c.ok("summarize: sampling/createMessage params",
                 asked.get("maxTokens") == 100 and asked.get("systemPrompt") == "Answer in one sentence."
                 and asked.get("messages", [{}])[0].get("content", {}).get("text") == "Summarize: a long story",
                 asked)

    # --- logging ---------------------------------------------------------------------------
    if era == "legacy":
        async with c.step("logging/setLevel"):
            logs.clear()
            result = wire(await asyncio.wait_for(session.set_logging_level("debug"), CALL_TIMEOUT))
            c.ok("setLevel debug: an empty result", result == {} or result == {"_meta": {}}, result)
            await call("countdown", {"steps": 2})
            await asyncio.sleep(0.2)
            c.ok("countdown at debug: debug and info messages",
                 [(m.get("level"), m.get("data")) for m in logs]
                 == [("debug", "step 1"), ("info", "1 left"), ("debug", "step 2"), ("info", "0 left")], logs)
            logs.clear()
            await asyncio.wait_for(session.set_logging_level("warning"), CALL_TIMEOUT)
            await call("countdown", {"steps": 2})
            await asyncio.sleep(0.2)
            c.ok("countdown at warning: nothing", logs == [], logs)
            try:
                await asyncio.wait_for(session.set_logging_level("loud"), CALL_TIMEOUT)  # type: ignore[arg-type]
                c.ok("setLevel loud: JSON-RPC error", False, "got a result")
            except McpError as e:
                c.ok("setLevel loud: -32602", error_code(e) == INVALID_PARAMS, f"code {error_code(e)}: {e}")
            except Exception as e:  # noqa: BLE001 - the SDK may refuse the level itself
                c.ok("setLevel loud: refused", True, e)

    # --- prompts ---------------------------------------------------------------------------
    async with c.step("prompts/list"):
        listed = wire(await asyncio.wait_for(session.list_prompts(), CALL_TIMEOUT))
        prompts = {p["name"]: p for p in listed.get("prompts", [])}
        c.ok("prompts/list names", list(prompts) == ["explain"], sorted(prompts))
        explain = prompts.get("explain", {})
        c.ok("explain: description from the doc comment",
             (explain.get("description") or "").startswith("Ask the model to explain"), explain)
        c.ok("explain: arguments, required unless Option",
             [(a.get("name"), a.get("required")) for a in explain.get("arguments") or []]
             == [("operation", True), ("audience", False)], explain)

    async with c.step("prompts/get"):
        result = wire(await asyncio.wait_for(
            session.get_prompt("explain", {"operation": "add", "audience": "a child"}), CALL_TIMEOUT))
        messages = result.get("messages", [])
        c.ok("explain: two messages, user then assistant",
             [m.get("role") for m in messages] == ["user", "assistant"], result)
        c.ok("explain: the arguments are in the text",
             messages and messages[0].get("content", {}).get("text")
             == "Explain what the `add` tool does, for a child.", result)
        try:
            result = wire(await asyncio.wait_for(session.get_prompt("explain", {}), CALL_TIMEOUT))
            c.ok("explain without operation: JSON-RPC error", False, f"got a result: {result}")
        except McpError as e:
            c.ok("explain without operation: -32602 naming the argument",
                 error_code(e) == INVALID_PARAMS and "operation" in str(e), f"code {error_code(e)}: {e}")
        try:
            result = wire(await asyncio.wait_for(session.get_prompt("no_such_prompt", {}), CALL_TIMEOUT))
            c.ok("unknown prompt: JSON-RPC error", False, f"got a result: {result}")
        except McpError as e:
            c.ok("unknown prompt: JSON-RPC error -32602", error_code(e) == INVALID_PARAMS,
                 f"code {error_code(e)}: {e}")

    # --- completion ------------------------------------------------------------------------
    async with c.step("completion/complete"):
        ref = types.PromptReference(type="ref/prompt", name="explain")
        result = wire(await asyncio.wait_for(
            session.complete(ref, {"name": "operation", "value": "d"}), CALL_TIMEOUT))
        c.ok("complete explain.operation 'd': divide",
             result.get("completion") == {"values": ["divide"], "total": 1, "hasMore": False}, result)
        result = wire(await asyncio.wait_for(
            session.complete(ref, {"name": "audience", "value": "a"}), CALL_TIMEOUT))
        c.ok("complete explain.audience: no suggestions", result.get("completion", {}).get("values") == [],
             result)
        try:
            result = wire(await asyncio.wait_for(
                session.complete(ref, {"name": "colour", "value": ""}), CALL_TIMEOUT))
            c.ok("complete an unknown argument: JSON-RPC error", False, f"got a result: {result}")
        except McpError as e:
            c.ok("complete an unknown argument: -32602 naming it",
                 error_code(e) == INVALID_PARAMS and "colour" in str(e), f"code {error_code(e)}: {e}")

    # --- resources -------------------------------------------------------------------------
    async with c.step("resources/list"):
        listed = wire(await asyncio.wait_for(session.list_resources(), CALL_TIMEOUT))
        resources = listed.get("resources", [])
        c.ok("resources/list: the operations resource",
             [(r.get("uri"), r.get("name"), r.get("mimeType")) for r in resources]
             == [("demo://docs/operations", "operations", "text/plain")], listed)
        templates = wire(await asyncio.wait_for(session.list_resource_templates(), CALL_TIMEOUT))
        c.ok("resources/templates/list: the operation template",
             [(t.get("uriTemplate"), t.get("name")) for t in templates.get("resourceTemplates", [])]
             == [("demo://docs/operations/{name}", "operation")], templates)

    async with c.step("resources/read"):
        result = wire(await asyncio.wait_for(session.read_resource("demo://docs/operations"), CALL_TIMEOUT))
        contents = result.get("contents", [])
        c.ok("read a fixed URI: its text",
             contents and contents[0].get("text") == "add\ndivide\necho\ncountdown"
             and contents[0].get("mimeType") == "text/plain", result)
        result = wire(await asyncio.wait_for(
            session.read_resource("demo://docs/operations/divide"), CALL_TIMEOUT))
        contents = result.get("contents", [])
        c.ok("read through the template: the variable is bound",
             contents and contents[0].get("uri") == "demo://docs/operations/divide"
             and "The `divide` tool" in (contents[0].get("text") or ""), result)
        expected = INVALID_PARAMS if era == "modern" else RESOURCE_NOT_FOUND
        for uri in ["demo://docs/nothing", "demo://docs/operations/fly"]:
            try:
                result = wire(await asyncio.wait_for(session.read_resource(uri), CALL_TIMEOUT))
                c.ok(f"read {uri}: JSON-RPC error", False, f"got a result: {result}")
            except McpError as e:
                c.ok(f"read {uri}: resource not found ({expected})", error_code(e) == expected,
                     f"code {error_code(e)}: {e}")

    async with c.step("concurrent calls"):
        results = await asyncio.gather(*(call("add", {"a": i, "b": i}) for i in range(8)))
        c.ok("8 concurrent calls answered in kind",
             [r.get("structuredContent") for r in results] == [{"sum": 2 * i} for i in range(8)], results)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", metavar="CMD", help="server command line (split like a shell would)")
    target.add_argument("--http", metavar="URL", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall time limit in seconds")
    args = parser.parse_args()

    where = f"stdio {args.stdio!r}" if args.stdio else f"http {args.http}"
    label = f"python mcp {package_version('mcp')}, {args.era} era, {where}"
    print(f"== {label}")
    c = Checks(label)

    async def session_run() -> None:
        async with contextlib.AsyncExitStack() as stack:
            if args.stdio:
                argv = shlex.split(args.stdio)
                params = StdioServerParameters(command=argv[0], args=argv[1:])
                streams = await stack.enter_async_context(stdio_client(params))
            else:
                streams = await stack.enter_async_context(_http_client(args.http))
            read, write = streams[0], streams[1]  # mcp 1.x adds a session-id getter
            logs: list[dict[str, Any]] = []

            async def on_log(params: Any) -> None:
                logs.append(wire(params))

            user = ScriptedUser()
            options: dict[str, Any] = {"logging_callback": on_log}
            if args.era == "legacy":
                options["elicitation_callback"] = user.elicit
                options["sampling_callback"] = user.sample
            if args.era == "modern":
                options["log_level"] = "info"  # mcp >= 2: sent in each request's _meta
            session = await stack.enter_async_context(ClientSession(read, write, **options))
            await run_checks(session, args.era, c, logs, user)

    try:
        await asyncio.wait_for(session_run(), args.timeout)
    except Exception as e:  # noqa: BLE001
        c.failed.append("session")
        print(f"  FAIL session: {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stdout)

    print(f"{label}: {c.passed} passed, {len(c.failed)} failed")
    for name in c.failed:
        print(f"  failed: {name}")
    return 0 if not c.failed and c.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
