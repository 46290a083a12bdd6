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
# band and sparse matrices and solvers their libraries carry; SUNDIALS 6.4's CMake has no switch
# for the generic iterative solvers, which CVODES's own library compiles in) and the KLU solver;
# no ManyVector, no examples, no Fortran. About 20 s of CPU (65 C files); idempotent: a finished
# install of the same version is left alone. Needs no libsundials-dev: the configuration check
# at the end compares with the configuration Sensode is written for (double precision, 64-bit
# indices), which is Debian's.
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
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src" -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG" \
  -DCMAKE_C_FLAGS="-fcommon" -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
  -DBUILD_ARKODE=OFF -DBUILD_CVODE=OFF -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=ON \
  -DBUILD_KINSOL=ON -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DSUNDIALS_INDEX_SIZE=64 \
  -DSUNDIALS_PRECISION=DOUBLE -DBUILD_NVECTOR_MANYVECTOR=OFF -DBUILD_BENCHMARKS=OFF \
  -DENABLE_KLU=ON -DKLU_INCLUDE_DIR=/usr/include/suitesparse -DKLU_LIBRARY_DIR="/usr/lib/$multiarch" \
  -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_INSTALL=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build build --parallel "$(nproc)" >/dev/null
# The configuration must be the one Sensode's sources are written for (and Debian's
# libsundials-dev has): double precision, 64-bit indices, KLU.
config="build/include/sundials/sundials_config.h"
for define in SUNDIALS_DOUBLE_PRECISION SUNDIALS_INT64_T SUNDIALS_SUNLINSOL_KLU; do
  if ! grep -q "^#define $define 1" "$config"; then
    echo "install-sundials: $config lacks '#define $define 1' (double precision, 64-bit indices and KLU expected)" >&2
    exit 1
  fi
done
$SUDO cmake --install build >/dev/null
echo "SUNDIALS $version from Debian's source, C flags -O3 -DNDEBUG -fcommon" | $SUDO tee "$stamp" >/dev/null
echo "install-sundials: done" >&2
