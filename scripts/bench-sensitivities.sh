#!/usr/bin/env bash
# Builds bench_sensitivities (Release, in build-bench-sens/) and runs the five sensitivity methods
# (odeSD direct, CVODES forward (module and augmented), PBSR, Exp, finite differences) side by
# side on the PEtab models and the largest SBML Test Suite models
# (tests/bench/bench_sensitivities.cpp). The Markdown report goes to
# build-bench-sens/bench-sensitivities.md (and stdout); with --write-doc it also
# replaces the generated section of docs/benchmarks/sensitivities.md (between the
# "BEGIN GENERATED" and "END GENERATED" markers; the prose around them is kept).
#
#   scripts/bench-sensitivities.sh                 # ~5 minutes on 2 cores
#   scripts/bench-sensitivities.sh --write-doc
#   BENCH_ARGS="--samples 9 --only Boehm" scripts/bench-sensitivities.sh
#
# Environment: SENSODE_BENCH_BUILD_DIR (default build-bench-sens/), BENCH_ARGS (extra arguments:
# --samples N, --only SUBSTRING, --methods odesd,cvodes,cvodes-aug,pbsr,exp,fd, --suite-top K,
# --rtol R, --handover staggered|simultaneous|augmented).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench-sens}"
out="$build/bench-sensitivities.md"
doc="$root/docs/benchmarks/sensitivities.md"
args=(${BENCH_ARGS:-})
write_doc=0
[ "${1:-}" = "--write-doc" ] && write_doc=1

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSENSODE_BUILD_GUI=OFF >/dev/null
cmake --build "$build" --target bench_sensitivities --parallel "$(nproc)"

{
  echo "Run $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo '?')), load average at start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); reproduce with \`scripts/bench-sensitivities.sh\`."
  echo
  "$build/tests/bench/bench_sensitivities" "${args[@]}"
} | tee "$out"
echo "wrote $out" >&2

if [ "$write_doc" = 1 ]; then
  if ! grep -q "BEGIN GENERATED" "$doc" 2>/dev/null; then
    echo "$doc has no BEGIN GENERATED / END GENERATED markers" >&2
    exit 1
  fi
  tmp="$(mktemp)"
  awk -v report="$out" '
    /<!-- BEGIN GENERATED/ { print; while ((getline line < report) > 0) print line; skip = 1; next }
    /<!-- END GENERATED/ { skip = 0 }
    !skip { print }
  ' "$doc" > "$tmp"
  mv "$tmp" "$doc"
  echo "updated $doc" >&2
fi
