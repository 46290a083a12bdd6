#!/usr/bin/env bash
# Builds everything and runs every test with CTest: unit tests, the SBML Test Suite, the model
# corpus (label corpus) and the fuzz tests (label fuzz), all but the long PEtab collection (label
# petab); then the unit tests once more under ASan
# and UBSan in build-asan/ (scripts/test-sanitizers.sh; SENSODE_TEST_SANITIZERS=0 skips them).
# Measured costs are in docs/benchmarks/corpus.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
build="${SENSODE_BUILD_DIR:-$root/build}"
# The whole PEtab collection (label petab) takes longer than CI allows (docs/benchmarks/petab.md:
# ~20 min for 18 problems on 2 cores); its fast subset runs with the unit tests. Run it with
# `ctest --test-dir build -L petab`.
if ! (cd "$build" && ctest --output-on-failure --parallel "$(nproc)" --timeout 2400 -LE petab); then
  # The failing checks again, last, where a truncated log still shows them.
  echo "== failed checks (from $build/Testing/Temporary/LastTest.log):"
  grep -A1 '^FAIL!' "$build/Testing/Temporary/LastTest.log" | head -40 || true
  exit 1
fi
if [ "${SENSODE_TEST_SANITIZERS:-1}" != 0 ]; then
  "$root/scripts/test-sanitizers.sh"
fi
