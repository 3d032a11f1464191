#!/usr/bin/env bash
#===- scripts/bench.sh - Run norm-bench with every baseline -------------===#
#
#   bash scripts/bench.sh [--quick] [--threads=N]
#
# Installs the baseline dependencies (oneDNN through setup.sh; PyTorch and
# matplotlib through pip, here only), builds, runs the PyTorch baselines and
# norm-bench, and writes build/bench/{norm-bench.json,torch.json,chart.png};
# then measures norm-opt's compile time on chains of 100, 200 and 400
# pre-norm blocks (tools/norm-bench/compile_time.py; 25, 50 and 100 with
# --quick) and writes build/bench/compile-time.{txt,json}; and times RMSNorm
# sharded over 2 MPI ranks (tools/norm-bench/spmd_bench.py) into
# build/bench/spmd.{txt,json}.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

quick=()
threads="$(nproc)"
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    --threads=*) threads="${arg#--threads=}" ;;
    *) echo "usage: bench.sh [--quick] [--threads=N]" >&2; exit 2 ;;
  esac
done

for module in torch matplotlib; do
  if ! python3 -c "import $module" 2>/dev/null; then
    norm_log "pip install $module"
    python3 -m pip install --quiet "$module" || norm_log "could not install $module; continuing without it"
  fi
done

configure_and_build
out="$NORM_BUILD_DIR/bench"
mkdir -p "$out"
norm_log "PyTorch baselines"
python3 tools/norm-bench/bench_torch.py --out "$out/torch.json" \
  --threads "$threads" --grad "${quick[@]}" || true
norm_log "norm-bench"
"$NORM_BUILD_DIR/bin/norm-bench" "${quick[@]}" --paired --slices --grad \
  --threads="$threads" --benchmark_min_time=0.1 \
  --json="$out/norm-bench.json" --merge="$out/torch.json" \
  --benchmark_color=false | tee "$out/norm-bench.txt"
norm_log "chart"
python3 tools/norm-bench/plot.py "$out/norm-bench.json" "$out/torch.json" \
  --out "$out/chart.png" || true
norm_log "compile time"
python3 tools/norm-bench/compile_time.py "${quick[@]}" \
  --norm-opt "$NORM_BUILD_DIR/bin/norm-opt" --json "$out/compile-time.json" \
  | tee "$out/compile-time.txt"
norm_log "RMSNorm sharded over MPI ranks"
spmd_args=()
[[ ${#quick[@]} -gt 0 ]] && spmd_args=(--rows 2048 --reps 5)
python3 tools/norm-bench/spmd_bench.py "${spmd_args[@]}" \
  --norm-opt "$NORM_BUILD_DIR/bin/norm-opt" --out "$out/spmd.json" \
  | tee "$out/spmd.txt"
