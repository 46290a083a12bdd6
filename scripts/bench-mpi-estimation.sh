#!/usr/bin/env bash
# The multistart over MPI ranks (docs/benchmarks/estimation.md, "Multistart over MPI ranks"):
#  1. Boehm_JProteomeRes2014, BENCH_STARTS (12) starts, --seed 1 --no-start-values --threads 1,
#     serially and under `mpirun -n N` for N in BENCH_RANKS (2 4 8; past the cores with
#     --oversubscribe): wall time of each, and every start's objective against the serial run's
#     (largest relative difference; the acceptance is 1e-8).
#  2. Rank 0's dispatch throughput: tests/bench/bench_mpi_dispatch (units that compute nothing,
#     on 2, 3 and 5 ranks) and the decay test problem with BENCH_DISPATCH_STARTS (2000)
#     starts of one iteration each (the least a unit can be), serially and on 2 and 3 ranks:
#     units per second, and the bytes of the plan and of a start's record (what goes over MPI).
# Prints `uptime` first: the machine is shared, and the times mean little without its load.
#
# Environment: SENSODE_CLI (default build/core/sensode), SENSODE_SHARED_DIR, BENCH_OUT (keep
# the results folders there; default a temporary folder).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${SENSODE_CLI:-$root/build/core/sensode}"
shared="${SENSODE_SHARED_DIR:-$root/../shared}"
starts="${BENCH_STARTS:-12}"
read -r -a ranks <<< "${BENCH_RANKS:-2 4 8}"
dispatch_starts="${BENCH_DISPATCH_STARTS:-2000}"
out="${BENCH_OUT:-$(mktemp -d)}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
boehm="$shared/petab/Boehm_JProteomeRes2014/Boehm_JProteomeRes2014.yaml"
decay="$root/tests/data/petab/estimation_decay/problem.yaml"

echo "uptime: $(uptime)"
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$out/last.err" || { cat "$out/last.err" >&2; return 1; }; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

# Largest relative difference of the objectives in two folders' start records.
compare() {
  python3 - "$1" "$2" <<'PY'
import os, sys
def objectives(d):
    out = {}
    for f in os.listdir(os.path.join(d, "starts")):
        if f.startswith("."): continue
        rec = dict(l.split(" ", 1) for l in open(os.path.join(d, "starts", f)).read().splitlines() if " " in l)
        out[int(rec["index"])] = float(rec["objective"])
    return out
a, b = objectives(sys.argv[1]), objectives(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
worst = max(abs(a[i] - b[i]) / max(abs(a[i]), 1e-300) for i in a)
print(f"{len(a)} starts, max relative difference {worst:.3g}, best {min(b.values()):.10g}")
PY
}

args=(--starts "$starts" --seed 1 --no-start-values --threads 1)
echo "## Boehm, $starts starts"
t=$(seconds "$cli" estimate "$boehm" "${args[@]}" --out "$out/boehm-serial")
echo "serial: ${t} s"
for n in "${ranks[@]}"; do
  t=$(seconds mpirun --oversubscribe -n "$n" "$cli" estimate "$boehm" "${args[@]}" --out "$out/boehm-$n")
  echo "mpirun -n $n: ${t} s; $(compare "$out/boehm-serial" "$out/boehm-$n")"
done

echo "## Dispatch: decay, $dispatch_starts starts of one iteration"
dargs=(--starts "$dispatch_starts" --seed 1 --no-start-values --threads 1 --screen 0 --polish 0
       --max-iterations 1 --continue-stalled off)
t=$(seconds "$cli" estimate "$decay" "${dargs[@]}" --out "$out/dispatch-serial")
echo "serial: ${t} s, $(echo "$dispatch_starts / $t" | bc -l | cut -c1-7) units/s"
for n in 2 3; do
  t=$(seconds mpirun --oversubscribe -n "$n" "$cli" estimate "$decay" "${dargs[@]}" --out "$out/dispatch-$n")
  echo "mpirun -n $n: ${t} s, $(echo "$dispatch_starts / $t" | bc -l | cut -c1-7) units/s; $(compare "$out/dispatch-serial" "$out/dispatch-$n")"
done
echo "plan.txt: decay $(wc -c < "$out/dispatch-serial/plan.txt") bytes ($dispatch_starts starts, 2 parameters), Boehm $(wc -c < "$out/boehm-serial/plan.txt") bytes ($starts starts)"
echo "a start's record: decay $(wc -c < "$out/dispatch-serial/starts/000000.txt") bytes, Boehm $(wc -c < "$out/boehm-serial/starts/000000.txt") bytes"
# tests/bench is built on demand; the target exists only in a build with MPI.
if [ -z "${BENCH_DISPATCH:-}" ] && [ -f "$root/build/CMakeCache.txt" ]; then
  cmake --build "$root/build" --target bench_mpi_dispatch >/dev/null 2>&1 || true
fi
bench="${BENCH_DISPATCH:-$root/build/tests/bench/bench_mpi_dispatch}"
if [ -x "$bench" ]; then
  echo "## Dispatch with empty units (bench_mpi_dispatch, 775-byte results)"
  for n in 2 3 5; do mpirun --oversubscribe -n "$n" "$bench" 20000 775 2580 | tail -1; done
fi
echo "results in $out"
