"""python-can as ground truth for fieldtap's CAN log readers and writers.

  pycan.py write CANDUMP DIR   the candump -l log CANDUMP as DIR/py.asc,
                               py.blf, py21.trc (TRC 2.1) and py10.trc
                               (TRC 1.0) by python-can's writers
  pycan.py writefd N DIR       N generated CAN FD messages (and some
                               classic ones among them) as DIR/fd.asc and
                               DIR/fd.blf by python-can's writers, and
                               as JSON in DIR/fd.json (python-can 4.1's
                               TRCWriter writes no FD)
  pycan.py read KIND PATH ...  frames python-can's reader of KIND (asc, blf,
                               trc) reads from each PATH, as JSON on stdout;
                               a file it fails on is left out

Exit status 3: python-can is not installed.
Run with TZ=UTC: python-can reads and writes ASC and BLF dates in local time.
"""
import json
import random
import sys

try:
    import can
    import can.io.asc
    from can.io.trc import TRCFileVersion
except ImportError:
    sys.exit(3)


class _FixedNow(can.io.asc.datetime):
    """python-can 4.1's ASCWriter cuts its date header's microseconds to
    three digits with str.replace, which also cuts those digits wherever
    else they stand (12:10:30.123202 PM 2026 becomes ...123 PM 6), and its
    reader then reads no frame of the file: a fixed time whose cut digits
    stand nowhere else keeps the header whole, whatever the clock says."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 1, 1, 12, 34, 7, 123456)


can.io.asc.datetime = _FixedNow


def write(candump, out):
    msgs = list(can.CanutilsLogReader(candump))
    for name, make in (
        ("py.asc", lambda p: can.ASCWriter(p)),
        ("py.blf", lambda p: can.BLFWriter(p)),
        ("py21.trc", lambda p: can.TRCWriter(p)),
        ("py10.trc", trc10),
    ):
        w = make(out + "/" + name)
        for m in msgs:
            w.on_message_received(m)
        w.stop()


FD_LENGTHS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]


def writefd(n, out):
    rnd = random.Random(36)
    msgs, frames = [], []
    t = 1767225600.0  # 2026-01-01: BLF and ASC carry a start date
    for i in range(n):
        t += rnd.randint(1, 20000) / 1e6
        fd = i % 7 != 0
        ext = rnd.random() < 0.5
        m = can.Message(
            timestamp=round(t, 6), is_extended_id=ext,
            arbitration_id=rnd.randrange(1 << 29 if ext else 1 << 11),
            is_fd=fd, bitrate_switch=fd and rnd.random() < 0.5,
            error_state_indicator=fd and rnd.random() < 0.3,
            data=bytes(rnd.randrange(256) for _ in range(
                rnd.choice(FD_LENGTHS) if fd else rnd.randint(0, 8))),
            channel=rnd.randint(0, 1))
        msgs.append(m)
        frames.append(frame(m))
    for name, make in (("fd.asc", can.ASCWriter), ("fd.blf", can.BLFWriter)):
        w = make(out + "/" + name)
        for m in msgs:
            w.on_message_received(m)
        w.stop()
    with open(out + "/fd.json", "w") as f:
        json.dump(frames, f)


def frame(m):
    return {
        "t": repr(m.timestamp), "id": m.arbitration_id,
        "ext": m.is_extended_id, "rtr": m.is_remote_frame,
        "err": m.is_error_frame, "fd": m.is_fd, "brs": m.bitrate_switch,
        "esi": m.error_state_indicator, "dlc": m.dlc,
        "data": bytes(m.data).hex(), "ch": m.channel,
    }


def trc10(path):
    w = can.TRCWriter(path)
    w.file_version = TRCFileVersion.V1_0
    return w


READERS = {
    "asc": lambda p: can.ASCReader(p, relative_timestamp=False),
    "blf": can.BLFReader,
    "trc": can.TRCReader,
}


def read(pairs):
    out = {}
    for kind, path in zip(pairs[0::2], pairs[1::2]):
        frames = []
        try:
            for m in READERS[kind](path):
                frames.append(frame(m))
        except Exception as e:  # a file this python-can cannot read: left out
            print(f"{path}: {e!r}", file=sys.stderr)
            continue
        out[path] = frames
    json.dump(out, sys.stdout)


if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "writefd":
    writefd(int(sys.argv[2]), sys.argv[3])
else:
    read(sys.argv[2:])
