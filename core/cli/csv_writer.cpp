// SPDX-License-Identifier: MIT
#include "core/cli/csv_writer.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/common/errors.h"

namespace sensode::cli {

std::string formatNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

void writeTimeCourseCsv(std::ostream& out, const tasks::TimeCourseResult& result) {
  out << "time";
  for (const std::string& c : result.columns) out << ',' << csvField(c);
  out << '\n';
  const std::size_t ny = result.columns.size();
  for (std::size_t i = 0; i < result.times.size(); ++i) {
    out << formatNumber(result.times[i]);
    for (std::size_t j = 0; j < ny; ++j) out << ',' << formatNumber(result.at(i, j));
    out << '\n';
  }
}

void writeTimeCourseCsv(const std::filesystem::path& file, const tasks::TimeCourseResult& result) {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  writeTimeCourseCsv(out, result);
  out.flush();
  if (!out) throw Error(file.string() + ": write failed");
}

}  // namespace sensode::cli
