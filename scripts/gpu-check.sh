#!/usr/bin/env bash
#===- scripts/gpu-check.sh - Ahead-of-time GPU tests and benchmark --------===#
#
#   bash scripts/gpu-check.sh build [DIR]   # here: no GPU needed
#   bash scripts/gpu-check.sh run [DIR]     # on the GPU machine: driver only
#
# The GPU machine has no LLVM/MLIR and no network, so the check comes in two
# halves. `build` compiles every GPU execution test suite of
# test/Integration/GPU (norm-gpu-pipeline -> mlir-translate -> llc ->
# executables linked with norm_cuda_runtime) with references computed here,
# and the GPU benchmark, into one self-contained folder DIR (default
# <build>/gpu-check; libraries travel in DIR/lib, found through RPATH
# $ORIGIN/../lib); it needs the norm-mlir build, LLVM 22 and the CUDA
# toolkit, but no GPU. `run` runs DIR/run.sh: it needs only the NVIDIA
# driver, exits non-zero with "no CUDA driver" (or "no CUDA device") where
# there is none, and finishes within 8 minutes.
#
# Environment: CHIP (default sm_90: the fatbin holds sm_90 SASS and PTX),
# NORM_BUILD_DIR (default build), NORM_LLVM_ROOT (default /usr/lib/llvm-22),
# CUDA_HOME (default /usr/local/cuda), CXX (default c++).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

