#!/usr/bin/env python3
"""Independent figures for the reverse-engineering helpers (services/canre).

Stdlib only, written apart from the Go code. For one CAN id of a candump
log (-l or pretty):
  counters:  every LSB-first bit field of 2..8 bits whose value steps +1
             mod 2^n in at least 90 % of consecutive frames and wraps at
             least once (when there are more than 2^n frames); fields inside
             a longer accepted field with the same start bit are dropped;
  checksums: for every byte k and algorithm, the fraction of frames whose
             byte k equals the algorithm over the other bytes in order;
  entropy:   Shannon entropy (bits) of each bit and byte over the frames,
             and each bit's flip count.

  correlate: Pearson r between a little-endian field of one id and a field
             of a reference id, each target frame paired with the last
             reference frame at or before it (zero-order hold, at most 1 s
             old), and the least-squares line reference = a * field + b.

A checksum byte must take at least 4 distinct values (a two-valued status
byte matches some sum by accident).

usage: re_count.py LOG ID       (ID in hex as candump writes it)
       re_count.py LOG --scan   (every id: counters and checksums found)
       re_count.py LOG --corr ID START LEN REF_ID REF_START REF_LEN
"""
import collections
import math
import sys


def frames(path, want=None):
    for line in open(path, errors="replace"):
        p = line.split()
        if not p or not p[0].startswith("("):
            continue
        if len(p) == 3 and "#" in p[2]:
            ident, _, data = p[2].partition("#")
            d = bytes.fromhex(data)
        elif len(p) >= 4 and p[3].startswith("["):
            ident, n = p[2], int(p[3].strip("[]"))
            d = bytes(int(x, 16) for x in p[4:4 + n])
        else:
            continue
        ident = ident.upper().zfill(3)
        if want is None or ident == want:
            yield float(p[0].strip("()")), ident, d


def crc8(data, poly, init, xorout):
    c = init
    for b in data:
        c ^= b
        for _ in range(8):
            c = ((c << 1) ^ poly) & 0xFF if c & 0x80 else (c << 1) & 0xFF
    return c ^ xorout


def algos(ident):
    idb = int(ident, 16).to_bytes(4, "big").lstrip(b"\0") or b"\0"
    return {
        "xor8": lambda o, n: __import__("functools").reduce(lambda a, b: a ^ b, o, 0),
        "sum8": lambda o, n: sum(o) & 0xFF,
        "sum8_twos_complement": lambda o, n: (-sum(o)) & 0xFF,
        "sum8_id_length": lambda o, n: (sum(idb) + n + sum(o)) & 0xFF,
        "crc8_sae_j1850": lambda o, n: crc8(o, 0x1D, 0xFF, 0xFF),
        "crc8_poly07": lambda o, n: crc8(o, 0x07, 0x00, 0x00),
        "crc8_autosar": lambda o, n: crc8(o, 0x2F, 0xFF, 0xFF),
    }


def field(d, start, n):
    v = int.from_bytes(d.ljust(8, b"\0"), "little")
    return (v >> start) & ((1 << n) - 1)


def counters(ds):
    dlc = min(len(d) for d in ds)
    found = []
    for start in range(8 * dlc):
        for n in range(2, 9):
            if start + n > 8 * dlc:
                break
            vs = [field(d, start, n) for d in ds]
            if len(set(vs)) < 2:
                continue
            steps = sum(1 for a, b in zip(vs, vs[1:]) if b == (a + 1) % (1 << n))
            score = steps / (len(vs) - 1)
            wraps = sum(1 for a, b in zip(vs, vs[1:]) if a == (1 << n) - 1 and b == 0)
            if score >= 0.9 and (wraps > 0 or len(vs) <= (1 << n)):
                found.append((start, n, score, wraps))
    keep = [f for f in found if not any(g[0] == f[0] and g[1] > f[1] for g in found)]
    return keep


def checksums(ident, ds):
    dlc = min(len(d) for d in ds)
    out = []
    for k in range(dlc):
        col = [d[k] for d in ds]
        if len(set(col)) < 4:
            continue
        for name, fn in algos(ident).items():
            hits = sum(1 for d in ds if fn(d[:k] + d[k + 1:dlc], dlc) == d[k])
            out.append((k, name, hits / len(ds)))
    return out


def entropy(ds):
    n = len(ds)
    dlc = min(len(d) for d in ds)
    for k in range(dlc):
        c = collections.Counter(d[k] for d in ds)
        h = -sum(v / n * math.log2(v / n) for v in c.values())
        print(f"byte {k} entropy={h:.6f} distinct={len(c)}")
    for b in range(8 * dlc):
        ones = sum(field(d, b, 1) for d in ds)
        p = ones / n
        h = 0.0 if p in (0, 1) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
        flips = sum(1 for x, y in zip(ds, ds[1:]) if field(x, b, 1) != field(y, b, 1))
        print(f"bit {b} entropy={h:.6f} flips={flips}")


def correlate(path, ident, start, n, ref, rstart, rn):
    target, refs = [], []
    for t, i, d in frames(path):
        if i == ident.upper():
            target.append((t, field(d, start, n)))
        elif i == ref.upper():
            refs.append((t, field(d, rstart, rn)))
    pairs, j = [], -1
    for t, x in target:
        while j + 1 < len(refs) and refs[j + 1][0] <= t:
            j += 1
        if j >= 0 and t - refs[j][0] <= 1.0:
            pairs.append((x, refs[j][1]))
    n = len(pairs)
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    print(f"pairs={n} r={sxy / math.sqrt(sxx * syy):.6f} slope={sxy / sxx:.6f} intercept={my - sxy / sxx * mx:.6f}")


def main(path, ident, *rest):
    if ident == "--corr":
        correlate(path, rest[0], int(rest[1]), int(rest[2]), rest[3], int(rest[4]), int(rest[5]))
        return
    if ident == "--scan":
        by = collections.defaultdict(list)
        for _, i, d in frames(path):
            by[i].append(d)
        for i, ds in sorted(by.items()):
            if len(ds) < 16 or min(len(d) for d in ds) < 2:
                continue
            c = counters(ds)
            s = [x for x in checksums(i, ds) if x[2] >= 0.95]
            if c or s:
                print(i, len(ds), "counters", c, "checksums", s)
        return
    ds = [d for _, _, d in frames(path, ident.upper())]
    print(f"frames={len(ds)}")
    for start, n, score, wraps in counters(ds):
        print(f"counter start={start} length={n} score={score:.6f} wraps={wraps}")
    for k, name, frac in checksums(ident, ds):
        if frac >= 0.5:
            print(f"checksum byte={k} {name} match={frac:.6f}")
    entropy(ds)


if __name__ == "__main__":
    main(*sys.argv[1:])
