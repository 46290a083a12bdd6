// SPDX-License-Identifier: MIT
#include "core/suite/test_case.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/common/errors.h"

namespace sensode::suite {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  const auto isSpace = [](unsigned char c) { return std::isspace(c) != 0; };
  auto b = std::find_if_not(s.begin(), s.end(), isSpace);
  auto e = std::find_if_not(s.rbegin(), s.rend(), isSpace).base();
  return b < e ? std::string(b, e) : std::string();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// Comma-separated list, items trimmed, empty items dropped.
std::vector<std::string> splitList(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  for (const std::string& item : split(s, sep)) {
    std::string t = trim(item);
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

// A tag is one word (letters, digits, ':', '-', '_'); anything with blanks inside is an artefact
// of the index generator and is dropped.
std::vector<std::string> splitTags(const std::string& s) {
  std::vector<std::string> out;
  for (std::string& t : splitList(s)) {
    if (std::none_of(t.begin(), t.end(), [](unsigned char c) { return std::isspace(c) != 0; }))
      out.push_back(std::move(t));
  }
  return out;
}

std::ifstream openOrThrow(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot open file");
  return in;
}

// A number as the suite writes it: decimal or exponent notation, NaN, INF, -INF in any case.
bool parseNumber(const std::string& text, double& value) {
  std::string t = trim(text);
  const std::string l = lower(t);
  if (l == "nan" || l == "-nan" || l == "+nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (l == "inf" || l == "+inf" || l == "infinity" || l == "+infinity") {
    value = std::numeric_limits<double>::infinity();
    return true;
  }
  if (l == "-inf" || l == "-infinity") {
    value = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (!t.empty() && t.front() == '+') t.erase(0, 1);
  if (t.empty()) return false;
  const char* end = t.data() + t.size();
  auto [ptr, ec] = std::from_chars(t.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::vector<double> Settings::outputTimes() const {
  std::vector<double> times;
  if (steps <= 0) return times;
  times.reserve(static_cast<std::size_t>(steps) + 1);
  for (int i = 0; i <= steps; ++i) times.push_back(start + i * duration / steps);
  return times;
}

std::vector<std::string> TestCase::tags() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto* list : {&componentTags, &testTags})
    for (const std::string& t : *list)
      if (seen.insert(t).second) out.push_back(t);
  return out;
}

Settings parseSettings(const fs::path& file) {
  std::ifstream in = openOrThrow(file);
  Settings s;
  std::string line;
  int lineNo = 0;
  const auto bad = [&](const std::string& what) {
    return Error(file.string() + ":" + std::to_string(lineNo) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string t = trim(line);
    if (t.empty()) continue;
    const auto colon = t.find(':');
    if (colon == std::string::npos) throw bad("expected 'key: value', got '" + t + "'");
    const std::string key = lower(trim(t.substr(0, colon)));
    const std::string value = trim(t.substr(colon + 1));
    const auto number = [&](double& target) {
      if (value.empty()) return;  // FluxBalanceSteadyState cases leave times blank
      if (!parseNumber(value, target)) throw bad("'" + key + "' is not a number: '" + value + "'");
    };
    if (key == "start") {
      number(s.start);
    } else if (key == "duration") {
      number(s.duration);
    } else if (key == "steps") {
      double steps = 0;
      number(steps);
      if (steps < 0 || steps != static_cast<double>(static_cast<int>(steps)))
        throw bad("'steps' must be a non-negative integer: '" + value + "'");
      s.steps = static_cast<int>(steps);
    } else if (key == "variables") {
      s.variables = splitList(value);
    } else if (key == "absolute") {
      number(s.absolute);
    } else if (key == "relative") {
      number(s.relative);
    } else if (key == "amount") {
      s.amount = splitList(value);
    } else if (key == "concentration") {
      s.concentration = splitList(value);
    }
    // Other keys (none in suite 3.3.0) are ignored, as the suite's own runners do.
  }
  return s;
}

ExpectedResults parseResults(const fs::path& file) {
  std::ifstream in = openOrThrow(file);
  ExpectedResults r;
  std::string line;
  int lineNo = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = split(line, ',');
    if (first) {
      first = false;
      double probe = 0;
      if (!parseNumber(cells.front(), probe)) {  // header line
        for (std::size_t i = 1; i < cells.size(); ++i) r.columns.push_back(trim(cells[i]));
        r.numColumns = r.columns.size();
        continue;
      }
      r.numColumns = cells.size() - 1;
    }
    if (cells.size() != r.numColumns + 1)
      throw Error(file.string() + ":" + std::to_string(lineNo) + ": expected " +
                  std::to_string(r.numColumns + 1) + " values, got " +
                  std::to_string(cells.size()));
    for (std::size_t i = 0; i < cells.size(); ++i) {
      double v = 0;
      if (!parseNumber(cells[i], v))
        throw Error(file.string() + ":" + std::to_string(lineNo) + ": column " +
                    std::to_string(i + 1) + " is not a number: '" + trim(cells[i]) + "'");
      (i == 0 ? r.times : r.values).push_back(v);
    }
  }
  return r;
}

std::map<std::string, IndexEntry> readIndex(const fs::path& file) {
  std::ifstream in = openOrThrow(file);
  std::map<std::string, IndexEntry> index;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (header) {  // id, sbml_file, testType, componentTags, testTags, extra_files
      header = false;
      continue;
    }
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = split(line, '\t');
    cells.resize(6);
    IndexEntry e;
    e.id = trim(cells[0]);
    e.sbmlFile = trim(cells[1]);
    e.testType = trim(cells[2]);
    e.componentTags = splitTags(cells[3]);
    e.testTags = splitTags(cells[4]);
    e.extraFiles = splitList(cells[5], ';');
    index[e.id] = std::move(e);
  }
  return index;
}

TestCase loadTestCase(const fs::path& casesDir, const std::string& id, const IndexEntry* entry) {
  TestCase c;
  c.id = id;
  c.directory = casesDir / id;
  if (!fs::is_directory(c.directory)) throw Error(c.directory.string() + ": no such case folder");
  if (entry && !entry->sbmlFile.empty()) {
    c.sbmlFile = c.directory / entry->sbmlFile;
  } else {
    // The only NNNNN-sbml-lXvY.xml (not the -sedml.xml companions of a full suite copy); when a
    // full copy holds several levels, the highest one.
    std::vector<fs::path> models;
    for (const auto& f : fs::directory_iterator(c.directory)) {
      const std::string name = f.path().filename().string();
      if (name.rfind(id + "-sbml-", 0) == 0 && f.path().extension() == ".xml" &&
          name.find("sedml") == std::string::npos)
        models.push_back(f.path());
    }
    if (models.empty()) throw Error(c.directory.string() + ": no " + id + "-sbml-*.xml model");
    std::sort(models.begin(), models.end());
    c.sbmlFile = models.back();
  }
  if (entry) {
    if (!entry->testType.empty()) c.testType = entry->testType;
    c.componentTags = entry->componentTags;
    c.testTags = entry->testTags;
  }
  c.settings = parseSettings(c.directory / (id + "-settings.txt"));
  c.expected = parseResults(c.directory / (id + "-results.csv"));
  return c;
}

std::string caseId(int number) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", number);
  return buf;
}

std::vector<int> parseCaseSelection(const std::string& text) {
  std::set<int> cases;
  const auto toInt = [&](const std::string& item, const std::string& part) {
    const std::string t = trim(part);
    int v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || v < 1 || v > 99999)
      throw InvalidOptions("--cases: '" + item +
                           "' is not a case number or range (expected e.g. 1-1821 or 1,5,7-9)");
    return v;
  };
  const std::vector<std::string> items = splitList(text);
  if (items.empty()) throw InvalidOptions("--cases: empty case selection");
  for (const std::string& item : items) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      cases.insert(toInt(item, item));
      continue;
    }
    const int lo = toInt(item, item.substr(0, dash));
    const int hi = toInt(item, item.substr(dash + 1));
    if (hi < lo) throw InvalidOptions("--cases: range '" + item + "' is empty (end < start)");
    for (int i = lo; i <= hi; ++i) cases.insert(i);
  }
  return {cases.begin(), cases.end()};
}

std::vector<int> listCases(const fs::path& casesDir) {
  std::vector<int> cases;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(casesDir, ec)) {
    const std::string name = f.path().filename().string();
    if (!f.is_directory() || name.size() != 5 ||
        !std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; }))
      continue;
    cases.push_back(std::stoi(name));
  }
  if (ec) throw Error(casesDir.string() + ": cannot list folder: " + ec.message());
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace sensode::suite
