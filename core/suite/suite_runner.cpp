// SPDX-License-Identifier: MIT
#include "core/suite/suite_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"

namespace sensode::suite {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Reasons go into one TSV cell and one console line.
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

bool withinTolerance(double actual, double expected, double absolute, double relative) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  if (!std::isfinite(actual)) return false;
  return std::abs(actual - expected) <= absolute + relative * std::abs(expected);
}

// Keeps only the ids that name species: amount/concentration requests only apply to them.
std::vector<std::string> speciesOnly(const symbolic::OdeSystem& system,
                                     const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const std::string& id : ids) {
    const int k = system.findOutput(id);
    if (k >= 0 && system.outputs[static_cast<std::size_t>(k)].kind == symbolic::OutputKind::Species)
      out.push_back(id);
  }
  return out;
}

// The reason a run disagrees with the expected results, or nullopt when it agrees.
std::optional<std::string> compare(const TestCase& c, const tasks::TimeCourseResult& result) {
  const Settings& s = c.settings;
  const ExpectedResults& e = c.expected;
  const std::size_t nt = e.times.size();
  if (result.times.size() != nt)
    return "simulation gave " + std::to_string(result.times.size()) + " rows, results CSV has " +
           std::to_string(nt);
  if (e.numColumns != s.variables.size())
    return "results CSV has " + std::to_string(e.numColumns) + " value columns, settings list " +
           std::to_string(s.variables.size()) + " variables";
  for (std::size_t j = 0; j < s.variables.size(); ++j) {
    const std::string& id = s.variables[j];
    // Column of `id` in the result (normally j) and in the CSV (by header name when present).
    const auto rIt = std::find(result.columns.begin(), result.columns.end(), id);
    if (rIt == result.columns.end()) return "simulation has no output '" + id + "'";
    const std::size_t rc = static_cast<std::size_t>(rIt - result.columns.begin());
    std::size_t ec = j;
    if (const auto eIt = std::find(e.columns.begin(), e.columns.end(), id); eIt != e.columns.end())
      ec = static_cast<std::size_t>(eIt - e.columns.begin());
    for (std::size_t i = 0; i < nt; ++i) {
      const double actual = result.at(i, rc);
      const double expected = e.at(i, ec);
      if (!withinTolerance(actual, expected, s.absolute, s.relative))
        return "'" + id + "' at t = " + formatNumber(result.times[i]) + ": actual " +
               formatNumber(actual) + ", expected " + formatNumber(expected) + " (absolute " +
               formatNumber(s.absolute) + ", relative " + formatNumber(s.relative) + ")";
    }
  }
  return std::nullopt;
}

void runCaseBody(const fs::path& casesDir, const std::string& id, const IndexEntry* entry,
                 const SuiteOptions& options, CaseResult& r, Clock::time_point started) {
  const TestCase c = loadTestCase(casesDir, id, entry);
  r.tags = c.tags();
  if (c.testType == "FluxBalanceSteadyState") {
    r.status = CaseStatus::Skipped;
    r.reason = "fbc: flux balance steady state";
    return;
  }
  const Settings& s = c.settings;
  const std::vector<double> times = s.outputTimes();
  if (times.empty()) throw Error(id + "-settings.txt: no output times (steps = 0)");
  if (times.size() != c.expected.times.size())
    throw Error(id + "-results.csv has " + std::to_string(c.expected.times.size()) +
                " rows, settings give " + std::to_string(times.size()) + " output times");
  for (std::size_t i = 0; i < times.size(); ++i)
    if (std::abs(times[i] - c.expected.times[i]) > 1e-9 * (1 + std::abs(times[i])))
      throw Error(id + "-results.csv: time " + formatNumber(c.expected.times[i]) + " in row " +
                  std::to_string(i + 1) + ", settings give " + formatNumber(times[i]));

  // (model::importSbmlFile serialises the libSBML part itself; the rest runs in parallel.)
  const model::Model m = model::importSbmlFile(c.sbmlFile);
  auto compiled = namingFileOfErrors(c.sbmlFile.string(), [&] {
    return std::make_shared<const symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  });

  tasks::TimeCourseProblem problem;
  problem.model = compiled;
  problem.t0 = std::min(0.0, times.front());  // SBML simulations start at t = 0
  problem.times = times;
  problem.outputs = s.variables;
  problem.forceAmount = speciesOnly(compiled->system(), s.amount);
  problem.forceConcentration = speciesOnly(compiled->system(), s.concentration);

  tasks::TimeCourseOptions opts;
  opts.method = options.method;
  opts.integrator.rtol = options.rtol;
  opts.integrator.atol = options.atol;
  if (s.absolute > 0)
    opts.integrator.atol = std::min(options.atol, options.absoluteFactor * s.absolute);
  opts.integrator.maxSteps = options.maxSteps;

  ProgressMonitor monitor;
  bool timedOut = false;
  if (options.caseTimeLimit > 0) {
    const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options.caseTimeLimit));
    monitor.callback = [deadline, &timedOut](const ProgressInfo&) {
      if (Clock::now() < deadline) return Decision::Continue;
      timedOut = true;
      return Decision::Abort;
    };
  }
  const tasks::TimeCourseResult result = tasks::runTimeCourse(problem, opts, monitor);
  if (result.termination != tasks::Termination::Success) {
    r.status = CaseStatus::Failed;
    r.reason = timedOut ? "timed out after " + formatNumber(options.caseTimeLimit) + " s"
                        : std::string(tasks::toString(result.termination)) + ": " + result.message;
    return;
  }
  if (auto why = compare(c, result)) {
    r.status = CaseStatus::Failed;
    r.reason = *why;
    return;
  }
  r.status = CaseStatus::Passed;
}

}  // namespace

