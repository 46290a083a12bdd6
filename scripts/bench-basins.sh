#!/usr/bin/env bash
# How many starts reach each problem's published optimum, and what that costs here and on 64 MPI
# ranks (issue 28; docs/benchmarks/estimation.md, "Starts to the published optimum").
#
#   scripts/bench-basins.sh Boehm_JProteomeRes2014:100 Elowitz_Nature2000:500 ...
#
# Per PROBLEM:STARTS, one `sensode estimate --starts STARTS --seed 1 --no-start-values` through
# scripts/bench-estimation.sh (same environment: SENSODE_CLI, BENCH_THREADS, BENCH_TIMEOUT,
# BENCH_ARGS), kept in BENCH_OUT/PROBLEM-STARTS, then one Markdown row from its multistart.csv and
# summary.json:
#   hits       starts that end at or below the nominal (published) objective + 1e-3;
#   first      the smallest start id among them (ids are in the screen's order: #0 is the
#              best-screened point), i.e. the starts a run of this size needed;
#   p          hits / the starts that finished (all STARTS unless BENCH_TIMEOUT stopped the run),
#              the measured basin rate (0 hits: the 95 % upper bound 3/starts);
#   starts 95% the starts that contain a hit with probability 0.95 at rate p,
#              ⌈ln 0.05 / ln(1 − p)⌉ (with 0 hits: at least that at p = 3/STARTS);
#   wall here  the run's wall time on BENCH_THREADS threads;
#   64 ranks   projected: the screen's CPU spread over 63 workers, plus the makespan of the
#              measured start times handed in id order to the first free of 63 workers (what rank
#              0's dynamic dispatch does), plus what stayed serial here (the run's wall time less
#              the screen and the starts' makespan on BENCH_THREADS workers: the nominal point,
#              the polish, the statistics, the writing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${BENCH_OUT:-$root/build-bench-basins}"
threads="${BENCH_THREADS:-$(nproc)}"
mkdir -p "$out"

json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1; }

echo "# Starts to the published optimum ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $threads threads, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| problem | starts run | best − nominal | hits (≤ nominal + 1e-3) | first hit (start id) | p per start | starts for 95 % | wall here (s) | projected on 64 ranks (s) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for spec in "$@"; do
  problem="${spec%%:*}"
  starts="${spec##*:}"
  dir="$out/$problem-$starts"
  if [ ! -f "$dir/$problem/summary.json" ]; then
    mkdir -p "$dir"
    BENCH_STARTS="$starts" BENCH_OUT="$dir" BENCH_THREADS="$threads" \
      "$root/scripts/bench-estimation.sh" "$problem" > "$dir/row.md" || true
  fi
  summary="$dir/$problem/summary.json"
  csv="$dir/$problem/multistart.csv"
  if [ ! -f "$summary" ] || [ ! -f "$csv" ]; then
    echo "| $problem | $starts | (no result: see $dir) | | | | | | |"
    continue
  fi
  nominal="$(json "$summary" nominal_objective)"
  best_minus="$(json "$summary" best_minus_nominal)"
  wall="$(json "$summary" wall_seconds)"
  screen="$(json "$summary" global_seconds)"
  # Columns: rank,start,status,objective,...,seconds (9th).
  awk -F, -v nominal="$nominal" -v starts="$starts" -v threads="$threads" -v wall="$wall" \
      -v screen="${screen:-0}" -v problem="$problem" -v bm="$best_minus" '
    NR == 1 { next }
    { id = $2 + 0; obj[id] = $4 + 0; sec[id] = $9 + 0; if (id > maxid) maxid = id; n++ }
    # Start ids in order, each to the worker that is free first.
    function makespan(workers,    i, w, best, m) {
      for (w = 0; w < workers; w++) free_at[w] = 0
      for (i = 0; i <= maxid; i++) {
        if (!(i in sec)) continue
        best = 0
        for (w = 1; w < workers; w++) if (free_at[w] < free_at[best]) best = w
        free_at[best] += sec[i]
      }
      m = 0
      for (w = 0; w < workers; w++) if (free_at[w] > m) m = free_at[w]
      return m
    }
    END {
      hits = 0; first = -1
      for (i = 0; i <= maxid; i++)
        if ((i in obj) && obj[i] <= nominal + 1e-3) { hits++; if (first < 0) first = i }
      # The starts that finished (fewer than asked when BENCH_TIMEOUT stopped the run).
      p = hits / n
      runtext = (n < starts) ? sprintf("%d of %d (time limit)", n, starts) : sprintf("%d", n)
      if (hits > 0) {
        need = (p >= 1) ? 1 : log(0.05) / log(1 - p)
        need = (need == int(need)) ? need : int(need) + 1
        ptext = sprintf("%.3g", p); needtext = need
      } else {
        pu = 3 / n
        need = log(0.05) / log(1 - pu); need = int(need) + 1
        ptext = sprintf("< %.3g", pu); needtext = sprintf("> %d", need)
      }
      serial = wall - screen - makespan(threads)
      if (serial < 0) serial = 0
      t64 = screen * threads / 63 + makespan(63) + serial
      printf "| %s | %s | %.3g | %d | %s | %s | %s | %.1f | %.1f |\n", problem, runtext, bm, hits,
             (first >= 0 ? "#" first : "—"), ptext, needtext, wall, t64
    }' "$csv"
done
