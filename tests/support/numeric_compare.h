// SPDX-License-Identifier: MIT
// One rule for numeric comparisons in tests: |actual − expected| ≤ atol + rtol·|expected|
// (the SBML Test Suite rule). On failure the message names the quantity, the index, both values
// and how far outside the tolerance it is. Never compare doubles with bare QCOMPARE.
#pragma once

#include <QtTest/QtTest>

#include <cmath>
#include <string>

namespace sensode::test {

inline bool withinTolerance(double actual, double expected, double atol, double rtol) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::abs(actual - expected) <= atol + rtol * std::abs(expected);
}

inline std::string closeMessage(double actual, double expected, double atol, double rtol,
                                const std::string& what, long index) {
  const double tol = atol + rtol * std::abs(expected);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s[%ld]: actual %.17g, expected %.17g, |diff| %.3g = %.3g x tolerance "
                "(atol %.3g, rtol %.3g)",
                what.c_str(), index, actual, expected, std::abs(actual - expected),
                tol > 0 ? std::abs(actual - expected) / tol : INFINITY, atol, rtol);
  return buf;
}

// worst = max(worst, e) for error accumulators, except that a NaN wins and stays: std::max skips
// a NaN in its second argument, so a non-finite result would pass as "no error".
inline void keepWorst(double& worst, double e) {
  if (!(e <= worst) && !std::isnan(worst)) worst = e;
}

}  // namespace sensode::test

// QVERIFY2 wrapper so failures report at the caller's line.
#define SENSODE_EXPECT_CLOSE(actual, expected, atol, rtol, what, index)                        \
  do {                                                                                        \
    const double a_ = (actual), e_ = (expected);                                              \
    QVERIFY2(::sensode::test::withinTolerance(a_, e_, (atol), (rtol)),                        \
             ::sensode::test::closeMessage(a_, e_, (atol), (rtol), (what), (index)).c_str()); \
  } while (0)
