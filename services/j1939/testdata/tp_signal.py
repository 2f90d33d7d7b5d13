#!/usr/bin/env python3
"""Independent decode of one signal carried by J1939 BAM transfers.

Stdlib only, written apart from services/j1939 and services/dbc: reads a
candump -l log, reassembles BAM transfers (TP.CM 0xEC00 control 32, TP.DT
0xEB00, keyed by source address) of one PGN, and reads a little-endian
unsigned signal from the reassembled payload.

usage: tp_signal.py LOG PGN START_BIT LENGTH FACTOR
Prints transfers=N, then value=V×count lines, min and max.
"""
import collections
import sys


def main(path, pgn, start, length, factor):
    sessions = {}
    values = []
    for line in open(path):
        parts = line.split()
        if len(parts) != 3:
            continue
        ident, _, data = parts[2].partition("#")
        if len(ident) != 8:
            continue
        cid, d = int(ident, 16), bytes.fromhex(data)
        pf, sa = (cid >> 16) & 0xFF, cid & 0xFF
        if pf == 0xEC and d[0] == 32:
            want = d[5] | d[6] << 8 | d[7] << 16
            sessions[sa] = [want, d[1] | d[2] << 8, d[3], {}]
        elif pf == 0xEB and sa in sessions:
            s = sessions[sa]
            s[3][d[0]] = d[1:8]
            if len(s[3]) == s[2]:
                payload = b"".join(s[3][i] for i in range(1, s[2] + 1))[: s[1]]
                del sessions[sa]
                if s[0] != pgn:
                    continue
                raw = int.from_bytes(payload, "little") >> start & ((1 << length) - 1)
                values.append(raw * factor)
    print(f"transfers={len(values)}")
    for v, n in sorted(collections.Counter(values).items()):
        print(f"value={v}x{n}")
    if values:
        print(f"min={min(values)}")
        print(f"max={max(values)}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
