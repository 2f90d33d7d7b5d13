#!/usr/bin/env python3
"""Time one MCP tool over streamable HTTP: N calls in one session.

    scripts/mcp-time.py URL TOOL N [JSON-ARGUMENTS]

Prints the median, minimum and maximum milliseconds per call (client
side, loopback HTTP included). GAP_MS in the environment waits that long
before each call, outside the timing (a live store then changes between
calls: scripts/site-bench.sh). Standard library only; see mcp-call.py.
"""
import importlib.util
import json
import os
import statistics
import sys
import time

spec = importlib.util.spec_from_file_location("mcp_call", os.path.join(os.path.dirname(__file__), "mcp-call.py"))
mc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mc)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    url, tool, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": mc.PROTOCOL, "capabilities": {}, "clientInfo": {"name": "fieldtap-bench", "version": "1"}}}
    _, sid = mc.post(url, init)
    mc.post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    gap = float(os.environ.get("GAP_MS", "0")) / 1000
    ms = []
    for i in range(n):
        time.sleep(gap)
        t0 = time.perf_counter()
        msg, _ = mc.post(url, {"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                               "params": {"name": tool, "arguments": args}}, sid)
        ms.append((time.perf_counter() - t0) * 1000)
        if not msg or msg.get("result", {}).get("isError"):
            sys.exit(f"call failed: {json.dumps(msg)[:300]}")
    print(f"{tool} {json.dumps(args)}: median {statistics.median(ms):.1f} ms, min {min(ms):.1f}, max {max(ms):.1f} over {n} calls")


if __name__ == "__main__":
    main()
