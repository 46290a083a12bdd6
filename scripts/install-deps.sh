#!/usr/bin/env bash
# Installs the Debian 12 packages Sensode builds against, only those that are missing, then an
# optimised SUNDIALS built from Debian's own source (scripts/install-sundials.sh; Debian's
# libsundials-dev is compiled without optimisation).
#
#   scripts/install-deps.sh         # everything: core, CLI (with MPI), Qt GUI, plugins and tests
#   scripts/install-deps.sh --cli   # only what the core and the `sensode` CLI need (the main job,
#                                   # scripts/run-example.sh): no Qt, no MPI
#
# Idempotent: a second run installs nothing and takes a second.
set -euo pipefail

# The core and the CLI.
cli_packages=(
  build-essential cmake ninja-build pkg-config
  ccache                # compiler cache: a second build (another checkout, a pull) is quick
  libsbml5-dev          # SBML import (with the comp flattening converter)
  libeigen3-dev         # dense and sparse linear algebra
  libsuitesparse-dev    # KLU, for SUNDIALS' sparse direct solver
  libyaml-cpp-dev       # PEtab problem files
  libnlopt-dev          # parameter estimation: bounded L-BFGS
  libtcc-dev            # in-memory C compiler: native evaluation from a model's first call
  libssl-dev            # libcrypto's SHA-256: the compiled-model cache checks its entries
)
# Not libsundials-dev: install-sundials.sh builds SUNDIALS from Debian's source, and the binary
# package would pull in MPI, PETSc, hypre and gfortran (about 1 GB) that Sensode never uses.

# The GUI host, the task plugins, the Qt Test executables and MPI (optional for the CLI).
full_packages=(
  libopenmpi-dev openmpi-bin  # mpirun sensode estimate: the multistart over MPI ranks
  qt6-base-dev          # Qt Widgets, Qt Test
  qt6-charts-dev
  qt6-svg-dev           # Debian 12's name for the Qt 6 SVG module's dev files
  libgl-dev             # Qt6Gui's CMake config requires OpenGL headers
  libqt6opengl6-dev     # Qt6Charts' CMake config requires Qt6OpenGL
  fonts-dejavu-core     # text in offscreen GUI tests and screenshots
)

packages=("${cli_packages[@]}")
case "${1:-}" in
  --cli) ;;
  "") packages+=("${full_packages[@]}") ;;
  *) echo "install-deps: unknown argument '$1' (expected --cli or nothing)" >&2; exit 1 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$(dirname "${BASH_SOURCE[0]}")/install-sundials.sh"
