#!/usr/bin/env bash
# Measures what one box sends to the fleet at the demo's traffic: the sim
# board in real time with HEP (to a UDP sink that counts datagrams) and
# MQTT (through a TCP proxy to Debian's Mosquitto that counts the bytes
# each way) for SECONDS (default 300). Prints bytes and the mean rate.
# Needs python3 and mosquitto; writes nothing outside a temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
go build -o "$dir/fieldtapd" ./firmware/cmd/fieldtapd
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
broker=$(free); proxy=$(free); hep=$(free); status=$(free)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$broker" >"$dir/mosquitto.conf"
mosquitto -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" &
python3 - "$proxy" "$broker" "$hep" "$dir/counts" "$secs" <<'PY' &
import socket, sys, threading, time, json
proxy, broker, hep, out, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
n = {"mqtt_up": 0, "mqtt_down": 0, "hep_bytes": 0, "hep_packets": 0}
lock = threading.Lock()
def pipe(a, b, key):
    while True:
        d = a.recv(65536)
        if not d: break
        with lock: n[key] += len(d)
        b.sendall(d)
def serve():
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", proxy)); ls.listen()
    while True:
        c, _ = ls.accept()
        u = socket.create_connection(("127.0.0.1", broker))
        threading.Thread(target=pipe, args=(c, u, "mqtt_up"), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c, "mqtt_down"), daemon=True).start()
def sink():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", hep))
    while True:
        d = s.recv(65536)
        with lock: n["hep_bytes"] += len(d); n["hep_packets"] += 1
threading.Thread(target=serve, daemon=True).start()
threading.Thread(target=sink, daemon=True).start()
time.sleep(secs + 5)
with lock: json.dump(n, open(out, "w"))
PY
sleep 1
cat >"$dir/fieldtapd.toml" <<TOML
board = "sim"
[mcp]
listen = "127.0.0.1:$(free)"
[status]
listen = ["127.0.0.1:$status"]
[hep]
enabled = true
collector = "127.0.0.1:$hep"
[mqtt]
enabled = true
broker = "mqtt://127.0.0.1:$proxy"
box = "bandwidth"
TOML
"$dir/fieldtapd" --config "$dir/fieldtapd.toml" 2>"$dir/fieldtapd.log" &
pid=$!
sleep "$secs"
curl -s "http://127.0.0.1:$status/metrics" | grep -E '^fieldtap_(exporter_|port_frames_total)' || true
kill "$pid"; wait "$pid" 2>/dev/null || true
sleep 6
python3 - "$dir/counts" "$secs" <<'PY'
import json, sys
n = json.load(open(sys.argv[1])); s = float(sys.argv[2])
hep_wire = n["hep_bytes"] + 28 * n["hep_packets"]  # plus IPv4 and UDP headers
print(f"over {s:.0f} s: HEP {n['hep_packets']} datagrams, {n['hep_bytes']} B payload, {hep_wire} B with IP/UDP headers = {hep_wire*8/s/1000:.2f} kbit/s")
print(f"MQTT box->broker {n['mqtt_up']} B ({n['mqtt_up']*8/s/1000:.2f} kbit/s), broker->box {n['mqtt_down']} B ({n['mqtt_down']*8/s/1000:.3f} kbit/s), TCP payload")
PY
