#!/usr/bin/env bash
#===- scripts/fuzz.sh - Build and run the norm-fuzz libFuzzer target -----===#
#
#   bash scripts/fuzz.sh [SECONDS] [-- LIBFUZZER_FLAGS...]
#   bash scripts/fuzz.sh --repro FILE...
#
# Installs clang-22 and libclang-rt-22-dev when missing (as root), configures
# build-fuzz/ with clang-22 and -DNORM_ENABLE_FUZZER=ON, builds norm-fuzz,
# splits every test/**/*.mlir (and examples/*.mlir) on `// -----` into seed
# inputs, and fuzzes for SECONDS (default 300). The run goes on after a
# crash (libFuzzer's fork mode); what it learns is kept in the corpus for the
# next run. At the end it prints the executions run and every crash, timeout
# and out-of-memory input found, and exits 1 if this run found any.
#
#   --repro FILE...  build, then run the target once on each FILE (a crash
#                    input, or any .mlir file) and show what it reports
#
# Layout under build-fuzz/fuzz/: seeds/ (regenerated each run), corpus/
# (kept), artifacts/ (crash-*, timeout-*, oom-* inputs), last-run.log.
#
# Environment:
#   NORM_FUZZ_PIPELINES  `;`-separated pass pipelines replacing the default
#                        list in tools/norm-fuzz/norm-fuzz.cpp
#   NORM_JOBS            parallel build jobs (default: 2)
#
#===----------------------------------------------------------------------===#
set -euo pipefail

usage() { sed -n '3,27s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

seconds=300
repro=()
fuzzer_flags=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repro)
      shift
      [[ $# -ge 1 ]] || { echo "error: --repro needs FILE..." >&2; exit 2; }
      repro=("$@")
      break ;;
    --) shift; fuzzer_flags=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    ''|*[!0-9]*) echo "error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    *) seconds="$1" ;;
  esac
  shift
done
# Make the --repro paths absolute before setup.sh changes directory.
for i in "${!repro[@]}"; do
  [[ "${repro[$i]}" == /* ]] || repro[$i]="$PWD/${repro[$i]}"
done

export NORM_BUILD_DIR=build-fuzz
export NORM_CMAKE_ARGS="${NORM_CMAKE_ARGS:-} -DNORM_ENABLE_FUZZER=ON \
-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22"

# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

# clang and its sanitizer/libFuzzer runtime, from Debian's packages.
fuzz_packages=(clang-22 libclang-rt-22-dev)
missing=()
for pkg in "${fuzz_packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 && "${NORM_SKIP_INSTALL:-0}" != 1 ]]; then
  norm_log "apt: installing ${missing[*]}"
  norm_as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  norm_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

configure_and_build norm-fuzz
FUZZ="$NORM_BUILD_DIR/bin/norm-fuzz"
# Sanitizer reports fail the input; LLVM's singletons are not leaks.
# allow_user_poisoning=0: LLVM's headers poison allocator memory by hand in
# our instrumented code, which Debian's libMLIR.so was not built to match
# (false use-after-poison reports inside the parser).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

if [[ ${#repro[@]} -gt 0 ]]; then
  rc=0
  for file in "${repro[@]}"; do
    norm_log "reproduce: $FUZZ $file"
    "$FUZZ" "$file" || rc=$?
  done
  exit "$rc"
fi

WORK="$NORM_BUILD_DIR/fuzz"
SEEDS="$WORK/seeds"
CORPUS="$WORK/corpus"
ARTIFACTS="$WORK/artifacts"
LOG="$WORK/last-run.log"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS"

# Seed inputs: every test case of the lit suite, one per `// -----` chunk.
python3 - "$SEEDS" <<'PY'
import glob, hashlib, os, sys
seeds = sys.argv[1]
count = 0
for path in sorted(glob.glob("test/**/*.mlir", recursive=True) +
                   glob.glob("examples/*.mlir")):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for chunk in text.split("\n// -----\n"):
        if not chunk.strip():
            continue
        data = chunk.encode()
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(seeds, name), "wb") as out:
            out.write(data)
        count += 1
# Inputs for the module generator (`GEN:` + bytes it draws choices from).
import random
rng = random.Random(0)
alphabet = "".join(chr(c) for c in range(33, 127))
for i in range(64):
    data = ("GEN:" + "".join(rng.choice(alphabet) for _ in range(64))).encode()
    with open(os.path.join(seeds, f"gen-{i:02d}"), "wb") as out:
        out.write(data)
print(f"==> seeds: {count} inputs from test/ and examples/, 64 generator inputs")
PY

before="$(find "$ARTIFACTS" -type f | sort)"
norm_log "fuzz: $FUZZ for ${seconds}s (log: $LOG)"
rc=0
"$FUZZ" "$CORPUS" "$SEEDS" \
  -max_total_time="$seconds" -max_len=4096 -timeout=60 -rss_limit_mb=4096 \
  -only_ascii=1 -dict=tools/norm-fuzz/norm.dict \
  -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 \
  "${fuzzer_flags[@]}" >"$LOG" 2>&1 || rc=$?

# Fork mode prints `#EXECS: cov: ... time: ...` status lines; the last one
# has the totals.
status="$(grep -E '^#[0-9]+: ' "$LOG" | tail -n 1 || true)"
execs="$(sed -E -n 's/^#([0-9]+):.*/\1/p' <<<"$status")"
norm_log "libFuzzer exit code: $rc"
norm_log "last status: ${status:-none}"
norm_log "executions: ${execs:-unknown} in ${seconds}s; corpus: $(find "$CORPUS" -type f | wc -l) inputs"
after="$(find "$ARTIFACTS" -type f | sort)"
new="$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed '/^$/d')"
if [[ -n "$new" ]]; then
  norm_log "new crash/timeout/oom inputs (reproduce: bash scripts/fuzz.sh --repro FILE):"
  printf '    %s\n' $new
  exit 1
fi
norm_log "no new crash, timeout or out-of-memory input"
