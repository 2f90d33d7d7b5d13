#!/usr/bin/env bash
# A fleet of simulated boxes on the engines it feeds, measured
# (docs/fleet.md#a-fleet-measured): BOXES (default 50) fieldtapd on the sim
# board, each with its own data folders, ports, box name and HEP capture
# id, publishing MQTT to one Mosquitto, scraped by one Prometheus (with the
# alert rules of docs/fleet-alerts.yml loaded), and exporting HEP to one Kamailio
# sipcapture writing PostgreSQL. After a warm-up it measures SECONDS
# (default 300): CPU seconds, memory and disk of each engine and of the
# boxes, messages, samples, HEP packets and rows per second; then it runs
# the fleet queries ("which box saw this Call-ID", "which trucks have this
# SPN active") and prints their output.
#
#   scripts/fleet.sh [BOXES [SECONDS]]   e.g. scripts/fleet.sh 3 30 for a smoke run
#
# Four boxes get a reference capture beside the sim board so that a query
# has a box-specific answer: the boxes numbered in FLEET_KENWORTH (default
# 7 23 41) replay a real Kenworth's CAN log (its DM1 lists SPN 168 FMI 17),
# those in FLEET_SIPCALL (default 17) a real SIP call (RTP-Protocol.pcap),
# from ../shared/testdata (FIELDTAP_TESTDATA); the generated sim traffic
# is the same on every box. FLEET_WARMUP (default 60) is the seconds
# between the last start and the first measure.
# Needs Debian's mosquitto, mosquitto-clients, prometheus, kamailio,
# kamailio-postgres-modules, postgresql, python3, curl and jq. Everything
# it writes is in one temp folder (FLEET_KEEP=1 keeps it); every process
# it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
boxes=${1:-50}
secs=${2:-300}
warm=${FLEET_WARMUP:-60}
testdata=${FIELDTAP_TESTDATA:-../shared/testdata}
testdata=$(cd "$testdata" 2>/dev/null && pwd) || { echo "fleet: no reference data at ${FIELDTAP_TESTDATA:-../shared/testdata} (FIELDTAP_TESTDATA)" >&2; exit 1; }
kenworth=$testdata/can/cytr_candump_on_a_Kenworth.log
sipcall=$testdata/sip/RTP-Protocol.pcap
for f in "$kenworth" "$sipcall"; do [ -r "$f" ] || { echo "fleet: $f missing" >&2; exit 1; }; done
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
kmods=$(dirname "$(ls /usr/lib/*/kamailio/modules/sipcapture.so 2>/dev/null | head -1)")
for p in mosquitto:/usr/sbin/mosquitto mosquitto-clients:mosquitto_sub prometheus:prometheus kamailio:/usr/sbin/kamailio \
	kamailio-postgres-modules:"$kmods/db_postgres.so" postgresql:"$pgbin/pg_ctl" jq:jq curl:curl python3:python3; do
	pkg=${p%%:*} path=${p#*:}
	[ -f "$path" ] || command -v "$path" >/dev/null || { echo "fleet: $path missing (Debian package $pkg)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/fieldtap-fleet.XXXXXX)
chmod 755 "$dir" # the postgres and mosquitto users reach their folders through it
pids=()
cleanup() {
	set +e
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -f "$dir/pg/data/postmaster.pid" ] && pg stop
	wait 2>/dev/null
	if [ "${FLEET_KEEP:-}" = 1 ]; then echo "fleet: kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Loopback ports nobody listens on, free for TCP and UDP, none repeated,
# outside the kernel's ephemeral range: a port bound to :0 and released
# lies in that range, where any outgoing connection may take it before
# its server starts (tools/freeport does the same for the Go tests).
ports=($(python3 -c '
import random, socket, sys
try:
    lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
except (OSError, ValueError):
    lo, hi = 32768, 60999
spans = [s for s in ((20000, lo), (max(hi + 1, 20000), 65536)) if s[0] < s[1]]
def pick():
    if spans:
        return random.randrange(*random.choice(spans))
    with socket.socket() as s:  # the range covers every port: the kernel picks
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
want, got = int(sys.argv[1]), []
for _ in range(100 * want):
    if len(got) == want:
        break
    p = pick()
    if p in got:
        continue
    try:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            with socket.socket(socket.AF_INET, kind) as s:
                s.bind(("127.0.0.1", p))
    except OSError:
        continue
    got.append(p)
if len(got) < want:
    sys.exit("fleet: %d free loopback ports found, want %d" % (len(got), want))
print(" ".join(map(str, got)))' $((2 * boxes + 5)))) || exit 1
mqtt_port=${ports[0]} prom_port=${ports[1]} pg_port=${ports[2]} hep_port=${ports[3]}

echo "fleet: $boxes boxes, ${warm}s warm-up, ${secs}s measured, in $dir"
fieldtapd=${FIELDTAPD:-}
if [ -z "$fieldtapd" ]; then
	fieldtapd=$dir/fieldtapd
	go build -trimpath -o "$fieldtapd" ./firmware/cmd/fieldtapd
fi

# --- PostgreSQL in the temp folder, as the postgres user when root (initdb refuses root).
asdb=()
if [ "$(id -u)" = 0 ]; then asdb=(runuser -u postgres --); fi
mkdir -p "$dir/pg"
[ "$(id -u)" = 0 ] && chown postgres: "$dir/pg"
pg() { (cd "$dir/pg" && "${asdb[@]}" "$pgbin/pg_ctl" -D "$dir/pg/data" -w -t 60 "$@" >/dev/null); }
psqlq() { (cd "$dir/pg" && "${asdb[@]}" "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres "$@"); }
(cd "$dir/pg" && "${asdb[@]}" "$pgbin/initdb" -D "$dir/pg/data" -U postgres --auth=trust -E UTF8 >"$dir/pg/initdb.log")
pg -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $dir/pg" -l "$dir/pg/log" start
psqlq -d postgres -c 'CREATE DATABASE homer'
# The part of HOMER's schema Kamailio 5.6's sipcapture writes (the .deb
# ships none; as in firmware/cmd/fieldtapd/hep_e2e_test.go), and the
# operator's own table of which box has which capture id.
psqlq -d homer <<'SQL'
CREATE TABLE sip_capture (
  id BIGSERIAL PRIMARY KEY, date TIMESTAMP NOT NULL, micro_ts BIGINT NOT NULL,
  method TEXT NOT NULL DEFAULT '', reply_reason TEXT NOT NULL DEFAULT '', ruri TEXT NOT NULL DEFAULT '',
  ruri_user TEXT NOT NULL DEFAULT '', ruri_domain TEXT NOT NULL DEFAULT '', from_user TEXT NOT NULL DEFAULT '',
  from_domain TEXT NOT NULL DEFAULT '', from_tag TEXT NOT NULL DEFAULT '', to_user TEXT NOT NULL DEFAULT '',
  to_domain TEXT NOT NULL DEFAULT '', to_tag TEXT NOT NULL DEFAULT '', pid_user TEXT NOT NULL DEFAULT '',
  contact_user TEXT NOT NULL DEFAULT '', auth_user TEXT NOT NULL DEFAULT '', callid TEXT NOT NULL DEFAULT '',
  callid_aleg TEXT NOT NULL DEFAULT '', via_1 TEXT NOT NULL DEFAULT '', via_1_branch TEXT NOT NULL DEFAULT '',
  cseq TEXT NOT NULL DEFAULT '', diversion TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',
  content_type TEXT NOT NULL DEFAULT '', auth TEXT NOT NULL DEFAULT '', user_agent TEXT NOT NULL DEFAULT '',
  source_ip TEXT NOT NULL DEFAULT '', source_port INTEGER NOT NULL, destination_ip TEXT NOT NULL DEFAULT '',
  destination_port INTEGER NOT NULL, contact_ip TEXT NOT NULL DEFAULT '', contact_port INTEGER NOT NULL,
  originator_ip TEXT NOT NULL DEFAULT '', originator_port INTEGER NOT NULL, correlation_id TEXT NOT NULL DEFAULT '',
  custom_field1 TEXT NOT NULL DEFAULT '', custom_field2 TEXT NOT NULL DEFAULT '', custom_field3 TEXT NOT NULL DEFAULT '',
  proto INTEGER NOT NULL, family INTEGER, rtp_stat TEXT NOT NULL DEFAULT '', type INTEGER NOT NULL,
  node TEXT NOT NULL DEFAULT '', msg BYTEA NOT NULL);
CREATE INDEX sip_capture_callid ON sip_capture (callid);
CREATE TABLE rtcp_capture (
  id BIGSERIAL PRIMARY KEY, date TIMESTAMP NOT NULL, micro_ts BIGINT NOT NULL,
  correlation_id TEXT NOT NULL DEFAULT '', source_ip TEXT NOT NULL DEFAULT '', source_port INTEGER NOT NULL,
  destination_ip TEXT NOT NULL DEFAULT '', destination_port INTEGER NOT NULL, proto INTEGER NOT NULL,
  family INTEGER, type INTEGER NOT NULL, node TEXT NOT NULL DEFAULT '', msg BYTEA NOT NULL);
CREATE TABLE fleet_boxes (node TEXT PRIMARY KEY, box TEXT NOT NULL);
SQL

# --- Kamailio sipcapture: HEP3 in on UDP, sip_capture()/rtcp rows out.
mkdir -p "$dir/kamailio"
cat >"$dir/kamailio/kamailio.cfg" <<CFG
#!KAMAILIO
debug=1
log_stderror=yes
fork=yes
children=2
disable_tcp=yes
auto_aliases=no
listen=udp:127.0.0.1:$hep_port
mpath="$kmods"
loadmodule "db_postgres.so"
loadmodule "sipcapture.so"
modparam("sipcapture", "db_url", "postgres://postgres:trust@127.0.0.1:$pg_port/homer")
modparam("sipcapture", "capture_on", 1)
modparam("sipcapture", "hep_capture_on", 1)
modparam("sipcapture", "capture_node", "homer01")
request_route { sip_capture(); drop; }
onreply_route { sip_capture(); drop; }
CFG
/usr/sbin/kamailio -c -f "$dir/kamailio/kamailio.cfg" >"$dir/kamailio/check.log" 2>&1 || { cat "$dir/kamailio/check.log" >&2; exit 1; }
/usr/sbin/kamailio -f "$dir/kamailio/kamailio.cfg" -DD -E -Y "$dir/kamailio" >"$dir/kamailio/log" 2>&1 &
pids+=($!)
kamailio_pid=$!

# --- Mosquitto, retained messages persisted as a broker keeps them.
mkdir -p "$dir/mosquitto"
[ "$(id -u)" = 0 ] && chown mosquitto: "$dir/mosquitto" # mosquitto started as root runs as its user
cat >"$dir/mosquitto/mosquitto.conf" <<CONF
listener $mqtt_port 127.0.0.1
allow_anonymous true
persistence true
persistence_location $dir/mosquitto/
autosave_interval 60
sys_interval 10
max_queued_messages 10000
CONF
mosquitto -c "$dir/mosquitto/mosquitto.conf" >"$dir/mosquitto/log" 2>&1 &
pids+=($!)
mosquitto_pid=$!

# --- The boxes: truck-01 … truck-NN, capture id 2000+N.
box_pids=() box_metrics=()
: >"$dir/targets.json.tmp"
echo '[' >"$dir/targets.json.tmp"
for i in $(seq 1 "$boxes"); do
	name=$(printf 'truck-%02d' "$i")
	mcp=${ports[$((4 + 2 * i - 1))]} status=${ports[$((4 + 2 * i))]}
	b=$dir/boxes/$name
	mkdir -p "$b/data" "$b/captures" "$b/export" "$b/recorder" "$b/evidence"
	sources=""
	for k in ${FLEET_KENWORTH-7 23 41}; do [ "$k" = "$i" ] && sources="\"$kenworth\""; done
	for k in ${FLEET_SIPCALL-17}; do [ "$k" = "$i" ] && sources="\"$sipcall\""; done
	cat >"$b/fieldtapd.toml" <<TOML
board = "sim"
sources = [$sources]
memory_limit_mib = 96
[log]
level = "warn"
[mcp]
listen = "127.0.0.1:$mcp"
[status]
listen = ["127.0.0.1:$status"]
[store]
handoff_depth = 2048
data_dir = "$b/data"
capture_dir = "$b/captures"
export_dir = "$b/export"
[recorder]
enabled = true
dir = "$b/recorder"
evidence_dir = "$b/evidence"
segment_bytes = 1048576
quota_bytes = 8388608
evidence_bytes = 1048576
[hep]
enabled = true
collector = "127.0.0.1:$hep_port"
capture_id = $((2000 + i))
node = "$name"
[mqtt]
enabled = true
broker = "mqtt://127.0.0.1:$mqtt_port"
box = "$name"
[[rule]]
name = "spn168-active"
kind = "dm1_active"
code = 168
op = "above"
value = 0
severity = "warning"
[[rule]]
name = "can0-busy"
kind = "bus_load"
port = "can0"
op = "above"
value = 0.7
for = "1m"
severity = "warning"
[[rule]]
name = "span0-silent"
kind = "port_silent"
port = "span0"
op = "above"
value = 0
for = "1m"
severity = "critical"
[[rule]]
name = "recorder-gaps"
kind = "recorder_gaps"
op = "above"
value = 0
window = "10m"
severity = "critical"
TOML
	"$fieldtapd" --config "$b/fieldtapd.toml" >"$b/log" 2>&1 &
	box_pids+=($!)
	box_metrics+=("http://127.0.0.1:$status/metrics")
	pids+=($!)
	psqlq -d homer -c "INSERT INTO fleet_boxes VALUES ('homer01:$((2000 + i))', '$name')"
	[ "$i" = 1 ] || echo ',' >>"$dir/targets.json.tmp"
	printf '{"targets": ["127.0.0.1:%s"], "labels": {"box": "%s"}}' "$status" "$name" >>"$dir/targets.json.tmp"
	sleep 0.2
done
echo ']' >>"$dir/targets.json.tmp"

# --- Prometheus: every box from file_sd, the alert rules of docs/fleet.md.
mkdir -p "$dir/prometheus/data"
mv "$dir/targets.json.tmp" "$dir/prometheus/fieldtap.json"
cp docs/fleet-alerts.yml "$dir/prometheus/fleet-alerts.yml"
cat >"$dir/prometheus/prometheus.yml" <<YML
global:
  scrape_interval: 15s
  evaluation_interval: 15s
rule_files: [fleet-alerts.yml]
scrape_configs:
  - job_name: fieldtap
    file_sd_configs: [{files: [fieldtap.json]}]
YML
promtool check config "$dir/prometheus/prometheus.yml" >/dev/null
prometheus --config.file="$dir/prometheus/prometheus.yml" --storage.tsdb.path="$dir/prometheus/data" \
	--web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$dir/prometheus/log" 2>&1 &
pids+=($!)
prom_pid=$!

sleep 3
for p in "$kamailio_pid:kamailio" "$mosquitto_pid:mosquitto" "$prom_pid:prometheus"; do
	kill -0 "${p%%:*}" 2>/dev/null || { echo "fleet: ${p#*:} exited:" >&2; cat "$dir/${p#*:}/log" >&2; exit 1; }
done
for i in "${!box_pids[@]}"; do
	kill -0 "${box_pids[$i]}" 2>/dev/null || { echo "fleet: box $((i + 1)) exited:" >&2; cat "$dir/boxes/$(printf 'truck-%02d' $((i + 1)))/log" >&2; exit 1; }
done
echo "fleet: all up; warming up ${warm}s"
sleep "$warm"

# --- Measuring. snap prints, for each named root process and its
# descendants, CPU ticks (utime+stime+cutime+cstime: a reaped child's time
# is in its parent's c-fields, a live child's in its own) and PSS in kB
# (shared pages counted once across PostgreSQL's and Kamailio's
# processes).
snap() {
	python3 - "$@" <<'PY'
import json, os, sys
parent = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            parent[int(p)] = int(f[1])
        except OSError:
            pass
def tree(root):
    out, todo = [], [root]
    while todo:
        p = todo.pop(); out.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return out
res = {}
for arg in sys.argv[1:]:
    name, roots = arg.split("=")
    ticks = pss = procs = 0
    per = []
    for r in roots.split(","):
        t0 = ticks; s0 = pss
        for p in tree(int(r)):
            try:
                f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
                ticks += sum(int(x) for x in f[11:15])
                for l in open(f"/proc/{p}/smaps_rollup"):
                    if l.startswith("Pss:"):
                        pss += int(l.split()[1])
                procs += 1
            except OSError:
                pass
        per.append([ticks - t0, pss - s0])
    res[name] = {"ticks": ticks, "pss_kb": pss, "procs": procs, "per": per}
res["hz"] = os.sysconf("SC_CLK_TCK")
json.dump(res, sys.stdout)
PY
}
roots() { local IFS=,; echo "$*"; }
pgmaster=$(head -1 "$dir/pg/data/postmaster.pid")
engines=("mosquitto=$mosquitto_pid" "prometheus=$prom_pid" "kamailio=$kamailio_pid" "postgres=$pgmaster" "boxes=$(roots "${box_pids[@]}")")
sys_counter() { timeout 15 mosquitto_sub -p "$mqtt_port" -C 1 -W 14 -t "\$SYS/broker/$1" 2>/dev/null || echo 0; }
# The boxes' own counters, summed over every box's /metrics.
box_counter() { curl -s "${box_metrics[@]}" | awk -v m="$1" 'index($1, m) == 1 {s += $2} END {printf "%d", s}'; }
prom_counter() { curl -s "http://127.0.0.1:$prom_port/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $2} END {print s + 0}'; }
promql() { curl -s "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1"; }
sql() { psqlq -d homer -A -t -c "$1"; }
du_b() { du -sb "$1" 2>/dev/null | cut -f1; } # a file may go while du reads
measure() { # one line of every counter the report takes differences of
	echo "{\"time\": $(date +%s.%N), \"snap\": $(snap "${engines[@]}"),
 \"mqtt_sent\": $(sys_counter publish/messages/sent), \"mqtt_bytes_received\": $(sys_counter bytes/received),
 \"mqtt_retained\": $(sys_counter 'retained messages/count'),
 \"prom_samples\": $(prom_counter prometheus_tsdb_head_samples_appended_total), \"prom_series\": $(prom_counter prometheus_tsdb_head_series),
 \"mqtt_publish_bytes\": $(sys_counter publish/bytes/received), \"mqtt_all_received\": $(sys_counter messages/received),
 \"hep_sent\": $(box_counter 'fieldtap_exporter_sent_total{exporter="hep"}'),
 \"hep_bytes\": $(box_counter 'fieldtap_exporter_sent_bytes_total{exporter="hep"}'),
 \"hep_dropped\": $(box_counter 'fieldtap_exporter_dropped_total{exporter="hep"'),
 \"mqtt_box_sent\": $(box_counter 'fieldtap_exporter_sent_total{exporter="mqtt"}'),
 \"mqtt_box_dropped\": $(box_counter 'fieldtap_exporter_dropped_total{exporter="mqtt"'),
 \"sip_rows\": $(sql 'SELECT count(*) FROM sip_capture'), \"rtcp_rows\": $(sql 'SELECT count(*) FROM rtcp_capture'),
 \"homer_bytes\": $(sql "SELECT pg_database_size('homer')"),
 \"disk_pg\": $(du_b "$dir/pg/data"), \"disk_prom\": $(du_b "$dir/prometheus/data"), \"disk_mosquitto\": $(du_b "$dir/mosquitto"),
 \"disk_recorders\": $(du_b "$dir/boxes")}"
}
echo "fleet: measuring ${secs}s"
measure >"$dir/m0.json"
sleep "$secs"
measure >"$dir/m1.json"
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "== fleet load: $boxes boxes, ${secs}s, $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), load $loadavg"
python3 - "$dir/m0.json" "$dir/m1.json" "$boxes" <<'PY'
import json, sys
a, b, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
s = b["time"] - a["time"]; hz = b["snap"]["hz"]
rate = lambda k: (float(b[k]) - float(a[k])) / s
print(f"interval {s:.0f} s")
print("engine      CPU s   CPU %   per box ms/s   PSS MiB   procs")
for e in ("mosquitto", "prometheus", "kamailio", "postgres", "boxes"):
    cpu = (b["snap"][e]["ticks"] - a["snap"][e]["ticks"]) / hz
    print(f"{e:10} {cpu:7.1f} {100*cpu/s:6.1f}   {1000*cpu/s/n:10.2f}   {b['snap'][e]['pss_kb']/1024:7.1f}   {b['snap'][e]['procs']:5}")
per = sorted(((y[0] - x[0]) / hz for x, y in zip(a["snap"]["boxes"]["per"], b["snap"]["boxes"]["per"])))
pss = sorted(y[1] / 1024 for y in b["snap"]["boxes"]["per"])
print(f"one box: CPU {per[0]:.1f}/{per[len(per)//2]:.1f}/{per[-1]:.1f} s (min/median/max), {100*per[len(per)//2]/s:.2f} % of a core; PSS {pss[0]:.1f}/{pss[len(pss)//2]:.1f}/{pss[-1]:.1f} MiB")
print(f"mosquitto: boxes sent {rate('mqtt_box_sent'):.2f} PUBLISH/s ({rate('mqtt_box_sent')/n:.3f} per box; {b['mqtt_box_dropped']} dropped in all);"
      f" $SYS: {rate('mqtt_all_received'):.2f} MQTT packets/s in, {rate('mqtt_publish_bytes'):.0f} B/s of PUBLISH payload,"
      f" {rate('mqtt_bytes_received')*8/1000:.1f} kbit/s in, {rate('mqtt_sent'):.2f} PUBLISH/s out, {b['mqtt_retained']} retained topics")
print(f"prometheus: {rate('prom_samples'):.0f} samples/s appended ({rate('prom_samples')/n:.1f} per box), {b['prom_series']} series in head")
print(f"kamailio: boxes sent {rate('hep_sent'):.2f} HEP packets/s ({rate('hep_sent')/n:.3f} per box, {rate('hep_bytes')*8/1000:.1f} kbit/s; {b['hep_dropped']} dropped in all); sip_capture +{rate('sip_rows'):.2f} rows/s, rtcp_capture +{rate('rtcp_rows'):.3f} rows/s")
for k, label in (("homer_bytes", "homer database"), ("disk_pg", "PostgreSQL folder (with WAL)"), ("disk_prom", "Prometheus TSDB folder"),
                 ("disk_mosquitto", "Mosquitto persistence")):
    d = float(b[k]) - float(a[k])
    print(f"disk {label}: {float(b[k])/1e6:.1f} MB, +{d/1e6:.2f} MB ({d*3600/s/1e6:.1f} MB/h, {d*3600/s/n/1e3:.1f} kB/h per box)")
print(f"disk of the boxes' folders: {float(b['disk_recorders'])/1e6:.1f} MB (recorder rings of 8 MiB each fill, then stay)")
PY

echo
echo "== which box saw this Call-ID (SQL on Kamailio's sip_capture)"
callid=$(sql "SELECT callid FROM sip_capture WHERE source_ip LIKE '10.33.6.%' LIMIT 1")
generated=$(sql "SELECT callid FROM sip_capture WHERE method = 'INVITE' AND node = 'homer01:2001' ORDER BY id LIMIT 1")
for c in "$callid" "$generated"; do
	q="SELECT b.box, count(*) AS messages, min(s.date) AS first, max(s.date) AS last FROM sip_capture s JOIN fleet_boxes b ON b.node = s.node WHERE s.callid = '$c' GROUP BY b.box ORDER BY b.box"
	echo "\$ psql homer -c \"$q\""
	psqlq -d homer -c "$q" | awk 'NR <= 8 {print; next} {tail[NR] = $0} END {if (NR > 12) print " ..."; for (i = (NR > 12 ? NR - 3 : 9); i <= NR; i++) print tail[i]}'
done

echo
echo "== which trucks have this SPN active (retained MQTT, then PromQL)"
for spn in 168 110; do
	echo "\$ mosquitto_sub -t 'fieldtap/+/faults/j1939/#' --retained-only -W 3 -F '%t %p' | grep '\"spn\":$spn,' | cut -d/ -f2 | sort -u"
	{ timeout 10 mosquitto_sub -p "$mqtt_port" -t 'fieldtap/+/faults/j1939/#' --retained-only -W 3 -F '%t %p' 2>/dev/null || true; } |
		{ grep "\"spn\":$spn," || true; } | cut -d/ -f2 | sort -u | tr '\n' ' ' | fold -s -w 100
	echo
done
q='fieldtap_rule_state{rule="spn168-active"} == 1'
echo "\$ promql '$q'"
promql "$q" | jq -r '.data.result[] | "\(.metric.box) \(.metric.rule) severity=\(.metric.severity)"'

echo
echo "== alerts Prometheus evaluates now"
curl -s "http://127.0.0.1:$prom_port/api/v1/alerts" | jq -r '.data.alerts | group_by(.labels.alertname)[] | "\(.[0].labels.alertname) \(.[0].state): \(length) (\([.[].labels.box] | unique | join(" ")))"'
echo "fleet: done"
