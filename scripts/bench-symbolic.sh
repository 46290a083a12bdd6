#!/usr/bin/env bash
# Builds the symbolic-core benchmarks (Release, in build-bench/) and runs them:
#   bench_load  import + ODE building + differentiation + tape compilation per model
#   bench_eval  ns per evaluation of f, J, a, JJ: tapes against the same code compiled as C
# and writes the tables to docs/benchmarks/symbolic.md.
#
#   scripts/bench-symbolic.sh                 # everything (about 7 minutes on 2 cores)
#   BENCH_LOAD_ARGS="--sizes 250,500" BENCH_EVAL_ARGS="--network 250" scripts/bench-symbolic.sh
#
# Environment: SENSODE_BENCH_BUILD_DIR (default build-bench/), SENSODE_BENCH_OUT (default
# docs/benchmarks/symbolic.md), CC and SENSODE_BENCH_CFLAGS (the C reference compiler and flags,
# default cc -O2), BENCH_LOAD_ARGS and BENCH_EVAL_ARGS (extra arguments, see the sources in
# tests/bench/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SENSODE_BENCH_BUILD_DIR:-$root/build-bench}"
out="${SENSODE_BENCH_OUT:-$root/docs/benchmarks/symbolic.md}"
load_args=(${BENCH_LOAD_ARGS:-})
eval_args=(${BENCH_EVAL_ARGS:-})

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target bench_eval bench_load --parallel "$(nproc)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "== bench_load ${load_args[*]}" >&2
"$build/tests/bench/bench_load" "${load_args[@]}" >"$tmp/load.md"
echo "== bench_eval ${eval_args[*]}" >&2
"$build/tests/bench/bench_eval" "${eval_args[@]}" >"$tmp/eval.md"
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"

cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"
cc_version="$("${CC:-cc}" --version 2>/dev/null | head -n1 || true)"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain -- core tests/bench 2>/dev/null || true)" ]; then
  commit="$commit (with uncommitted changes)"
fi
command_line="scripts/bench-symbolic.sh"
[ -n "${BENCH_LOAD_ARGS:-}" ] && command_line="BENCH_LOAD_ARGS=\"$BENCH_LOAD_ARGS\" $command_line"
[ -n "${BENCH_EVAL_ARGS:-}" ] && command_line="BENCH_EVAL_ARGS=\"$BENCH_EVAL_ARGS\" $command_line"

mkdir -p "$(dirname "$out")"
{
  cat <<EOF
# Symbolic core: load time and evaluation speed

Reproduce with \`$command_line\` (Release build in \`build-bench/\`; drivers in
\`tests/bench/\`). Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit $commit on
${cpu:-an unknown CPU} ($(nproc) cores), reference compiler ${cc_version:-cc}; load average
$load_before before and $load_after after the run. The machine may be shared: times are thread
CPU time, so other processes' time slices do not count, but their cache and core sharing do.

## Load time

Import = \`importSbmlFile\` (libSBML parse and consistency checks, conversion to the plain
model); ODE = \`buildOdeSystem\`; derivatives and tapes = the two parts of \`CompiledModel\`
construction: exact J, ∂f/∂p, ẍ, JJ, ∂ẍ/∂p, S0, then fourteen tapes (its CPU time split in the
ratio its wall-clock \`timings()\` report). Native evaluators are on (the default), so the tapes
also include copying the tapes for the background compiler and starting its thread; the
compilation itself runs on that thread and is not load time. Above 1000 species + reactions,
import skips libSBML's general and MathML consistency checks (superlinear in model size; the
importer checks what they would catch in linear time, see \`checkConsistency\` in
\`core/model/sbml_importer.cpp\`), which is why import per species drops between 250 and 500
species. Thread CPU time, the load with the median total of 3. Targets: under 1 s up to 500
species, linear growth.

EOF
  cat "$tmp/load.md"
  cat <<EOF

## Evaluation speed

Nanoseconds per evaluation at the initial state with nominal parameters (thread CPU time,
median of 7 rounds of repetitions, the three evaluators' rounds interleaved). Three evaluators
of the same tapes: **tape** = the interpreter (\`Tape::interpret\`); **C** = the reference,
\`Tape::emitCScratch\` output compiled by the benchmark with \`cc -O2 -ffp-contract=off -shared
-fPIC\` and called directly; **native** = what a user gets, \`Tape::evaluate\` after the
model's own background compilation (\`core/symbolic/native_compiler.h\`: all fourteen tapes, same
flags, into a fresh cache directory so the compile is real) has switched the tapes over.
"mismatches" counts outputs of C and native that are not bit-identical to the tape (0 expected:
the emitted C performs the tape's operations in the tape's order). "native compile" is the wall
time of the background job (emission, \`cc\`, dlopen) for all tapes; models above 200000 tape
instructions are not compiled (\`SENSODE_NATIVE_MAX_INSTRUCTIONS\`) and show "–". Targets: tape
within 3× of C (missed: the interpreter is kept as the fallback and reported); native within 3×.

EOF
  cat "$tmp/eval.md"
} >"$out"
echo "wrote $out" >&2
