#!/usr/bin/env bash
#===- scripts/demo.sh - Build and run the norm-mlir demo -----------------===#
#
#   bash scripts/demo.sh    (as root when packages are missing)
#
# Installs what is missing, builds, then shows norm-opt on the op syntax
# (examples/block.mlir), takes a model block exported by torch-mlir through
# norm-raise, norm-fuse-residual and norm-fold-matmul-weights, compiles it
# with norm-cpu-pipeline, runs it on random inputs and checks it against the
# export (examples/torch_block.py), and prints a benchmark summary.
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

step "A torch-mlir export: raise, fuse, compile, run on data, check (examples/torch_block.py)"
PYTHONPATH="$NORM_BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" \
  python3 examples/torch_block.py

step "Benchmark summary: norm-bench --summary"
if [[ -x "$BIN/norm-bench" ]]; then
  "$BIN/norm-bench" --summary
else
  echo "norm-bench is not available in $BIN; skipping the benchmark"
fi
