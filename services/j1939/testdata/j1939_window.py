#!/usr/bin/env python3
"""Independent J1939 window figures for the window views' tests.

Stdlib only, written apart from services/j1939: its own candump reader,
id split and TP reassembly (sessions keyed by interface, SA, DA; complete
when every packet 1..N arrived; a new BAM/RTS supersedes; no timeouts, as
GROUND_TRUTH.json defines them).

usage:
  j1939_window.py topology LOG        nodes, request and transfer edges
  j1939_window.py history LOG         SPN 190 (EEC1 bytes 4-5 x 0.125) per SA
  j1939_window.py dm1 LOG             DM1 list changes per SA
  j1939_window.py compare LOG_A LOG_B (PGN, SA) pairs, ids, sources
"""
import collections
import sys


def frames(path):
    for line in open(path, errors="replace"):
        parts = line.split()
        if not parts or not parts[0].startswith("("):
            continue
        ts = float(parts[0].strip("()"))
        if len(parts) == 3 and "#" in parts[2]:
            ident, _, data = parts[2].partition("#")
            d = bytes.fromhex(data)
        elif len(parts) >= 4 and parts[3].startswith("["):
            ident, n = parts[2], int(parts[3].strip("[]"))
            d = bytes(int(x, 16) for x in parts[4:4 + n])
        else:
            continue
        yield ts, parts[1], ident, d


def split(cid):
    pf, ps, sa = (cid >> 16) & 0xFF, (cid >> 8) & 0xFF, cid & 0xFF
    page = (cid >> 24) & 3
    if pf < 240:
        return page << 16 | pf << 8, sa, ps
    return page << 16 | pf << 8 | ps, sa, 255


def messages(path):
    """Yield (ts, pgn, sa, da, data, via, iface) for direct and reassembled."""
    sess = {}
    for ts, iface, ident, d in frames(path):
        if len(ident) != 8:
            continue
        pgn, sa, da = split(int(ident, 16))
        yield ts, pgn, sa, da, d, "direct", iface
        if pgn == 0xEC00 and len(d) == 8 and d[0] in (16, 32):
            sess[(iface, sa, da)] = [d[5] | d[6] << 8 | d[7] << 16, d[1] | d[2] << 8, d[3], {}, d[0]]
        elif pgn == 0xEC00 and len(d) == 8 and d[0] == 255:
            sess.pop((iface, sa, da), None) or sess.pop((iface, da, sa), None)
        elif pgn == 0xEB00 and (iface, sa, da) in sess and len(d) >= 2:
            s = sess[(iface, sa, da)]
            if 1 <= d[0] <= s[2] and s[2] > 0 and 0 < s[1] <= 1785:
                s[3][d[0]] = d[1:8]
                if len(s[3]) == s[2]:
                    payload = b"".join(s[3][i] for i in range(1, s[2] + 1))[: s[1]]
                    del sess[(iface, sa, da)]
                    yield ts, s[0], sa, da, payload, "bam" if s[4] == 32 else "rts", iface


def topology(path):
    nodes = collections.Counter()
    req = collections.Counter()
    tp = collections.Counter()
    for ts, pgn, sa, da, d, via, _ in messages(path):
        if via != "direct":
            continue
        nodes[sa] += 1
        if pgn == 0xEA00 and len(d) >= 3:
            req[(sa, da, d[0] | d[1] << 8 | d[2] << 16)] += 1
        if pgn == 0xEC00 and len(d) == 8 and d[0] in (16, 32):
            tp[(sa, da, "tp_bam" if d[0] == 32 else "tp_rts", d[5] | d[6] << 8 | d[7] << 16)] += 1
    print(f"nodes={len(nodes)} frames={sum(nodes.values())}")
    print(f"request_edges={len(req)} requests={sum(req.values())}")
    for k, n in sorted(req.items()):
        print(f"  request {k[0]}->{k[1]} pgn {k[2]} x{n}")
    print(f"transfer_edges={len(tp)} announcements={sum(tp.values())}")


def history(path):
    by = collections.defaultdict(list)
    na = collections.Counter()
    for ts, pgn, sa, da, d, via, _ in messages(path):
        if pgn != 61444 or via != "direct" or len(d) < 5:
            continue
        if d[4] >= 0xFB:
            na[sa] += 1
            continue
        by[sa].append((d[3] | d[4] << 8) * 0.125)
    for sa in sorted(set(by) | set(na)):
        v = by[sa]
        print(f"sa={sa} valid={len(v)} invalid={na[sa]} min={min(v) if v else None} max={max(v) if v else None} "
              f"last={v[-1] if v else None} sum={sum(v)}")


def dm1(path):
    last = {}
    changes = collections.Counter()
    for ts, pgn, sa, da, d, via, _ in messages(path):
        if pgn != 65226 or len(d) < 2:
            continue
        dtcs = set()
        for i in range(2, len(d) - 3, 4):
            e = d[i:i + 4]
            if e == b"\xff\xff\xff\xff":
                continue
            dtcs.add((e[0] | e[1] << 8 | (e[2] >> 5) << 16, e[2] & 0x1F))
        if dtcs == {(0, 0)}:
            dtcs = set()
        prev = last.get(sa, set())
        changes[(sa, "appeared")] += len(dtcs - prev)
        changes[(sa, "gone")] += len(prev - dtcs)
        last[sa] = dtcs
    for (sa, kind), n in sorted(changes.items()):
        if n:
            print(f"sa={sa} {kind}={n}")


def side(path):
    pairs, ids = collections.Counter(), set()
    first = last = None
    for ts, iface, ident, d in frames(path):
        first = ts if first is None else min(first, ts)
        last = ts if last is None else max(last, ts)
        ids.add(ident.upper().lstrip() if len(ident) == 8 else ident.upper().lstrip().zfill(3))
        if len(ident) == 8:
            pgn, sa, _ = split(int(ident, 16))
            pairs[(pgn, sa)] += 1
    return pairs, ids, last - first


def compare(a, b):
    pa, ia, spa = side(a)
    pb, ib, spb = side(b)
    both = set(pa) & set(pb)
    changed = 0
    for k in both:
        ratio = (pb[k] / spb) / (pa[k] / spa)
        if ratio >= 1.25 or ratio <= 1 / 1.25:
            changed += 1
    print(f"pairs_new={len(set(pb) - set(pa))} pairs_vanished={len(set(pa) - set(pb))} pairs_changed={changed} pairs_same={len(both) - changed}")
    print(f"ids_new={len(ib - ia)} ids_vanished={len(ia - ib)}")
    sa_a, sa_b = {k[1] for k in pa}, {k[1] for k in pb}
    print(f"sources_new={sorted(sa_b - sa_a)} sources_vanished={sorted(sa_a - sa_b)}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"topology": topology, "history": history, "dm1": dm1, "compare": compare}[cmd](*args)
