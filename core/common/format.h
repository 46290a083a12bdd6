// SPDX-License-Identifier: MIT
// Numbers in messages and summaries: %g, six significant digits ("1e-09", "13.1032").
#pragma once

#include <cstdio>
#include <string>

namespace sensode {

inline std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// %.*g with `precision` significant digits: 17 for times that must round-trip.
inline std::string preciseNumber(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

}  // namespace sensode
