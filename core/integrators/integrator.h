// SPDX-License-Identifier: MIT
// The integrator interface: one class per method (CvodesIntegrator, later OdeSdIntegrator),
// created by makeIntegrator(). Integrators see only a CompiledModel, never libSBML.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::integrators {

enum class Method { OdeSd, Cvodes };
const char* toString(Method m);
std::optional<Method> methodFromString(const std::string& s);

enum class LinearSolverKind { Auto, Dense, Sparse };

// How CVODES corrects the forward sensitivities in a step (CVODES guide §5.2): Staggered
// (CV_STAGGERED) solves the states' nonlinear system first and then all sensitivity systems
// with the same Newton matrix; Simultaneous (CV_SIMULTANEOUS) iterates states and sensitivities
// together in one Newton iteration. Augmented: no forward sensitivity module; plain CVODE on
// [x; S] as one vector, with the block-diagonal Newton matrix like CV_SIMULTANEOUS (one LU of
// I − γJ applied to every block) and CVODES's tolerances and error norm, but vector operations
// over one long vector instead of 1 + ns short ones. odeSD's direct sensitivities are staggered
// by construction (NUMERICS.md §3); its BDF hand-over uses IntegratorOptions::handoverCorrector.
enum class SensitivityCorrector { Staggered, Simultaneous, Augmented };
const char* toString(SensitivityCorrector c);  // "staggered", "simultaneous", "augmented"
std::optional<SensitivityCorrector> sensitivityCorrectorFromString(const std::string& s);

struct IntegratorOptions {
  double rtol = 1e-6;   // relative tolerance of the weighted RMS error test
  double atol = 1e-12;  // absolute tolerance (same for every state)
  long maxSteps = 100000;  // per advanceTo() call; exceeding it is "too much work"
  double maxStepSize = std::numeric_limits<double>::infinity();
  double initialStepSize = 0;  // 0 = the integrator's own estimate
  // Dense LU for tiny systems, KLU sparse LU otherwise (Auto: sparse when nx > kDenseLimit;
  // odeSD also factorises larger Newton matrices densely where SparseLu::denseIsFaster).
  LinearSolverKind linearSolver = LinearSolverKind::Auto;
  static constexpr int kDenseLimit = 16;
  // CVODES forward sensitivities: the corrector (see SensitivityCorrector).
  SensitivityCorrector sensitivityCorrector = SensitivityCorrector::Staggered;
  // odeSD with sensitivities: the corrector of its CVODES BDF hand-over (§4.3). Augmented by
  // default: the forward module's per-vector operations made the tail most of odeSD's time.
  SensitivityCorrector handoverCorrector = SensitivityCorrector::Augmented;

  // Message naming field, value and constraint, or nullopt when valid.
  std::optional<std::string> validate() const;
  bool operator==(const IntegratorOptions&) const = default;
};

struct IntegratorStats {
  long steps = 0;
  long rhsEvals = 0;
  long jacEvals = 0;
  long luFactorizations = 0;
  long newtonIterations = 0;
  long newtonFailures = 0;
  long errorTestFailures = 0;
  long secondDerivativeEvals = 0;   // ẍ evaluations (odeSD)
  long jacobianOfSecondEvals = 0;   // J_J evaluations (odeSD)
  long sensitivityRhsEvals = 0;     // sensitivity right-hand sides / parameter-Jacobian evals
  long sensitivityErrorTestFailures = 0;
  long handoverSteps = 0;           // odeSD: steps CVODES took after a stiff-tail hand-over
  double handoverTime = -1;         // odeSD: time of the hand-over to CVODES BDF (-1 = none)
  long fallbackSteps = 0;           // odeSD: steps CVODES took in its bridges (OdeSdOptions)
  // What the run did instead of failing, one sentence each in a modeller's words (e.g. "odeSD
  // handed t in [0, 0.3] to CVODES: the second derivative is not finite at t = 0"). Empty when
  // the requested method ran as asked. Shown in the CLI statistics and the GUI.
  std::vector<std::string> fallbacks;
  bool operator==(const IntegratorStats&) const = default;
};

// The integrator's dense output on the step just accepted, valid only during a StepCallback.
class StepDenseOutput {
 public:
  // x(t) for t in [tStart, tEnd] of the step into x (nx values): odeSD's dense output of
  // NUMERICS.md §2.7 (quintic Hermite or implicit sub-step), CVODES's CVodeGetDky. The same
  // values advanceTo() would return for an output time t inside this step.
  virtual void state(double t, double* x) = 0;
  // S(t) likewise (column-major nx × ns) when sensitivities are enabled; false (s untouched)
  // when the integrator computes none.
  virtual bool sensitivities(double t, double* s) = 0;

 protected:
  ~StepDenseOutput() = default;
};

// Called after every accepted internal step [tStart, tEnd] (tEnd may pass the tout of the
// advanceTo() that takes it), before advanceTo() returns. Exceptions thrown by the callback
// leave advanceTo() unchanged.
using StepCallback = std::function<void(double tStart, double tEnd, StepDenseOutput& dense)>;

class Integrator {
 public:
  virtual ~Integrator() = default;
  // Sets up integration of `model` from (t0, x0) with parameters p (copied).
  virtual void initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                          const IntegratorOptions& options, double t0,
                          const std::vector<double>& x0, const std::vector<double>& p) = 0;
  // Integrates to tout (> current time) and writes x(tout) into x. Throws IntegrationFailure
  // (with time, step size and cause) or Cancelled; the monitor is checked every step.
  virtual void advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) = 0;
  // Forward sensitivities S = ∂x/∂p for the parameters `paramIndices` (indices into the model's
  // parameter vector), starting from s0 (column-major nx × paramIndices.size()). Call after
  // initialize(). `errorControl`: include S in the local error test. Integrators that cannot
  // compute sensitivities throw InvalidOptions.
  virtual void enableSensitivities(const std::vector<int>& paramIndices,
                                   const std::vector<double>& s0, bool errorControl) = 0;
  // S at the time of the last advanceTo() (column-major nx × ns).
  virtual void sensitivities(std::vector<double>& s) const = 0;
  // Every accepted step with its dense output (empty function: none). Lets a caller see the
  // step grid and the states inside each step in one integration (PBSR/Exp); may be set at
  // any time.
  virtual void setStepCallback(StepCallback callback) = 0;
  virtual double currentTime() const = 0;
  virtual const IntegratorStats& stats() const = 0;
  virtual Method method() const = 0;
};

std::unique_ptr<Integrator> makeIntegrator(Method method);

// Adds the counters of `s` to `into` (several integrations of one task: finite differences, the
// pieces between events): handoverTime stays the first one, fallback sentences are kept once each.
void accumulate(IntegratorStats& into, const IntegratorStats& s);

}  // namespace sensode::integrators
