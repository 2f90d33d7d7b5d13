#!/usr/bin/env python3
"""Independent count of ISO-TP transfers and UDS/KWP exchanges in a candump -l log.

Stdlib only, written apart from the Go code (services/isotp) so the two can
disagree. Reads 11-bit ids 0x700-0x7FF as ISO 15765-2 normal addressing on
classic CAN and pairs each request with the first response whose service id
answers it (request SID + 0x40, or 0x7F with the request SID), the response
coming on another id after the request ended.

usage: uds_count.py LOG
Prints one key=value per line; the Go test carries the numbers.
"""
import collections
import sys


def frames(path):
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or not parts[0].startswith("("):
                continue
            ts = float(parts[0][1:-1])
            ident, _, data = parts[2].partition("#")
            if len(ident) != 3:
                continue  # 29-bit: not in this count
            cid = int(ident, 16)
            if not 0x700 <= cid <= 0x7FF:
                continue
            yield ts, cid, bytes.fromhex(data)


def main(path):
    kinds = collections.Counter()  # (id, kind)
    pdus = []  # (start, end, id, payload)
    state = {}  # id -> [start, want, buf, next_sn]
    broken = collections.Counter()
    for ts, cid, d in frames(path):
        t = d[0] >> 4
        if t == 0:
            kinds[(cid, "SF")] += 1
            n = d[0] & 0xF
            pdus.append((ts, ts, cid, d[1:1 + n]))
        elif t == 1:
            kinds[(cid, "FF")] += 1
            want = ((d[0] & 0xF) << 8) | d[1]
            state[cid] = [ts, want, bytearray(d[2:8]), 1]
        elif t == 2:
            kinds[(cid, "CF")] += 1
            st = state.get(cid)
            if st is None:
                broken["orphan_cf"] += 1
                continue
            if (d[0] & 0xF) != st[3] & 0xF:
                broken["sequence"] += 1
                del state[cid]
                continue
            st[3] += 1
            st[2] += d[1:8]
            if len(st[2]) >= st[1]:
                pdus.append((st[0], ts, cid, bytes(st[2][:st[1]])))
                del state[cid]
        elif t == 3:
            kinds[(cid, "FC")] += 1
    open_at_end = len(state)

    for (cid, k), n in sorted(kinds.items()):
        print(f"frames_{cid:03X}_{k}={n}")
    print(f"pdus={len(pdus)}")
    print(f"broken_sequence={broken['sequence']}")
    print(f"broken_orphan_cf={broken['orphan_cf']}")
    print(f"open_at_end={open_at_end}")
    lengths = collections.Counter((cid, len(p)) for _, _, cid, p in pdus)
    for (cid, n), c in sorted(lengths.items()):
        print(f"pdu_len_{cid:03X}_{n}={c}")

    # Pair: each request waits for the first later PDU on another id that answers its SID.
    pending = []  # [end, id, sid, payload]
    pairs = []
    unmatched = 0
    for start, end, cid, p in sorted(pdus, key=lambda x: x[0]):
        sid = p[0]
        if sid == 0x7F or sid & 0x40:
            want = p[1] if sid == 0x7F else sid - 0x40
            for i, q in enumerate(pending):
                if q[2] == want and q[1] != cid and q[0] <= start:
                    pairs.append((q, start, cid, p))
                    del pending[i]
                    break
            else:
                unmatched += 1
        else:
            pending.append([end, cid, sid, p])
    print(f"requests={len(pairs) + len(pending)}")
    print(f"answered={len(pairs)}")
    print(f"negative={sum(1 for _, _, _, p in pairs if p[0] == 0x7F)}")
    print(f"no_response={len(pending)}")
    print(f"unmatched_responses={unmatched}")
    by = collections.Counter((q[2:][1][:2].hex().upper(), f"{cid:03X}") for q, _, cid, _ in pairs)
    for (req, cid), n in sorted(by.items()):
        print(f"pair_{req}_{cid}={n}")
    # Response time: request's last frame to the response's first frame, in microseconds.
    us = sorted(round((start - q[0]) * 1e6) for q, start, _, _ in pairs)
    if us:
        print(f"response_us_min={us[0]}")
        print(f"response_us_max={us[-1]}")
        print(f"response_us_sum={sum(us)}")


if __name__ == "__main__":
    main(sys.argv[1])
