// SPDX-License-Identifier: MIT
// How far a time course written by `sensode simulate` is from a reference time course of the same
// model on the same output times (the corpus test's accuracy check against CVODES at a tight
// tolerance). A finite-output check alone passes a run that goes on along a wrong solution; this
// check does not.
#pragma once

#include <QtCore/QString>

namespace sensode::test {

struct TrajectoryDistance {
  // max over columns and rows of |value − reference| / (max over rows of |reference| + floor):
  // the error relative to each quantity's range, so a state that stays near 0 does not turn
  // rounding into a large relative error. NaN when the files cannot be compared (`problem`).
  double scaledError = 0;
  QString column;   // where the largest error is
  double time = 0;
  QString problem;  // non-empty when the two files do not have the same header and times
};

TrajectoryDistance compareTrajectories(const QString& csv, const QString& referenceCsv, double floor);

}  // namespace sensode::test