const char* toString(CaseStatus s) {
  switch (s) {
    case CaseStatus::Passed:
      return "passed";
    case CaseStatus::Failed:
      return "failed";
    case CaseStatus::Skipped:
      return "skipped";
  }
  return "?";
}

CaseResult runCase(const fs::path& casesDir, const std::string& id, const IndexEntry* entry,
                   const SuiteOptions& options) {
  CaseResult r;
  r.id = id;
  if (entry) {  // tags are known even when the case folder cannot be read
    TestCase tagsOnly;
    tagsOnly.componentTags = entry->componentTags;
    tagsOnly.testTags = entry->testTags;
    r.tags = tagsOnly.tags();
  }
  const auto started = Clock::now();
  try {
    runCaseBody(casesDir, id, entry, options, r, started);
  } catch (const UnsupportedFeature& e) {
    r.status = CaseStatus::Skipped;
    r.reason = "unsupported: " + e.feature();
  } catch (const std::exception& e) {
    r.status = CaseStatus::Failed;
    r.reason = e.what();
  } catch (...) {
    r.status = CaseStatus::Failed;
    r.reason = "unknown error";
  }
  r.reason = oneLine(r.reason);
  r.wallSeconds = std::chrono::duration<double>(Clock::now() - started).count();
  return r;
}

std::vector<CaseResult> runSuite(const fs::path& casesDir, const std::vector<int>& cases,
                                 const SuiteOptions& options,
                                 const std::function<void(const CaseResult&)>& onResult,
                                 const BatchRunner& runner, std::size_t batchSize) {
  std::map<std::string, IndexEntry> index;
  if (fs::exists(casesDir / "index.tsv")) index = readIndex(casesDir / "index.tsv");
  const auto entryOf = [&](const std::string& id) -> const IndexEntry* {
    const auto it = index.find(id);
    return it == index.end() ? nullptr : &it->second;
  };

  const std::size_t n = cases.size();
  batchSize = std::max<std::size_t>(batchSize, 1);
  const std::size_t numBatches = (n + batchSize - 1) / batchSize;
  std::vector<std::optional<CaseResult>> done(n);
  std::size_t nextToReport = 0;
  std::mutex doneMutex;
  std::atomic<std::size_t> nextBatch{0};

  const auto worker = [&] {
    for (std::size_t b = nextBatch++; b < numBatches; b = nextBatch++) {
      const std::size_t first = b * batchSize, last = std::min(n, first + batchSize);
      std::vector<std::string> ids;
      for (std::size_t i = first; i < last; ++i) ids.push_back(caseId(cases[i]));
      std::vector<CaseResult> batch;
      if (runner) {
        batch = runner(ids);
      } else {
        for (const std::string& id : ids)
          batch.push_back(runCase(casesDir, id, entryOf(id), options));
      }
      batch.resize(ids.size());  // a runner that returns too few leaves failed placeholders
      std::lock_guard<std::mutex> lock(doneMutex);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        CaseResult& r = batch[k];
        if (r.id.empty()) {
          r.id = ids[k];
          r.reason = "no result from the case runner";
        }
        if (r.tags.empty())
          if (const IndexEntry* entry = entryOf(ids[k])) {
            TestCase tagsOnly;
            tagsOnly.componentTags = entry->componentTags;
            tagsOnly.testTags = entry->testTags;
            r.tags = tagsOnly.tags();
          }
        done[first + k] = std::move(r);
      }
      for (; nextToReport < n && done[nextToReport]; ++nextToReport)
        if (onResult) onResult(*done[nextToReport]);
    }
  };

  int jobs =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp(jobs, 1, static_cast<int>(std::max<std::size_t>(numBatches, 1)));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(jobs));
    for (int k = 0; k < jobs; ++k) threads.emplace_back(worker);
  }

  std::vector<CaseResult> results;
  results.reserve(n);
  for (auto& r : done) results.push_back(std::move(*r));
  return results;
}

std::map<std::string, TagCount> countByTag(const std::vector<CaseResult>& results) {
  std::map<std::string, TagCount> table;
  for (const CaseResult& r : results) {
    for (const std::string& tag : r.tags) {
      TagCount& t = table[tag];
      switch (r.status) {
        case CaseStatus::Passed:
          ++t.passed;
          break;
        case CaseStatus::Failed:
          ++t.failed;
          break;
        case CaseStatus::Skipped:
          ++t.skipped;
          break;
      }
    }
  }
  return table;
}

SuiteCounts countResults(const std::vector<CaseResult>& results) {
  SuiteCounts c;
  for (const CaseResult& r : results) {
    switch (r.status) {
      case CaseStatus::Passed:
        ++c.passed;
        break;
      case CaseStatus::Failed:
        ++c.failed;
        break;
      case CaseStatus::Skipped:
        ++c.skipped;
        break;
    }
  }
  return c;
}

}  // namespace sensode::suite
