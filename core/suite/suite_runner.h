// SPDX-License-Identifier: MIT
// Runs SBML Test Suite cases through the core pipeline exactly as a user's model goes through it
// (import → ODE system → compiled model → time-course task) and compares every value with the
// expected results by the suite's rule |actual − expected| ≤ absolute + relative·|expected|.
//
// A case is skipped only when Sensode declares a feature it uses unsupported (UnsupportedFeature
// from the importer or the ODE builder, or a FluxBalanceSteadyState test); the reason names the
// feature. Anything else that goes wrong is a failure with a one-line reason.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/integrators/integrator.h"
#include "core/suite/test_case.h"

namespace sensode::suite {

enum class CaseStatus { Passed, Failed, Skipped };
const char* toString(CaseStatus s);

struct CaseResult {
  std::string id;  // "00001"
  CaseStatus status = CaseStatus::Failed;
  std::string reason;             // empty when passed; one line otherwise
  std::vector<std::string> tags;  // componentTags ∪ testTags of the case
  double wallSeconds = 0;         // whole case: reading, import, compilation, integration
};

struct SuiteOptions {
  integrators::Method method = integrators::Method::Cvodes;
  // Integrator tolerances. The suite compares at relative 1e-4 (a few cases 1e-9) and absolute
  // 1e-9 … 0.15, so the solver runs much tighter: rtol as given, atol = min(atol,
  // absoluteFactor·settings.absolute) so that tiny-magnitude cases (values ~1e-15 with absolute
  // 1e-17) are still resolved.
  double rtol = 1e-10;
  double atol = 1e-14;
  double absoluteFactor = 1e-4;
  long maxSteps = 1000000;
  // Wall-clock limit per case in seconds (0 = none); a case over it fails with "timed out".
  double caseTimeLimit = 120;
  // Worker threads for runSuite (0 = std::thread::hardware_concurrency()).
  int jobs = 0;
};

// Runs one case. Never throws: every error is a failed (or skipped) CaseResult.
CaseResult runCase(const std::filesystem::path& casesDir, const std::string& id,
                   const IndexEntry* entry, const SuiteOptions& options);

// How runSuite runs a batch of cases (ids in order, results in the same order); the default is
// runCase() for each in this process. The CLI substitutes a runner that starts a child process
// per batch, so that a crash in one case cannot end the run.
using BatchRunner = std::function<std::vector<CaseResult>(const std::vector<std::string>& ids)>;

// Runs `cases` (numbers) with options.jobs workers, each taking `batchSize` consecutive cases at
// a time. `onResult` is called once per case, in the order of `cases`, from whichever thread
// completes the ordered prefix (calls never overlap). Reads casesDir/index.tsv when present.
// Results come back in the order of `cases`, with the tags of the index filled in.
std::vector<CaseResult> runSuite(const std::filesystem::path& casesDir,
                                 const std::vector<int>& cases, const SuiteOptions& options,
                                 const std::function<void(const CaseResult&)>& onResult = {},
                                 const BatchRunner& runner = {}, std::size_t batchSize = 1);

struct TagCount {
  int passed = 0, failed = 0, skipped = 0;
};
// Per tag (componentTags ∪ testTags), how many of the cases carrying it passed, failed, skipped.
std::map<std::string, TagCount> countByTag(const std::vector<CaseResult>& results);

struct SuiteCounts {
  int passed = 0, failed = 0, skipped = 0;
};
SuiteCounts countResults(const std::vector<CaseResult>& results);

}  // namespace sensode::suite
