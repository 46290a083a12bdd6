// SPDX-License-Identifier: MIT
#include "core/estimation/scatter_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/estimation/latin_hypercube.h"

namespace sensode::estimation::detail {

namespace {

using Point = std::vector<double>;

// Every position, finite values first, ascending (bestCandidates' order).
std::vector<int> ascending(const std::vector<double>& values) {
  return bestCandidates(values, static_cast<int>(values.size()));
}

double scaledDistance(const Point& a, const Point& b, const Point& lower, const Point& upper) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double range = upper[i] - lower[i];
    if (range > 0) sum += std::pow((a[i] - b[i]) / range, 2);
  }
  return a.empty() ? 0 : std::sqrt(sum / static_cast<double>(a.size()));
}

class Search {
 public:
  Search(const Point& lower, const Point& upper, const ScatterSearchSettings& s,
         const BatchObjective& f, const std::function<bool()>& stop, const BatchLocalSearch& local)
      : lower_(lower), upper_(upper), s_(s), f_(f), stop_(stop), local_(local),
        rng_(s.seed ^ 0xe55e55e55ULL) {}

  bool exhausted() const { return evaluations_ >= s_.evaluations || (stop_ && stop_()); }

  // Evaluates a batch and keeps every finite point for the choice of starts.
  std::vector<double> evaluate(const std::vector<Point>& points) {
    std::vector<double> values(points.size(), std::numeric_limits<double>::infinity());
    if (points.empty()) return values;
    f_(points, values);
    evaluations_ += static_cast<long>(points.size());
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (!std::isfinite(values[k])) continue;
      archive_.push_back(points[k]);
      archiveValues_.push_back(values[k]);
      best_ = std::min(best_, values[k]);
    }
    return values;
  }

  // 53 random bits in [0, 1), as latinHypercube: one seed, the same draws with every library.
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  // Uniform in the box spanned by a and b (either order), clipped to the bounds.
  Point inBox(const Point& a, const Point& b) {
    Point x(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double lo = std::clamp(std::min(a[i], b[i]), lower_[i], upper_[i]);
      const double hi = std::clamp(std::max(a[i], b[i]), lower_[i], upper_[i]);
      x[i] = lo + uniform() * (hi - lo);
    }
    return x;
  }
  Point random() { return inBox(lower_, upper_); }

  void run() {
    const int n = static_cast<int>(lower_.size());
    // eSS: b(b − 1) = 10 n children per generation (b² − b − 10 n = 0), b even.
    int b = s_.refsetSize > 0 ? s_.refsetSize
                              : static_cast<int>(std::ceil((1 + std::sqrt(1.0 + 40.0 * n)) / 2));
    if (s_.refsetSize <= 0 && b % 2) ++b;
    b = std::max(b, 4);
    const long diverse =
        std::max<long>(b, std::min<long>(s_.diverse > 0 ? s_.diverse : std::max(10 * n, 2 * b),
                                         std::max<long>(b, s_.evaluations / 2)));
    initialize(b, latinHypercube(lower_, upper_, static_cast<int>(diverse), s_.seed ^ 0xd17e75eULL));
    initial_ = archive_.size();
    while (!exhausted()) generation();
  }

  ScatterSearchResult result(int count) const {
    ScatterSearchResult r;
    r.evaluations = evaluations_;
    r.generations = generations_;
    r.localSearches = static_cast<int>(localOptima_.size());
    r.best = best_;
    // The distance filter of eSS's local-search selection (Egea et al. 2010 §2.4): starts in
    // one basin would end at one optimum, so every start after the best must be far from the
    // others. Halved until enough points qualify (a search that converged has few far points).
    // A share of the starts may come from the initial Latin hypercube's best (the screen's
    // choice): a search that converged onto a wide plateau (Crauste: 291.7, the fit 191.0) has
    // its distinct points all on it.
    std::vector<int> chosen;
    const auto fill = [&](int upto, std::size_t limit) {
      for (double d = s_.startDistance; static_cast<int>(chosen.size()) < upto; d /= 2) {
        extendDistinct(archive_, archiveValues_, lower_, upper_, upto, d > 1e-6 ? d : 0, chosen,
                       limit);
        if (d <= 1e-6) break;
      }
    };
    const int fromInitial = static_cast<int>(std::lround(count * s_.initialShare));
    fill(count - fromInitial, archive_.size());
    fill(count, initial_);
    fill(count, archive_.size());  // too few initial points: the rest from the search
    std::stable_sort(chosen.begin(), chosen.end(), [&](int a, int b) {
      return archiveValues_[static_cast<std::size_t>(a)] < archiveValues_[static_cast<std::size_t>(b)];
    });
    for (int k : chosen) {
      r.starts.push_back(archive_[static_cast<std::size_t>(k)]);
      r.values.push_back(archiveValues_[static_cast<std::size_t>(k)]);
    }
    return r;
  }

  // Fewer finite points than starts (a tiny budget, a model that mostly fails): the rest are
  // uniform points, which the multistart redraws where the objective fails.
  void pad(ScatterSearchResult& r, int count) {
    while (static_cast<int>(r.starts.size()) < count) {
      r.starts.push_back(random());
      r.values.push_back(std::numeric_limits<double>::infinity());
    }
  }

 private:
  // eSS's initial reference set: the best half of the diverse points, the rest chosen one by
  // one as the point farthest from the set so far (MEIGO; pyPESTO draws them at random).
  void initialize(int b, const std::vector<Point>& diverse) {
    const std::vector<double> values = evaluate(diverse);
    const std::vector<int> order = ascending(values);
    std::vector<bool> taken(diverse.size(), false);
    for (int k = 0; k < b / 2 && k < static_cast<int>(order.size()); ++k) {
      const auto p = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
      add(diverse[p], values[p]);
      taken[p] = true;
    }
    while (static_cast<int>(x_.size()) < b) {
      int far = -1;
      double farthest = -1;
      for (std::size_t p = 0; p < diverse.size(); ++p) {
        if (taken[p]) continue;
        double d = std::numeric_limits<double>::infinity();
        for (const Point& y : x_) d = std::min(d, scaledDistance(diverse[p], y, lower_, upper_));
        if (d > farthest) farthest = d, far = static_cast<int>(p);
      }
      if (far < 0) {  // fewer diverse points than b
        add(random(), std::numeric_limits<double>::infinity());
        continue;
      }
      taken[static_cast<std::size_t>(far)] = true;
      add(diverse[static_cast<std::size_t>(far)], values[static_cast<std::size_t>(far)]);
    }
  }
  void add(const Point& x, double v) {
    x_.push_back(x);
    fx_.push_back(v);
    stuck_.push_back(0);
  }

  void sortRefset() {
    const std::vector<int> order = ascending(fx_);
    std::vector<Point> x;
    std::vector<double> fx;
    std::vector<int> stuck;
    for (int k : order) {
      x.push_back(x_[static_cast<std::size_t>(k)]);
      fx.push_back(fx_[static_cast<std::size_t>(k)]);
      stuck.push_back(stuck_[static_cast<std::size_t>(k)]);
    }
    x_ = std::move(x), fx_ = std::move(fx), stuck_ = std::move(stuck);
  }

  // Replaces the members at `which` by uniform points (one batch).
  void replaceByRandom(const std::vector<int>& which) {
    std::vector<Point> points;
    for (std::size_t k = 0; k < which.size(); ++k) points.push_back(random());
    const std::vector<double> values = evaluate(points);
    for (std::size_t k = 0; k < which.size(); ++k) {
      const auto i = static_cast<std::size_t>(which[k]);
      x_[i] = points[k], fx_[i] = values[k], stuck_[i] = 0;
    }
  }

  void generation() {
    const int b = static_cast<int>(x_.size());
    sortRefset();
    // Members within 1e-3 of the box of a better one in every coordinate duplicate it (eSS's
    // proximity test; on the scale, since log-scale values may be 0).
    std::vector<int> close;
    for (int j = 1; j < b; ++j)
      for (int i = 0; i < j; ++i) {
        bool near = true;
        for (std::size_t k = 0; k < lower_.size() && near; ++k)
          near = std::abs(x_[static_cast<std::size_t>(i)][k] - x_[static_cast<std::size_t>(j)][k]) <=
                 1e-3 * (upper_[k] - lower_[k]);
        if (near) {
          close.push_back(j);
          break;
        }
      }
    replaceByRandom(close);
    if (!close.empty()) sortRefset();

    // Combination (Egea et al. 2009 §3.2): for members i and j (0 best), d = (x_j − x_i)/2,
    // α = +1 when i is the better, −1 otherwise, β = (|j − i| − 1)/(b − 2), and the child is
    // uniform in the box from x_i − d(1 + αβ) to x_i + d(1 − αβ). Neighbours in rank (β = 0)
    // give a box around x_i; far apart, the better one's box reaches away from the worse one
    // (exploration past it) and the worse one's reaches towards the better.
    std::vector<Point> children;
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j) {
        if (i == j) continue;
        const Point& xi = x_[static_cast<std::size_t>(i)];
        const Point& xj = x_[static_cast<std::size_t>(j)];
        const double alpha = i < j ? 1 : -1;
        const double beta = static_cast<double>(std::abs(j - i) - 1) / (b - 2);
        Point c1(xi.size()), c2(xi.size());
        for (std::size_t k = 0; k < xi.size(); ++k) {
          const double d = (xj[k] - xi[k]) / 2;
          c1[k] = xi[k] - d * (1 + alpha * beta);
          c2[k] = xi[k] + d * (1 - alpha * beta);
        }
        children.push_back(inBox(c1, c2));
      }
    const std::vector<double> values = evaluate(children);
    std::vector<Point> child(static_cast<std::size_t>(b));
    std::vector<double> fchild(static_cast<std::size_t>(b), std::numeric_limits<double>::infinity());
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b - 1; ++j) {
        const auto c = static_cast<std::size_t>(i * (b - 1) + j);
        if (values[c] < fchild[static_cast<std::size_t>(i)] || child[static_cast<std::size_t>(i)].empty())
          child[static_cast<std::size_t>(i)] = children[c], fchild[static_cast<std::size_t>(i)] = values[c];
      }
    goBeyond(child, fchild);
    if (local_ && s_.localEvery > 0 && generations_ % s_.localEvery == s_.localEvery - 1 &&
        !exhausted())
      localSearches(child, fchild);

    std::vector<int> stuck;
    for (std::size_t i = 0; i < static_cast<std::size_t>(b); ++i) {
      if (fchild[i] < fx_[i]) {
        x_[i] = child[i], fx_[i] = fchild[i], stuck_[i] = 0;
      } else if (++stuck_[i] > s_.stuckLimit) {
        stuck.push_back(static_cast<int>(i));  // eSS: a member that stopped improving is renewed
      }
    }
    replaceByRandom(stuck);
    ++generations_;
  }

  // Go-beyond (Egea et al. 2009 §3.4): while a child improves on its parent, the next child is
  // drawn past it, in the box from the child to child + (child − parent)·2^k, the factor doubled
  // after every two improvements. The members' sequences run side by side, one batch a step.
  void goBeyond(std::vector<Point>& child, std::vector<double>& fchild) {
    struct Walk {
      std::size_t member;
      Point parent;
      double factor = 1;
      int improvements = 1;
    };
    std::vector<Walk> walks;
    for (std::size_t i = 0; i < child.size(); ++i)
      if (fchild[i] < fx_[i]) walks.push_back({i, x_[i]});
    while (!walks.empty() && !exhausted()) {
      std::vector<Point> next;
      for (Walk& w : walks) {
        const Point& c = child[w.member];
        Point far(c.size());
        for (std::size_t k = 0; k < c.size(); ++k) far[k] = c[k] - (w.parent[k] - c[k]) * w.factor;
        next.push_back(inBox(far, c));
      }
      const std::vector<double> values = evaluate(next);
      std::vector<Walk> going;
      for (std::size_t k = 0; k < walks.size(); ++k) {
        Walk& w = walks[k];
        if (!(values[k] < fchild[w.member])) continue;
        w.parent = child[w.member];
        child[w.member] = next[k], fchild[w.member] = values[k];
        if (++w.improvements == 2) w.factor *= 2, w.improvements = 0;
        going.push_back(std::move(w));
      }
      walks = std::move(going);
    }
  }

  // Local searches from the children best in quality and in distance from the earlier local
  // optima together (pyPESTO's balance 0.5): far from every optimum found, a good child is
  // likely in a basin not yet searched.
  void localSearches(std::vector<Point>& child, std::vector<double>& fchild) {
    const std::size_t b = child.size();
    std::vector<double> distance(b, std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < b; ++i)
      for (const Point& y : localOptima_)
        distance[i] = std::min(distance[i], scaledDistance(child[i], y, lower_, upper_));
    std::vector<double> negative(b);
    for (std::size_t i = 0; i < b; ++i) negative[i] = -distance[i];
    std::vector<int> qualityRank(b), distanceRank(b);
    const std::vector<int> byQuality = ascending(fchild), byDistance = ascending(negative);
    for (std::size_t r = 0; r < b; ++r) {
      qualityRank[static_cast<std::size_t>(byQuality[r])] = static_cast<int>(r);
      distanceRank[static_cast<std::size_t>(byDistance[r])] = static_cast<int>(r);
    }
    std::vector<double> priority(b);
    for (std::size_t i = 0; i < b; ++i)
      priority[i] = std::isfinite(fchild[i]) ? qualityRank[i] + distanceRank[i]
                                             : std::numeric_limits<double>::infinity();
    std::vector<int> chosen = ascending(priority);
    chosen.resize(std::min(b, static_cast<std::size_t>(std::max(1, s_.localCount))));
    std::vector<Point> points;
    std::vector<double> values;
    std::vector<std::size_t> from;  // the child each point came from
    for (int i : chosen) {
      if (!std::isfinite(fchild[static_cast<std::size_t>(i)])) continue;
      from.push_back(static_cast<std::size_t>(i));
      points.push_back(child[static_cast<std::size_t>(i)]);
      values.push_back(fchild[static_cast<std::size_t>(i)]);
    }
    if (points.empty()) return;
    evaluations_ += local_(points, values);
    for (std::size_t k = 0; k < points.size(); ++k) {
      localOptima_.push_back(points[k]);
      if (!std::isfinite(values[k])) continue;
      const std::size_t i = from[k];
      child[i] = points[k], fchild[i] = values[k];
      archive_.push_back(points[k]);
      archiveValues_.push_back(values[k]);
      best_ = std::min(best_, values[k]);
    }
  }

  const Point& lower_;
  const Point& upper_;
  const ScatterSearchSettings& s_;
  const BatchObjective& f_;
  const std::function<bool()>& stop_;
  const BatchLocalSearch& local_;
  std::mt19937_64 rng_;
  long evaluations_ = 0;
  int generations_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
  std::vector<Point> x_;  // reference set, with its values and generations without improvement
  std::vector<double> fx_;
  std::vector<int> stuck_;
  std::vector<Point> archive_;  // every finite evaluated point
  std::vector<double> archiveValues_;
  std::size_t initial_ = 0;  // archive_[0, initial_): the initial Latin hypercube's finite points
  std::vector<Point> localOptima_;  // end points of the local searches
};

}  // namespace

