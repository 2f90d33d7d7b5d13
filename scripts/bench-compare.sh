#!/usr/bin/env bash
# `make bench-compare` (issue #14): whole processes on the same generated
# inputs, interleaved, medians of RUNS (default 5) runs each.
#
#   SIP: fieldtapd --board none --source calls.pcapng (until every frame
#        is in the stores: its "port drained" log line) against
#        tshark -q -z sip,stat -r calls.pcapng
#   SIP signalling only: the same two on a capture of back-to-back calls
#        without media (every frame a SIP message: a busy SBC, a call
#        centre), SIG_CALLS dialogs
#   CAN: fieldtapd --source truck.log against scripts/candump_pgns.py
#        run by the first installed python that imports python-can
#        (CanutilsLogReader; Debian's python3-can is in /usr/bin/python3,
#        which a pyenv python3 earlier in PATH does not see), else by
#        python3 with its stdlib candump reader. The table names the reader.
#
# Each run is timed with /usr/bin/time (user, sys, wall, max RSS). The
# machine is shared, so CPU seconds (user+sys) are the figure to compare;
# wall time is shown too. The table, the machine, the date and the load
# averages are written between the bench-compare markers of
# docs/benchmarks.md and printed.
#
#   RUNS=5 SIP_DURATION=238m SIG_CALLS=100000 CAN_DURATION=21674s scripts/bench-compare.sh
#
# The defaults make the issues' inputs: about 1.6 M frames of SIP/RTP
# (~400 MB), 100,000 signalling-only dialogs (600,000 SIP frames, each call
# in its 2 s slot) and 5.05 M CAN frames. Inputs are generated once
# into $BENCH_DIR (default /tmp/fieldtap-bench) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
dir=${BENCH_DIR:-/tmp/fieldtap-bench}
sipdur=${SIP_DURATION:-238m}
sigcalls=${SIG_CALLS:-100000}
candur=${CAN_DURATION:-21674s}
doc=docs/benchmarks.md

