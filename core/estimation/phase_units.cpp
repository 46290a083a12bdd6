// SPDX-License-Identifier: MIT
#include "core/estimation/phase_units.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "core/common/errors.h"
#include "core/estimation/polish.h"
#include "core/estimation/start_screen.h"

namespace sensode::estimation::detail {
namespace {

// A phase text: `key value` lines, then embedded texts as `section NAME BYTES` followed by
// exactly BYTES bytes (the plan and start results are multi-line texts of their own).
std::string section(const std::string& name, const std::string& text) {
  return "section " + name + " " + std::to_string(text.size()) + "\n" + text;
}

struct ParsedPhase {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, std::string>> sections;
};

ParsedPhase parsePhase(const std::string& text, const std::string& what) {
  ParsedPhase out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    if (line.empty()) continue;
    if (line.rfind("section ", 0) == 0) {
      std::istringstream in(line.substr(8));
      std::string name;
      std::size_t bytes = 0;
      if (!(in >> name >> bytes) || at + bytes > text.size())
        throw Error(what + ": a truncated section '" + line + "'");
      out.sections.emplace_back(name, text.substr(at, bytes));
      at += bytes;
      continue;
    }
    const std::size_t space = line.find(' ');
    out.fields.emplace_back(line.substr(0, space),
                            space == std::string::npos ? std::string() : line.substr(space + 1));
  }
  return out;
}

const std::string& field(const ParsedPhase& p, const std::string& key, const std::string& what) {
  for (const auto& [k, v] : p.fields)
    if (k == key) return v;
  throw Error(what + ": no '" + key + "' line");
}

long integer(const ParsedPhase& p, const std::string& key, const std::string& what) {
  const std::string& v = field(p, key, what);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0') throw Error(what + ": '" + key + "': not an integer");
  return n;
}

std::vector<double> doubles(const std::string& v, const std::string& what) {
  std::vector<double> out;
  std::istringstream in(v);
  std::string item;
  while (in >> item) {
    char* end = nullptr;
    out.push_back(std::strtod(item.c_str(), &end));
    if (end == item.c_str() || *end != '\0') throw Error(what + ": '" + item + "' is not a number");
  }
  return out;
}

std::string numbers(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += " " + exactNumber(v);
  return out;
}

}  // namespace

std::string screenPhase(int count, int factor, std::uint64_t seed, const FitSetup& setup) {
  const long points = static_cast<long>(std::max(0, count)) * std::max(1, factor);
  return "phase screen\nunits " + std::to_string((points + kScreenChunk - 1) / kScreenChunk) +
         "\ncount " + std::to_string(count) + "\nfactor " + std::to_string(factor) + "\nseed " +
         std::to_string(seed) + "\ngradient " + petab::toString(setup.gradient) +
         "\nnoise_residuals " + (setup.noiseResiduals ? "1" : "0") + "\n";
}

std::string pointsPhase(const std::vector<std::vector<double>>& points, const FitSetup& setup) {
  std::string out = "phase points\nunits " +
                    std::to_string((points.size() + kScreenChunk - 1) / kScreenChunk) +
                    "\ngradient " + petab::toString(setup.gradient) + "\nnoise_residuals " +
                    (setup.noiseResiduals ? "1" : "0") + "\n";
  for (const auto& x : points) out += "point" + numbers(x) + "\n";
  return out;
}

std::string polishPhase(const StartPlan& plan, const std::vector<StartResult>& starts) {
  std::string out = "phase polish\nunits " + std::to_string(starts.size()) + "\n";
  out += section("plan", toText(plan));
  for (const StartResult& s : starts) out += section("start", toText(s));
  return out;
}

std::string profilePhase(const StartPlan& plan, const std::vector<double>& best,
                         double bestObjective, double threshold, const std::vector<int>& profiled) {
  std::string out = "phase profile\nunits " + std::to_string(2 * profiled.size()) + "\n";
  out += "best_objective " + exactNumber(bestObjective) + "\nthreshold " + exactNumber(threshold) +
         "\nbest" + numbers(best) + "\nprofiled";
  for (int k : profiled) out += " " + std::to_string(k);
  out += "\n" + section("plan", toText(plan));
  return out;
}

