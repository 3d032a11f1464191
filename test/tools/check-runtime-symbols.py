#!/usr/bin/env python3
"""Checks that a shared library defines every mgpu* function an LLVM IR file
calls.

  check-runtime-symbols.py IN.ll LIBRARY

Prints `runtime provides: <names>` and exits 0, or lists the missing
functions and exits 1. Loading the library must not need a GPU (the CUDA
driver is only opened at first use).
"""

import ctypes
import re
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        names = sorted(set(re.findall(r"^declare [^@]*@(mgpu\w+)\(", f.read(),
                                      re.M)))
    if not names:
        print("error: %s calls no mgpu* function" % argv[1])
        return 1
    library = ctypes.CDLL(argv[2])
    missing = [n for n in names if not hasattr(library, n)]
    if missing:
        print("runtime lacks: " + " ".join(missing))
        return 1
    print("runtime provides: " + " ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
