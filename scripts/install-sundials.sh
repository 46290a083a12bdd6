#!/usr/bin/env bash
# Builds Debian's own SUNDIALS 6.4.1 source package (apt-get source: Debian's patches, its
# configuration — double precision, 64-bit indices, KLU) with optimisation, into
# /opt/sensode/sundials (SENSODE_SUNDIALS_PREFIX to change), which cmake/SensodeDependencies.cmake
# then finds ahead of the system's libsundials-dev. Called by scripts/install-deps.sh.
#
# Why: Debian 12's SUNDIALS is compiled without optimisation. Its debian/rules passes
# -DCMAKE_C_FLAGS=-fcommon to CMake, which replaces dpkg-buildflags' -O2, so every function
# keeps its locals on the stack (objdump -d libsundials_cvodes.so.6: N_VScale_Serial loads and
# stores its loop index through memory) — CVODES, IDAS and KINSOL run 1.5–2× slower than an
# optimised build (docs/benchmarks/performance.md).
#
# Only what Sensode links: CVODES, IDAS, KINSOL (with the serial vector and the generic dense,
# band and sparse matrices and solvers their libraries carry) and the KLU solver. A few minutes
# on 2 cores; idempotent: a finished install of the same version is left alone.
set -euo pipefail
prefix="${SENSODE_SUNDIALS_PREFIX:-/opt/sensode/sundials}"
version="6.4.1"
stamp="$prefix/.sensode-sundials-$version-O3"
if [ -f "$stamp" ]; then
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# apt-get source needs a deb-src entry for bookworm.
if ! grep -rqs "^Types:.*deb-src\|^deb-src " /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "install-sundials: adding a deb-src entry for bookworm (apt-get source)" >&2
  $SUDO tee /etc/apt/sources.list.d/sensode-deb-src.sources >/dev/null <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  $SUDO apt-get update -qq
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "install-sundials: building SUNDIALS $version (-O3) into $prefix" >&2
apt-get source -qq sundials >/dev/null
src="$(find . -maxdepth 1 -type d -name "sundials-$version*" | head -n1)"
if [ -z "$src" ]; then
  echo "install-sundials: apt-get source did not give SUNDIALS $version ($(ls))" >&2
  exit 1
fi
multiarch="$(gcc -print-multiarch)"
cmake -S "$src" -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG" \
  -DCMAKE_C_FLAGS="-fcommon" -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
  -DBUILD_ARKODE=OFF -DBUILD_CVODE=OFF -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=ON \
  -DBUILD_KINSOL=ON -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DSUNDIALS_INDEX_SIZE=64 \
  -DENABLE_KLU=ON -DKLU_INCLUDE_DIR=/usr/include/suitesparse -DKLU_LIBRARY_DIR="/usr/lib/$multiarch" \
  -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_INSTALL=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build build --parallel "$(nproc)" >/dev/null
$SUDO cmake --install build >/dev/null
# The configuration must match what the system headers say (Sensode's sources are written for it).
if ! diff <(grep -E "define SUNDIALS_(INDEX_SIZE|DOUBLE_PRECISION|INT64_T)" \
              /usr/include/sundials/sundials_config.h) \
          <(grep -E "define SUNDIALS_(INDEX_SIZE|DOUBLE_PRECISION|INT64_T)" \
              "$prefix/include/sundials/sundials_config.h") >&2; then
  echo "install-sundials: configuration differs from Debian's sundials_config.h" >&2
  exit 1
fi
echo "SUNDIALS $version from Debian's source, C flags -O3 -DNDEBUG -fcommon" | $SUDO tee "$stamp" >/dev/null
echo "install-sundials: done" >&2
