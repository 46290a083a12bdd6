// SPDX-License-Identifier: MIT
// The QtTest data rows of the PEtab gradient tests against closed forms: every gradient method
// (and odeSD as the forward integrator), each with its tolerance relative to the gradient's
// largest entry. Columns: method (int of GradientMethod), odesd (bool), rtol (double).
#pragma once

#include <QtTest/QtTest>

#include "core/petab/objective.h"

namespace sensode::test {

// withAll = false: only the time-course methods (forward with CVODES and odeSD, adjoint), for
// points where the objective has a kink that ssASA's equilibration or finite differences cross.
inline void gradientMethodRows(bool withAll = true) {
  using sensode::petab::GradientMethod;
  QTest::addColumn<int>("method");
  QTest::addColumn<bool>("odesd");
  QTest::addColumn<double>("rtol");
  QTest::newRow("forward CVODES") << static_cast<int>(GradientMethod::Forward) << false << 1e-6;
  QTest::newRow("forward odeSD") << static_cast<int>(GradientMethod::Forward) << true << 1e-6;
  QTest::newRow("adjoint") << static_cast<int>(GradientMethod::Adjoint) << false << 1e-6;
  if (!withAll) return;
  QTest::newRow("ssasa") << static_cast<int>(GradientMethod::Ssasa) << false << 1e-6;
  QTest::newRow("fd") << static_cast<int>(GradientMethod::FiniteDifferences) << false << 1e-4;
}

}  // namespace sensode::test
