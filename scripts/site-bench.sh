#!/usr/bin/env bash
# site-bench.sh: the site-wide SIP answers (issue #39) over a capture of
# whole calls, as a client outside the box sees them. fieldtapd ingests
# a generated signalling capture (INVITE, 100, 180, 200, ACK, BYE, 200
# per call: every dialog has a final code, two participants and a
# post-dial delay) with a memory budget that keeps every dialog, then
# each tool is called once to warm it and RUNS times over HTTP. Prints
# the client's median milliseconds (scripts/mcp-time.py) and the
# daemon's CPU per call (user+system from /proc, in 10 ms ticks: over
# 20 calls the step is 0.5 ms).
#
# The store is quiet once the capture is read, so a tool's second call
# builds the snapshot's columns and the later ones read them (services/sip
# siteColumns); the RUNS calls' figures include that build. A live store
# that changes between calls scans every dialog on every call: `sip`
# BenchmarkGroupMetrics100k measures both (docs/benchmarks.md).
#
#   scripts/site-bench.sh [FIELDTAPD]   (default bin/fieldtapd, built)
#
# CALLS (default 100000) sets the dialogs; the capture is kept in
# BENCH_DIR (default /tmp/fieldtap-bench, shared with bench-compare).
set -euo pipefail
cd "$(dirname "$0")/.."

calls=${CALLS:-100000}
runs=${RUNS:-20}
dir=${BENCH_DIR:-/tmp/fieldtap-bench}
port=${PORT:-8799}
bin=${1:-}
if [ -z "$bin" ]; then
	make -s build
	bin=bin/fieldtapd
fi
mkdir -p "$dir"
capture=$dir/signalling-$calls.pcapng
[ -s "$capture" ] || go run ./tools/cmd/fieldtap gen sip -o "$capture" -no-media -calls "$calls" -duration "$((2 * calls))s"

work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
echo 'memory_limit_mib = 1600' >"$work/fieldtapd.toml"
"$bin" --config "$work/fieldtapd.toml" --board none --source "$capture" --replay-speed max \
	--mcp-listen "127.0.0.1:$port" --mcp-rate-limit-per-peer 0 2>"$work/log" &
pid=$!
until grep -q 'port drained' "$work/log"; do
	kill -0 "$pid" 2>/dev/null || { echo "site-bench: fieldtapd exited:" >&2; cat "$work/log" >&2; exit 1; }
	sleep 0.1
done
url=http://127.0.0.1:$port/mcp
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "site-bench: $calls calls in $capture, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in 'find_problems {}' 'list_dialogs {}' \
	'aggregate_dialogs {"dimension":"final_code"}' 'aggregate_dialogs {"dimension":"from_user"}' 'aggregate_dialogs {"dimension":"participant_ip"}' \
	'group_dialogs {"dimension":"final_code"}' 'group_dialogs {"dimension":"from_user"}' 'group_dialogs {"dimension":"participant_ip"}'; do
	tool=${spec%% *} args=${spec#* }
	python3 scripts/mcp-time.py "$url" "$tool" 1 "$args" >/dev/null
	t0=$(ticks)
	out=$(python3 scripts/mcp-time.py "$url" "$tool" "$runs" "$args")
	t1=$(ticks)
	printf '%s | daemon %.1f ms CPU a call\n' "$out" "$(echo "($t1 - $t0) * 10 / $runs" | bc -l)"
done
