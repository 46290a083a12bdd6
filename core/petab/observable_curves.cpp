// SPDX-License-Identifier: MIT
#include "core/petab/observable_curves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace sensode::petab {

namespace {

std::string valueText(const Value& v) {
  if (v.isParameter()) return v.parameterId;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v.number);
  return buffer;
}

}  // namespace

std::string observableParametersText(const Measurement& m) {
  std::string text;
  for (std::size_t n = 0; n < m.observableParameters.size(); ++n) {
    if (n) text += ';';
    text += valueText(m.observableParameters[n]);
  }
  return text;
}

std::vector<ObservableCurve> observableCurves(const Problem& problem,
                                              const std::vector<double>& scaled,
                                              const ObjectiveOptions& options, int gridPoints,
                                              const ProgressMonitor& monitor) {
  // Groups in the order of their first measurement row; each keeps one row as its template.
  using Key = std::tuple<int, int, int, std::string>;  // pre-eq, condition, observable, params
  std::map<Key, std::size_t> index;
  std::vector<ObservableCurve> curves;
  std::vector<const Measurement*> templates;
  std::map<std::pair<int, int>, double> lastTime;  // per experiment
  for (const Measurement& m : problem.measurements) {
    if (!std::isfinite(m.time)) continue;
    const auto experiment = std::make_pair(m.preequilibrationCondition, m.simulationCondition);
    lastTime[experiment] = std::max(lastTime[experiment], m.time);
    const Key key{m.preequilibrationCondition, m.simulationCondition, m.observable,
                  observableParametersText(m)};
    auto [it, added] = index.emplace(key, curves.size());
    if (added) {
      ObservableCurve c;
      c.observable = m.observable;
      c.simulationCondition = m.simulationCondition;
      c.preequilibrationCondition = m.preequilibrationCondition;
      c.observableParameters = std::get<3>(key);
      curves.push_back(std::move(c));
      templates.push_back(&m);
    }
    curves[it->second].times.push_back(m.time);
  }
  if (curves.empty()) return curves;

  // The grid of each curve: its experiment's equally spaced times and its own measurement times.
  const int n = std::max(gridPoints, 2);
  for (ObservableCurve& c : curves) {
    const double end = lastTime[{c.preequilibrationCondition, c.simulationCondition}];
    for (int k = 0; k < n; ++k) c.times.push_back(end * k / (n - 1));
    std::sort(c.times.begin(), c.times.end());
    c.times.erase(std::unique(c.times.begin(), c.times.end()), c.times.end());
  }

  // The copy: one measurement per grid time; linear, normal observables with σ = 1, because
  // a log-transformed observable is 0 at times no measurement was taken (its value would be
  // refused) and the likelihood is not wanted, only y.
  Problem grid = problem;
  grid.measurements.clear();
  for (std::size_t g = 0; g < curves.size(); ++g) {
    for (double t : curves[g].times) {
      Measurement m = *templates[g];
      m.time = t;
      m.value = 0;
      grid.measurements.push_back(std::move(m));
    }
  }
  const symbolic::Expr one = problem.model->system().pool->one();
  for (Observable& o : grid.observables) {
    o.transformation = Transformation::Lin;
    o.distribution = NoiseDistribution::Normal;
    o.noise = one;
  }
  // Priors do not change y; without them a prior outside its support cannot refuse the grid.
  for (Parameter& p : grid.parameters) p.prior = {};
  const ObjectiveResult simulated =
      evaluateObjective(grid, scaled, GradientMethod::None, options, monitor);
  std::size_t row = 0;
  for (ObservableCurve& c : curves) {
    c.values.assign(simulated.simulated.begin() + static_cast<std::ptrdiff_t>(row),
                    simulated.simulated.begin() + static_cast<std::ptrdiff_t>(row + c.times.size()));
    row += c.times.size();
  }
  return curves;
}

}  // namespace sensode::petab
