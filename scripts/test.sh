#!/usr/bin/env bash
#===- scripts/test.sh - Build and run every norm-mlir test suite ---------===#
#
#   bash scripts/test.sh [--asan | --also-asan] [--no-build] [--filter REGEX]
#
# Installs what is missing (as root), builds all targets, then runs lit,
# every GoogleTest executable, pytest and the commands the README and the
# examples show (the embedding example against an install prefix, the AOT
# commands, the examples' run lines), each writing JUnit XML into
# <build>/test-results/. A failing suite does not stop the others. The last
# line of output is `N passed, N failed, N skipped`; the exit code is
# non-zero if a test failed, a suite crashed or wrote no results, or nothing
# ran.
#
#   --asan          the sanitizer run instead: build everything with
#                   -DNORM_ENABLE_SANITIZERS=ON (ASan + UBSan, assertions in
#                   our code) in build-asan/ and run lit, GoogleTest and
#                   every pytest module there
#                   (mlir-runner, Debian's binary, stays uninstrumented)
#   --also-asan     the normal run, then the sanitizer run; one summary line
#                   over both (what .ci/run uses)
#   --no-build      run the suites on the existing build(s)
#   --filter REGEX  run only the lit tests whose path matches REGEX (and
#                   none of the documented commands)
#
#===----------------------------------------------------------------------===#
set -euo pipefail

usage() { sed -n '3,/^#===/{/^#===/d;s/^# \{0,1\}//p;}' "${BASH_SOURCE[0]}"; }

