#!/usr/bin/env bash
# Builds the same SUNDIALS as Debian's libsundials-dev (6.4.1+dfsg1, Debian's source and patches'
# configuration: double precision, 64-bit indices, KLU) but with -O2, for benchmark baselines only.
#
# Why: Debian 12's SUNDIALS is compiled without optimisation. Its debian/rules passes
# -DCMAKE_C_FLAGS=-fcommon to CMake, which replaces the -O2 of dpkg-buildflags, so every
# function keeps its locals on the stack (objdump -d libsundials_cvodes.so.6: N_VScale_Serial
# loads and stores its loop index through memory). Sensode links the Debian package as it is;
# CVODES as AMICI or libRoadRunner users run it is an optimised build, and the benchmarks' ratios
# to CVODES should be read against both. The libraries built here have the Debian sonames, so
# a benchmark binary runs on them unchanged with LD_LIBRARY_PATH=<prefix>/lib.
#
#   scripts/build-sundials-o2.sh            # prints the prefix; idempotent (reuses a finished build)
#   SENSODE_SUNDIALS_O2_DIR=/path scripts/build-sundials-o2.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SENSODE_SUNDIALS_O2_DIR:-$root/build-sundials-O2}"
prefix="$dir/install"
version="6.4.1+dfsg1"

if [ -f "$prefix/lib/libsundials_cvodes.so.6" ]; then
  echo "$prefix"
  exit 0
fi
mkdir -p "$dir"
cd "$dir"
tarball="sundials_${version}.orig.tar.xz"
if [ ! -f "$tarball" ]; then
  if ! command -v curl >/dev/null; then
    echo "build-sundials-o2.sh: needs curl to fetch Debian's source (apt-get install curl)" >&2
    exit 1
  fi
  curl -sSfLO "http://deb.debian.org/debian/pool/main/s/sundials/$tarball" >&2
fi
rm -rf src && mkdir src && tar -xJf "$tarball" -C src --strip-components=1
# Only CVODES (its library also holds the serial vector, dense matrix and dense/band solvers)
# and the KLU solver with its sparse matrix: what Sensode links.
cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O2 -fcommon" \
  -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DBUILD_ARKODE=OFF -DBUILD_CVODE=OFF \
  -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=OFF -DBUILD_KINSOL=OFF \
  -DENABLE_KLU=ON -DKLU_INCLUDE_DIR=/usr/include/suitesparse \
  -DKLU_LIBRARY_DIR="/usr/lib/$(gcc -print-multiarch)" \
  -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_INSTALL=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >&2
cmake --build build --parallel "$(nproc)" >&2
cmake --install build >&2
# The configuration must match the headers Sensode was compiled against.
if ! diff <(grep -E "define SUNDIALS_(INDEX_SIZE|DOUBLE_PRECISION|INT64_T)" \
              /usr/include/sundials/sundials_config.h) \
          <(grep -E "define SUNDIALS_(INDEX_SIZE|DOUBLE_PRECISION|INT64_T)" \
              "$prefix/include/sundials/sundials_config.h") >&2; then
  echo "build-sundials-o2.sh: configuration differs from Debian's sundials_config.h" >&2
  exit 1
fi
echo "$prefix"
