#!/usr/bin/env python3
"""Sums up JUnit XML results from lit, GoogleTest and pytest.

    python3 scripts/aggregate.py build/test-results/*.xml

Prints one line per file (and the names of its failed tests), then, as the
last line of output, exactly `N passed, N failed, N skipped`. Exits 1 if any
test failed, if a file is missing or cannot be parsed (a crashed suite), or
if no test ran at all.

The three producers differ slightly; all are handled:
  - root element `<testsuites>` (lit, gtest, newer pytest) or `<testsuite>`;
  - a `<testcase>` with a `<failure>` or `<error>` child failed;
  - a `<testcase>` with a `<skipped>` child (lit UNSUPPORTED, pytest skip and
    xfail, gtest GTEST_SKIP), or gtest's `result="skipped"`/`"suppressed"` or
    `status="notrun"` (DISABLED_ tests), is skipped;
  - lit writes tests left out by `--filter` as skipped with the message
    "Test not selected"; they did not run and are reported apart, not counted.

With `--has-failures FILE...` nothing is printed; the exit code is 0 when the
files report at least one failed test (or cannot be read), else 1. The test
script uses it to tell a suite that failed with its tests recorded from one
that crashed or failed without saying which test.
"""

import argparse
import os
import sys
import xml.etree.ElementTree as ET

# How many failed test names to list per file.
MAX_LISTED_FAILURES = 30


class FileResult:
    def __init__(self, path):
        self.path = path
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.not_selected = 0
        self.failed_names = []
        self.problem = None  # why the file could not be used, if it could not

    def add_failure(self, name):
        self.failed += 1
        self.failed_names.append(name)


def _test_name(case):
    classname = case.get("classname", "")
    name = case.get("name", "")
    return f"{classname}.{name}" if classname else name


def _classify(case):
    """Returns 'failed', 'skipped', 'not_selected' or 'passed'."""
    children = {child.tag for child in case}
    if "failure" in children or "error" in children:
        return "failed"
    skipped = case.find("skipped")
    if skipped is not None:
        message = skipped.get("message") or ""
        if message.startswith("Test not selected"):
            return "not_selected"
        return "skipped"
    if case.get("result") in ("skipped", "suppressed"):
        return "skipped"
    if case.get("status") == "notrun":
        return "skipped"
    return "passed"


def _leaf_suites(root):
    """Yields the <testsuite> elements that contain test cases directly."""
    for suite in root.iter("testsuite"):
        if suite.find("testsuite") is None:
            yield suite


def _int_attr(element, name):
    try:
        return int(element.get(name, "0"))
    except ValueError:
        return 0


def parse_file(path):
    result = FileResult(path)
    if not os.path.isfile(path):
        result.problem = "file does not exist"
        return result
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        result.problem = f"cannot parse: {exc}"
        return result
    if root.tag not in ("testsuites", "testsuite"):
        result.problem = f"unexpected root element <{root.tag}>"
        return result

    for suite in _leaf_suites(root):
        # <failure>/<error> elements seen: gtest writes one per failed
        # assertion, pytest one failure and one error for a test whose
        # teardown also failed; suites count tests or elements, never more.
        failure_elements = 0
        for case in suite.iter("testcase"):
            failure_elements += sum(
                1 for child in case if child.tag in ("failure", "error"))
            kind = _classify(case)
            if kind == "failed":
                result.add_failure(_test_name(case))
            elif kind == "skipped":
                result.skipped += 1
            elif kind == "not_selected":
                result.not_selected += 1
            else:
                result.passed += 1
        # A suite can report errors that belong to no test case (e.g. a
        # failing suite-level set-up); do not lose them.
        reported = _int_attr(suite, "failures") + _int_attr(suite, "errors")
        for _ in range(max(0, reported - failure_elements)):
            result.add_failure(
                f"{suite.get('name', '?')} (suite-level failure or error)")
    return result


def print_report(results):
    passed = failed = skipped = 0
    for res in results:
        name = os.path.basename(res.path)
        if res.problem:
            print(f"{name}: FAILED: {res.problem}")
            failed += 1
            continue
        line = f"{name}: {res.passed} passed, {res.failed} failed, " \
               f"{res.skipped} skipped"
        if res.not_selected:
            line += f" ({res.not_selected} not selected)"
        print(line)
        for test in res.failed_names[:MAX_LISTED_FAILURES]:
            print(f"  FAILED: {test}")
        if len(res.failed_names) > MAX_LISTED_FAILURES:
            print(f"  ... and {len(res.failed_names) - MAX_LISTED_FAILURES}"
                  " more")
        passed += res.passed
        failed += res.failed
        skipped += res.skipped
    if not results:
        print("no result files given")
    elif passed + failed + skipped == 0:
        print("no test ran")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed > 0 or passed + failed + skipped == 0 else 0


def main(argv):
    parser = argparse.ArgumentParser(
        description="Sum up JUnit XML test results.")
    parser.add_argument("--has-failures", action="store_true",
                        help="print nothing; exit 0 if the files report a "
                             "failed test or cannot be read, else 1")
    parser.add_argument("files", nargs="*", help="JUnit XML files")
    args = parser.parse_args(argv)

    results = [parse_file(path) for path in args.files]
    if args.has_failures:
        return 0 if any(r.problem or r.failed for r in results) else 1
    return print_report(results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
