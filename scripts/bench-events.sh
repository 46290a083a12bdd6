#!/usr/bin/env bash
# Events benchmark (issue 15): odeSD against CVODES on models with events, side by side in one
# run — the 15 event models of ../shared/biomodels (t = 0–100, the corpus' span) and the SBML
# Test Suite's largest event models (the 10 largest files: the most events; their own
# durations) — through `sensode simulate`:
#   steps, restarts (event times), wall time (median of SENSODE_BENCH_REPEATS runs, default 3;
#   integration only, model loading excluded) and accuracy: the largest error over the outputs,
#   each scaled by its largest |value| over time (at least 1e-10, far above atol), against a
#   tight reference (CVODES at rtol 1e-12, atol 1e-16), at rtol 1e-6 and 1e-8.
# Both integrators evaluate the model with the tape interpreter (SENSODE_NATIVE=0), so the
# comparison does not depend on whether a background compilation finished in time.
# Usage: scripts/bench-events.sh [BUILD_DIR]   (a Release build; default build/;
# SENSODE_SHARED_DIR: another folder with biomodels/ and sbml-test-suite/cases/)
# Writes Markdown to stdout and to $SENSODE_BENCH_OUT (default BUILD_DIR/bench-events.md).
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
cli="$build/core/sensode"
out="${SENSODE_BENCH_OUT:-$build/bench-events.md}"
repeats="${SENSODE_BENCH_REPEATS:-3}"
shared="${SENSODE_SHARED_DIR:-$root/../shared}"
export SENSODE_NATIVE=0
if ! grep -q "CMAKE_BUILD_TYPE:STRING=Release" "$build/CMakeCache.txt" 2> /dev/null; then
  echo "bench-events: $build is not a Release build" >&2
  exit 1
fi
[ -x "$cli" ] || { echo "bench-events: no $cli (cmake --build $build --target sensode)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# json FILE KEY: a number or string field of the CLI's --stats JSON.
json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1; }

# worst REF.csv RUN.csv: max over columns of max_t |run − ref| / max_t |ref|.
worst() {
  paste -d, "$1" "$2" | awk -F, 'NR == 1 { n = NF / 2; next }
    { for (i = 2; i <= n; ++i) { r = $i; d = $(i + n) - r; if (d < 0) d = -d; if (r < 0) r = -r;
        if (d > diff[i]) diff[i] = d; if (r > scale[i]) scale[i] = r } }
    END { w = 0; for (i = 2; i <= n; ++i) { s = scale[i] > 1e-10 ? scale[i] : 1e-10;
            if (diff[i] / s > w) w = diff[i] / s }
          printf "%.1e", w }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# bench NAME MODEL T_END: one table row per rtol.
bench() {
  local name="$1" model="$2" tEnd="$3"
  local common=(simulate "$model" --t-end "$tEnd" --points 101)
  if ! "$cli" "${common[@]}" --method cvodes --rtol 1e-12 --atol 1e-16 --out "$work/ref.csv" \
         --stats "$work/ref.json" > /dev/null 2> "$work/err"; then
    printf "| %s | — | refused or failed: %s |\n" "$name" "$(head -c 150 "$work/err" | tr '\n|' ' /')"
    return
  fi
  local nx events
  nx=$(json "$work/ref.json" n_states)
  events=$(json "$work/ref.json" n_event_times)
  # A model with thousands of event times (suite 00966: 100000) is timed once, not `repeats`
  # times: its runs take seconds each and the table's other rows would wait minutes for them.
  local runs=$repeats
  [ "${events:-0}" -gt 1000 ] && runs=1
  for rtol in 1e-6 1e-8; do
    local row="| $name | $nx | $events | $rtol"
    local steps=() walls=() errs=()
    for method in odesd cvodes; do
      local times=()
      for ((i = 0; i < runs; ++i)); do
        if ! "$cli" "${common[@]}" --method "$method" --rtol "$rtol" --out "$work/run.csv" \
               --stats "$work/run.json" > /dev/null 2> "$work/err"; then
          times=(); break
        fi
        times+=("$(json "$work/run.json" wall_seconds)")
      done
      if [ ${#times[@]} -eq 0 ]; then
        steps+=("fail"); walls+=("—"); errs+=("—")
        continue
      fi
      steps+=("$(json "$work/run.json" steps)")
      walls+=("$(printf "%s\n" "${times[@]}" | median)")
      errs+=("$(worst "$work/ref.csv" "$work/run.csv")")
    done
    local ratio="—"
    if [ "${steps[0]}" != fail ] && [ "${steps[1]}" != fail ]; then
      ratio=$(awk -v a="${walls[0]}" -v b="${walls[1]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
      local sratio
      sratio=$(awk -v a="${steps[0]}" -v b="${steps[1]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
      row="$row | ${steps[0]} | ${steps[1]} | $sratio"
    else
      row="$row | ${steps[0]} | ${steps[1]} | —"
    fi
    row="$row | $(awk -v w="${walls[0]}" 'BEGIN { printf "%.3g", w * 1000 }') | $(awk -v w="${walls[1]}" 'BEGIN { printf "%.3g", w * 1000 }') | $ratio | ${errs[0]} | ${errs[1]} |"
    echo "$row"
  done
}

{
  echo "# bench-events ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), median of $repeats, tape interpreter)"
  echo
  echo "| model | states | event times | rtol | odeSD steps | CVODES steps | steps odeSD/CVODES | odeSD ms | CVODES ms | time odeSD/CVODES | odeSD error | CVODES error |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for f in "$shared"/biomodels/BIOMD*.xml; do
    events=$(grep -c "<event[ >]" "$f")
    [ "$events" -gt 0 ] || continue
    bench "$(basename "$f" .xml)" "$f" 100
  done
  # The suite's largest event models: the largest files among the cases tagged with events
  # (their size is their events: 01466 has 201, 01530–01533 51–106).
  for c in $(grep -l "componentTags:.*Event" "$shared"/sbml-test-suite/cases/*/*-model.m \
               | xargs -n 1 dirname | while read -r d; do
                   x="$d/$(basename "$d")-sbml-l3v2.xml"
                   [ -f "$x" ] && echo "$(stat -c %s "$x") $(basename "$d")"
                 done | sort -k1,1nr -k2,2 | head -n 10 | cut -d' ' -f2); do
    d="$shared/sbml-test-suite/cases/$c"
    bench "suite $c" "$d/$c-sbml-l3v2.xml" "$(awk '/^duration:/ { print $2 }' "$d/$c-settings.txt")"
  done
} | tee "$out"
echo "wrote $out" >&2
