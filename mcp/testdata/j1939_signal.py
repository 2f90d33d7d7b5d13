#!/usr/bin/env python3
"""Independent count of one little-endian signal of one J1939 PGN.

Stdlib only, written apart from services/dbc and services/j1939: reads a
candump log (-l, or the pretty "(t) can0 ID [n] bytes" form), takes the 29-bit frames whose PGN (PDU2: PF >= 240 keeps
PS) is PGN, and reads an unsigned little-endian signal of LENGTH bits at
START_BIT, times FACTOR.

usage: j1939_signal.py LOG PGN START_BIT LENGTH FACTOR [OFFSET]
Prints frames=N, sources=..., min, max and the first value.
"""
import sys


def main(path, pgn, start, length, factor, offset=0.0):
    vals, sources = [], set()
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and "#" in parts[2]:
            ident, _, data = parts[2].partition("#")
            d = bytes.fromhex(data)
        elif len(parts) >= 4 and parts[3].startswith("["):
            ident, n = parts[2], int(parts[3].strip("[]"))
            d = bytes(int(x, 16) for x in parts[4:4 + n])
        else:
            continue
        if len(ident) != 8:
            continue
        cid = int(ident, 16)
        p = (cid >> 8) & 0x3FFFF
        if (p >> 8) & 0xFF < 240:
            p &= 0x3FF00
        if p != pgn:
            continue
        sources.add(cid & 0xFF)
        raw = int.from_bytes(d.ljust(8, b"\xff"), "little") >> start & ((1 << length) - 1)
        vals.append(raw * factor + offset)
    print(f"frames={len(vals)}")
    print("sources=" + ",".join(f"{s:02X}" for s in sorted(sources)))
    if vals:
        print(f"min={min(vals)} max={max(vals)} first={vals[0]} last={vals[-1]}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
         float(sys.argv[6]) if len(sys.argv) > 6 else 0.0)
