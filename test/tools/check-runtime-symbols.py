#!/usr/bin/env python3
"""Checks that a shared library defines every mgpu* function an LLVM IR file
calls.

  check-runtime-symbols.py IN.ll LIBRARY

Prints `runtime provides: <names>` and exits 0, or lists the missing
functions and exits 1. Loading the library must not need a GPU (the CUDA
driver is only opened at first use).
"""

import ctypes
import os
import re
import subprocess
import sys


def sanitizer_runtime(library):
    """The ASan runtime `library` links (a sanitized build), or None."""
    try:
        out = subprocess.run(["ldd", library], capture_output=True,
                             text=True).stdout
    except OSError:
        return None
    match = re.search(r"^\s*libasan\S*\s+=>\s+(\S+)", out, re.M)
    return match.group(1) if match else None


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
    # A sanitized library loads into this (unsanitized) interpreter only
    # with its runtime preloaded: run again that way.
    runtime = sanitizer_runtime(argv[2])
    if runtime and runtime not in os.environ.get("LD_PRELOAD", ""):
        env = dict(os.environ, LD_PRELOAD=runtime,
                   ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0")
        return subprocess.run([sys.executable] + argv, env=env).returncode
    library = ctypes.CDLL(argv[2])
    missing = [n for n in names if not hasattr(library, n)]
    if missing:
        print("runtime lacks: " + " ".join(missing))
        return 1
    print("runtime provides: " + " ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
