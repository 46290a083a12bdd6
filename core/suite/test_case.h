// SPDX-License-Identifier: MIT
// One case of the SBML Test Suite's semantic cases, read from its folder: the settings
// (NNNNN-settings.txt), the expected results (NNNNN-results.csv) and the tags and test type of
// cases/index.tsv. The layout is described in sbml-test-suite/README.md and, in full, in
// cases/UPSTREAM-README-semantic.md. suite_runner.h runs a case through the core pipeline and
// compares it with these expectations.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace sensode::suite {

// NNNNN-settings.txt. FluxBalanceSteadyState cases leave start, duration and steps blank (they
// stay 0 here).
struct Settings {
  double start = 0;                    // first output time
  double duration = 0;                 // last output time − start
  int steps = 0;                       // output times: start + i·duration/steps, i = 0..steps
  std::vector<std::string> variables;  // compared columns, in results order
  double absolute = 0;  // comparison: |actual − expected| ≤ absolute + relative·|expected|
  double relative = 0;
  std::vector<std::string> amount;         // variables to report as amounts
  std::vector<std::string> concentration;  // variables to report as concentrations

  // start + i·duration/steps for i = 0..steps.
  std::vector<double> outputTimes() const;
  bool operator==(const Settings&) const = default;
};

// NNNNN-results.csv: the first column is time, then one column per variable. NaN, INF and -INF
// (any case) stand for the non-finite values.
struct ExpectedResults {
  std::vector<std::string> columns;  // header names after the time column (empty if no header)
  std::vector<double> times;         // nt
  std::vector<double> values;        // nt × ny, row-major (ny = number of value columns)
  std::size_t numColumns = 0;        // ny
  double at(std::size_t row, std::size_t col) const { return values[row * numColumns + col]; }
};

// One row of cases/index.tsv.
struct IndexEntry {
  std::string id;        // "00001"
  std::string sbmlFile;  // "00001-sbml-l3v2.xml"
  std::string testType;  // "TimeCourse" or "FluxBalanceSteadyState"
  std::vector<std::string> componentTags, testTags;
  std::vector<std::string> extraFiles;
};

struct TestCase {
  std::string id;                   // five digits
  std::filesystem::path directory;  // cases/NNNNN
  std::filesystem::path sbmlFile;   // full path of the model
  std::string testType = "TimeCourse";
  std::vector<std::string> componentTags, testTags;
  Settings settings;
  ExpectedResults expected;

  // componentTags ∪ testTags, each once, in order of appearance.
  std::vector<std::string> tags() const;
};

// All of these throw sensode::Error naming the file, the line and what is wrong.
Settings parseSettings(const std::filesystem::path& file);
ExpectedResults parseResults(const std::filesystem::path& file);
// Rows of cases/index.tsv by case id. Tags are trimmed; malformed tags (with blanks inside, such
// as the "testType: TimeCourse" some rows carry in their testTags column) are dropped.
std::map<std::string, IndexEntry> readIndex(const std::filesystem::path& file);

// Reads case `id` ("00001") from casesDir/id. `entry` (may be null) supplies the SBML file name,
// the test type and the tags; without it the model is the only *-sbml-*.xml in the folder and
// the tags are empty.
TestCase loadTestCase(const std::filesystem::path& casesDir, const std::string& id,
                      const IndexEntry* entry);

// "00042" for 42.
std::string caseId(int number);
// Case numbers of a selection such as "1-1821" or "1,5,7-9", ascending and without duplicates.
// Throws InvalidOptions naming the bad item.
std::vector<int> parseCaseSelection(const std::string& text);
// Case numbers of every five-digit folder in casesDir, ascending.
std::vector<int> listCases(const std::filesystem::path& casesDir);

}  // namespace sensode::suite
