#!/usr/bin/env bash
# Builds bench_sensitivities (Release, in build-bench-sens/) and runs the five sensitivity methods
# (odeSD direct, CVODES forward (module and augmented), PBSR, Exp, finite differences) side by
# side on the PEtab models and the largest SBML Test Suite models
# (tests/bench/bench_sensitivities.cpp). The Markdown report goes to
# build-bench-sens/bench-sensitivities.md (and stdout); with --write-doc it also
# replaces the generated section of docs/benchmarks/sensitivities.md (between the
# "BEGIN GENERATED" and "END GENERATED" markers; the prose around them is kept).
#
# SENSODE_BENCH_SUNDIALS=o2 runs the same binary on SUNDIALS built with -O2
# (scripts/build-sundials-o2.sh; Debian's is built without optimisation) through
# LD_LIBRARY_PATH: the CVODES baseline as an optimised build runs it. Its report goes to
# bench-sensitivities-o2.md and, with --write-doc, between the "BEGIN GENERATED O2" and
# "END GENERATED O2" markers.
#
#   scripts/bench-sensitivities.sh                 # ~10 minutes on 2 cores
#   scripts/bench-sensitivities.sh --write-doc
#   SENSODE_BENCH_SUNDIALS=o2 scripts/bench-sensitivities.sh --write-doc
#   BENCH_ARGS="--samples 9 --only Boehm" scripts/bench-sensitivities.sh
#
# Environment: SENSODE_BENCH_BUILD_DIR (default build-bench-sens/), SENSODE_BENCH_SUNDIALS
# (debian or o2), BENCH_ARGS (extra arguments: --samples N, --only SUBSTRING,
# --methods odesd,cvodes,cvodes-aug,pbsr,exp,fd, --suite-top K, --rtol R,
# --handover staggered|simultaneous|augmented, --trajectory cvodes|odesd (the state integrator
# of pbsr/exp), --native-timeout S).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench-sens}"
out="$build/bench-sensitivities.md"
doc="$root/docs/benchmarks/sensitivities.md"
sundials="${SENSODE_BENCH_SUNDIALS:-debian}"
marker="GENERATED"
runner=()
case "$sundials" in
  debian) ;;
  o2)
    prefix="$("$root/scripts/build-sundials-o2.sh")"
    runner=(env "LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    out="$build/bench-sensitivities-o2.md"
    marker="GENERATED O2"
    ;;
  *) echo "SENSODE_BENCH_SUNDIALS must be debian or o2, not $sundials" >&2; exit 2 ;;
esac
args=(${BENCH_ARGS:-})
write_doc=0
[ "${1:-}" = "--write-doc" ] && write_doc=1

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSENSODE_BUILD_GUI=OFF >/dev/null
cmake --build "$build" --target bench_sensitivities --parallel "$(nproc)"

{
  echo "Run $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo '?')), load average at start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); SUNDIALS: $sundials; reproduce with \`SENSODE_BENCH_SUNDIALS=$sundials scripts/bench-sensitivities.sh\`."
  echo
  "${runner[@]}" "$build/tests/bench/bench_sensitivities" "${args[@]}"
} | tee "$out"
echo "wrote $out" >&2

if [ "$write_doc" = 1 ]; then
  if ! grep -q "<!-- BEGIN $marker by" "$doc" 2>/dev/null; then
    echo "$doc has no <!-- BEGIN $marker by ... / <!-- END $marker --> markers" >&2
    exit 1
  fi
  tmp="$(mktemp)"
  # Whole-marker prefixes, so that "GENERATED" does not match "GENERATED O2".
  awk -v report="$out" -v begin="<!-- BEGIN $marker by" -v end="<!-- END $marker -->" '
    index($0, begin) == 1 { print; while ((getline line < report) > 0) print line; skip = 1; next }
    index($0, end) == 1 { skip = 0 }
    !skip { print }
  ' "$doc" > "$tmp"
  mv "$tmp" "$doc"
  echo "updated $doc" >&2
fi
