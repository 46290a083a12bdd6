#!/usr/bin/env bash
# The unit tests (CTest label unit) under AddressSanitizer and UndefinedBehaviorSanitizer: a second
# build directory (build-asan; core, the CLI and the unit tests only, no GUI) compiled with
# -DSENSODE_SANITIZE=address,undefined (-O1 -g1 -fno-omit-frame-pointer), where the first finding
# stops the test with its stack. Extra arguments go to the first cmake configure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
build="${SENSODE_ASAN_BUILD_DIR:-$root/build-asan}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DSENSODE_SANITIZE=address,undefined -DSENSODE_BUILD_GUI=OFF "$@"
fi
cmake --build "$build" --parallel "$(nproc)" --target unit_tests
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
cd "$build"
ctest -L unit --output-on-failure --parallel "$(nproc)" --timeout 2400
