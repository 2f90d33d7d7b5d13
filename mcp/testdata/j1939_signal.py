#!/usr/bin/env python3
"""Independent count of one little-endian signal of one J1939 PGN.

Stdlib only, written apart from services/dbc and services/j1939: reads a
candump -l log, takes the 29-bit frames whose PGN (PDU2: PF >= 240 keeps
PS) is PGN, and reads an unsigned little-endian signal of LENGTH bits at
START_BIT, times FACTOR.

usage: j1939_signal.py LOG PGN START_BIT LENGTH FACTOR
Prints frames=N, sources=..., min, max and the first value.
"""
import sys


def main(path, pgn, start, length, factor):
    vals, sources = [], set()
    for line in open(path):
        parts = line.split()
        if len(parts) != 3:
            continue
        ident, _, data = parts[2].partition("#")
        if len(ident) != 8:
            continue
        cid, d = int(ident, 16), bytes.fromhex(data)
        p = (cid >> 8) & 0x3FFFF
        if (p >> 8) & 0xFF < 240:
            p &= 0x3FF00
        if p != pgn:
            continue
        sources.add(cid & 0xFF)
        raw = int.from_bytes(d.ljust(8, b"\xff"), "little") >> start & ((1 << length) - 1)
        vals.append(raw * factor)
    print(f"frames={len(vals)}")
    print("sources=" + ",".join(f"{s:02X}" for s in sorted(sources)))
    if vals:
        print(f"min={min(vals)} max={max(vals)} first={vals[0]}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
