#!/usr/bin/env bash
# Configures and builds Sensode (Release) in build/ after installing what is missing.
#
#   scripts/build.sh [CMAKE_ARGS...]         # everything: core, CLI, GUI, plugins, tests
#   scripts/build.sh --cli [CMAKE_ARGS...]   # the `sensode` CLI and the core only (the main job):
#                                            # no Qt installed, a fifth of the compile steps
#
# A build/ first configured by --cli (GUI and tests off) is switched on by the full build; its
# objects are reused.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli_only=0
if [ "${1:-}" = "--cli" ]; then
  cli_only=1
  shift
fi
build="${SENSODE_BUILD_DIR:-$root/build}"
if [ "$cli_only" = 1 ]; then
  "$root/scripts/install-deps.sh" --cli
else
  "$root/scripts/install-deps.sh"
fi
# After the install: on a fresh machine ninja arrives with it.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

if [ "$cli_only" = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DSENSODE_BUILD_GUI=OFF -DSENSODE_BUILD_TESTS=OFF "$@"
  fi
  cmake --build "$build" --parallel "$(nproc)" --target sensode
  exit 0
fi

# SENSODE_UNIT_TESTS=OFF in the environment: without the unit tests (scripts/test.sh, which runs
# them in the sanitizer build); ON by default.
unit="${SENSODE_UNIT_TESTS:-ON}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSENSODE_UNIT_TESTS="$unit" "$@"
elif grep -qE "^SENSODE_BUILD_(GUI|TESTS):BOOL=OFF" "$build/CMakeCache.txt"; then
  # (-U 'MPI_*': the CLI-only configure ran before install-deps brought OpenMPI; FindMPI keeps
  # its NOTFOUND results in the cache otherwise.)
  cmake -S "$root" -B "$build" -DSENSODE_BUILD_GUI=ON -DSENSODE_BUILD_TESTS=ON \
    -DSENSODE_UNIT_TESTS="$unit" -U 'MPI_*' "$@"
elif ! grep -q "^SENSODE_UNIT_TESTS:BOOL=$unit\$" "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -DSENSODE_UNIT_TESTS="$unit" "$@"
fi
cmake --build "$build" --parallel "$(nproc)"
