// SPDX-License-Identifier: MIT
// The multistart's work units and their results as plain data with one text form, shared by
// the threads, the MPI ranks (mpi/mpi_executor.h: a unit travels as its index, its result as
// this text) and the run store (run_store.h: one record per finished unit, the plan beside
// them). A unit is identified by its start index alone: every rank holds the same StartPlan.
//
// The text form is line oriented, `key value`, numbers printed with %.17g so that a value read
// back is the double that was written (resume and MPI results equal the in-process ones bit for
// bit); a message is one line (line breaks become spaces).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/estimation/estimation.h"

namespace sensode::estimation {

namespace detail {
struct ProfileDirection;  // profile_likelihood.h
}

// What every start needs that the global phase and the nominal point decide, so that any process
// can run start i from (problem, options, plan) alone.
struct StartPlan {
  Optimizer optimizer = Optimizer::LeastSquares;  // the one that runs (never Auto)
  std::string optimizerReason;
  petab::GradientMethod gradient = petab::GradientMethod::Forward;  // after the nominal fallback
  bool noiseResiduals = false;  // σ depends on the fitted parameters (least-squares rows)
  std::vector<std::string> fallbacks;
  double nominalObjective = std::numeric_limits<double>::quiet_NaN();  // at the run's rtol
  // The global phase's report (EstimationResult's fields of the same names).
  GlobalPhase global = GlobalPhase::None;
  long globalEvaluations = 0;
  double globalSeconds = 0;
  int globalGenerations = 0;
  int globalLocalSearches = 0;
  double globalBest = std::numeric_limits<double>::infinity();
  int screenedPoints = 0;
  double screenSeconds = 0;
  // Start points, all parameters on their scales; starts[i] is start i.
  std::vector<std::vector<double>> starts;
  bool operator==(const StartPlan&) const = default;
};

std::string toText(const StartPlan& plan);
// Throws Error("<what>: ...") naming the line that cannot be read.
StartPlan startPlanFromText(const std::string& text, const std::string& what);

std::string toText(const StartResult& start);
StartResult startResultFromText(const std::string& text, const std::string& what);

// The plan's report (optimiser, fallbacks, nominal objective at the run's rtol, the global
// phase's figures) into the result's fields of the same names.
void reportPlan(const StartPlan& plan, double runRtol, EstimationResult& result);

// The forward integrator into the result, and a `fallbacks` sentence when odeSD failed in some
// of the starts' evaluations (StartResult::cvodesFallbacks).
void reportForwardIntegrator(integrators::Method requested, EstimationResult& result);

// Finite objectives first, ascending; stable, so equal objectives keep start order.
void sortStartsByObjective(std::vector<StartResult>& starts);

// One direction of one profile (a unit of the profile phase).
std::string toText(const detail::ProfileDirection& direction);
detail::ProfileDirection profileDirectionFromText(const std::string& text, const std::string& what);

// `v` printed with %.17g: read back, the same double.
std::string exactNumber(double v);
// Line-oriented `key value` text as (key, rest of the line) pairs, in order; empty lines skipped.
std::vector<std::pair<std::string, std::string>> keyValueLines(const std::string& text);

std::optional<StartStatus> startStatusFromString(const std::string& s);

}  // namespace sensode::estimation
