// SPDX-License-Identifier: MIT
// sensode test-suite CASES_DIR [--cases 1-1821 | 1,5,7-9] [--method odesd|cvodes]
//                    [--report FILE.tsv] [--tags FILE.tsv] [--jobs N]
//
// Runs the SBML Test Suite's semantic cases and prints one line per case, in case order:
//   00001 passed
//   00005 skipped unsupported: events
//   00012 failed 'S1' at t = 0.5: actual ..., expected ...
// and closes with exactly `N passed, N failed, N skipped`. The report TSV has
// `case<TAB>status<TAB>reason`; the tag table `tag<TAB>passed<TAB>failed<TAB>skipped` goes to
// --tags, or next to the report as <report>.tags.tsv. The exit status is 0 whenever the run
// completed (failures are in the report), 2 for command-line mistakes.
//
// Cases run in child processes of this binary (batches of consecutive cases per child, see
// case_process.h), so that a crash or a hang fails only the case that caused it; --in-process
// runs them in this process instead (libSBML imports are then serialised).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "core/cli/arguments.h"
#include "core/cli/case_process.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/common/errors.h"
#include "core/suite/suite_runner.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

// Cases per child process: starting one (loading libSBML) costs about as much as 10 typical
// cases; small runs use smaller batches so that every worker gets some.
constexpr std::size_t kMaxCasesPerChild = 25;

// Integrator when --method is not given.
constexpr integrators::Method kDefaultMethod = integrators::Method::OdeSd;

const std::vector<OptionSpec>& testSuiteOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--cases", "LIST", "case numbers, e.g. 1-1821 or 1,5,7-9 (default: every case folder)"},
      {"--method", "odesd|cvodes", "integrator (default odesd)"},
      {"--report", "FILE.tsv", "write case<TAB>status<TAB>reason"},
      {"--tags", "FILE.tsv",
       "write tag<TAB>passed<TAB>failed<TAB>skipped (default: "
       "<report>.tags.tsv when --report is given)"},
      {"--jobs", "N", "cases run in parallel (default: number of hardware threads)"},
      {"--rtol", "R", "integrator relative tolerance (default 1e-10)"},
      {"--atol", "A",
       "integrator absolute tolerance, capped at 1e-4 x the case's absolute "
       "tolerance (default 1e-14)"},
      {"--timeout", "S", "wall-clock limit per case in seconds, 0 = none (default 120)"},
      {"--in-process", "",
       "run the cases in this process (default: in child processes, so "
       "that a crash fails only its case)"},
      {"--help", "", "show this help"},
  };
  return specs;
}

std::ofstream openForWriting(const fs::path& file) {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  return out;
}

void writeReport(const fs::path& file, const std::vector<suite::CaseResult>& results) {
  std::ofstream out = openForWriting(file);
  out << "case\tstatus\treason\n";
  for (const suite::CaseResult& r : results)
    out << r.id << '\t' << suite::toString(r.status) << '\t' << r.reason << '\n';
  out.flush();
  if (!out) throw Error(file.string() + ": write failed");
}

void writeTagTable(const fs::path& file, const std::vector<suite::CaseResult>& results) {
  std::ofstream out = openForWriting(file);
  out << "tag\tpassed\tfailed\tskipped\n";
  for (const auto& [tag, n] : suite::countByTag(results))
    out << tag << '\t' << n.passed << '\t' << n.failed << '\t' << n.skipped << '\n';
  out.flush();
  if (!out) throw Error(file.string() + ": write failed");
}

// "/tmp/r.tsv" → "/tmp/r.tags.tsv".
fs::path defaultTagPath(const fs::path& report) {
  fs::path p = report;
  p.replace_extension(".tags" + (report.has_extension() ? report.extension().string() : ".tsv"));
  return p;
}

}  // namespace

