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

Rules the box watches without an agent (scripts/demo.toml, docs/rules.md):
coolant-hot fires within seconds on the truck's J1587 fault. See them with
rule_status, what_happened, the live view fieldtap://live/rules, the status
page's Rules section and fieldtap_rule_state on /metrics.

Rehearse a transmit (scripts/demo.toml: can0 can send; a simulated engine
ECU answers). Over HTTP a send needs a token with the transmit scope, so
stop this box (Ctrl-C) and let the client start one over stdio:
  claude mcp add fieldtap-tx -- bin/fieldtapd --config scripts/demo.toml \
      --mcp-transport stdio --mcp-bundles server,can,j1939,transmit
Then, with the client:
  1. Plan:    j1939_request {"port": "can0", "pgn": 65260, "da": 0, "sa": 250}
              (a dry run: every frame, its risk, the gates. sa 250 (0xFA):
              the sim truck's workshop tool holds 0xF9 and the bus check
              would block it.)
  2. Arm:     echo armed > /tmp/fieldtap-demo/arm     (the sim key switch)
  3. Execute: transmit_execute {"plan_id": "<the plan's id>", "ack_active": true}
              and accept the client's question.
  4. Confirm: while it waits (transmit_status shows the LED code), press
              bin/fieldtap button press --file /tmp/fieldtap-demo/confirm
  5. Answer:  the result's answers hold the VIN by BAM from the engine (00);
              can_frames {"port": "can0", "id": "18EA00FA"} shows the request
              on the bus; j1939_request_dm {"dm": "DM1", ...} the active fault;
              uds_request {"service": "read_did", "did": "F190"} or
              {"service": "session_control", "session": 3} on 7E0/7E8.
  6. Audit:   /tmp/fieldtap-demo/transmit.jsonl, one line per step.
  Disarm:     echo off > /tmp/fieldtap-demo/arm
MSG
