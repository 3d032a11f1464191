#!/usr/bin/env python3
"""Runs the commands the documentation and the examples show, as written.

    python3 scripts/run-doc-commands.py --junit FILE SOURCE...

A SOURCE is
  - a Markdown file: every ```sh block right after a line
    `<!-- tested: NAME -->` is run;
  - a .mlir example: the commands in its header comment after the line that
    starts with `// Run` (the first run of comment lines indented by three
    or more spaces; `\\` continues a line); an example without such a line
    is left out.

The commands of a block run one by one with bash (pipefail), in a fresh
temporary folder holding a symbolic link to every top-level entry of the
repository, so that they see `build/`, `examples/`, ... as from the
repository root and whatever they write (`out/`) goes to the temporary
folder. A block stops at its first failing command (the rest are reported
skipped). A block that calls `mpirun` is skipped where mpirun is not on PATH.
Each command is one test case of the JUnit XML FILE; the exit code is 1 if a
command failed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape, quoteattr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 600


def join_continuations(lines):
    """The commands of `lines`: a trailing backslash continues a line;
    comment lines are left out."""
    commands, parts = [], []
    for line in lines:
        text = line.strip()
        if text.endswith("\\"):
            parts.append(text[:-1].strip())
            continue
        parts.append(text)
        command = " ".join(part for part in parts if part)
        parts = []
        if command and not command.startswith("#"):
            commands.append(command)
    if parts:
        commands.append(" ".join(parts))
    return commands


def markdown_blocks(path):
    """Yields (name, commands) for every block marked `<!-- tested: NAME -->`."""
    lines = open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        marker = re.match(r"^<!-- tested: (\S+) -->$", lines[i].strip())
        i += 1
        if not marker:
            continue
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines) or not lines[i].startswith("```sh"):
            raise SystemExit(f"{path}:{i}: no ```sh block after the marker")
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        yield marker.group(1), join_continuations(body)


def example_blocks(path):
    """Yields (name, commands) for the `// Run` commands of an example."""
    lines = open(path, encoding="utf-8").read().splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("// Run")), None)
    if start is None:
        print(f"--- {os.path.relpath(path, ROOT)}: no '// Run' line")
        return
    body = []
    for line in lines[start + 1:]:
        if not line.startswith("//"):
            break
        text = line[2:]
        if text.startswith("   ") and text.strip():
            body.append(text)
        elif body:
            break
    if not body:
        raise SystemExit(f"{path}: no command after the '// Run' line")
    yield os.path.relpath(path, ROOT), join_continuations(body)


def run_block(name, commands, cases):
    skip = None
    if any(re.search(r"\bmpirun\b", c) for c in commands) and \
            shutil.which("mpirun") is None:
        skip = "mpirun is not on PATH"
    workdir = tempfile.mkdtemp(prefix="norm-doc-commands-")
    for entry in os.listdir(ROOT):
        if entry not in (".git", "out"):
            os.symlink(os.path.join(ROOT, entry), os.path.join(workdir, entry))
    failed = False
    for index, command in enumerate(commands, 1):
        case = {"classname": f"doc-commands.{name}",
                "name": f"{index}: {command[:100]}", "time": 0.0}
        cases.append(case)
        if skip or failed:
            case["skipped"] = skip or "an earlier command of the block failed"
            print(f"--- [{name}] skipped: {command}\n    ({case['skipped']})")
            continue
        print(f"--- [{name}] $ {command}", flush=True)
        start = time.time()
        try:
            result = subprocess.run(
                ["bash", "-o", "pipefail", "-c", command], cwd=workdir,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                timeout=TIMEOUT_S)
            output, rc = result.stdout.decode(errors="replace"), result.returncode
        except subprocess.TimeoutExpired as error:
            output = (error.stdout or b"").decode(errors="replace")
            rc = f"timeout after {TIMEOUT_S} s"
        case["time"] = time.time() - start
        tail = "\n".join(output.splitlines()[-40:])
        if tail:
            print("    " + tail.replace("\n", "\n    "))
        if rc != 0:
            failed = True
            case["failure"] = f"exit code {rc}"
            case["output"] = tail
            print(f"    FAILED: exit code {rc}")
    shutil.rmtree(workdir, ignore_errors=True)
    return not failed


def write_junit(path, cases):
    failures = sum(1 for c in cases if "failure" in c)
    skipped = sum(1 for c in cases if "skipped" in c)
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        f.write(f'<testsuite name="doc-commands" tests="{len(cases)}" '
                f'failures="{failures}" skipped="{skipped}">\n')
        for c in cases:
            f.write(f'<testcase classname={quoteattr(c["classname"])} '
                    f'name={quoteattr(c["name"])} time="{c["time"]:.2f}">')
            if "failure" in c:
                f.write(f'<failure message={quoteattr(c["failure"])}>'
                        f'{escape(c.get("output", ""))}</failure>')
            elif "skipped" in c:
                f.write(f'<skipped message={quoteattr(c["skipped"])}/>')
            f.write("</testcase>\n")
        f.write("</testsuite>\n</testsuites>\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", required=True, help="JUnit XML output")
    parser.add_argument("sources", nargs="+", help="Markdown or .mlir files")
    args = parser.parse_args(argv)
    cases, ok = [], True
    for source in args.sources:
        blocks = markdown_blocks(source) if source.endswith(".md") \
            else example_blocks(source)
        for name, commands in blocks:
            ok &= run_block(name, commands, cases)
    write_junit(args.junit, cases)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