int runTestSuite(std::span<const std::string> args) {
  const Arguments a("test-suite", testSuiteOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode test-suite CASES_DIR [options]\n\n"
              << Arguments::helpText(testSuiteOptions());
    return 0;
  }
  // Absolute, so that libSBML resolves the comp cases' external model files relative to the
  // model's folder whatever the working directory.
  const fs::path casesDir = fs::absolute(a.onlyPositional("CASES_DIR"));
  suite::SuiteOptions options;
  options.method = kDefaultMethod;
  if (const auto m = a.string("--method")) {
    const auto method = integrators::methodFromString(*m);
    if (!method) throw UsageError("test-suite: --method: '" + *m + "' is not one of odesd, cvodes");
    options.method = *method;
  }
  options.rtol = a.number("--rtol", options.rtol);
  options.atol = a.number("--atol", options.atol);
  if (!(options.rtol > 0) || !(options.atol > 0))
    throw UsageError("test-suite: --rtol and --atol must be > 0");
  options.caseTimeLimit = a.number("--timeout", options.caseTimeLimit);
  if (!(options.caseTimeLimit >= 0)) throw UsageError("test-suite: --timeout must be >= 0");
  options.jobs = static_cast<int>(a.integer("--jobs", 0, 1, 1024));

  std::vector<int> cases;
  if (const auto selection = a.string("--cases")) {
    try {
      cases = suite::parseCaseSelection(*selection);
    } catch (const InvalidOptions& e) {
      throw UsageError(std::string("test-suite: ") + e.what());
    }
  }
  if (!fs::is_directory(casesDir))
    throw Error(casesDir.string() + ": no such folder (expected the suite's cases/ folder)");
  if (!a.has("--cases")) cases = suite::listCases(casesDir);
  if (cases.empty()) throw Error(casesDir.string() + ": no case folders (NNNNN) found");

  // Checked before the run so that a bad path does not cost a whole suite run.
  const auto report = a.string("--report");
  std::optional<fs::path> tags;
  if (const auto t = a.string("--tags"))
    tags = *t;
  else if (report)
    tags = defaultTagPath(*report);
  if (report) openForWriting(*report);
  if (tags) openForWriting(*tags);

  suite::BatchRunner runner;  // empty: in this process
  std::size_t batchSize = 1;
  if (!a.has("--in-process")) {
    CaseProcess child;
    child.executable = selfExecutable();
    child.casesDir = casesDir;
    child.childOptions = {"--method",  integrators::toString(options.method),
                          "--rtol",    formatNumber(options.rtol),
                          "--atol",    formatNumber(options.atol),
                          "--timeout", formatNumber(options.caseTimeLimit)};
    // The child stops its own integration at the time limit; the kill is for hangs elsewhere.
    child.killAfterSeconds = options.caseTimeLimit > 0 ? 2 * options.caseTimeLimit + 30 : 0;
    runner = [child](const std::vector<std::string>& ids) { return child.run(ids); };
    const std::size_t jobs = options.jobs > 0 ? static_cast<std::size_t>(options.jobs)
                                              : std::max(1u, std::thread::hardware_concurrency());
    batchSize = std::clamp<std::size_t>(cases.size() / (4 * jobs), 1, kMaxCasesPerChild);
  }
  const std::vector<suite::CaseResult> results = suite::runSuite(
      casesDir, cases, options,
      [](const suite::CaseResult& r) {
        std::string line = r.id + " " + suite::toString(r.status);
        if (!r.reason.empty()) line += " " + r.reason;
        std::fputs((line + "\n").c_str(), stdout);
        std::fflush(stdout);
      },
      runner, batchSize);
  if (report) writeReport(*report, results);
  if (tags) writeTagTable(*tags, results);

  // Stdout holds only the per-case lines and the closing line.
  const suite::SuiteCounts n = suite::countResults(results);
  std::printf("%d passed, %d failed, %d skipped\n", n.passed, n.failed, n.skipped);
  std::fflush(stdout);
  return 0;
}

}  // namespace sensode::cli
