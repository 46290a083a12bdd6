// SPDX-License-Identifier: MIT
#include "core/sensitivity/finite_differences.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/common/errors.h"
#include "core/sensitivity/structural_influence.h"
#include "core/simulation/event_simulation.h"

namespace sensode::sensitivity {

const char* toString(FiniteDifferenceScheme s) {
  switch (s) {
    case FiniteDifferenceScheme::Central: return "central";
    case FiniteDifferenceScheme::OneSided: return "one-sided";
    case FiniteDifferenceScheme::AdaptedFromZero: return "adapted from 0";
  }
  return "unknown";
}

std::string describe(const FiniteDifferenceStep& step) {
  std::string text = toString(step.scheme);
  if (step.extrapolated) text += ", extrapolated";
  if (step.unreached > 0)
    text += ", " + std::to_string(step.unreached) + " quantities not reached (0)";
  return text;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One simulation's x (nt × nx) and y (nt × ny).
struct Run {
  std::vector<double> x, y;
};

class Simulator {
 public:
  Simulator(const FiniteDifferenceProblem& problem, const FiniteDifferenceOptions& options,
            const std::function<ProgressMonitor(int, int)>& monitorFor, int runsPerParameter,
            FiniteDifferenceResult& result)
      : problem_(problem), options_(options), monitorFor_(monitorFor),
        perParameter_(runsPerParameter),
        runs_(1 + runsPerParameter * static_cast<int>(problem.params.size())), result_(result),
        yAll_(3 * problem.model->system().outputs.size()) {}

  // Progress: run 0 is the unperturbed one, parameter j owns runs 1 + j·per … (j + 1)·per; a
  // parameter that needs more simulations (step ladder, adapted step) reports its last slot
  // again, so the whole task's progress still ends at 100 %.
  void startParameter(std::size_t j) {
    first_ = 1 + perParameter_ * static_cast<int>(j);
    local_ = 0;
  }

  Run operator()(const std::vector<double>& p) {
    const symbolic::CompiledModel& model = *problem_.model;
    const auto nx = static_cast<std::size_t>(model.nx());
    const double tEnd = problem_.times.back();
    Run run;
    std::vector<double> x(nx);
    model.initialState(problem_.t0, p.data(), x.data());
    for (std::size_t i = 0; i < nx; ++i) {
      if (!std::isfinite(x[i])) {
        throw Error("finite differences: non-finite initial value for '" +
                    model.system().states[i].id + "' (" + number(x[i]) + ") at a perturbed point");
      }
    }
    std::unique_ptr<integrators::Integrator> integrator;
    const ProgressMonitor monitor =
        monitorFor_ ? monitorFor_(first_ + std::min(local_, perParameter_ - 1), runs_)
                    : ProgressMonitor{};
    // Every run steps across the events (and keeps a delay equation's history) the same way.
    if (simulation::needsSimulationDriver(model.system())) {
      simulation::EventSimulation sim(problem_.model, options_.integrator, options_.integration);
      auto record = [&](double t, const double* state) {
        model.outputs(t, state, p.data(), yAll_.data());
        run.x.insert(run.x.end(), state, state + nx);
        for (const std::size_t r : problem_.outputRows) run.y.push_back(yAll_[r]);
      };
      try {
        sim.run(problem_.t0, x, p, problem_.times, record, monitor);
      } catch (...) {
        integrators::accumulate(result_.integrator, sim.stats());
        throw;
      }
      integrators::accumulate(result_.integrator, sim.stats());
      if (first_ > 0) result_.perturbedRhsEvals += sim.stats().rhsEvals;
      ++result_.simulations;
      if (first_ > 0) ++local_;
      return run;
    }
    try {
      if (tEnd > problem_.t0) {
        integrator = integrators::makeIntegrator(options_.integrator);
        integrator->initialize(problem_.model, options_.integration, problem_.t0, x, p);
      }
      double tCurrent = problem_.t0;
      for (const double t : problem_.times) {
        if (t > tCurrent) {
          integrator->advanceTo(t, x, monitor);
          tCurrent = t;
        }
        model.outputs(t, x.data(), p.data(), yAll_.data());
        run.x.insert(run.x.end(), x.begin(), x.end());
        for (const std::size_t r : problem_.outputRows) run.y.push_back(yAll_[r]);
      }
    } catch (...) {
      if (integrator) integrators::accumulate(result_.integrator, integrator->stats());
      throw;
    }
    if (integrator) {
      integrators::accumulate(result_.integrator, integrator->stats());
      if (first_ > 0) result_.perturbedRhsEvals += integrator->stats().rhsEvals;
      ++result_.simulations;
    }
    if (first_ > 0) ++local_;
    return run;
  }

 private:
  const FiniteDifferenceProblem& problem_;
  const FiniteDifferenceOptions& options_;
  const std::function<ProgressMonitor(int, int)>& monitorFor_;
  int perParameter_, runs_, first_ = 0, local_ = 0;
  FiniteDifferenceResult& result_;
  std::vector<double> yAll_;
};

// For each parameter that sets initial values (0 when it sets none), in the parameter's units:
// the largest max_t |x_i(t)| / |∂x0_i/∂p| over the states it sets (first), and the largest size
// any state reaches divided by its largest |∂x0_i/∂p| (second), from the unperturbed run's
// states at the output times.
std::vector<std::pair<double, double>> initialValueScales(const FiniteDifferenceProblem& problem,
                                                          const std::vector<double>& states) {
  const symbolic::CompiledModel& model = *problem.model;
  const auto nx = static_cast<std::size_t>(model.nx());
  std::vector<double> reach(nx, 0.0);
  for (std::size_t a = 0; a < states.size(); ++a) {
    reach[a % nx] = std::max(reach[a % nx], std::abs(states[a]));
  }
  const symbolic::SparsePattern& pattern = model.initialSensitivityPattern();
  std::vector<double> s0(static_cast<std::size_t>(pattern.nnz()));
  model.initialSensitivity(problem.t0, problem.p.data(), s0.data());
  double modelReach = 0;
  for (const double r : reach)
    if (std::isfinite(r)) modelReach = std::max(modelReach, r);
  std::vector<std::pair<double, double>> scales;
  for (const int k : problem.params) {
    double scale = 0, largestD = 0;
    for (int e = pattern.colPtr[static_cast<std::size_t>(k)];
         e < pattern.colPtr[static_cast<std::size_t>(k) + 1]; ++e) {
      const double d = std::abs(s0[static_cast<std::size_t>(e)]);
      const double r = reach[static_cast<std::size_t>(pattern.rowIdx[static_cast<std::size_t>(e)])];
      if (d > 0 && std::isfinite(d) && std::isfinite(r)) {
        scale = std::max(scale, r / d);
        largestD = std::max(largestD, d);
      }
    }
    scales.push_back({scale, largestD > 0 ? modelReach / largestD : 0.0});
  }
  return scales;
}

// One step candidate's sensitivity column (states then outputs, nt·(nx + ny) values) and the
// estimate of its error, Σ w·|D(δ) − D(δ/2)| / Σ w·|R| (R the extrapolated value, w the inverse
// size of each quantity): the relative difference between the step and its half, which is
// large when the difference drowns in integration noise and when it is visibly nonlinear.
struct Candidate {
  FiniteDifferenceStep step;
  std::vector<double> column;
  std::vector<double> spread;  // |D(δ) − D(δ/2)| per value (extrapolating candidates only)
  double error = std::numeric_limits<double>::infinity();
};

}  // namespace

void finiteDifferences(const FiniteDifferenceProblem& problem,
                       const FiniteDifferenceOptions& options,
                       const std::function<ProgressMonitor(int, int)>& monitorFor,
                       FiniteDifferenceResult& result) {
  const std::size_t nt = problem.times.size();
  const auto nx = static_cast<std::size_t>(problem.model->nx());
  const std::size_t ny = problem.outputRows.size();
  const std::size_t ns = problem.params.size();
  const std::size_t nxy = nt * (nx + ny);
  Simulator simulate(problem, options, monitorFor, options.richardson ? 4 : 2, result);
  const integrators::IntegratorOptions& tight = options.integration;

  Run nominal = simulate(problem.p);
  auto valuesOf = [&](const Run& r, std::size_t a) {
    const std::size_t it = a / (nx + ny), i = a % (nx + ny);
    return i < nx ? r.x[it * nx + i] : r.y[it * ny + (i - nx)];
  };
  // Weights of the error estimate: 1 / (the largest size of each quantity over time + a floor).
  std::vector<double> weight(nx + ny, 0.0);
  double largest = 0;
  for (std::size_t a = 0; a < nxy; ++a) {
    const double v = std::abs(valuesOf(nominal, a));
    if (std::isfinite(v)) weight[a % (nx + ny)] = std::max(weight[a % (nx + ny)], v);
  }
  for (const double w : weight) largest = std::max(largest, w);
  for (double& w : weight) w = 1 / (w + 1e-12 * largest + 1e-300);

  const std::vector<std::pair<double, double>> scales = initialValueScales(problem, nominal.x);
  std::vector<double> dxdp(nt * nx * ns), dydp(nt * ny * ns);

  // Σ_r w_r·(run_r − nominal) for every state and output value.
  using Terms = std::vector<std::pair<double, const Run*>>;
  auto combine = [&](const Terms& terms) {
    std::vector<double> column(nxy);
    for (std::size_t a = 0; a < nxy; ++a) {
      double d = 0;
      for (const auto& [w, r] : terms) d += w * (valuesOf(*r, a) - valuesOf(nominal, a));
      column[a] = d;
    }
    return column;
  };
  auto estimate = [&](Candidate& c, const std::vector<double>& coarse,
                      const std::vector<double>& fine) {
    double num = 0, den = 0;
    for (std::size_t a = 0; a < nxy; ++a) {
      const double w = weight[a % (nx + ny)];
      num += w * std::abs(coarse[a] - fine[a]);
      den += w * std::abs(c.column[a]);
    }
    c.error = den > 0 ? num / den : (num > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    if (std::isnan(c.error)) c.error = std::numeric_limits<double>::infinity();
    c.step.errorEstimate = c.error;
  };

  // The candidate of step δ ≈ relativeStep·scale for parameter k. δ is rounded down to a power of
  // two, so that p ± δ and p ± δ/2 are exact in floating point (almost always: unless p + δ
  // crosses into the next binade) and the formulas divide by the step actually taken: a response
  // linear in p (an initial value at t0) then comes out exact, not within 1e-12.
  auto candidate = [&](std::size_t k, double scale) {
    const double pk = problem.p[k];
    Candidate c;
    c.step.scale = scale;
    std::vector<double> q = problem.p;
    auto at = [&](double h) {
      q[k] = pk + h;
      return simulate(q);
    };
    const double delta = std::exp2(std::floor(std::log2(options.relativeStep * scale)));
    // Per value, the extrapolation R = D(δ/2) + (D(δ/2) − D(δ))/3 where D(δ) and D(δ/2) differ by
    // more than their noise (8·noise/δ, noise = 100·rtol·|y| + atol as below): there truncation
    // dominates and R removes its leading term. Elsewhere noise dominates, which R would amplify
    // (~3×: it leans on the half step), and D(δ), the larger step, is kept: on a random linear
    // system a parameter of 0.0037 kept 6.8e-5 that way and got 4.8e-4 extrapolated.
    // |D(δ) − D(δ/2)| is the error estimate.
    auto extrapolate = [&](const std::vector<double>& coarse, const std::vector<double>& fine) {
      c.column.resize(nxy);
      for (std::size_t a = 0; a < nxy; ++a) {
        const double noise = 100 * tight.rtol * std::abs(valuesOf(nominal, a)) + tight.atol;
        if (std::abs(coarse[a] - fine[a]) > 8 * noise / delta) {
          c.column[a] = fine[a] + (fine[a] - coarse[a]) / 3;
          c.step.extrapolated = true;
        } else {
          c.column[a] = coarse[a];
        }
      }
      estimate(c, coarse, fine);
      c.spread.resize(nxy);
      for (std::size_t a = 0; a < nxy; ++a) c.spread[a] = std::abs(coarse[a] - fine[a]);
    };
    if (pk != 0 && delta <= 0.5 * std::abs(pk)) {
      // Central: p ± δ never changes the sign of p. D(h) = (y(p+h) − y(p−h))/(2h).
      c.step.scheme = FiniteDifferenceScheme::Central;
      c.step.delta = delta;
      const Run plus = at(delta), minus = at(-delta);
      const std::vector<double> coarse =
          combine({{1 / (2 * delta), &plus}, {-1 / (2 * delta), &minus}});
      if (!options.richardson) {
        c.column = coarse;
        return c;
      }
      const Run halfPlus = at(delta / 2), halfMinus = at(-delta / 2);
      extrapolate(coarse, combine({{1 / delta, &halfPlus}, {-1 / delta, &halfMinus}}));
      return c;
    }
    // One-sided towards the sign of p (a scale larger than p): F(h) = (4y(h) − y(2h) − 3y(0))/(2h).
    c.step.scheme = FiniteDifferenceScheme::OneSided;
    const double h = pk < 0 ? -delta : delta;
    c.step.delta = 2 * h;
    const Run one = at(h), two = at(2 * h);
    const std::vector<double> coarse = combine({{2 / h, &one}, {-1 / (2 * h), &two}});
    if (!options.richardson) {
      c.column = coarse;
      return c;
    }
    const Run half = at(h / 2);
    extrapolate(coarse, combine({{4 / h, &half}, {-1 / h, &one}}));
    return c;
  };

  // A larger step may replace a smaller one only where it agrees with it within the smaller
  // one's own uncertainty (3·|D(δ) − D(δ/2)| + 8·noise/δ per value, noise = 100·rtol·|y| +
  // atol): so that noise is traded for accuracy, never for the flat response of a saturated
  // model (both differences ~0 at a huge step, which looks consistent with itself) or a
  // nonlinear one.
  auto consistentWith = [&](const Candidate& wider, const Candidate& current) {
    if (current.spread.size() != nxy || wider.column.size() != nxy) return false;
    const double delta = std::abs(current.step.delta) / 2;
    for (std::size_t a = 0; a < nxy; ++a) {
      const double noise = 100 * tight.rtol * std::abs(valuesOf(nominal, a)) + tight.atol;
      const double d = std::abs(wider.column[a] - current.column[a]);
      if (!(d <= 3 * current.spread[a] + 8 * noise / delta)) return false;
    }
    return true;
  };

  // Parameters that are 0: at most this many step changes, towards
  // a response that is this linear and this far above the integration noise.
  constexpr int kMaxZeroStepTrials = 4;
  constexpr double kMaxNonlinearity = 1e-2, kMinSignal = 1e6;
  auto adaptedFromZero = [&](std::size_t k, double h0) {
    // p = 0 (a rate or input switched off, a species starting at 0): one-sided from
    // δ = relativeStep, adapted (at most kMaxZeroStepTrials times): grown while the first
    // difference is lost in the integration noise (|y(δ) − y(0)| < 1e6 × noise, noise =
    // 100·rtol·|y| + atol, i.e. a change of less than ~1e-4 relative) and shrunk while the
    // response is visibly nonlinear (|y(2δ) − 2y(δ) + y(0)| − 4·noise > 1e-2 × |y(δ) − y(0)|);
    // largest over the states.
    Candidate c;
    c.step.scheme = FiniteDifferenceScheme::AdaptedFromZero;
    std::vector<double> q = problem.p;
    double h = h0, lastGood = 0;
    Run one, two, keepOne, keepTwo;
    for (int trial = 0;; ++trial) {
      try {
        q[k] = h;
        one = simulate(q);
        q[k] = 2 * h;
        two = simulate(q);
      } catch (const IntegrationFailure&) {
        if (trial == 0) throw;
        // The adapted step broke the integration (e.g. a switch at t0): keep the last good one.
        h = lastGood;
        one = std::move(keepOne);
        two = std::move(keepTwo);
        break;
      }
      lastGood = h;
      keepOne = one;
      keepTwo = two;
      // Nonlinearity per state, relative to that state's own first difference (the largest
      // curvature and the largest slope over all states belong to different states when sizes
      // differ by orders of magnitude — Raia's il13_level = 0 moves CD274mRNA by 5e3 per unit
      // and IL13_Rec, which saturates beyond 4e-7, by 0.88: the absolute test took 1.4e-8 and
      // left IL13_Rec 7e-4 off).
      double signal = 0, nonlinearity = 0;
      for (std::size_t a = 0; a < one.x.size(); ++a) {
        const double noise =
            100 * tight.rtol *
                std::max({std::abs(nominal.x[a]), std::abs(one.x[a]), std::abs(two.x[a])}) +
            tight.atol;
        const double first = std::abs(one.x[a] - nominal.x[a]);
        signal = std::max(signal, first / noise);
        const double curvature = std::abs(two.x[a] - 2 * one.x[a] + nominal.x[a]) - 4 * noise;
        if (first > 4 * noise && curvature > 0)
          nonlinearity = std::max(nonlinearity, curvature / first);
      }
      if (trial == kMaxZeroStepTrials) break;
      if (nonlinearity > kMaxNonlinearity) {
        h *= std::max(1e-3, 0.5 * kMaxNonlinearity / nonlinearity);
      } else if (signal > 0 && signal < kMinSignal) {
        h *= std::min(1e6, 10 * kMinSignal / signal);
      } else {
        break;
      }
    }
    c.step.delta = 2 * h;
    c.step.scale = h / options.relativeStep;
    c.column = combine({{2 / h, &one}, {-1 / (2 * h), &two}});
    if (options.richardson && h > 0) {
      // One more run at h/2 gives the spread |F(h) − F(h/2)| that the second pass widens by
      // (the adapted step can shrink for one state's curvature until another's response drowns:
      // Crauste's Memory = 0 left 8e5 in Naive, which it does not move).
      q[k] = h / 2;
      const Run half = simulate(q);
      const std::vector<double> fine = combine({{4 / h, &half}, {-1 / h, &one}});
      c.spread.resize(nxy);
      for (std::size_t a = 0; a < nxy; ++a) c.spread[a] = std::abs(c.column[a] - fine[a]);
      // And, where F(h) and F(h/2) differ by more than their noise, the extrapolation that
      // cancels F's h² term, as for the other schemes: the curvature test above sees only y''
      // (0 for an odd response such as tanh(p/ε), whose third derivative then left 3e-5).
      for (std::size_t a = 0; a < nxy; ++a) {
        const double noise = 100 * tight.rtol * std::abs(valuesOf(nominal, a)) + tight.atol;
        if (c.spread[a] > 8 * noise / h) {
          c.column[a] = fine[a] + (fine[a] - c.column[a]) / 3;
          c.step.extrapolated = true;
        }
      }
    }
    return c;
  };

  std::vector<Candidate> chosen(ns);
  for (std::size_t j = 0; j < ns; ++j) {
    const auto k = static_cast<std::size_t>(problem.params[j]);
    const double pk = problem.p[k];
    simulate.startParameter(j);
    // The step's scale. Ordinary parameters, and initial values whose states stay near their
    // initial size: |p|. An initial value far below the sizes it influences (its states' reach
    // or, larger, the model's, both in p's units, over 10·|p|): best of steps — from that size
    // down by factors of 10 (at most kMaxLadder levels), then |p| itself; the smallest error
    // estimate wins (a step the response is visibly nonlinear over and one drowning in noise
    // both estimate large). Brannmark's IRp: the model's size 10 gives δ = 1e-3, 3.8e-4 off by
    // nonlinearity; 1e-5 and 1e-6 agree with odeSD to 6e-7, 1.4e-6; |p| = 1.8e-9 drowns in
    // IRS's noise.
    constexpr int kMaxLadder = 5;
    const double own = std::abs(pk);
    const double top = std::max(scales[j].first, scales[j].second);
    // A perturbed simulation that fails (a step that pushes the model into a blow-up) is not
    // the end: the step shrinks 100-fold, at most kMaxShrink times, and the result says so.
    constexpr int kMaxShrink = 3;
    const std::string& id = problem.model->system().params[k].id;
    auto shrinking = [&](double first, const std::function<Candidate(double)>& attempt) {
      for (int shrink = 0;; ++shrink) {
        const double size = first * std::pow(1e-2, shrink);
        try {
          Candidate c = attempt(size);
          if (shrink > 0) {
            result.fallbacks.push_back("finite differences: a simulation with '" + id +
                                       "' perturbed failed; its step was reduced " +
                                       number(std::pow(1e2, shrink)) + "-fold");
          }
          return c;
        } catch (const IntegrationFailure&) {
          if (shrink == kMaxShrink) throw;
        }
      }
    };
    Candidate best;
    if (own == 0) {
      // No size of its own: the adapted step, which grows it until the response clears the
      // noise of every state (an initial value of 0 reached 1e-10 on suite 00001 that way; a
      // step from the states' sizes, 1e-7).
      best = shrinking(options.relativeStep, [&](double h0) { return adaptedFromZero(k, h0); });
    } else if (top <= 10 * own) {
      best = shrinking(own, [&](double scale) { return candidate(k, scale); });
      // A response lost in the noise (step and half step disagree): |p| is too small a scale
      // for what p moves — Okuonghae's theta = 1.9e-12
      // moves total_pop (~1e8) by 322 per unit, 1e-14 at δ = 1e-4·|p|, far below its noise
      // 1e-4. Larger scales, 1000-fold each (at most kMaxNoiseLevels), the smallest estimate
      // winning; a step the response is nonlinear over estimates large too.
      constexpr int kMaxNoiseLevels = 5;
      constexpr double kNoiseDominated = 1e-3;
      double scale = own;
      for (int level = 0;
           level < kMaxNoiseLevels && options.richardson && best.error > kNoiseDominated;
           ++level) {
        scale *= 1e3;
        try {
          Candidate c = candidate(k, scale);
          if (c.error < best.error && consistentWith(c, best)) best = std::move(c);
        } catch (const IntegrationFailure&) {
          break;
        }
      }
    } else if (!options.richardson) {
      // Without the half step there is no error estimate to choose by: the largest scale, the
      // one the integration noise cannot drown.
      best = shrinking(top, [&](double scale) { return candidate(k, scale); });
    } else {
      // Every level (a level whose simulations fail is skipped), then |p| itself: the smallest
      // error estimate wins. (Stopping at the first level whose estimate rose picked δ = 256 for
      // Perelson's compartment size 1, where the model-wide size was not yet in its units.)
      double scale = top;
      for (int level = 0; level < kMaxLadder && scale > 10 * own; ++level, scale /= 10) {
        try {
          Candidate c = candidate(k, scale);
          if (best.column.empty() || c.error < best.error) best = std::move(c);
        } catch (const IntegrationFailure&) {
          continue;
        }
      }
      if (best.column.empty()) {
        best = shrinking(own, [&](double s) { return candidate(k, s); });
      } else {
        try {
          Candidate c = candidate(k, own);
          if (c.error < best.error) best = std::move(c);
        } catch (const IntegrationFailure&) {
          // The larger steps served.
        }
      }
    }
    chosen[j] = std::move(best);
  }

  // Quantities the parameter does not reach (structural_influence.h) are exactly 0: not the runs'
  // integration noise over the step, which for a tiny parameter is huge (and would set the
  // second pass's scale below). Their spread is 0 too, so the second pass does not widen for them.
  const auto reached =
      structuralInfluence(problem.model->system(), problem.params, problem.outputRows);
  auto zeroUnreached = [&](std::size_t j, Candidate& c) {
    if (!reached) return;
    const std::vector<char>& flags = (*reached)[j];
    for (std::size_t a = 0; a < nxy; ++a) {
      if (flags[a % (nx + ny)]) continue;
      c.column[a] = 0;
      if (c.spread.size() == nxy) c.spread[a] = 0;
    }
    c.step.unreached = std::count(flags.begin(), flags.end(), 0);
  };
  for (std::size_t j = 0; j < ns; ++j) zeroUnreached(j, chosen[j]);

  // Second pass, on the scale the agreement with the analytic methods is judged on: each
  // quantity's largest |sensitivity| over all parameters and times. A parameter whose step and
  // half step still differ by more than kTarget of that scale somewhere (noise drowning a small
  // response in a large quantity — Laske's k_exp_Vp_nuc_M1 = 1e-6 left 8e-3 in B_att_Lo, which
  // it does not move at all) tries 1000-fold larger scales (at most kMaxWideningLevels), the
  // smallest such difference winning. Progress stays on the last parameter's slot.
  constexpr double kTarget = 1e-5;
  constexpr int kMaxWideningLevels = 4;
  std::vector<double> quantityScale(nx + ny, 0.0);
  for (const Candidate& c : chosen) {
    for (std::size_t a = 0; a < nxy; ++a) {
      const double v = std::abs(c.column[a]);
      double& scale = quantityScale[a % (nx + ny)];
      if (std::isfinite(v)) scale = std::max(scale, v);
    }
  }
  // The spread; for a step from 0 (withNoise), where larger, the integration noise over the step:
  // a response below the noise can show no spread at all (Raia's DecoyR, 0.34, moved by 4.5e-15
  // at δ = 1.3e-14: D(δ) and D(δ/2) both 0). (From |p| the noise term widened steps that were
  // right: Okuonghae's gamma_0 = 0.14 went to δ = 7.8e-3, 2.6e-3 off.)
  auto scaledSpread = [&](const Candidate& c, bool withNoise) {
    double worst = 0;
    for (std::size_t a = 0; a < c.spread.size(); ++a) {
      const double s = quantityScale[a % (nx + ny)];
      const double noise = 100 * tight.rtol * std::abs(valuesOf(nominal, a)) + tight.atol;
      const double floor = withNoise ? noise / (std::abs(c.step.delta) / 2) : 0.0;
      if (s > 0) worst = std::max(worst, std::max(c.spread[a], floor) / s);
    }
    return worst;
  };
  // A wider candidate replaces the chosen one where it agrees with it within the chosen one's
  // uncertainty everywhere; otherwise, for a step from 0, value by value (those where it agrees
  // and its own uncertainty is smaller): one step cannot serve a parameter whose response is strongly nonlinear in one
  // quantity and lost in the noise of another (Raia's il13_level = 0: the adapted step shrank to
  // 1.4e-8 for the curvature of one state and left Rec, ~1e3 times its response, 1.1 % off).
  auto uncertainty = [&](const Candidate& c, std::size_t a) {
    const double noise = 100 * tight.rtol * std::abs(valuesOf(nominal, a)) + tight.atol;
    return 3 * c.spread[a] + 8 * noise / (std::abs(c.step.delta) / 2);
  };
  if (options.richardson && ns > 0) simulate.startParameter(ns - 1);
  for (std::size_t j = 0; j < ns && options.richardson; ++j) {
    if (chosen[j].spread.empty()) continue;  // no half step to compare
    const bool fromZero = chosen[j].step.scheme == FiniteDifferenceScheme::AdaptedFromZero;
    double error = scaledSpread(chosen[j], fromZero);
    const auto k = static_cast<std::size_t>(problem.params[j]);
    double scale = chosen[j].step.scale;
    std::vector<double> within(nxy);  // per value, the uncertainty of the value taken
    for (std::size_t a = 0; a < nxy; ++a) within[a] = uncertainty(chosen[j], a);
    for (int level = 0; level < kMaxWideningLevels && error > kTarget; ++level) {
      scale *= 1e3;
      try {
        Candidate c = candidate(k, scale);
        if (c.spread.size() != nxy) break;
        const double e = scaledSpread(c, fromZero);
        if (e < error && consistentWith(c, chosen[j])) {
          error = e;
          chosen[j] = std::move(c);
          for (std::size_t a = 0; a < nxy; ++a) within[a] = uncertainty(chosen[j], a);
          continue;
        }
        // Value by value only from a step that started at 0: there the adapted step is set by
        // the most nonlinear state and leaves the others in the noise knowingly. From |p| a wider
        // value that merely agrees with a noise-dominated one may be the flat response of a
        // saturated quantity (Okuonghae's total_pop w.r.t. psi = 0.0135: −3e-5 at δ = 1e-3 for
        // −34.39), so there only whole candidates are replaced (above).
        if (!fromZero) continue;
        Candidate& merged = chosen[j];
        long taken = 0;
        for (std::size_t a = 0; a < nxy; ++a) {
          const double own = uncertainty(c, a);
          if (own < within[a] && std::abs(c.column[a] - merged.column[a]) <= within[a]) {
            merged.column[a] = c.column[a];
            merged.spread[a] = c.spread[a];
            within[a] = own;
            ++taken;
          }
        }
        if (taken > 0) {
          merged.step.widerValues += taken;
          merged.step.widerDelta = c.step.delta;
          error = scaledSpread(merged, fromZero);
        }
      } catch (const IntegrationFailure&) {
        break;
      }
    }
  }

  for (std::size_t j = 0; j < ns; ++j) {
    Candidate& best = chosen[j];
    zeroUnreached(j, best);  // a candidate the second pass took
    for (std::size_t it = 0; it < nt; ++it) {
      for (std::size_t i = 0; i < nx; ++i)
        dxdp[((it * nx) + i) * ns + j] = best.column[it * (nx + ny) + i];
      for (std::size_t i = 0; i < ny; ++i)
        dydp[((it * ny) + i) * ns + j] = best.column[it * (nx + ny) + nx + i];
    }
    result.steps.push_back(best.step);
  }
  result.states = std::move(nominal.x);
  result.outputs = std::move(nominal.y);
  result.stateSensitivities = std::move(dxdp);
  result.outputSensitivities = std::move(dydp);
}

}  // namespace sensode::sensitivity
