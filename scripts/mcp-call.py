#!/usr/bin/env python3
"""Call one MCP tool over streamable HTTP and print its structured result.

    scripts/mcp-call.py URL TOOL [JSON-ARGUMENTS]

Standard library only, so the benchmark scripts run wherever python3 does.
It initializes a session, sends notifications/initialized, calls TOOL and
prints the answer, the JSON of its first text block, as one JSON line
(exit 1 on error). The text block is sent whether or not output schemas
are on; structuredContent only with them (mcp.output_schemas).
"""
import json
import sys
import urllib.request

PROTOCOL = "2025-11-25"


def post(url, body, session=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    req.add_header("MCP-Protocol-Version", PROTOCOL)
    if session:
        req.add_header("Mcp-Session-Id", session)
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read().decode()
        sid = resp.headers.get("Mcp-Session-Id", session)
        ctype = resp.headers.get("Content-Type", "")
    if not raw.strip():
        return None, sid
    if "text/event-stream" in ctype:
        # The answer is the data of the last event carrying a JSON-RPC result.
        msg = None
        for line in raw.splitlines():
            if line.startswith("data:"):
                msg = json.loads(line[5:].strip())
        return msg, sid
    return json.loads(raw), sid


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    url, tool = sys.argv[1], sys.argv[2]
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "fieldtap-bench", "version": "1"}}}
    _, sid = post(url, init)
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    msg, _ = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": tool, "arguments": args}}, sid)
    result = (msg or {}).get("result")
    if not result or result.get("isError"):
        print(json.dumps(msg), file=sys.stderr)
        sys.exit(1)
    text = next((c["text"] for c in result.get("content", []) if c.get("type") == "text"), None)
    if text is None:
        print(json.dumps(msg), file=sys.stderr)
        sys.exit("mcp-call: the answer has no text block")
    print(json.dumps(json.loads(text)))


if __name__ == "__main__":
    main()
