#!/usr/bin/env python3
"""Converts a norm_exec.py reference (.npz) to the binary file exec_main.cpp
reads (no NumPy needed where the tests run).

  write_refs.py REF.npz OUT.ref

Layout (little endian): "NORMREF1", i64 #cases, per case (i64 length,
description bytes, f64 bound), i64 #outputs, per output (i64 case, i64
length, name bytes, i64 rank, rank x i64 sizes, i64 element bytes (4 or 8),
values). Outputs of f16/bf16/f32 cases are exact in f32 and stored so.
"""

import json
import struct
import sys

import numpy as np


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    ref = np.load(argv[1])
    meta = json.loads(str(ref["meta"]))
    out = bytearray(b"NORMREF1")
    out += struct.pack("<q", len(meta["cases"]))
    for case in meta["cases"]:
        text = case["desc"].encode()
        out += struct.pack("<q", len(text)) + text
        out += struct.pack("<d", case["bound"])
    out += struct.pack("<q", len(meta["outputs"]))
    for i, o in enumerate(meta["outputs"]):
        values = np.asarray(ref["ref_%d" % i], dtype=np.float64)
        dtype = meta["cases"][o["case"]]["dtype"]
        name = o["name"].encode()
        out += struct.pack("<qq", o["case"], len(name)) + name
        out += struct.pack("<q", values.ndim)
        out += struct.pack("<%dq" % values.ndim, *values.shape)
        narrow = values.astype(np.float32)
        exact = dtype != "f64" and np.array_equal(
            narrow.astype(np.float64), values, equal_nan=True)
        if exact:
            out += struct.pack("<q", 4) + narrow.astype("<f4").tobytes()
        else:
            out += struct.pack("<q", 8) + values.astype("<f8").tobytes()
    with open(argv[2], "wb") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
