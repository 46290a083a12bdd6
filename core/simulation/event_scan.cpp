// SPDX-License-Identifier: MIT
// The trigger scan of EventSimulation (event_simulation.h): each accepted step is scanned for
// trigger switches on the integrator's dense output, in pieces that end at the output times inside
// it; a root function's sign change is located by Illinois regula falsi, a trigger's own switch
// by bisection; the states found at the output times are kept for run() to report.
#include <algorithm>
#include <cmath>

#include "core/simulation/event_simulation_impl.h"

namespace sensode::simulation {

void EventSimulation::Impl::resetScan(double t, const std::vector<double>& x) {
  tLeft = t;
  gLeft.resize(static_cast<std::size_t>(events.numRoots()));
  events.roots(t, x.data(), pp(), gLeft.data());
}

void EventSimulation::Impl::evaluateAt(double t, integrators::StepDenseOutput& dense,
                                       std::vector<double>& x, std::vector<double>& g,
                                       std::vector<double>& tr, bool withState) {
  if (withState || events.readsStates()) dense.state(t, x.data());
  events.roots(t, x.data(), pp(), g.data());
  events.triggers(t, x.data(), pp(), tr.data());
}

double EventSimulation::Impl::locateRoot(int k, double a, double ga, double b, double gb,
                                         integrators::StepDenseOutput& dense, double tol) {
  const auto ki = static_cast<std::size_t>(k);
  const bool leftClass = ga > 0;
  int side = 0;
  for (int it = 0; b - a > tol && it < kIllinoisIterations + 200; ++it) {
    double m = it < kIllinoisIterations ? b - gb * (b - a) / (gb - ga) : 0.5 * (a + b);
    // g_k = 0 at b (a time, a threshold hit exactly): the secant stays at b; one value a
    // tolerance before b decides, where halving took a dozen (BIOMD0000000144).
    if (gb == 0 && b - tol > a) m = b - tol;
    if (!(m > a && m < b)) m = 0.5 * (a + b);
    evaluateAt(m, dense, xs, gs, trig);
    const double gm = gs[ki];
    if ((gm > 0) == leftClass) {
      a = m;
      ga = gm;
      if (side == -1) gb *= 0.5;
      side = -1;
    } else {
      b = m;
      gb = gm;
      if (side == +1) ga *= 0.5;
      side = +1;
    }
  }
  return b;
}

double EventSimulation::Impl::bisectTrigger(int e, double a, double b,
                                            integrators::StepDenseOutput& dense, double tol) {
  const double before = triggerState[static_cast<std::size_t>(e)];
  while (b - a > tol) {
    const double m = 0.5 * (a + b);
    if (!(m > a && m < b)) break;
    evaluateAt(m, dense, xs, gs, trig);
    (trig[static_cast<std::size_t>(e)] == before ? a : b) = m;
  }
  return b;
}

void EventSimulation::Impl::onStep(double tStart, double tEnd,
                                   integrators::StepDenseOutput& dense) {
  if (history) history->addStep(tStart, tEnd, dense);
  forgetScannedOutputs();
  if (!scanning) return;
  double left = tLeft = std::max(tLeft, tStart);
  // The scan reads the states wherever a trigger or root function does; then its values at the
  // output times are the outputs' own (the same dense output at the same time).
  const bool keep = events.readsStates() && !sens && !propagator && !history;
  auto scanTo = [&](double right, bool isOutput) {
    // (1e-9: a gap of one spacing, 0.3 − 0.2 = 0.09999999999999998 / 0.1, is one piece)
    const double pieces =
        std::clamp(std::ceil((right - left) / sampleSpacing - 1e-9), 1.0, kMaxPiecesPerStep);
    for (double i = 1; i <= pieces; ++i)
      scan(i == pieces ? right : left + (right - left) * (i / pieces), dense);
    left = right;
    if (keep && isOutput && scannedStates.size() + xR.size() <= kMaxScannedValues) {
      scannedTimes.push_back(right);
      scannedStates.insert(scannedStates.end(), xR.begin(), xR.end());
    }
  };
  // Nothing after the last output time is reported: a step that ends beyond it (a stiff run's
  // last step can be ten output spacings long) is scanned up to it.
  const double end = times->empty() ? tEnd : std::min(tEnd, times->back());
  try {
    for (std::size_t k = nextOutput; k < times->size() && (*times)[k] <= end; ++k)
      if ((*times)[k] > left) scanTo((*times)[k], true);
    if (end > left) scanTo(end, false);
  } catch (const RootStop&) {
    forgetScannedOutputs();  // run() reports the outputs before the stop (emitOutputsBefore)
    if (propagator) propagateToStop(dense);
    throw;
  }
  tLeft = tEnd;
  if (propagator) propagateOver(tEnd, dense);
}

void EventSimulation::Impl::forgetScannedOutputs() {
  scannedTimes.clear();
  scannedStates.clear();
  scannedNext = 0;
}

bool EventSimulation::Impl::takeScannedOutput(double T, std::vector<double>& x) {
  while (scannedNext < scannedTimes.size() && scannedTimes[scannedNext] < T) ++scannedNext;
  if (scannedNext == scannedTimes.size() || scannedTimes[scannedNext] != T) return false;
  const auto nx = x.size();
  const auto from = scannedStates.begin() + static_cast<long>(scannedNext * nx);
  std::copy(from, from + static_cast<long>(nx), x.begin());
  return true;
}

void EventSimulation::Impl::scan(double right, integrators::StepDenseOutput& dense) {
  double left = tLeft;
  const std::size_t nr = gLeft.size();
  Cause passedRoot{};  // the last candidate passed without a stop in this piece
  double passedRootTime = -kInf;
  for (;;) {
    evaluateAt(right, dense, xR, gR, trigR);
    const double tol = std::max(kTimeTolerance * std::max(std::abs(right), right - left), 1e-300);
    double candidate = kInf;
    Cause cause{};
    auto consider = [&](double t, Cause c) {
      if (t < candidate) candidate = t, cause = c;
    };
    for (std::size_t k = 0; k < nr; ++k)
      if ((gLeft[k] > 0) != (gR[k] > 0))
        consider(locateRoot(static_cast<int>(k), left, gLeft[k], right, gR[k], dense, tol),
                 {Cause::Root, static_cast<int>(k)});
    for (std::size_t j = 0; j < timeRootValues.size(); ++j)
      if (timeRootValues[j] > left && timeRootValues[j] <= right)
        consider(timeRootValues[j], {Cause::TimeRoot, static_cast<int>(j)});
    const double due = nextQueueTime();
    if (due > left && due <= right) consider(due, {Cause::Delayed, 0});
    // A trigger that has switched by the candidate (or by the end) without a root function
    // changing sign there (t > c just after c; a non-relational trigger) switched earlier:
    // bisect on its value.
    const double check = candidate == kInf ? right : candidate;
    // The values at `right` are at hand: each evaluation of odeSD's dense output on a stiff
    // step is an implicit sub-step (BIOMD0000000149: 313 of them for 101 outputs, a third
    // of them repeats of the one just made).
    if (check == right) {
      xs = xR, gs = gR, trig = trigR;
    } else {
      evaluateAt(check, dense, xs, gs, trig);
    }
    double earliest = kInf;
    bool bisected = false;  // bisectTrigger leaves xs, gs, trig at its last midpoint
    std::vector<int>& switched = switchedScratch;
    switched.clear();
    for (int e = 0; e < ne(); ++e)
      if (trig[static_cast<std::size_t>(e)] != triggerState[static_cast<std::size_t>(e)])
        switched.push_back(e);
    // A trigger that switched at the located root, as its relational's does, has not switched
    // a tolerance before it: one value there instead of bisecting [left, check] again (30–50
    // sub-steps per event on BIOMD0000000144). A bisection would only matter if it ended
    // before check − tol.
    if (!switched.empty() && candidate != kInf && check - tol > left) {
      evaluateAt(check - tol, dense, xs, gs, trig);
      bisected = true;
      std::erase_if(switched, [&](int e) {
        return trig[static_cast<std::size_t>(e)] == triggerState[static_cast<std::size_t>(e)];
      });
    }
    for (int e : switched) {
      earliest = std::min(earliest, bisectTrigger(e, left, check, dense, tol));
      bisected = true;
    }
    if (earliest < check - tol || candidate == kInf) consider(earliest, {Cause::Bisected, 0});
    if (candidate == kInf) break;

    if (bisected || candidate != check || !events.readsStates())
      evaluateAt(candidate, dense, xs, gs, trig, true);
    bool stop = candidate == due;
    for (std::size_t e = 0; e < static_cast<std::size_t>(ne()); ++e)
      stop = stop || (triggerState[e] == 0 && trig[e] != 0);
    if (stop) {
      stopTime = candidate;
      stopState = xs;
      stopCause = cause;
      // A switch found by bisection just after a root function's sign change or a time event's
      // time (t > c switches just after c) has that root as its trigger function.
      // (A root located where g = 0 exactly leaves a strict trigger still false there; it
      // switches one bisection later.)
      if (cause.kind == Cause::Bisected) {
        if (passedRoot.kind == Cause::Root && candidate - passedRootTime <= 4 * tol)
          stopCause = passedRoot;
        for (std::size_t k = 0; k < nr && stopCause.kind == Cause::Bisected; ++k)
          if ((gLeft[k] > 0) != (gs[k] > 0)) stopCause = {Cause::Root, static_cast<int>(k)};
        for (std::size_t j = 0; j < timeRootValues.size() && stopCause.kind == Cause::Bisected; ++j)
          if (timeRootValues[j] >= left && timeRootValues[j] <= candidate)
            stopCause = {Cause::TimeRoot, static_cast<int>(j)};
      }
      // With sensitivities the outputs before the stop are integrated again (S is not part of
      // the dense output); see EventSimulation::run.
      if (!sens) emitOutputsBefore(candidate, dense);
      throw RootStop{};
    }
    // Only switches to false here: they cancel, and need no restart.
    for (int e = 0; e < ne(); ++e) {
      const auto i = static_cast<std::size_t>(e);
      if (triggerState[i] != 0 && trig[i] == 0) cancelIfNotPersistent(e);
      triggerState[i] = trig[i];
    }
    left = candidate;
    tLeft = candidate;
    gLeft = gs;
    passedRoot = cause;
    passedRootTime = candidate;
  }
  tLeft = right;
  gLeft = gR;
}

void EventSimulation::Impl::emitOutputsBefore(double t, integrators::StepDenseOutput& dense) {
  std::vector<double> x(xs.size());
  while (nextOutput < times->size() && (*times)[nextOutput] < t) {
    dense.state((*times)[nextOutput], x.data());
    (*output)((*times)[nextOutput], x.data());
    ++nextOutput;
  }
}

}  // namespace sensode::simulation