usage() { sed -n '3,21s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${NORM_BUILD_DIR:-build}"
[[ "$BUILD" == /* ]] || BUILD="$ROOT/$BUILD"

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
mode="$1"
DIR="${2:-$BUILD/gpu-check}"
[[ "$DIR" == /* ]] || DIR="$PWD/$DIR"

case "$mode" in
  run)
    if [[ ! -x "$DIR/run.sh" ]]; then
      echo "error: $DIR/run.sh not found; run 'scripts/gpu-check.sh build' first" >&2
      exit 2
    fi
    exec bash "$DIR/run.sh" ;;
  build) ;;
  -h|--help) usage; exit 0 ;;
  *) echo "error: unknown mode '$mode'" >&2; usage >&2; exit 2 ;;
esac

LLVM_BIN="${NORM_LLVM_ROOT:-/usr/lib/llvm-22}/bin"
CHIP="${CHIP:-sm_90}"
CXX="${CXX:-c++}"
NORM_OPT="$BUILD/bin/norm-opt"
RUNTIME="$BUILD/lib/libnorm_cuda_runtime.so"
SRC="$ROOT/scripts/gpu-check"
EXEC_PY="$ROOT/test/Integration/CPU/norm_exec.py"
for f in "$NORM_OPT" "$RUNTIME" "$LLVM_BIN/mlir-translate" "$LLVM_BIN/llc"; do
  if [[ ! -e "$f" ]]; then
    echo "error: $f not found (build norm-mlir first: ninja -C $BUILD)" >&2
    exit 2
  fi
done

step() { printf '=== %s\n' "$*"; }

# Lowers an MLIR module to an object file: PIPELINE_OPTIONS IN.mlir OUT.o
compile() {
  local options="$1" in="$2" out="$3"
  "$NORM_OPT" "$in" --norm-gpu-pipeline="$options" -o "${out%.o}.llvm.mlir"
  "$LLVM_BIN/mlir-translate" --mlir-to-llvmir "${out%.o}.llvm.mlir" \
    -o "${out%.o}.ll"
  # F16C (every x86-64 host of a recent GPU has it): f16 conversions inline
  # instead of libgcc calls that need GCC 12's libgcc_s.
  "$LLVM_BIN/llc" -O2 -filetype=obj -relocation-model=pic -mattr=+f16c \
    "${out%.o}.ll" -o "$out"
}

# Links an executable that finds norm_cuda_runtime in ../lib. The C++
# runtime stays shared: linked statically it would need glibc 2.36; shared,
# the programs need glibc >= 2.34 and libstdc++ >= GCC 5.
link() {
  local out="$1"
  shift
  "$CXX" -o "$out" "$@" -L"$DIR/lib" -lnorm_cuda_runtime \
    -Wl,-rpath,'$ORIGIN/../lib' -lm
  strip "$out"
}

rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/tests" "$DIR/refs"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp "$RUNTIME" "$DIR/lib/"
cp "$SRC/run.sh" "$DIR/run.sh"
chmod +x "$DIR/run.sh"

step "drivers"
"$CXX" -O2 -std=c++17 -I"$ROOT/include" -c "$SRC/exec_main.cpp" \
  -o "$WORK/exec_main.o"

: >"$DIR/exec-suites"
for suite in $(python3 "$EXEC_PY" list); do
  step "execution test $suite (chip=$CHIP)"
  # The suite must hold exactly the cases its CPU lit test lists by name.
  python3 "$EXEC_PY" gen "$suite" "$WORK/$suite.mlir" "$WORK/$suite.npz" \
    --expect-cases="$ROOT/test/Integration/CPU/$suite.test"
  # The suite's @main becomes norm_main, called by exec_main.cpp.
  sed -i 's/^func\.func @main()/func.func @norm_main()/' "$WORK/$suite.mlir"
  compile "chip=$CHIP" "$WORK/$suite.mlir" "$WORK/$suite.o"
  link "$WORK/$suite" "$WORK/$suite.o" "$WORK/exec_main.o"
  # Compressed (run.sh expands them): the binaries' constants, and the
  # references of long periodic rows, shrink to little.
  gzip -9 -c "$WORK/$suite" >"$DIR/tests/$suite.gz"
  python3 "$SRC/write_refs.py" "$WORK/$suite.npz" "$WORK/$suite.ref"
  gzip -9 -c "$WORK/$suite.ref" >"$DIR/refs/$suite.ref.gz"
  echo "$suite" >>"$DIR/exec-suites"
done

# The GPU lit tests of the other generators (grad_exec.py: gradient and
# statistics suites; quant_exec.py: quantization; blockscale_exec.py: the
# block-scaled forms, alone and fused) print their outputs
# for the generator's own `check`, which needs NumPy (and ml_dtypes): run.sh
# runs it where the binary ran when python3 has them, else leaves the output
# in the logs. Binaries and references are gzipped (long rows repeat).
"$CXX" -O2 -std=c++17 -I"$ROOT/include" -c "$SRC/print_main.cpp" \
  -o "$WORK/print_main.o"
mkdir -p "$DIR/check/Integration/CPU" "$DIR/check/Integration/GPU" \
  "$DIR/check/tools"
cp "$ROOT"/test/Integration/CPU/{norm,grad,quant}_exec.py \
  "$DIR/check/Integration/CPU/"
cp "$ROOT/test/Integration/GPU/blockscale_exec.py" \
  "$DIR/check/Integration/GPU/"
cp "$ROOT"/test/tools/{normref,blockscale}.py "$DIR/check/tools/"
: >"$DIR/checked-suites"
for test in "$ROOT"/test/Integration/GPU/*.test; do
  # The generator: one of test/Integration/CPU (%S/../CPU/x.py) or of this
  # folder (%S/x.py), named by its path under test/Integration.
  line="$(grep -m1 -E '^RUN: %python %S/(\.\./CPU/)?[a-z_]+\.py gen ' \
    "$test")" || continue
  script="$(sed -E 's|^RUN: %python %S/(\.\./CPU/)?([a-z_]+\.py) gen .*|\1\2|; s|^\.\./||' <<<"$line")"
  [[ "$script" == */* ]] || script="GPU/$script"
  suite="$(sed -E 's|.* gen ([A-Za-z0-9_]+) .*|\1|' <<<"$line")"
  [[ "$script" == CPU/norm_exec.py ]] && continue
  step "execution test $suite ($script, chip=$CHIP)"
  expect=()
  [[ "$line" == *--expect-cases* ]] && expect=(--expect-cases="$test")
  python3 "$ROOT/test/Integration/$script" gen "$suite" \
    "$WORK/$suite.mlir" "$WORK/$suite.npz" "${expect[@]}"
  sed -i 's/^func\.func @main()/func.func @norm_main()/' "$WORK/$suite.mlir"
  compile "chip=$CHIP" "$WORK/$suite.mlir" "$WORK/$suite.o"
  link "$WORK/$suite" "$WORK/$suite.o" "$WORK/print_main.o"
  gzip -9 -c "$WORK/$suite" >"$DIR/tests/$suite.gz"
  gzip -9 -c "$WORK/$suite.npz" >"$DIR/refs/$suite.npz.gz"
  echo "$suite $script" >>"$DIR/checked-suites"
  rm -f "$WORK/$suite".*
done

step "benchmark (chip=$CHIP, memory=device)"
python3 "$SRC/gen_bench.py" "$WORK/bench.mlir" "$WORK/bench_nosplit.mlir" \
  "$WORK/bench_cases.inc"
compile "chip=$CHIP memory=device" "$WORK/bench.mlir" "$WORK/bench.o"
# The few-row cases again without split kernels, timed beside them.
compile "chip=$CHIP memory=device split-min-elements=0" \
  "$WORK/bench_nosplit.mlir" "$WORK/bench_nosplit.o"
"$CXX" -O2 -std=c++17 -I"$ROOT/include" -I"$WORK" -c "$SRC/bench_main.cpp" \
  -o "$WORK/bench_main.o"
link "$DIR/bin/gpu-bench" "$WORK/bench_main.o" "$WORK/bench.o" \
  "$WORK/bench_nosplit.o"

size_kib="$(du -sk "$DIR" | cut -f1)"
step "done: $DIR ($((size_kib / 1024)) MiB)"
if [[ $size_kib -gt $((64 * 1024)) ]]; then
  echo "error: $DIR is larger than 64 MiB" >&2
  exit 1
fi
echo "run it where the GPU is with: bash scripts/gpu-check.sh run $DIR"
