#!/usr/bin/env bash
# Live-capture benchmark (issue #14): fieldtapd captures a veth end in
# one network namespace while tcpreplay (or netsniff-ng's trafgen) sends
# generated SIP/RTP traffic into the other end from a second namespace.
# It prints what was sent, what the veth delivered, what fieldtapd
# captured and every drop counter, and checks that the frames add up
# exactly:
#
#   sent = delivered to the veth + dropped by the veth
#   delivered = captured + kernel drops + hand-off drops
#
# and samples fieldtapd's RSS while it runs.
#
#   scripts/live-bench.sh [-p PPS] [-s SECONDS] [-b] [-f FILE] [-m MIB] [-j J] [-g SENDER]
#
#   -p  packets per second to send, or max (default 200000)
#   -s  seconds to send (default 15)
#   -b  keep one core busy for the whole run: a shell loop pinned (taskset)
#       to the last CPU, so the capture has the other cores
#   -f  capture to replay (default: fieldtap gen sip, 10 minutes, looped)
#   -m  memory_limit_mib for fieldtapd (default: the board-none budget)
#   -j  senders in parallel, each PPS/J (default 1): tcpreplay
#       processes, or trafgen's forks (one per CPU at most); one
#       tcpreplay on a veth tops out at 200 000-400 000 pps on a 2-core VM
#   -g  the sender: tcpreplay (default; one sendto per frame) or trafgen
#       (netsniff-ng, apt-get install netsniff-ng: a PACKET_TX_RING, many
#       frames per system call, for rates tcpreplay cannot reach). trafgen
#       loops the file's frames from a config this script writes.
#
# Needs root (namespaces, AF_PACKET) and the sender (apt-get install
# tcpreplay, or netsniff-ng). Builds bin/ with make build. Everything
# it creates is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

pps=200000 secs=15 busy=0 file="" mib=0 jobs=1 sender=tcpreplay
while getopts "p:s:bf:m:j:g:" o; do
	case $o in
	p) pps=$OPTARG ;;
	s) secs=$OPTARG ;;
	b) busy=1 ;;
	f) file=$OPTARG ;;
	m) mib=$OPTARG ;;
	j) jobs=$OPTARG ;;
	g) sender=$OPTARG ;;
	*) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "live-bench: needs root" >&2; exit 2; }
case $sender in
tcpreplay) command -v tcpreplay >/dev/null || { echo "live-bench: tcpreplay is not installed (apt-get install tcpreplay)" >&2; exit 2; } ;;
trafgen) command -v trafgen >/dev/null || { echo "live-bench: trafgen is not installed (apt-get install netsniff-ng)" >&2; exit 2; } ;;
*) echo "live-bench: -g $sender: the sender is tcpreplay or trafgen" >&2; exit 2 ;;
esac

make -s build
tmp=$(mktemp -d)
gen=ftgen$$ cap=ftcap$$ port=18731
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$gen" 2>/dev/null || true
	ip netns del "$cap" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -z "$file" ]; then
	file=$tmp/calls.pcapng
	bin/fieldtap gen sip -o "$file" -duration 10m
fi

ip netns add "$gen"
ip netns add "$cap"
ip link add vg netns "$gen" type veth peer name vc netns "$cap"
for ns in "$gen" "$cap"; do
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip netns exec "$gen" ip link set vg up
ip netns exec "$cap" ip link set vc up

cat >"$tmp/fieldtapd.toml" <<EOF
board = "none"
memory_limit_mib = $mib
[mcp]
listen = "127.0.0.1:$port"
[[port]]
name = "span0"
driver = "afpacket"
device = "vc"
EOF
ip netns exec "$cap" env GODEBUG=gctrace=1 bin/fieldtapd --config "$tmp/fieldtapd.toml" 2>"$tmp/fieldtapd.log" &
daemon=$!
pids+=("$daemon")
url=http://127.0.0.1:$port/mcp
status() { ip netns exec "$cap" python3 scripts/mcp-call.py "$url" capture_status; }
for _ in $(seq 100); do
	status >"$tmp/status.json" 2>/dev/null && break
	sleep 0.1
done
[ -s "$tmp/status.json" ] || { echo "live-bench: fieldtapd did not answer"; cat "$tmp/fieldtapd.log"; exit 1; }

if [ "$busy" = 1 ]; then
	taskset -c "$(($(nproc) - 1))" sh -c 'while :; do :; done' &
	pids+=("$!")
fi

rx() { ip netns exec "$cap" cat /sys/class/net/vc/statistics/"$1"; }
rx0=$(rx rx_packets) rxd0=$(rx rx_dropped)

# RSS every 5 s while traffic flows.
(
	while kill -0 "$daemon" 2>/dev/null; do
		echo "$(date +%s) $(ps -o rss= -p "$daemon")"
		sleep 5
	done
) >"$tmp/rss" &
pids+=("$!")

if [ "$sender" = tcpreplay ]; then
	if [ "$pps" = max ]; then rate=--topspeed; else rate="--pps=$((pps / jobs))"; fi
	for j in $(seq "$jobs"); do
		ip netns exec "$gen" tcpreplay -i vg -K $rate --loop=0 --duration="$secs" "$file" >"$tmp/tcpreplay.$j.out" 2>&1 &
		pids+=("$!")
	done
	for j in $(seq "$jobs"); do wait "${pids[-$j]}" || true; done
	cat "$tmp"/tcpreplay.*.out >"$tmp/tcpreplay.out"
	sent=$(awk '/Successful packets:/ {n += $3} END {print n}' "$tmp/tcpreplay.out")
	rated=$(awk '/Rated:/ {n += $(NF-1)} END {printf "%.0f", n}' "$tmp/tcpreplay.out")
	failed=$(awk '/Failed packets:/ {n += $3} END {print n}' "$tmp/tcpreplay.out")
