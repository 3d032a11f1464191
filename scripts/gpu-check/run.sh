#!/usr/bin/env bash
#===- run.sh - Run the ahead-of-time GPU check in this folder -------------===#
#
#   bash run.sh
#
# Runs what `scripts/gpu-check.sh build` put in this folder, needing only the
# NVIDIA driver: checks for a device, runs every GPU execution test against
# its precomputed reference (the norm_exec.py suites in their C++ driver; the
# grad_exec.py and quant_exec.py suites through the generator's `check`,
# where python3 has NumPy and ml_dtypes, else their output stays in the
# logs and they count as not checked), then the GPU benchmark. Logs go to
# $GPU_CHECK_LOGS (default: $OUT/gpu-check-logs when $OUT is set, else a
# temporary folder). The last line is `N passed, N failed`; the exit code is
# non-zero when a test failed, the benchmark failed, or there is no usable
# GPU. Takes well under 8 minutes on an H100/H200-class GPU.
#
#===----------------------------------------------------------------------===#
set -u

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOGS="${GPU_CHECK_LOGS:-${OUT:+$OUT/gpu-check-logs}}"
[[ -n "$LOGS" ]] || LOGS="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-logs.XXXXXX")"
mkdir -p "$LOGS"

echo "=== device"
if ! "$DIR/bin/gpu-bench" --device-check; then
  echo "gpu-check: no usable CUDA GPU here; nothing was run" >&2
  exit 1
fi

echo
echo "=== execution tests (logs in $LOGS)"
passed=0
failed=0
# Expands the gzipped test NAME to $DIR/tests/NAME.run.
unpack() {
  gzip -dc "$DIR/tests/$1.gz" >"$DIR/tests/$1.run" &&
    chmod +x "$DIR/tests/$1.run"
}

while read -r name; do
  [[ -n "$name" ]] || continue
  rc=0
  unpack "$name"
  gzip -dc "$DIR/refs/$name.ref.gz" >"$LOGS/$name.ref"
  timeout 150 "$DIR/tests/$name.run" "$LOGS/$name.ref" >"$LOGS/$name.log" \
    2>&1 || rc=$?
  rm -f "$LOGS/$name.ref" "$DIR/tests/$name.run"
  summary="$(tail -n 1 "$LOGS/$name.log")"
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1))
    printf '%-20s ok    %s\n' "$name" "$summary"
  else
    failed=$((failed + 1))
    [[ $rc == 124 ]] && summary="timed out"
    printf '%-20s FAIL  %s (exit %d)\n' "$name" "$summary" "$rc"
    grep -A2 -E 'FAIL|error' "$LOGS/$name.log" | head -n 20 | sed 's/^/    /'
  fi
done <"$DIR/exec-suites"

# Suites checked by their generator (CPU/grad_exec.py, CPU/quant_exec.py,
# GPU/blockscale_exec.py), which needs python3 with NumPy (and ml_dtypes
# for the quantization ones).
unchecked=0
while read -r name script; do
  [[ -n "$name" ]] || continue
  unpack "$name"
  rc=0
  timeout 150 "$DIR/tests/$name.run" >"$LOGS/$name.out" 2>"$LOGS/$name.err" ||
    rc=$?
  rm -f "$DIR/tests/$name.run"
  if [[ $rc != 0 ]]; then
    failed=$((failed + 1))
    [[ $rc == 124 ]] && why="timed out" || why="exit $rc"
    printf '%-20s FAIL  %s\n' "$name" "$why"
    tail -n 5 "$LOGS/$name.err" | sed 's/^/    /'
    continue
  fi
  modules=numpy
  [[ "$script" == */quant_exec.py || "$script" == */blockscale_exec.py ]] &&
    modules="numpy, ml_dtypes"
  if ! python3 -c "import $modules" 2>/dev/null; then
    unchecked=$((unchecked + 1))
    printf '%-20s ran   not checked here (no python3 with %s); output in %s\n' \
      "$name" "$modules" "$LOGS/$name.out"
    continue
  fi
  gzip -dc "$DIR/refs/$name.npz.gz" >"$LOGS/$name.npz"
  rc=0
  python3 "$DIR/check/Integration/$script" check "$LOGS/$name.npz" \
    "$LOGS/$name.out" >"$LOGS/$name.log" 2>&1 || rc=$?
  rm -f "$LOGS/$name.npz"
  summary="$(tail -n 1 "$LOGS/$name.log")"
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1))
    rm -f "$LOGS/$name.out"
    printf '%-20s ok    %s\n' "$name" "$summary"
  else
    failed=$((failed + 1))
    printf '%-20s FAIL  %s (exit %d)\n' "$name" "$summary" "$rc"
    grep -A2 -E 'FAIL|rror' "$LOGS/$name.log" | head -n 20 | sed 's/^/    /'
  fi
done <"$DIR/checked-suites"
[[ $unchecked == 0 ]] || echo "$unchecked suites ran but were not checked"

echo
echo "=== benchmark"
bench_rc=0
timeout 240 "$DIR/bin/gpu-bench" 2>&1 | tee "$LOGS/gpu-bench.log" ||
  bench_rc=${PIPESTATUS[0]}
if [[ $bench_rc == 0 ]]; then
  passed=$((passed + 1))
else
  echo "gpu-bench failed (exit $bench_rc)"
  failed=$((failed + 1))
fi

echo
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
