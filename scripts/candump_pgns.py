#!/usr/bin/env python3
"""Count J1939 PGNs in a candump -l log: the comparison side of
`make bench-compare` for CAN.

    scripts/candump_pgns.py FILE

With python-can importable it reads the log with can.CanutilsLogReader,
as the issue's measurement did; otherwise (no python-can for this
python) it uses the stdlib reader below, which parses the same
`(seconds) iface ID#DATA` lines. Either way it decodes each 29-bit id
into its PGN (J1939-21: EDP and DP as a 2-bit page, PF, and PS for
PDU2) and prints frames, PGNs and the five busiest, so the work is the
same as fieldtapd's file read plus its J1939 PGN table.
"""
import collections
import sys


def pgn_of(can_id):
    page = (can_id >> 24) & 0x3
    pf = (can_id >> 16) & 0xFF
    ps = (can_id >> 8) & 0xFF
    if pf < 240:
        return page << 16 | pf << 8
    return page << 16 | pf << 8 | ps


def frames_python_can(path):
    import can

    for msg in can.CanutilsLogReader(path):
        if msg.is_extended_id and not msg.is_error_frame and not msg.is_remote_frame:
            yield msg.arbitration_id, bytes(msg.data)


def frames_stdlib(path):
    with open(path, "rb") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or not parts[0].startswith(b"("):
                continue
            ident, _, data = parts[2].partition(b"#")
            if len(ident) != 8 or data[:1] in (b"R", b"r", b"#"):
                continue  # standard ids, remote and CAN FD frames are not J1939
            can_id = int(ident, 16)
            if can_id & 0x20000000:
                continue  # error frame
            yield can_id & 0x1FFFFFFF, bytes.fromhex(data.decode())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        import can  # noqa: F401

        reader, frames = "python-can", frames_python_can(sys.argv[1])
    except ImportError:
        reader, frames = "stdlib", frames_stdlib(sys.argv[1])
    counts = collections.Counter()
    n = 0
    for can_id, _ in frames:
        counts[pgn_of(can_id)] += 1
        n += 1
    top = ", ".join(f"{pgn}:{c}" for pgn, c in counts.most_common(5))
    print(f"reader {reader}: {n} frames, {len(counts)} PGNs; top {top}")


if __name__ == "__main__":
    main()
