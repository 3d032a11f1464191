#!/usr/bin/env python3
"""Checks that a tool rejects malformed inputs cleanly, never by crashing.

    check-malformed.py <norm-opt> <input.mlir> [extra tool arguments...]

Splits <input.mlir> on lines that are exactly `// -----` and runs the tool on
each chunk (in its own file, 30 s limit). A chunk passes when the tool
  - exits non-zero, but not by a signal (a negative return code, or one
    above 128 as a shell reports a signal, is a crash),
  - prints a diagnostic `<file>:<line>:<col>: error: ...` on stderr,
  - prints none of the crash markers ("Assertion", "Stack dump",
    "LLVM ERROR", "PLEASE submit a bug report", or a sanitizer report).
  - says what it expected: every chunk that must fail carries at least one
    line `// EXPECT-ERROR: <text>`, and each such <text> must occur in the
    message of the first `error:` line (a chunk without one fails).
A chunk whose first line is `// EXPECT-OK` must instead succeed (exit 0)
without crash markers, and carries no EXPECT-ERROR. Chunks holding only
comments and blank lines are ignored.

Prints `chunk K: ok (exit N): <first error line>` or `chunk K: FAIL: <why>`
per chunk (K counts from 1; error locations are mapped back to the line in
<input.mlir>), then `checked N inputs, M failures`. Exits 1 if any chunk
failed or no chunk was checked.
"""

import os
import re
import subprocess
import sys
import tempfile

SEPARATOR = "// -----"
EXPECT_OK = "// EXPECT-OK"
EXPECT_ERROR = "// EXPECT-ERROR:"
TIMEOUT_S = 30
CRASH_MARKERS = ("Assertion", "Stack dump", "LLVM ERROR",
                 "PLEASE submit a bug report",
                 # Sanitizer reports (scripts/test.sh --asan), also when the
                 # options let the process exit normally afterwards.
                 "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                 "runtime error: ")
ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ")


def split_chunks(text):
    """Returns (first line number in the input, chunk text) pairs."""
    chunks = []
    current, start = [], 1
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.rstrip("\r\n") == SEPARATOR:
            chunks.append((start, "".join(current)))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append((start, "".join(current)))
    return chunks


def has_code(chunk):
    return any(line.strip() and not line.strip().startswith("//")
               for line in chunk.splitlines())


def first_line(chunk):
    for line in chunk.splitlines():
        if line.strip():
            return line.strip()
    return ""


def expected_errors(chunk):
    """The <text> of every `// EXPECT-ERROR: <text>` line of a chunk."""
    return [line.strip()[len(EXPECT_ERROR):].strip()
            for line in chunk.splitlines()
            if line.strip().startswith(EXPECT_ERROR)]


def check_chunk(tool, extra_args, path, chunk, input_name, line_offset):
    """Runs the tool on one chunk; returns (ok, message)."""
    expect_ok = first_line(chunk) == EXPECT_OK
    expected = expected_errors(chunk)
    if expect_ok and expected:
        return False, "both EXPECT-OK and EXPECT-ERROR"
    if not expect_ok and (not expected or not all(expected)):
        return False, "no '// EXPECT-ERROR: <text>' line says which error " \
                      "to expect"
    with open(path, "w") as f:
        f.write(chunk)
    try:
        proc = subprocess.run([tool, path] + extra_args,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {TIMEOUT_S} s"
    except OSError as exc:
        return False, f"cannot run {tool}: {exc}"
    stderr = proc.stderr.decode("utf-8", "replace")
    code = proc.returncode

    if code < 0 or code > 128:
        signal = -code if code < 0 else code - 128
        return False, f"crashed (exit {code}, signal {signal})"
    for marker in CRASH_MARKERS:
        if marker in stderr:
            return False, f"exit {code} but stderr contains '{marker}'"

    if expect_ok:
        if code != 0:
            return False, f"expected success, got exit {code}: " + \
                (first_error(stderr, path, input_name, line_offset) or
                 first_stderr_line(stderr))
        return True, "ok (exit 0)"

    if code == 0:
        return False, "accepted (exit 0), expected an error"
    error = first_error(stderr, path, input_name, line_offset)
    if not error:
        return False, f"exit {code} without a '<file>:<line>:<col>: error:' " \
                      f"diagnostic: {first_stderr_line(stderr)}"
    message = error.split(" error: ", 1)[-1]
    for text in expected:
        if text not in message:
            return False, f"expected an error with '{text}', got: {error}"
    return True, f"ok (exit {code}): {error}"


def first_error(stderr, path, input_name, line_offset):
    """The first located error line, with the chunk file's location mapped
    back to the original input; '' when there is none."""
    for line in stderr.splitlines():
        match = ERROR_LINE.match(line)
        if not match:
            continue
        if match.group("file") == path:
            original = int(match.group("line")) + line_offset - 1
            return f"{input_name}:{original}:{match.group('col')}: " + \
                line[match.end() - len("error: "):]
        return line
    return ""


def first_stderr_line(stderr):
    for line in stderr.splitlines():
        if line.strip():
            return line.strip()
    return "(no output on stderr)"


def main(argv):
    if len(argv) < 3:
        print(f"usage: {os.path.basename(argv[0])} <tool> <input.mlir> "
              "[tool arguments...]", file=sys.stderr)
        return 2
    tool, input_path, extra_args = argv[1], argv[2], argv[3:]
    with open(input_path, encoding="utf-8") as f:
        text = f.read()
    input_name = os.path.basename(input_path)

    checked = failures = 0
    with tempfile.TemporaryDirectory(prefix="check-malformed-") as tmp:
        for index, (start, chunk) in enumerate(split_chunks(text), start=1):
            if not has_code(chunk):
                continue
            checked += 1
            path = os.path.join(tmp, f"chunk{index}.mlir")
            ok, message = check_chunk(tool, extra_args, path, chunk,
                                      input_name, start)
            if ok:
                print(f"chunk {index}: {message}")
            else:
                failures += 1
                print(f"chunk {index}: FAIL: {message}")
    print(f"checked {checked} inputs, {failures} failures")
    return 1 if failures or checked < 1 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