std::vector<int> bestCandidates(const std::vector<double>& values, int count) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  // stable: equal values (and all non-finite ones) keep position order.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double va = values[static_cast<std::size_t>(a)], vb = values[static_cast<std::size_t>(b)];
    const bool fa = std::isfinite(va), fb = std::isfinite(vb);
    if (fa != fb) return fa;
    return fa && va < vb;
  });
  order.resize(std::min(order.size(), static_cast<std::size_t>(std::max(0, count))));
  return order;
}

void extendDistinct(const std::vector<std::vector<double>>& points,
                    const std::vector<double>& values, const std::vector<double>& lower,
                    const std::vector<double>& upper, int count, double minDistance,
                    std::vector<int>& chosen, std::size_t limit) {
  for (int k : ascending(values)) {
    if (static_cast<int>(chosen.size()) >= count) break;
    if (!std::isfinite(values[static_cast<std::size_t>(k)])) break;
    if (static_cast<std::size_t>(k) >= limit ||
        std::find(chosen.begin(), chosen.end(), k) != chosen.end())
      continue;
    const Point& x = points[static_cast<std::size_t>(k)];
    const bool far = std::all_of(chosen.begin(), chosen.end(), [&](int c) {
      return scaledDistance(x, points[static_cast<std::size_t>(c)], lower, upper) >= minDistance;
    });
    if (far) chosen.push_back(k);
  }
}

std::vector<int> distinctBest(const std::vector<std::vector<double>>& points,
                              const std::vector<double>& values,
                              const std::vector<double>& lower, const std::vector<double>& upper,
                              int count, double minDistance) {
  std::vector<int> chosen;
  extendDistinct(points, values, lower, upper, count, minDistance, chosen, points.size());
  return chosen;
}

ScatterSearchResult scatterSearch(const std::vector<double>& lower,
                                  const std::vector<double>& upper, int count,
                                  const ScatterSearchSettings& settings,
                                  const BatchObjective& objective,
                                  const std::function<bool()>& stop,
                                  const BatchLocalSearch& local) {
  Search search(lower, upper, settings, objective, stop, local);
  if (count < 1) return {};
  search.run();
  ScatterSearchResult r = search.result(count);
  search.pad(r, count);
  return r;
}

}  // namespace sensode::estimation::detail