build=1
asan=0
also_asan=0
lit_filter=""
passthrough=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --asan) asan=1 ;;
    --also-asan) also_asan=1 ;;
    --no-build) build=0; passthrough+=(--no-build) ;;
    --filter)
      [[ $# -ge 2 ]] || { echo "error: --filter needs a REGEX" >&2; exit 2; }
      lit_filter="$2"
      passthrough+=(--filter "$2")
      shift ;;
    --filter=*) lit_filter="${1#--filter=}"; passthrough+=("$1") ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

if [[ $asan == 1 && $also_asan == 1 ]]; then
  echo "error: --asan and --also-asan exclude each other" >&2
  exit 2
fi
if [[ $asan == 1 ]]; then
  export NORM_BUILD_DIR=build-asan
  export NORM_CMAKE_ARGS="${NORM_CMAKE_ARGS:-} -DNORM_ENABLE_SANITIZERS=ON"
  # Every sanitizer report (leaks included: the suite runs clean with them)
  # aborts the process, so that `not norm-opt` and check-malformed.py see a
  # crash rather than an ordinary failure.
  # allow_user_poisoning=0: LLVM's headers poison allocator memory by hand
  # when they are compiled with ASan, which Debian's MLIR archives (linked
  # into libNormMLIR-C.so) were not; the mix gives false use-after-poison
  # reports. Real accesses are still checked.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allow_user_poisoning=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}"
fi

# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

B="$NORM_BUILD_DIR"
RESULTS="$B/test-results"

step() { printf '\n=== %s ===\n' "$*"; }


# Records a suite that failed without saying which test failed (a crash, a
# configuration error, no XML) as one failed test case, so that the
# aggregate counts it.
record_suite_error() {
  local name="$1" message="$2"
  printf 'error: %s: %s\n' "$name" "$message"
  python3 - "$RESULTS/$name.suite-error.xml" "$name" "$message" <<'PY'
import sys
from xml.sax.saxutils import quoteattr
path, name, message = sys.argv[1:4]
with open(path, "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n'
            f'<testsuite name={quoteattr(name)} tests="1" failures="0" errors="1">\n'
            f'<testcase classname={quoteattr(name)} name="(suite did not complete)">'
            f'<error message={quoteattr(message)}/></testcase>\n'
            '</testsuite>\n</testsuites>\n')
PY
}

# Runs one suite: run_suite NAME XML OK_CODES COMMAND... A suite is
# consistent when it exits with one of OK_CODES (space-separated) or its XML
# names at least one failed test.
run_suite() {
  local name="$1" xml="$2" ok_codes="$3" rc=0
  shift 3
  step "$name: $*"
  "$@" || rc=$?
  if [[ " $ok_codes " == *" $rc "* ]]; then
    [[ -f "$xml" ]] || record_suite_error "$name" "exit code $rc but no $xml"
  elif [[ ! -f "$xml" ]]; then
    record_suite_error "$name" "exit code $rc and no result file"
  elif ! python3 scripts/aggregate.py --has-failures "$xml"; then
    record_suite_error "$name" "exit code $rc but no failed test in $xml"
  fi
  return 0
}

#===- Build --------------------------------------------------------------===#
# A failed build is recorded as a failure; the suites still run on whatever
# was built, so that the summary line always comes last.
if [[ $build == 1 ]]; then
  build_ok=1
  # Everything, sanitized builds too: the install-consumer test installs
  # every library and pytest loads the Python extension.
  step "Build (all targets)"
  configure_and_build || build_ok=0
  # Unit test executables may be excluded from `all`; build them too.
  if [[ $build_ok == 1 ]]; then
    mapfile -t unit_targets < <(ninja -C "$B" -t targets all 2>/dev/null |
      sed -n -E 's#^((bin|test/Unit)/[^/:]*Tests):.*#\1#p' | sort -u)
    if [[ ${#unit_targets[@]} -gt 0 ]]; then
      configure_and_build "${unit_targets[@]}" || build_ok=0
    fi
  fi
  rm -rf "$RESULTS"
  mkdir -p "$RESULTS"
  [[ $build_ok == 1 ]] || record_suite_error build "configure or build failed"
else
  rm -rf "$RESULTS"
  mkdir -p "$RESULTS"
fi

#===- lit ----------------------------------------------------------------===#
LIT="$NORM_LLVM_ROOT/bin/lit"
lit_args=(-sv "$B/test" --xunit-xml-output "$RESULTS/lit.xml")
[[ -n "$lit_filter" ]] && lit_args+=(--filter "$lit_filter")
if [[ -f "$B/test/lit.site.cfg.py" ]]; then
  run_suite lit "$RESULTS/lit.xml" 0 "$LIT" "${lit_args[@]}"
else
  step "lit"
  record_suite_error lit "$B/test/lit.site.cfg.py does not exist (not configured?)"
fi

#===- GoogleTest ---------------------------------------------------------===#
declare -A seen_unit=()
for exe in "$B"/bin/*Tests "$B"/test/Unit/*Tests; do
  [[ -f "$exe" && -x "$exe" ]] || continue
  name="$(basename "$exe")"
  [[ -z "${seen_unit[$name]:-}" ]] || continue
  seen_unit[$name]=1
  run_suite "$name" "$RESULTS/$name.xml" 0 \
    "$exe" "--gtest_output=xml:$RESULTS/$name.xml"
done
[[ ${#seen_unit[@]} -gt 0 ]] || { step "GoogleTest"; echo "no *Tests executables in $B/bin or $B/test/Unit"; }

#===- pytest -------------------------------------------------------------===#
if [[ -d python/tests ]] &&
   [[ -n "$(find python/tests -name 'test_*.py' -o -name '*_test.py' | head -n 1)" ]]; then
  abs_b="$B"
  [[ "$abs_b" == /* ]] || abs_b="$NORM_ROOT/$B"
  py_env=("PYTHONPATH=$abs_b/python${PYTHONPATH:+:$PYTHONPATH}")
  py_tests=(python/tests)
  if [[ $asan == 1 ]]; then
    # The extension is sanitized but python3 is not: preload the runtime,
    # and libstdc++ with it, or ASan cannot intercept __cxa_throw (python3
    # itself does not link libstdc++) and aborts at the first C++ throw.
    libasan="$(c++ -print-file-name=libasan.so 2>/dev/null || true)"
    libstdcxx="$(c++ -print-file-name=libstdc++.so 2>/dev/null || true)"
    if [[ "$libasan" == /* && -f "$libasan" ]]; then
      py_env+=("LD_PRELOAD=$libasan${libstdcxx:+ $libstdcxx}"
               "ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0")
    fi
  fi
  # Exit code 5: no test collected (e.g. all deselected); not a failure.
  run_suite pytest "$RESULTS/pytest.xml" "0 5" env "${py_env[@]}" \
    python3 -m pytest "${py_tests[@]}" "--junitxml=$RESULTS/pytest.xml"
else
  step "pytest"
  echo "no Python tests in python/tests; skipping pytest"
fi

#===- The wheel ----------------------------------------------------------===#
# `pip install .` into a throwaway virtual environment, and the Python
# suites against that installation (the normal run only: the sanitized
# extension needs preloads no user has).
if [[ $asan == 0 && -f pyproject.toml && -z "$lit_filter" ]]; then
  run_suite wheel "$RESULTS/wheel.xml" 0 \
    bash scripts/test-wheel.sh "$B" "$RESULTS/wheel.xml"
fi

#===- Documented commands ------------------------------------------------===#
# The README's blocks marked `<!-- tested: NAME -->` (the embedding example
# built against `cmake --install` into a temporary prefix, the AOT commands)
# and the `// Run` lines of examples/*.mlir, run as written in a temporary
# folder, one test case per command (scripts/run-doc-commands.py). They name
# build/, so the sanitizer run and --filter leave them out.
if [[ $asan == 0 && -z "$lit_filter" && "$B" == build ]]; then
  run_suite doc-commands "$RESULTS/doc-commands.xml" 0 \
    python3 scripts/run-doc-commands.py --junit "$RESULTS/doc-commands.xml" \
    README.md examples/*.mlir
else
  step "doc-commands"
  echo "left out (sanitizer run, --filter or a build folder other than build/)"
fi

#===- Sanitizer run (--also-asan) ----------------------------------------===#
asan_results=()
if [[ $also_asan == 1 ]]; then
  step "Sanitizer run: scripts/test.sh --asan ${passthrough[*]}"
  asan_rc=0
  NORM_TEST_NO_SUMMARY=1 bash "$NORM_ROOT/scripts/test.sh" --asan "${passthrough[@]}" ||
    asan_rc=$?
  shopt -s nullglob
  asan_results=(build-asan/test-results/*.xml)
  shopt -u nullglob
  if [[ ${#asan_results[@]} -eq 0 ]]; then
    record_suite_error asan "the sanitizer run (exit $asan_rc) wrote no results"
  fi
fi

#===- Summary ------------------------------------------------------------===#
# A nested run (--also-asan) leaves the summary to its caller.
[[ "${NORM_TEST_NO_SUMMARY:-0}" == 1 ]] && exit 0
step "Summary ($RESULTS${asan_results:+ and build-asan/test-results})"
shopt -s nullglob
result_files=("$RESULTS"/*.xml "${asan_results[@]}")
shopt -u nullglob
rc=0
python3 scripts/aggregate.py "${result_files[@]}" || rc=$?
exit "$rc"
