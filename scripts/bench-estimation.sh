#!/usr/bin/env bash
# Parameter-estimation benchmark (docs/benchmarks/estimation.md): per PEtab problem, one
# `sensode estimate` with BENCH_STARTS (default 20) seeded Latin-hypercube starts and no start at
# the nominal values (--no-start-values, so the published fit is not handed to the optimiser),
# then a Markdown row: best objective, the objective at the nominal (published) parameters,
# best − nominal and whether it meets the acceptance (≤ 1e-3), the success rate (starts within
# 1e-3 of the best), the starts within 1e-3 of the nominal objective, the starts per status, the
# median wall time per converged start, the median gradient (Jacobian) evaluations per start,
# the global phase (screen or scatter search, --global) with its objective evaluations and
# seconds, and the run's wall time. Problems run one after another; the
# starts of one problem run on BENCH_THREADS threads (default: nproc).
#
#   scripts/bench-estimation.sh                          # the seven of the acceptance
#   scripts/bench-estimation.sh Boehm_JProteomeRes2014   # some
#
# Environment: SENSODE_CLI (use this binary instead of building build-bench-estimation/),
# BENCH_STARTS, BENCH_SEED (default 1), BENCH_THREADS, BENCH_TIMEOUT (seconds per problem,
# default 3600), BENCH_OUT (keep the CSV/JSON output there), SENSODE_SHARED_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench-estimation}"
shared="${SENSODE_SHARED_DIR:-$root/../shared}"
starts="${BENCH_STARTS:-20}"
seed="${BENCH_SEED:-1}"
threads="${BENCH_THREADS:-$(nproc)}"
limit="${BENCH_TIMEOUT:-3600}"
# Further `sensode estimate` options, e.g. BENCH_ARGS="--global ess --global-evaluations 20000".
read -r -a extra <<< "${BENCH_ARGS:-}"

cli="${SENSODE_CLI:-}"
if [ -z "$cli" ]; then
  generator=()
  if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSENSODE_BUILD_GUI=OFF >/dev/null
  cmake --build "$build" --target sensode --parallel "$(nproc)" >/dev/null
  cli="$build/core/sensode"
fi

out="${BENCH_OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi

# The value of a numeric or string key of a flat JSON object.
json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1; }

problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
  problems=(Boehm_JProteomeRes2014 Bruno_JExpBot2016 Crauste_CellSystems2017 Elowitz_Nature2000
            Fujita_SciSignal2010 Zheng_PNAS2012 Brannmark_JBC2010)
fi

echo "# Parameter estimation: $starts seeded starts (seed $seed) per problem ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $threads threads, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "Extra options: ${extra[*]:-(none)}"
echo
echo "| problem | best | nominal | best − nominal | met | success (≤ best + 1e-3) | starts ≤ nominal + 1e-3 | converged / stalled / max-iter / failed | s per converged start (median) | gradient evaluations per start (median) | global phase: evaluations (s) | wall s |"
echo "| --- | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
for id in "${problems[@]}"; do
  yaml="$shared/petab/$id/$id.yaml"
  dir="$out/$id"
  mkdir -p "$dir"
  # At the time limit the run is interrupted as Ctrl-C does: it writes the starts finished so
  # far, and the row says so.
  note=""
  if ! timeout -s INT -k 120 "$limit" "$cli" estimate "$yaml" --starts "$starts" --seed "$seed" \
      --threads "$threads" --no-start-values "${extra[@]}" --out "$dir" >"$dir/stdout" \
      2>"$dir/stderr"; then
    if [ ! -f "$dir/summary.json" ] || ! grep -q '"status": "cancelled"' "$dir/summary.json"; then
      echo "| $id | failed: $(tail -n 1 "$dir/stderr" | cut -c1-200) | | | | | | | | |"
      continue
    fi
    note=" (time limit $limit s: $(grep -c '^start ' "$dir/stderr") of $starts starts finished)"
  fi
  s="$dir/summary.json"
  nominal="$(json "$s" nominal_objective)"
  # Per start from multistart.csv (status column 3, objective 4, gradient evaluations 8):
  # starts within 1e-3 of the nominal objective or below, the status counts; then the median
  # gradient evaluations.
  stats=$(tail -n +2 "$dir/multistart.csv" | awk -F, -v nom="$nominal" '
    { if ($4 + 0 <= nom + 1e-3 && $4 != "inf" && $4 != "nan") ok++; c[$3]++ }
    END { printf "%d %d %d %d %d", ok, c["converged"], c["stalled"], c["max-iterations"],
                 c["failed"] + c["cancelled"] }')
  gradients=$(tail -n +2 "$dir/multistart.csv" | cut -d, -f8 | sort -g |
              awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}')
  read -r ok conv stall maxit failed <<< "$stats"
  met=$(awk -v b="$(json "$s" best_minus_nominal)" 'BEGIN { print (b <= 1e-3 ? "yes" : "**no**") }')
  printf "| %s%s | %.6f | %.6f | %.3g | %s | %s/%s | %s/%s | %s / %s / %s / %s | %.3g | %s | %s %s (%.0f) | %.0f |\n" \
    "$id" "$note" "$(json "$s" best_objective)" "$nominal" "$(json "$s" best_minus_nominal)" \
    "$met" "$(json "$s" successes)" "$(json "$s" starts)" "$ok" "$(json "$s" starts)" \
    "$conv" "$stall" "$maxit" "$failed" "$(json "$s" median_seconds_per_converged_start)" \
    "$gradients" "$(json "$s" global_phase)" "$(json "$s" global_evaluations)" \
    "$(json "$s" global_seconds)" \
    "$(json "$s" wall_seconds)"
done