command -v tshark >/dev/null || { echo "bench-compare: tshark is not installed (apt-get install tshark)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-compare: /usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
make -s build
mkdir -p "$dir"
sip=$dir/calls-$sipdur.pcapng
sig=$dir/signalling-$sigcalls.pcapng
can=$dir/truck-$candur.log
[ -s "$sip" ] || bin/fieldtap gen sip -o "$sip" -duration "$sipdur"
[ -s "$sig" ] || bin/fieldtap gen sip -o "$sig" -no-media -calls "$sigcalls" -duration "$((2 * sigcalls))s"
[ -s "$can" ] || bin/fieldtap gen j1939 -o "$can" -duration "$candur"
# The python that runs candump_pgns.py: the first one with python-can.
py=python3
for p in python3 /usr/bin/python3 /usr/local/bin/python3 $(compgen -c python3. | sort -u); do
	if command -v "$p" >/dev/null && "$p" -c 'import can' 2>/dev/null; then
		py=$(command -v "$p")
		break
	fi
done
results=$(mktemp)
trap 'rm -f "$results" "$results".*' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# timed NAME CMD...: one whole-process run, appended to $results as
# "NAME user sys wall maxrss_kb".
timed() {
	local name=$1
	shift
	/usr/bin/time -f "$name %U %S %e %M" -a -o "$results" "$@" >/dev/null 2>"$results.err" ||
		{ echo "bench-compare: $name failed:"; cat "$results.err"; exit 1; }
}

# fieldtapd FILE: run the daemon on FILE until every frame is consumed,
# then stop it (SIGTERM) and let it exit.
fieldtapd_run() {
	local name=$1 file=$2 log=$results.log
	: >"$log"
	/usr/bin/time -f "$name %U %S %e %M" -a -o "$results" \
		bin/fieldtapd --board none --source "$file" --replay-speed max --mcp-listen 127.0.0.1:0 2>"$log" &
	local timer=$!
	until grep -q 'port drained' "$log"; do
		kill -0 "$timer" 2>/dev/null || { echo "bench-compare: fieldtapd exited early:"; cat "$log"; exit 1; }
		sleep 0.01
	done
	kill -TERM "$(pgrep -P "$timer")"
	wait "$timer"
}

for i in $(seq "$runs"); do
	echo "run $i of $runs"
	fieldtapd_run fieldtapd-sip "$sip"
	timed tshark-sip tshark -q -z sip,stat -r "$sip"
	fieldtapd_run fieldtapd-sig "$sig"
	timed tshark-sig tshark -q -z sip,stat -r "$sig"
	fieldtapd_run fieldtapd-can "$can"
	timed python-can "$py" scripts/candump_pgns.py "$can"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
reader=$("$py" scripts/candump_pgns.py /dev/null | awk '{print $2}' | tr -d :)
echo "bench-compare: CAN comparison read by $reader ($py)"

python3 - "$results" "$doc" "$runs" "$sip" "$sig" "$can" "$load0" "$load1" "$reader" "$py" <<'PY'
import datetime, os, re, statistics, subprocess, sys
results, doc, runs, sip, sig, can, load0, load1, reader, py = sys.argv[1:]
rows = {}
for line in open(results):
    f = line.split()
    if len(f) == 5 and not f[0].startswith("Command"):
        rows.setdefault(f[0], []).append([float(x) for x in f[1:]])

def med(name, i):
    return statistics.median(r[i] for r in rows[name])

def cpu(name):
    return statistics.median(r[0] + r[1] for r in rows[name])

def frames(path):
    if path.endswith(".log"):
        return sum(1 for _ in open(path, "rb"))
    out = subprocess.run(["capinfos", "-c", "-M", path], capture_output=True, text=True).stdout
    m = re.search(r"Number of packets:\s+(\d+)", out)
    return int(m.group(1)) if m else 0

nsip, nsig, ncan = frames(sip), frames(sig), frames(can)
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
if reader == "python-can":
    ver = subprocess.run([py, "-c", "import can; print(can.__version__)"], capture_output=True, text=True).stdout.strip()
    other = f"python-can {ver} CanutilsLogReader ({py})"
else:
    other = f"python3 stdlib candump reader ({py}; no installed python imports python-can)"
lines = [
    "<!-- bench-compare:begin (scripts/bench-compare.sh writes this section) -->",
    f"Machine: {os.cpu_count()} CPUs ({cpu_model}), Linux {os.uname().release}. "
    f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. "
    f"Load average {load0} at the start, {load1} at the end (the machine is shared). "
    f"Whole processes, interleaved, median of {runs} runs each; CPU is user+sys.",
    "",
    "| input | candidate | median CPU s | median wall s | max RSS MiB | frames per CPU-second | ratio (other ÷ fieldtapd) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
]
for label, n, ours, theirs, desc in [
    (f"SIP/RTP pcapng, {nsip:,} frames", nsip, "fieldtapd-sip", "tshark-sip", "`tshark -q -z sip,stat`"),
    (f"SIP signalling only pcapng, {nsig:,} frames", nsig, "fieldtapd-sig", "tshark-sig", "`tshark -q -z sip,stat`"),
    (f"candump -l, {ncan:,} frames", ncan, "fieldtapd-can", "python-can", other),
]:
    for name, d in [(ours, "fieldtapd `--board none --source`"), (theirs, desc)]:
        ratio = "" if name == ours else f"CPU {cpu(name) / cpu(ours):.1f}×, wall {med(name, 2) / med(ours, 2):.1f}×"
        lines.append(f"| {label} | {d} | {cpu(name):.2f} | {med(name, 2):.2f} | {max(r[3] for r in rows[name]) / 1024:.0f} | "
                     f"{n / cpu(name) / 1e6:.2f} M | {ratio} |")
lines.append("<!-- bench-compare:end -->")
table = "\n".join(lines)
print(table)
text = open(doc).read()
begin, end = "<!-- bench-compare:begin", "<!-- bench-compare:end -->"
if begin in text:
    text = text[:text.index(begin)] + table + text[text.index(end) + len(end):]
else:
    text += "\n## fieldtapd against other tools (`make bench-compare`)\n\n" + table + "\n"
open(doc, "w").write(text)
PY