else
	# trafgen reads a config of byte lists, one frame each; it sends
	# them in turn, round and round, until the timeout's SIGINT.
	python3 - "$file" "$tmp/frames.cfg" <<'PY'
import struct, sys
src, dst = sys.argv[1:]
data = open(src, "rb").read()
frames = []
magic = data[:4]
if magic == b"\x0a\x0d\x0d\x0a":  # pcapng: enhanced packet blocks
    end = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    off = 0
    while off + 12 <= len(data):
        kind, size = struct.unpack_from(end + "II", data, off)
        if size < 12:
            sys.exit(f"live-bench: {src}: a pcapng block of {size} bytes at offset {off}")
        if kind == 6:
            caplen = struct.unpack_from(end + "I", data, off + 20)[0]
            frames.append(data[off + 28 : off + 28 + caplen])
        off += size
elif magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
    end = "<" if magic[0] in (0xD4, 0x4D) else ">"
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from(end + "I", data, off + 8)[0]
        frames.append(data[off + 16 : off + 16 + caplen])
        off += 16 + caplen
else:
    sys.exit(f"live-bench: {src}: neither pcap nor pcapng")
if not frames:
    sys.exit(f"live-bench: {src}: no frames")
with open(dst, "w") as out:
    for f in frames:
        out.write("{ " + ", ".join(f"0x{b:02x}" for b in f) + " }\n")
PY
	rate=()
	[ "$pps" = max ] || rate=(-b "$((pps / jobs))pps") # per fork; sent one by one
	ip netns exec "$gen" timeout -s INT "$((secs + 30))" trafgen -i "$tmp/frames.cfg" -o vg -P "$jobs" "${rate[@]}" >"$tmp/trafgen.out" 2>&1 &
	tg=$!
	pids+=("$tg")
	# trafgen parses the config before it sends: time the sending only.
	until [ "$(rx rx_packets)" != "$rx0" ]; do
		kill -0 "$tg" 2>/dev/null || { echo "live-bench: trafgen exited before sending:"; cat "$tmp/trafgen.out"; exit 1; }
		sleep 0.01
	done
	t0=$(date +%s.%N)
	sleep "$secs"
	kill -INT "$tg" # timeout passes it on to trafgen and its forks
	wait "$tg" || true
	t1=$(date +%s.%N)
	sent=$(tr '\r' '\n' <"$tmp/trafgen.out" | awk '/packets outgoing/ {print $1; exit}')
	rated=$(awk -v n="$sent" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}')
	failed="" # trafgen does not count failed sends
fi
sleep 2 # the ring's last blocks retire (20 ms) and are consumed

status >"$tmp/status.json"
# fieldtapd's CPU seconds (utime+stime of /proc/PID/stat, in clock ticks).
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' /proc/"$daemon"/stat)
delivered=$(( $(rx rx_packets) - rx0 ))
vethdrop=$(( $(rx rx_dropped) - rxd0 ))
python3 - "$tmp/status.json" "$sent" "$failed" "$delivered" "$vethdrop" "$tmp/rss" "$pps" "$secs" "$busy" "$rated" "$jobs" "$cpu" "$tmp/fieldtapd.log" "$sender" <<'PY'
import json, sys
st, sent, failed, delivered, vethdrop, rssf, pps, secs, busy, rated, jobs, cpu, logf, sender = sys.argv[1:]
sent, delivered, vethdrop = int(sent or 0), int(delivered), int(vethdrop)
p = next(p for p in json.load(open(st))["data"]["ports"] if p["name"] == "span0")
d = p["drops"]
kernel, freezes, handoff = d.get("kernel", 0), d.get("kernel_queue_freezes", 0), d.get("handoff_full", 0)
captured = p["frames"]
rss = [int(l.split()[1]) for l in open(rssf) if len(l.split()) == 2]
print(f"run: {pps} pps asked ({jobs} {sender}) for {secs} s, busy core: {'yes' if busy == '1' else 'no'}; {sender} achieved {rated} pps")
print(f"sent ({sender})".ljust(24) + f"{sent}   (failed sends {failed or 'not counted by ' + sender})")
print(f"delivered to the veth   {delivered}   (veth rx_dropped {vethdrop})")
print(f"captured                {captured}")
print(f"kernel drops            {kernel}   (queue freezes {freezes})")
print(f"hand-off drops          {handoff}")
loss = kernel + handoff
print(f"loss                    {loss} ({100.0 * loss / max(delivered, 1):.4f} %)")
ok1 = sent == delivered + vethdrop
ok2 = delivered == captured + kernel + handoff
print(f"sent = delivered + veth drops:               {'yes' if ok1 else 'NO'}")
print(f"delivered = captured + kernel + hand-off:    {'yes' if ok2 else 'NO'}")
if rss:
    print(f"RSS (KiB, every 5 s):   min {min(rss)} max {max(rss)} last {rss[-1]}  {' '.join(map(str, rss))}")
import re
gc, cycles, pause = 0.0, 0, 0.0
for line in open(logf):
    m = re.search(r"([0-9.]+)\+([0-9.]+)\+([0-9.]+) ms clock, ([0-9.+/]+) ms cpu", line)
    if m:
        cycles += 1
        pause = max(pause, float(m.group(1)), float(m.group(3)))
        gc += sum(float(x) for x in re.split(r"[+/]", m.group(4)))
print(f"fieldtapd CPU           {cpu} s, of which GC {gc / 1000:.2f} s in {cycles} cycles (longest stop-the-world {pause:.1f} ms)")
sys.exit(0 if ok1 and ok2 else 1)
PY
