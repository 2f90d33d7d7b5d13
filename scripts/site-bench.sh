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
# The store is quiet once the capture is read, so every call of a tool
# gets the same snapshot, whose columns (services/sip siteColumns) its
# first call builds and the later ones read. With LIVE=1 (root, ip and
# tcpreplay) fieldtapd also captures a veth end in a network namespace
# while tcpreplay sends it LIVE_PPS (default 500) SIP frames a second
# (calls of another seed), and the client waits 50 ms before each call,
# longer than the capture's 20 ms block timeout, so the store changes
# between every two calls: each call gets a new snapshot, which carries
# the columns of the one before (services/sip carry.go). The daemon's CPU
# then includes that ingest: IDLE_S seconds (default 5) of it alone are
# measured first, and a call's share of it over the run's wall time is
# subtracted ("net").
#
#   scripts/site-bench.sh [FIELDTAPD]   (default bin/fieldtapd, built)
#
# CALLS (default 100000) sets the dialogs; the captures are kept in
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
pid= feeder= ns=
cleanup() {
	kill $pid $feeder 2>/dev/null || true
	wait $pid $feeder 2>/dev/null || true
	[ -z "$ns" ] || ip netns del "$ns" || true
	rm -rf "$work"
}
trap cleanup EXIT
in=()
echo 'memory_limit_mib = 1600' >"$work/fieldtapd.toml"
if [ "${LIVE:-0}" = 1 ]; then
	command -v tcpreplay >/dev/null || { echo "site-bench: LIVE=1 needs tcpreplay (apt-get install tcpreplay)" >&2; exit 2; }
	trickle=$dir/trickle-2000.pcapng
	[ -s "$trickle" ] || go run ./tools/cmd/fieldtap gen sip -o "$trickle" -no-media -calls 2000 -duration 4000s -seed 7
	ns=fieldtap-site-$$
	ip netns add "$ns"
	ip link add sb-gen type veth peer name sb-cap netns "$ns"
	ip link set sb-gen up
	ip netns exec "$ns" ip link set sb-cap up
	ip netns exec "$ns" ip link set lo up
	in=(ip netns exec "$ns")
	printf '[[port]]\nname = "span0"\ndriver = "afpacket"\ndevice = "sb-cap"\n' >>"$work/fieldtapd.toml"
fi
"${in[@]}" "$bin" --config "$work/fieldtapd.toml" --board none --source "$capture" --replay-speed max \
	--mcp-listen "127.0.0.1:$port" --mcp-rate-limit-per-peer 0 2>"$work/log" &
pid=$!
until grep -q 'port drained" port=file1' "$work/log"; do
	kill -0 "$pid" 2>/dev/null || { echo "site-bench: fieldtapd exited:" >&2; cat "$work/log" >&2; exit 1; }
	sleep 0.1
done
if [ -n "$ns" ]; then
	tcpreplay -q --loop 5 --pps "${LIVE_PPS:-500}" -i sb-gen "$trickle" >/dev/null 2>&1 &
	feeder=$!
fi
url=http://127.0.0.1:$port/mcp
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "site-bench: $calls calls in $capture, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
gap=0
if [ -n "$feeder" ]; then
	gap=50 idle=${IDLE_S:-5}
	t0=$(ticks)
	sleep "$idle"
	t1=$(ticks)
	background=$(echo "($t1 - $t0) * 10 / $idle" | bc -l)
	printf 'site-bench: live, the daemon ingesting %s SIP frames a second: %.1f ms CPU a second alone\n' "${LIVE_PPS:-500}" "$background"
fi
for spec in 'find_problems {}' 'list_dialogs {}' \
	'aggregate_dialogs {"dimension":"final_code"}' 'aggregate_dialogs {"dimension":"from_user"}' 'aggregate_dialogs {"dimension":"participant_ip"}' \
	'group_dialogs {"dimension":"final_code"}' 'group_dialogs {"dimension":"from_user"}' 'group_dialogs {"dimension":"participant_ip"}' \
	'group_dialogs {"dimension":"participant_ip","filter":"from_user ~ \"^10\""}' 'find_problems {"filter":"final_code >= 400 or from_user ~ \"^10\""}'; do
	tool=${spec%% *} args=${spec#* }
	"${in[@]}" python3 scripts/mcp-time.py "$url" "$tool" 1 "$args" >/dev/null
	t0=$(ticks) w0=$(date +%s.%N)
	out=$("${in[@]}" env GAP_MS="$gap" python3 scripts/mcp-time.py "$url" "$tool" "$runs" "$args")
	t1=$(ticks) w1=$(date +%s.%N)
	if [ -n "$feeder" ]; then
		printf '%s | daemon %.1f ms CPU a call, net %.1f\n' "$out" "$(echo "($t1 - $t0) * 10 / $runs" | bc -l)" \
			"$(echo "(($t1 - $t0) * 10 - $background * ($w1 - $w0)) / $runs" | bc -l)"
	else
		printf '%s | daemon %.1f ms CPU a call\n' "$out" "$(echo "($t1 - $t0) * 10 / $runs" | bc -l)"
	fi
done
