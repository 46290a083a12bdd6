#!/usr/bin/env bash
# Builds bench_integrators (Release, in build-bench-int/) and runs odeSD against CVODES on the
# PEtab models and the largest SBML Test Suite models (tests/bench/bench_integrators.cpp):
#   1. output times = each PEtab problem's measurement times (the tables of
#      docs/benchmarks/integrators.md)
#   2. 101 equidistant output times per PEtab model (the cost of odeSD's dense output)
# and writes both reports, as Markdown, to build-bench-int/bench-integrators.md (and stdout).
#
#   scripts/bench-integrators.sh                       # a few minutes
#   BENCH_ARGS="--samples 9 --rtols 1e-6" scripts/bench-integrators.sh
#
# Environment: SENSODE_BENCH_BUILD_DIR (default build-bench-int/), SENSODE_BENCH_OUT (default
# <build>/bench-integrators.md), BENCH_ARGS (extra arguments, see the source).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench-int}"
out="${SENSODE_BENCH_OUT:-$build/bench-integrators.md}"
args=(${BENCH_ARGS:-})

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSENSODE_BUILD_GUI=OFF >/dev/null
cmake --build "$build" --target bench_integrators --parallel "$(nproc)"

bench="$build/tests/bench/bench_integrators"
{
  echo "# bench_integrators ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
  echo
  echo "# 1. Output times: the PEtab measurement times"
  echo
  "$bench" "${args[@]}"
  echo
  echo "# 2. Output times: 101 equidistant points per PEtab model"
  echo
  "$bench" --points 101 --suite-top 0 "${args[@]}"
} | tee "$out"
echo "wrote $out" >&2
