#!/usr/bin/env bash
# Builds the sensode CLI (Release, in build-bench-petab/) and times, per problem of the PEtab
# collection in ../shared/petab, the objective alone, the forward gradient and the adjoint
# gradient at the nominal parameters (`sensode gradient --method none|forward|adjoint`, the
# JSON's evaluation_seconds: without loading and compiling the problem), as medians of
# BENCH_SAMPLES runs (default 3). Prints a Markdown table (the one in
# docs/benchmarks/petab.md): states, estimated parameters, conditions, measurements, objective,
# the negative log-likelihood (the objective without priors, which is what the published reference
# is), the published reference (README.md, −llh), the objective's prior term, and the three median
# times. A problem the reader
# refuses or a method that fails shows its error instead.
#
#   scripts/bench-petab.sh                          # all problems
#   scripts/bench-petab.sh Boehm_JProteomeRes2014   # some
#
# Environment: SENSODE_BENCH_BUILD_DIR (default build-bench-petab/), SENSODE_CLI (use this
# binary instead of building), BENCH_SAMPLES, BENCH_TIMEOUT (seconds per run, default 1800),
# SENSODE_SHARED_DIR (default ../shared).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench-petab}"
shared="${SENSODE_SHARED_DIR:-$root/../shared}"
samples="${BENCH_SAMPLES:-3}"
limit="${BENCH_TIMEOUT:-1800}"

cli="${SENSODE_CLI:-}"
if [ -z "$cli" ]; then
  generator=()
  if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSENSODE_BUILD_GUI=OFF >/dev/null
  cmake --build "$build" --target sensode --parallel "$(nproc)" >/dev/null
  cli="$build/core/sensode"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The value of a numeric or string key of a flat JSON object.
json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1; }

# Published −llh of a problem from the README's reference table (empty when not listed).
reference() {
  awk -v id="$1" -F'|' '/^## Reference log-likelihoods/ {t = 1; next} /^## / {t = 0}
    t && $2 ~ "^ *" id " *$" {gsub(/ /, "", $3); printf "%.10g", -$3}' "$shared/petab/README.md"
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR) printf "%.3g", v[int((NR + 1) / 2)]}'; }

problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
  for d in "$shared"/petab/*/; do problems+=("$(basename "$d")"); done
fi

echo "# PEtab collection: objective and gradient times ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), medians of $samples)"
echo
echo "| problem | states | parameters (estimated) | conditions | measurements | −llh | reference (−llh) | prior term | objective s | forward s | adjoint s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for id in "${problems[@]}"; do
  dir="$shared/petab/$id"
  yaml="$dir/$id.yaml"
  [ -f "$yaml" ] || yaml="$dir/problem.yaml"
  [ -f "$yaml" ] || continue
  row="| $id"
  declare -A time=()
  for method in none forward adjoint; do
    : > "$tmp/times"
    err=""
    for ((i = 0; i < samples; i++)); do
      if timeout "$limit" "$cli" gradient "$yaml" --method "$method" --stats "$tmp/s.json" \
          >/dev/null 2>"$tmp/err"; then
        json "$tmp/s.json" evaluation_seconds >> "$tmp/times"
        [ -f "$tmp/info.json" ] || cp "$tmp/s.json" "$tmp/info.json"
      else
        err="$(head -c 120 "$tmp/err" | tr '\n|' '  ')"
        [ -n "$err" ] || err="timeout after ${limit} s"
        break
      fi
    done
    if [ -n "$err" ]; then time[$method]="failed: $err"; else time[$method]="$(median < "$tmp/times")"; fi
    if [ "$method" = none ] && [ -n "$err" ]; then  # does not load: one message, no gradients
      time[forward]="-"
      time[adjoint]="-"
      break
    fi
  done
  if [ -f "$tmp/info.json" ]; then
    i="$tmp/info.json"
    row+=" | $(json "$i" n_states) | $(json "$i" n_parameters) | $(json "$i" n_conditions)"
    row+=" | $(json "$i" n_measurements) | $(printf '%.10g' "$(json "$i" objective_without_priors)")"
    prior="$(printf '%.10g' "$(json "$i" prior_term)")"
    rm -f "$tmp/info.json"
  else
    row+=" | | | | | "
    prior=""
  fi
  ref="$(reference "$id")"
  row+=" | ${ref:--} | ${prior:--} | ${time[none]} | ${time[forward]} | ${time[adjoint]} |"
  echo "$row"
  unset time
done
