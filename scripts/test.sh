#!/usr/bin/env bash
# Builds everything (the benchmark drivers too) and runs every test with CTest: the SBML Test Suite, the model corpus (label
# corpus), the fuzz tests (label fuzz) and the GUI tests (label gui) in the Release build, all but
# the long PEtab collection (label petab); then the unit tests (label unit) in a second build
# under ASan and UBSan (build-asan/, scripts/test-sanitizers.sh). The unit tests run once, there:
# the Release build is configured without them (SENSODE_UNIT_TESTS=OFF). With
# SENSODE_TEST_SANITIZERS=0 there is no sanitizer build, and the unit tests are built and run in
# the Release build instead. Measured costs are in docs/benchmarks/corpus.md and
# docs/benchmarks/clean-start.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizers="${SENSODE_TEST_SANITIZERS:-1}"
if [ "$sanitizers" != 0 ]; then
  SENSODE_UNIT_TESTS=OFF "$root/scripts/build.sh"
  skip='petab|unit'
else
  SENSODE_UNIT_TESTS=ON "$root/scripts/build.sh"
  skip='petab'
fi
build="${SENSODE_BUILD_DIR:-$root/build}"
# The benchmark drivers (tests/bench) are not tests, but a change that breaks their build must not
# land unseen: compiled here, not run (about 45 s on 2 cores without ccache).
cmake --build "$build" --target benchmarks
# The whole PEtab collection (label petab) takes longer than CI allows (docs/benchmarks/petab.md:
# ~20 min for 18 problems on 2 cores); its fast subset runs with the unit tests. Run it with
# `ctest --test-dir build -L petab`.
if ! (cd "$build" && ctest --output-on-failure --parallel "$(nproc)" --timeout 2400 -LE "$skip"); then
  # The failing checks again, last, where a truncated log still shows them.
  echo "== failed checks (from $build/Testing/Temporary/LastTest.log):"
  grep -A1 '^FAIL!' "$build/Testing/Temporary/LastTest.log" | head -40 || true
  exit 1
fi
if [ "$sanitizers" != 0 ]; then
  "$root/scripts/test-sanitizers.sh"
fi
