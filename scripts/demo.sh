#!/usr/bin/env bash
#===- scripts/demo.sh - Build and run the norm-mlir demo -----------------===#
#
#   bash scripts/demo.sh    (as root when packages are missing)
#
# Installs what is missing, builds, then shows norm-opt on an example model
# block, executes it through the CPU pipeline and prints a benchmark summary.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
configure_and_build

BIN="$NORM_BUILD_DIR/bin"
EXAMPLE=examples/block.mlir

step() { printf '\n=== %s ===\n' "$*"; }

step "norm-opt $EXAMPLE (parse, verify, print)"
"$BIN/norm-opt" "$EXAMPLE"

step "Executing $EXAMPLE: norm-opt --norm-cpu-pipeline | mlir-runner"
# Capture --help first: `grep -q` in a pipe could SIGPIPE norm-opt.
help_text="$("$BIN/norm-opt" --help 2>/dev/null || true)"
if grep -q -- 'norm-cpu-pipeline' <<<"$help_text"; then
  "$BIN/norm-opt" "$EXAMPLE" --norm-cpu-pipeline |
    "$NORM_LLVM_ROOT/bin/mlir-runner" -e main -entry-point-result=void \
      "-shared-libs=$NORM_LLVM_ROOT/lib/libmlir_runner_utils.so,$NORM_LLVM_ROOT/lib/libmlir_c_runner_utils.so"
else
  echo "CPU pipeline not built yet; skipping execution"
fi

step "Benchmark summary: norm-bench --summary"
if [[ -x "$BIN/norm-bench" ]]; then
  "$BIN/norm-bench" --summary
else
  echo "norm-bench is not available in $BIN; skipping the benchmark"
fi
