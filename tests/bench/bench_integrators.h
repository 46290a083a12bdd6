// SPDX-License-Identifier: MIT
// bench_integrators' shared pieces: its settings, a model with its reference solution, and one
// integration of a model by odeSD or CVODES. bench_integrators.cpp times the runs and prints the
// tables; bench_integrators_models.cpp loads the PEtab and SBML Test Suite models.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/integrators/integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/symbolic/compiled_model.h"

#ifndef SENSODE_SHARED_DIR
#define SENSODE_SHARED_DIR "../shared"
#endif

namespace bench_integrators {

namespace fs = std::filesystem;
using sensode::integrators::IntegratorOptions;
using sensode::integrators::IntegratorStats;
using sensode::integrators::LinearSolverKind;
using sensode::integrators::OdeSdOptions;
using sensode::symbolic::CompiledModel;

struct Settings {
  fs::path petabDir = fs::path(SENSODE_SHARED_DIR) / "petab";
  fs::path suiteDir = fs::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases";
  int suiteTop = 5;
  std::vector<double> rtols = {1e-4, 1e-6, 1e-8};
  int samples = 5;
  int points = 0;  // > 0: this many equidistant output times for every PEtab model
  std::string only;
  double atol = 1e-12;
  int newtonIterations = 0;  // > 0: odeSD's OdeSdOptions::maxNewtonIterations
  bool spectralCap = false;  // --stiffness spectral: the z cap on the spectral-radius estimate
  int jacobianReuse = 0;     // > 0: OdeSdOptions::jacobianReuseSteps
  double luRatio = -1;       // >= 0: OdeSdOptions::luReuseRatio
  double newtonTolerance = -1;   // >= 0: OdeSdOptions::newtonTolerance
  int stiffPredictorDegree = 0;   // > 0: OdeSdOptions::stiffPredictorDegree
  double denseTolerance = -1;    // >= 0: OdeSdOptions::denseTolerance
  double iterateTolerance = -1;  // >= 0: OdeSdOptions::iterateTolerance
  std::string profile;  // "odesd" or "cvodes": only run that method (for callgrind)
  int profileRuns = 50;
};

struct BenchModel {
  std::string name;
  std::shared_ptr<const CompiledModel> model;
  std::vector<double> p, x0, times;
  std::vector<std::vector<double>> ref;  // CVODES rtol 1e-12 at `times`
  std::vector<double> floor;             // per state
};

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

struct Run {
  bool ok = true;
  std::string error;
  IntegratorStats stats;
  std::vector<std::vector<double>> x;
};

enum class Solver { OdeSd, Cvodes };

struct Config {
  Solver solver = Solver::OdeSd;
  double rtol = 1e-6, atol = 1e-12;
  LinearSolverKind linear = LinearSolverKind::Auto;
  OdeSdOptions::SparseBackend backend = OdeSdOptions::SparseBackend::Klu;
  int newtonIterations = 0;  // 0 = odeSD's default
  bool spectralCap = false;
  int jacobianReuse = 0;     // 0 = odeSD's default
  double luRatio = -1;       // < 0 = odeSD's default
  double newtonTolerance = -1;   // < 0 = odeSD's default
  int stiffPredictorDegree = 0;   // 0 = odeSD's default
  double denseTolerance = -1;    // < 0 = odeSD's default
  double iterateTolerance = -1;  // < 0 = odeSD's default
};

// One full integration: initialize + advanceTo every output time (the state at each kept when
// `keep`).
Run integrate(const BenchModel& m, const Config& c, bool keep);

// The PEtab models (with their parameters and output times) and the largest SBML Test Suite
// models, each with its CVODES reference at rtol 1e-12 (a model whose reference fails is left
// out with a note in `log`).
std::vector<BenchModel> petabModels(const Settings& s, std::ostream& log);
std::vector<BenchModel> suiteModels(const Settings& s, std::ostream& log);

}  // namespace bench_integrators
