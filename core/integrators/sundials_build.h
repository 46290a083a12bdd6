// SPDX-License-Identifier: MIT
// Which SUNDIALS this process runs: the version, the CVODES library actually loaded, and whether
// it is the optimised build of scripts/install-sundials.sh or Debian's unoptimised package
// (for `sensode --version` and the statistics; benchmarks against CVODES depend on it).
#pragma once

#include <string>

namespace sensode::integrators {

// e.g. "SUNDIALS 6.4.1, /opt/sensode/sundials/lib/libsundials_cvodes.so.6 (optimised: SUNDIALS
// 6.4.1 from Debian's source, C flags -O3 -DNDEBUG -fcommon)".
std::string sundialsBuildDescription();

}  // namespace sensode::integrators
