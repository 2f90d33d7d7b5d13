#!/usr/bin/env bash
# Printed by `make demo` before the box starts.
cat <<'MSG'
fieldtap demo: the simulated board (span0: SIP calls + RTP, can0: a J1939
truck, j1708: J1587 messages) replayed at real-time pace.

MCP endpoint (streamable HTTP): http://127.0.0.1:8731/mcp

Connect a client:
  Claude Code:     claude mcp add --transport http fieldtap http://127.0.0.1:8731/mcp
  MCP Inspector:   npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8731/mcp \
                       --transport http --method tools/call --tool-name capture_status
  Any client:      POST JSON-RPC to http://127.0.0.1:8731/mcp (streamable HTTP)
  Over stdio:      bin/fieldtapd --mcp-transport stdio

Without an agent: http://127.0.0.1:8732/status in a browser (arm state,
ports, bus load, faults, calls; read-only), /status.json, /metrics.

Try capture_status first. Ctrl-C stops the box.
MSG
