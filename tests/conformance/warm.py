#!/usr/bin/env python3
"""warm.py URL TOOL... calls each tool once on the wasmcp server at URL
(a legacy session: initialize, then tools/call) and waits for each answer.

The replica runs use it on every replica before the runner starts: a
module's code is made ready on its first call (the description cache lets
a server list it without compiling), and the runner reads some answers
within 600 ms, which the first call on a replica that has not made that
module's code ready yet does not meet. A warmed replica serves as a
long-running one does, which is what the runs are meant to check."""
import json
import sys
import urllib.request

url, tools = sys.argv[1], sys.argv[2:]


def post(body, session=None):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-06-18"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=120) as resp:
        return resp.headers.get("Mcp-Session-Id"), resp.read()


session, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "conformance-warm-up", "version": "1"}}})
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
for i, tool in enumerate(tools):
    _, body = post({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": tool, "arguments": {}}}, session)
    if b'"result"' not in body and b'"error"' not in body:
        sys.exit("warm-up: no answer to %s from %s: %r" % (tool, url, body[:200]))
