#!/usr/bin/env python3
"""Extracts the device code of the `gpu.binary` ops in an MLIR file.

  gpu-binary.py extract IN.mlir OUTDIR
      Writes every object of every gpu.binary to OUTDIR/<binary>.<ext>, with
      <ext> `ptx` (format isa), `cubin` (bin), `fatbin` or `bc` (llvm), and
      prints one line `<binary> <kind> <path>` per object.
  gpu-binary.py ptx IN.mlir
      Prints the PTX of every object (format isa) to stdout, one module after
      the other, for FileCheck.
  gpu-binary.py ptxas IN.mlir PTXAS ARCH
      Assembles the PTX of every object with `PTXAS -arch=ARCH` and prints
      `ptxas ok: <binary>` per object; exits non-zero on the first failure.

Exits with status 1 when IN.mlir holds no gpu.binary.
"""

import os
import re
import subprocess
import sys
import tempfile

BINARY = re.compile(r'gpu\.binary\s+@([\w$.]+)')
KEYWORD = re.compile(r'(assembly|bin|offload)\s*=\s*$')
KINDS = {"assembly": "ptx", "bin": "cubin", "offload": "bc", None: "fatbin"}
ESCAPE = re.compile(rb'\\([0-9A-Fa-f]{2}|\\)')
OPEN, CLOSE = "<{[(", ">}])"


def unescape(text):
    """Decodes an MLIR string literal body (\\XX hex escapes, \\\\)."""
    raw = text.encode("latin-1")

    def repl(m):
        code = m.group(1)
        return b"\\" if code == b"\\" else bytes([int(code, 16)])
    return ESCAPE.sub(repl, raw)


def scan_object(text, pos):
    """Parses the `#gpu.object<...>` starting at `pos`; returns (kind,
    payload, end). The payload is the object's last top-level string."""
    depth = 0
    i = pos + len("#gpu.object")
    payload = None
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if depth == 1:
                kw = KEYWORD.search(text, max(pos, i - 16), i)
                payload = (KINDS[kw.group(1) if kw else None], text[i + 1:j])
            i = j + 1
            continue
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
            if depth == 0:
                return payload, i + 1
        i += 1
    return payload, i


def objects(path):
    """[(binary name, kind, bytes)] of every object in the file."""
    with open(path, "r", encoding="latin-1") as f:
        text = f.read()
    found = []
    for m in BINARY.finditer(text):
        pos = text.index("[", m.end())
        # The objects of this binary, up to its closing `]`.
        while True:
            while text[pos] in " \n[,":
                pos += 1
            if not text.startswith("#gpu.object", pos):
                break
            payload, pos = scan_object(text, pos)
            if payload:
                found.append((m.group(1), payload[0], unescape(payload[1])))
    return found


def main(argv):
    if len(argv) < 3 or argv[1] not in ("extract", "ptx", "ptxas"):
        sys.stderr.write(__doc__)
        return 2
    objs = objects(argv[2])
    if not objs:
        print("error: no gpu.binary in %s" % argv[2], file=sys.stderr)
        return 1
    if argv[1] == "extract":
        if len(argv) != 4:
            sys.stderr.write(__doc__)
            return 2
        os.makedirs(argv[3], exist_ok=True)
        for i, (name, kind, data) in enumerate(objs):
            out = os.path.join(argv[3], "%s.%s" % (name, kind))
            if os.path.exists(out):
                out = os.path.join(argv[3], "%s.%d.%s" % (name, i, kind))
            with open(out, "wb") as f:
                f.write(data)
            print(name, kind, out)
        return 0
    ptx = [(n, d) for n, k, d in objs if k == "ptx"]
    if not ptx:
        print("error: no PTX (format isa) object in %s" % argv[2],
              file=sys.stderr)
        return 1
    if argv[1] == "ptx":
        for name, data in ptx:
            sys.stdout.write("// gpu.binary @%s\n" % name)
            sys.stdout.write(data.decode("latin-1"))
        return 0
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    ptxas, arch = argv[3], argv[4]
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in ptx:
            src = os.path.join(tmp, name + ".ptx")
            with open(src, "wb") as f:
                f.write(data)
            result = subprocess.run(
                [ptxas, "-arch=" + arch, src, "-o",
                 os.path.join(tmp, name + ".cubin")],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                print("ptxas failed on @%s:\n%s" % (name, result.stdout))
                return 1
            print("ptxas ok: %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
