"""python-can as ground truth for fieldtap's CAN log readers and writers.

  pycan.py write CANDUMP DIR   the candump -l log CANDUMP as DIR/py.asc,
                               py.blf, py21.trc (TRC 2.1) and py10.trc
                               (TRC 1.0) by python-can's writers
  pycan.py read KIND PATH ...  frames python-can's reader of KIND (asc, blf,
                               trc) reads from each PATH, as JSON on stdout;
                               a file it fails on is left out

Exit status 3: python-can is not installed.
Run with TZ=UTC: python-can reads and writes ASC and BLF dates in local time.
"""
import json
import sys

try:
    import can
    from can.io.trc import TRCFileVersion
except ImportError:
    sys.exit(3)


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
                frames.append({
                    "t": repr(m.timestamp), "id": m.arbitration_id,
                    "ext": m.is_extended_id, "rtr": m.is_remote_frame,
                    "err": m.is_error_frame, "fd": m.is_fd, "dlc": m.dlc,
                    "data": bytes(m.data).hex(), "ch": m.channel,
                })
        except Exception as e:  # a file this python-can cannot read: left out
            print(f"{path}: {e!r}", file=sys.stderr)
            continue
        out[path] = frames
    json.dump(out, sys.stdout)


if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3])
else:
    read(sys.argv[2:])
