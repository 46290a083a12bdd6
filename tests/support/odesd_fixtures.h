// SPDX-License-Identifier: MIT
// Fixtures shared by the odeSD tests (tst_odesd_integrator, tst_odesd_sensitivities): the
// NUMERICS.md §11 catalogue of hand-built models with reference values, tolerances, runs of odeSD
// and CVODES, and error measures. Each test executable includes it once.
#pragma once

#include <QtTest/QtTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/common/progress.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/integrator.h"
#include "core/integrators/odesd_coefficients.h"
#include "core/integrators/odesd_integrator.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"
#include "support/hand_built_models.h"
#include "support/numeric_compare.h"

using namespace sensode;
using namespace sensode::testing;
using sensode::integrators::IntegratorOptions;
using sensode::integrators::IntegratorStats;
using sensode::integrators::LinearSolverKind;
using sensode::integrators::OdeSdIntegrator;
using sensode::integrators::OdeSdOptions;
using sensode::symbolic::Expr;
using Model = std::shared_ptr<const symbolic::CompiledModel>;
using sensode::test::keepWorst;

namespace {


// ---- the NUMERICS.md §11 catalogue ----

struct Reference {
  const char* name;
  Model (*make)();
  double T;
  std::vector<double> x;
};

inline std::vector<Reference> catalogue() {
  return {
      {"Michaelis-Menten", &michaelisMentenModel, 10,
       {4.1636668606e-2, 1.4136928979e-1, 5.8363331394e-2, 8.0026737881e-1}},
      {"Robertson", &robertsonModel, 40, {7.1582706872e-1, 9.1855347646e-6, 2.8416374575e-1}},
      {"repressilator", &repressilatorModel, 50,
       {1.2301285264, 38.342340321, 13.435302032, 1.3422117400, 31.147354469, 16.616318254}},
      {"Linear2", &linear2Model, 10, {4.5445375138e-8, 4.5399929762e-5}},
      {"Chua", &chuaModel, 10, {-1.4006335318, -1.0227516857e-2, 1.1936968796}},
  };
}

inline IntegratorOptions tolerances(double rtol, double atol = 1e-12,
                             LinearSolverKind solver = LinearSolverKind::Auto) {
  IntegratorOptions o;
  o.rtol = rtol;
  o.atol = atol;
  o.linearSolver = solver;
  return o;
}

struct Run {
  std::vector<std::vector<double>> x;  // one row per output time
  IntegratorStats stats;
};

inline Run runOdeSd(const Model& model, const IntegratorOptions& options, const std::vector<double>& times,
             const OdeSdOptions& sd = {}, double stopTime = -1) {
  OdeSdIntegrator integrator;
  integrator.setOdeSdOptions(sd);
  const std::vector<double> p = model->nominalParameters();
  std::vector<double> x(static_cast<std::size_t>(model->nx()));
  model->initialState(0.0, p.data(), x.data());
  integrator.initialize(model, options, 0.0, x, p);
  if (stopTime > 0) integrator.setStopTime(stopTime);
  Run r;
  for (double t : times) {
    integrator.advanceTo(t, x, {});
    r.x.push_back(x);
  }
  r.stats = integrator.stats();
  return r;
}

inline std::vector<std::vector<double>> runCvodes(const Model& model, const IntegratorOptions& options,
                                           const std::vector<double>& times,
                                           IntegratorStats* stats = nullptr) {
  integrators::CvodesIntegrator integrator;
  const std::vector<double> p = model->nominalParameters();
  std::vector<double> x(static_cast<std::size_t>(model->nx()));
  model->initialState(0.0, p.data(), x.data());
  integrator.initialize(model, options, 0.0, x, p);
  std::vector<std::vector<double>> out;
  for (double t : times) {
    integrator.advanceTo(t, x, {});
    out.push_back(x);
  }
  if (stats) *stats = integrator.stats();
  return out;
}

struct CvodesIntegratorRun {
  std::vector<double> x;
  long steps = 0;
};
inline CvodesIntegratorRun cvodesStats(const Model& model, const IntegratorOptions& options, double T) {
  IntegratorStats s;
  CvodesIntegratorRun r;
  r.x = runCvodes(model, options, {T}, &s)[0];
  r.steps = s.steps;
  return r;
}

// max_i |x_i − ref_i| / (rtol |ref_i| + atol)
inline double weightedError(const std::vector<double>& x, const std::vector<double>& ref, double rtol,
                     double atol) {
  double e = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    keepWorst(e, std::abs(x[i] - ref[i]) / (rtol * std::abs(ref[i]) + atol));
  }
  return e;
}

// Max relative error over components with |ref| > floor (NUMERICS.md §6's measure).
inline double maxRelativeError(const std::vector<double>& x, const std::vector<double>& ref,
                        double floor = 1e-12) {
  double e = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (std::abs(ref[i]) > floor) keepWorst(e, std::abs(x[i] - ref[i]) / std::abs(ref[i]));
  }
  return e;
}

// Fixed steps of size h: Newton solved to round-off (the tolerances only weight its norm).
inline OdeSdOptions fixedStepOptions(double h) {
  OdeSdOptions sd;
  sd.fixedStepSize = h;
  sd.maxNewtonIterations = 30;
  return sd;
}
inline IntegratorOptions fixedStepNewtonTolerances() { return tolerances(1e-13, 1e-15); }

// Fixed-step odeSD from 0 to T in N steps (the last one lands on T).
inline std::vector<double> fixedSteps(const Model& model, double T, int N) {
  return runOdeSd(model, fixedStepNewtonTolerances(), {T}, fixedStepOptions(T / N), T).x[0];
}

}  // namespace
