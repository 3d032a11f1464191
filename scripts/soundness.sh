#!/usr/bin/env bash
#===- scripts/soundness.sh - Long runs of the differential soundness checker -===#
#
#   bash scripts/soundness.sh [MINUTES]
#
# Runs utils/norm-soundness.py (every pass: raise, fold, fuse) for MINUTES
# (default 30) on the existing build, in rounds of NORM_SOUNDNESS_ROUND
# seconds, each with the next seed, so that a long run tries many more
# mutants than the lit test (Soundness/*.test, one fixed seed). Findings go
# to <out>/seed-N/ (one folder per unsound mutant, crash or output that does
# not run, with the files and commands that reproduce it); <out>/summary.txt
# gets every round's summary line and the totals. Exits 1 if any round found
# something.
#
# Environment:
#   NORM_SOUNDNESS_OUT    output folder (default: soundness-runs/<date>)
#   NORM_SOUNDNESS_SEED   first seed (default: the current time)
#   NORM_SOUNDNESS_ROUND  seconds per round (default: 300)
#   NORM_SOUNDNESS_PASS   raise, fold, fuse or all (default: all)
#   NORM_SOUNDNESS_JOBS   parallel jobs (default: 2)
#   NORM_BUILD_DIR        build directory (default: build)
#
#===----------------------------------------------------------------------===#
set -euo pipefail

usage() { sed -n '3,24s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
minutes="${1:-30}"
[[ "$minutes" =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${NORM_BUILD_DIR:-build}"
[[ "$build" == /* ]] || build="$root/$build"
norm_opt="$build/bin/norm-opt"
[[ -x "$norm_opt" ]] || { echo "error: no $norm_opt; build first" >&2; exit 2; }
out="${NORM_SOUNDNESS_OUT:-$root/soundness-runs/$(date +%Y%m%d-%H%M%S)}"
seed="${NORM_SOUNDNESS_SEED:-$(date +%s)}"
round="${NORM_SOUNDNESS_ROUND:-300}"
suite="${NORM_SOUNDNESS_PASS:-all}"
jobs="${NORM_SOUNDNESS_JOBS:-2}"
mkdir -p "$out"
summary="$out/summary.txt"
echo "soundness run: $minutes minutes from seed $seed, rounds of $round s," \
  "pass $suite, build $build" | tee "$summary"

end=$(( $(date +%s) + minutes * 60 ))
status=0
tried=0 valid=0 changed=0 executed=0 unsound=0
while (( $(date +%s) < end )); do
  left=$(( end - $(date +%s) ))
  budget=$(( left < round ? left : round ))
  rc=0
  python3 "$root/utils/norm-soundness.py" --seed "$seed" --budget "$budget" \
    --pass "$suite" --jobs "$jobs" --norm-opt "$norm_opt" \
    --out "$out/seed-$seed" > "$out/seed-$seed.log" 2>&1 || rc=$?
  line="$(grep '^soundness: tried' "$out/seed-$seed.log" | tail -n 1 || true)"
  if [[ -z "$line" ]]; then
    echo "seed $seed: the checker stopped without a summary (exit $rc)," \
      "see $out/seed-$seed.log" | tee -a "$summary"
    status=1
  else
    echo "seed $seed: $line" | tee -a "$summary"
    read -r t v c e u < <(sed -E 's/.*tried ([0-9]+) mutants, ([0-9]+) parse-valid, ([0-9]+) raised\/changed, executed ([0-9]+), ([0-9]+) unsound.*/\1 \2 \3 \4 \5/' <<< "$line")
    tried=$((tried + t)) valid=$((valid + v)) changed=$((changed + c))
    executed=$((executed + e)) unsound=$((unsound + u))
    if [[ $rc != 0 ]]; then
      status=1
      grep -E '^(UNSOUND|CRASH|BROKEN-AFTER|SIGNATURE):' \
        "$out/seed-$seed.log" | tee -a "$summary" || true
    fi
  fi
  seed=$((seed + 1))
done
echo "total: tried $tried mutants, $valid parse-valid, $changed" \
  "raised/changed, executed $executed, $unsound unsound" | tee -a "$summary"
exit "$status"
