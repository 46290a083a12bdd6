// SPDX-License-Identifier: MIT
#include "core/estimation/run_start.h"

#include <chrono>
#include <cmath>

#include "core/estimation/latin_hypercube.h"
#include "core/estimation/polish.h"

namespace sensode::estimation::detail {
namespace {

// A start where the objective cannot be evaluated (a trial of parameters where the model
// blows up) is replaced by a uniform point in the bounds, as pyPESTO's start resampling does,
// up to kMaxResamples times; drawn from (seed, start index), so runs stay reproducible. The
// objective alone is checked first (cheap); a start where the optimiser then cannot evaluate
// what it needs (least squares: the Jacobian, whose steady-state sensitivities can fail where the
// steady state itself does not — Brannmark) is redrawn from the same sequence.
constexpr int kMaxResamples = 10;
class StartRedraws {
 public:
  StartRedraws(FitObjective& f, std::uint64_t seed, int index)
      : f_(f), seed_(seed), index_(index) {}
  int count() const { return count_; }
  // The next point of the sequence into x; false when kMaxResamples are used up.
  bool next(std::vector<double>& x) {
    if (count_ == kMaxResamples) return false;
    if (redraws_.empty())  // one point per stratum is not needed here: plain uniform draws
      redraws_ = latinHypercube(
          f_.setup().lower, f_.setup().upper, 1 + kMaxResamples,
          seed_ ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(index_ + 1)));
    x = redraws_[static_cast<std::size_t>(count_++)];
    return true;
  }
  // Redraws x until the objective is finite there (or the redraws are used up).
  void untilFinite(std::vector<double>& x) {
    for (;;) {
      try {
        if (std::isfinite(f_.value(x.data(), nullptr))) return;
      } catch (const Cancelled&) {
        return;  // the optimiser sees the cancel on its first evaluation
      } catch (const Error&) {
      }
      if (!next(x)) return;
    }
  }

 private:
  FitObjective& f_;
  std::uint64_t seed_;
  int index_;
  int count_ = 0;
  std::vector<std::vector<double>> redraws_;
};

}  // namespace

StartContext makeStartContext(const std::filesystem::path& yaml, FitSetup setup,
                              const StartPlan& plan, const EstimationOptions& options) {
  StartContext c;
  c.yaml = yaml;
  setup.gradient = plan.gradient;
  setup.noiseResiduals = plan.noiseResiduals;
  c.setup = std::move(setup);
  c.leastSquares = plan.optimizer == Optimizer::LeastSquares;
  c.settings = {options.maxIterations, options.functionTolerance, options.parameterTolerance,
                options.gradientTolerance, options.geodesicAcceleration};
  c.seed = options.seed;
  c.continueStalled = options.continueStalled;
  c.starts = plan.starts;
  return c;
}

StartResult runStart(const petab::Problem& problem, const StartContext& context, int index,
                     const ProgressMonitor& monitor, const std::function<bool()>& stopped) {
  using Clock = std::chrono::steady_clock;
  StartResult s;
  s.index = index;
  s.start = context.starts.at(static_cast<std::size_t>(index));
  s.parameters = s.start;
  if (stopped && stopped()) {
    s.status = StartStatus::Cancelled;
    s.message = "not started: cancelled";
    return s;
  }
  const auto t0 = Clock::now();
  FitSetup mine = context.setup;
  mine.point = s.start;
  FitObjective f(problem, mine, monitor);
  std::vector<double> x0;
  for (int p : mine.free) x0.push_back(s.start[static_cast<std::size_t>(p)]);
  StartRedraws redraws(f, context.seed, index);
  redraws.untilFinite(x0);
  LocalResult r;
  for (;;) {
    r = context.leastSquares ? minimizeLeastSquares(f, x0, context.settings)
                             : minimizeQuasiNewton(f, x0, context.settings);
    if (!r.startNotEvaluable || (stopped && stopped()) || !redraws.next(x0)) break;
    redraws.untilFinite(x0);
  }
  const int resampled = redraws.count();
  s.start = f.fullPoint(x0.data());
  s.parameters = f.fullPoint(r.x.data());
  s.startObjective = r.startObjective;
  s.objective = r.objective;
  s.objectiveRtol = context.setup.objective.integrator.rtol;
  s.iterations = r.iterations;
  s.objectiveEvaluations = f.objectiveEvaluations();
  s.gradientEvaluations = f.gradientEvaluations();
  s.status = r.status;
  s.message = r.message;
  if (resampled > 0)
    s.message += " (start point redrawn " + std::to_string(resampled) +
                 " times: the objective or its derivatives could not be evaluated at the "
                 "earlier ones)";
  s.cvodesFallbacks = f.cvodesFallbacks();
  if (s.cvodesFallbacks > 0)
    s.message += " (CVODES computed " + std::to_string(s.cvodesFallbacks) + " of " +
                 std::to_string(s.objectiveEvaluations) +
                 " evaluations, the last because " + f.lastCvodesFallback() + ")";
  if (f.fallbackEvaluations() > 0)
    s.message += " (" + std::to_string(f.fallbackEvaluations()) + " of " +
                 std::to_string(s.gradientEvaluations) +
                 " derivative evaluations with a fallback, the last: " + f.lastFallback() + ")";
  s.wallSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (context.continueStalled && !(stopped && stopped()))
    continueStalledStart(problem, context.setup, context.leastSquares, context.settings, monitor,
                         s);
  // A start the cancel interrupted is not a result: it is computed again on resume.
  if ((stopped && stopped()) || monitor.token.cancelled()) s.status = StartStatus::Cancelled;
  return s;
}

}  // namespace sensode::estimation::detail