PhaseComputer::PhaseComputer(std::string text, const std::filesystem::path& yaml,
                             const FitSetup& setup, const EstimationOptions& options)
    : text_(std::move(text)), options_(&options), setup_(setup) {
  const std::string what = "the phase";
  const ParsedPhase p = parsePhase(text_, what);
  const std::string& kind = field(p, "phase", what);
  units_ = static_cast<int>(integer(p, "units", what));
  const auto plan = [&] {
    for (const auto& [name, body] : p.sections)
      if (name == "plan") return startPlanFromText(body, what + "'s plan");
    throw Error(what + ": no plan section");
  };
  if (kind == "screen" || kind == "points") {
    kind_ = Kind::Screen;
    const auto gradient = petab::gradientMethodFromString(field(p, "gradient", what));
    if (!gradient) throw Error(what + ": unknown gradient method");
    setup_.gradient = *gradient;
    setup_.noiseResiduals = integer(p, "noise_residuals", what) != 0;
    if (kind == "screen") {
      candidates_ = screenCandidates(setup_, static_cast<int>(integer(p, "count", what)),
                                     static_cast<int>(integer(p, "factor", what)),
                                     std::strtoull(field(p, "seed", what).c_str(), nullptr, 10));
    } else {
      for (const auto& [key, value] : p.fields)
        if (key == "point") candidates_.push_back(doubles(value, what));
    }
    if ((candidates_.size() + kScreenChunk - 1) / kScreenChunk != static_cast<std::size_t>(units_))
      throw Error(what + ": units and points differ");
  } else if (kind == "polish") {
    kind_ = Kind::Polish;
    context_ = makeStartContext(yaml, setup, plan(), options);
    for (const auto& [name, body] : p.sections)
      if (name == "start") starts_.push_back(startResultFromText(body, what + "'s start"));
    if (static_cast<int>(starts_.size()) != units_) throw Error(what + ": units and starts differ");
  } else if (kind == "profile") {
    kind_ = Kind::Profile;
    context_ = makeStartContext(yaml, setup, plan(), options);
    best_ = doubles(field(p, "best", what), what);
    bestObjective_ = doubles(field(p, "best_objective", what), what).at(0);
    threshold_ = doubles(field(p, "threshold", what), what).at(0);
    std::istringstream in(field(p, "profiled", what));
    for (int k = 0; in >> k;) profiled_.push_back(k);
    if (2 * static_cast<int>(profiled_.size()) != units_)
      throw Error(what + ": units and profiled parameters differ");
  } else {
    throw Error(what + ": unknown phase '" + kind + "'");
  }
}

std::string PhaseComputer::compute(int unit, const WorkerProblems& problems,
                                   const ProgressMonitor& monitor,
                                   const std::function<void()>& pointDone) const {
  if (unit < 0 || unit >= units_) throw Error("the phase has no unit " + std::to_string(unit));
  switch (kind_) {
    case Kind::Screen: {
      const std::size_t first = static_cast<std::size_t>(unit) * kScreenChunk;
      const std::size_t count = std::min<std::size_t>(kScreenChunk, candidates_.size() - first);
      std::vector<double> values(count, std::numeric_limits<double>::infinity());
      // The first Cancelled stops the rest: a cancel can reach an evaluation without passing the
      // monitor (the conservation analysis sees the run's token through its CancellationScope).
      std::atomic<bool> cancelled{false};
      problems.run(static_cast<int>(count), [&](int i, const petab::Problem& own) {
        if (cancelled.load(std::memory_order_relaxed) || monitor.token.cancelled()) return;
        FitObjective f(own, setup_, monitor);
        try {
          values[static_cast<std::size_t>(i)] =
              f.value(candidates_[first + static_cast<std::size_t>(i)].data(), nullptr);
        } catch (const Cancelled&) {
          cancelled.store(true, std::memory_order_relaxed);
        } catch (const Error&) {
          // Where the model cannot be simulated is no start: left at infinity.
        }
        if (pointDone && !cancelled.load(std::memory_order_relaxed)) pointDone();
      });
      if (cancelled || monitor.token.cancelled()) return "cancelled";
      return "values" + numbers(values) + "\n";
    }
    case Kind::Polish: {
      StartResult s = starts_[static_cast<std::size_t>(unit)];
      problems.run(1, [&](int, const petab::Problem& own) {
        polishStart(own, context_->setup, context_->leastSquares, context_->settings, monitor, s);
      });
      if (monitor.token.cancelled()) return "cancelled";
      return toText(s);
    }
    case Kind::Profile: {
      FitSetup atBest = context_->setup;
      atBest.point = best_;
      ProfileDirection d;
      bool cancelled = false;
      problems.run(1, [&](int, const petab::Problem& own) {
        try {
          d = profileDirection(own, atBest, profiled_[static_cast<std::size_t>(unit / 2)], best_,
                               bestObjective_, threshold_, unit % 2 ? 1 : -1,
                               context_->leastSquares, context_->settings, *options_, monitor,
                               [&] {
                                 if (pointDone) pointDone();
                               });
        } catch (const Cancelled&) {
          cancelled = true;
        } catch (const Error& e) {
          d.message = e.what();
        }
      });
      if (cancelled || monitor.token.cancelled()) return "cancelled";
      return toText(d);
    }
  }
  return "cancelled";
}

int PhaseComputer::pointsIn(const std::string& result) const {
  if (result == "cancelled") return 0;
  switch (kind_) {
    case Kind::Screen: return static_cast<int>(screenValuesFromText(result, "a screen unit").size());
    case Kind::Profile: return static_cast<int>(profileDirectionFromText(result, "a profile unit").points.size());
    case Kind::Polish: return 0;
  }
  return 0;
}

std::vector<double> screenValuesFromText(const std::string& text, const std::string& what) {
  if (text.rfind("values", 0) != 0) throw Error(what + ": not a screen unit's values");
  return doubles(text.substr(6), what);
}

}  // namespace sensode::estimation::detail
