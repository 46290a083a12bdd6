// SPDX-License-Identifier: MIT
#include "tests/bench/suite_files.h"

#include <algorithm>
#include <cstdint>

namespace sensode::bench {

namespace fs = std::filesystem;

std::vector<SuiteFile> suiteCaseFiles(const fs::path& casesDir) {
  std::vector<SuiteFile> files;
  if (!fs::is_directory(casesDir)) return files;
  for (const auto& c : fs::directory_iterator(casesDir)) {
    if (!c.is_directory()) continue;
    const std::string id = c.path().filename().string();
    fs::path best;
    for (const auto& f : fs::directory_iterator(c.path())) {
      const std::string fn = f.path().filename().string();
      if (fn.starts_with(id + "-sbml-") && fn.ends_with(".xml") &&
          (best.empty() || fn > best.filename().string()))
        best = f.path();
    }
    if (!best.empty()) files.emplace_back(id, best);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<SuiteFile> largestSuiteCaseFiles(const fs::path& casesDir, std::size_t count) {
  std::vector<std::pair<std::uintmax_t, SuiteFile>> sized;
  for (SuiteFile& f : suiteCaseFiles(casesDir)) sized.emplace_back(fs::file_size(f.second), std::move(f));
  std::stable_sort(sized.begin(), sized.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<SuiteFile> out;
  for (std::size_t i = 0; i < sized.size() && i < count; ++i) out.push_back(std::move(sized[i].second));
  return out;
}

}  // namespace sensode::bench
