#!/usr/bin/env python3
"""MCP Apps in a real browser: examples/apps (an MCP server whose tool names a `ui://` app)
is rendered by a minimal web host (tests/e2e/apps_host.html) in headless Chromium.

This script starts the example on a free loopback port, serves the host page and proxies
its `/mcp` requests to the server (one origin for the page, so no CORS), serves the sandbox
proxy (tests/e2e/apps_sandbox.html) on another port (another origin), opens the page in
headless Chromium, and waits (bounded) for the page's verdict on `POST /verdict`. It passes
when the host found the tool's app through the negotiated extension, read the app's HTML
with its MIME type, the app rendered the pushed result, and the app's own `tools/call`,
forwarded by the host, reached the server (seen here, in the proxy) and its answer was
rendered by the app (reported back in the app's log message).

Usage: apps_host.py EXAMPLE_BINARY [--chromium PATH] [--logs DIR]
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "apps_host.html"
SANDBOX = HERE / "apps_sandbox.html"
WAIT_SECONDS = 90
FORWARDED = ("Content-Type", "Accept", "Mcp-Session-Id", "MCP-Protocol-Version")


class Host:
    """What the proxy saw and what the page said."""

    def __init__(self, server_url):
        self.server_url = server_url
        self.calls = []  # (params, result) of every tools/call the server answered
        self.verdict = None
        self.done = threading.Event()
        self.lock = threading.Lock()


def handler_for(host):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):
            pages = {"/": PAGE, "/sandbox": SANDBOX}
            page = pages.get(self.path.split("?")[0])
            if page is None:
                return self.reply(404, b"not found", "text/plain")
            self.reply(200, page.read_bytes(), "text/html; charset=utf-8")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/verdict":
                host.verdict = json.loads(body)
                host.done.set()
                return self.reply(204, b"", "text/plain")
            if self.path != "/mcp":
                return self.reply(404, b"not found", "text/plain")
            self.forward(body)

        def forward(self, body):
            # The page's Origin stays here: the server sees a local client, as a desktop host is.
            headers = {k: self.headers[k] for k in FORWARDED if self.headers.get(k)}
            request = urllib.request.Request(host.server_url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, data, rheaders = response.status, response.read(), response.headers
            except urllib.error.HTTPError as error:
                status, data, rheaders = error.code, error.read(), error.headers
            self.record(body, data, rheaders.get("Content-Type", ""))
            extra = {"Mcp-Session-Id": rheaders.get("Mcp-Session-Id")}
            self.reply(status, data, rheaders.get("Content-Type", "application/json"), extra)

        def record(self, body, data, content_type):
            message = json.loads(body)
            if message.get("method") != "tools/call":
                return
            text = data.decode()
            if content_type.startswith("text/event-stream"):
                replies = [json.loads(l[5:]) for l in text.splitlines() if l.startswith("data:")]
            else:
                replies = [json.loads(text)]
            for reply in replies:
                if reply.get("id") == message.get("id") and "result" in reply:
                    with host.lock:
                        host.calls.append((message.get("params"), reply["result"]))

        def reply(self, status, data, content_type, extra=None):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                if value:
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def start_server(binary, logs):
    """The example on a free port; its URL read from its first line on stderr."""
    log = open(logs / "apps_server.log", "w")
    process = subprocess.Popen([binary, "0"], stderr=subprocess.PIPE, stdout=log, text=True)
    found = {}

    def read():
        for line in process.stderr:
            log.write(line)
            log.flush()
            match = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if match and "url" not in found:
                found["url"] = match.group(1)
                ready.set()

    ready = threading.Event()
    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(30):
        process.kill()
        sys.exit(f"apps_host: {binary} printed no URL within 30 s (see {logs}/apps_server.log)")
    return process, found["url"]


def run_chromium(chromium, url, logs, profile):
    args = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-dev-shm-usage", f"--user-data-dir={profile}", url]
    log = open(logs / "apps_chromium.log", "w")
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process, group):
    """Stops a process this script started (with its group, for the browser's children)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
            process.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def check(host):
    """The failures, in words; none when the app ran as a host renders it."""
    v = host.verdict or {}
    problems = []
    if not v.get("ok"):
        problems.append(f"the host page failed: {v.get('reason')}")
    if (v.get("serverExtensions") or {}).get("io.modelcontextprotocol/ui") is None:
        problems.append("the server did not declare io.modelcontextprotocol/ui")
    if (v.get("resource") or {}).get("mimeType") != "text/html;profile=mcp-app":
        problems.append(f"the app's contents: {v.get('resource')}")
    rendered = [l for l in v.get("logs", []) if isinstance(l, dict)]
    pushed = [l for l in rendered if l.get("origin") == "pushed by the host"]
    refreshed = [l for l in rendered if l.get("origin") == "refreshed by the app"]
    if not pushed:
        problems.append("the app never rendered the result the host pushed")
    answered = {result.get("structuredContent", {}).get("call") for _, result in host.calls}
    if not v.get("appCalls"):
        problems.append("the app called no tool through the host")
    if not refreshed or refreshed[0].get("call") not in answered:
        problems.append(f"no result rendered by the app matches a call the server answered "
                        f"(rendered {refreshed}, server answered calls {sorted(answered - {None})})")
    if len(host.calls) < 2:
        problems.append(f"the server answered {len(host.calls)} tools/call, want the host's and the app's")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    parser.add_argument("--logs", default=tempfile.gettempdir())
    args = parser.parse_args()
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    server, server_url = start_server(args.binary, logs)
    host = Host(server_url)
    web = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(host))
    # The sandbox proxy on another port: another origin, as the spec requires of web hosts.
    sandbox = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(host))
    for server_ in (web, sandbox):
        threading.Thread(target=server_.serve_forever, daemon=True).start()
    sandbox_url = f"http://127.0.0.1:{sandbox.server_address[1]}/sandbox"
    page_url = f"http://127.0.0.1:{web.server_address[1]}/?sandbox={sandbox_url}"
    with tempfile.TemporaryDirectory(prefix="apps-chromium-") as profile:
        browser = run_chromium(args.chromium, page_url, logs, profile)
        try:
            got = host.done.wait(WAIT_SECONDS)
        finally:
            stop(browser, group=True)
            stop(server, group=False)
            web.shutdown()
            sandbox.shutdown()
    if not got:
        sys.exit(f"apps_host: no verdict from the page within {WAIT_SECONDS} s (see {logs}/apps_chromium.log)")
    problems = check(host)
    print(json.dumps(host.verdict, indent=1))
    print(f"apps_host: the server answered {len(host.calls)} tools/call; the app made {len(host.verdict.get('appCalls', []))}")
    if problems:
        sys.exit("apps_host: FAILED\n  - " + "\n  - ".join(problems))
    print("apps_host: ok (app rendered in headless Chromium and called a tool through the host)")


if __name__ == "__main__":
    main()
