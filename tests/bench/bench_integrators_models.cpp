// SPDX-License-Identifier: MIT
// bench_integrators: the models — every PEtab model_*.xml with its parameter table and measurement
// times, and the largest SBML Test Suite models — each with its CVODES reference solution.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>
#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/model/sbml_importer.h"
#include "core/suite/test_case.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "tests/bench/native_ready.h"
#include "tests/bench/suite_files.h"

#include "tests/bench/bench_integrators.h"

namespace bench_integrators {

namespace {

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, '\t')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    out.push_back(cell);
  }
  return out;
}

// Rows of a TSV file as column → value maps.
std::vector<std::map<std::string, std::string>> readTsv(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  const std::vector<std::string> header = splitTabs(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = splitTabs(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<double> toDouble(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? std::optional<double>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

bool prepare(BenchModel& m, double atol, std::ostream& log) {
  sensode::bench::waitForNativeEvaluators(*m.model, m.name, 900, log);
  // Reference: CVODES at rtol 1e-12, atol 1e-16.
  Config refConfig;
  refConfig.solver = Solver::Cvodes;
  refConfig.rtol = 1e-12;
  refConfig.atol = 1e-16;
  Run ref = integrate(m, refConfig, true);
  if (!ref.ok) {
    log << "note: " << m.name << " skipped: reference run failed: " << ref.error << "\n";
    return false;
  }
  m.ref = std::move(ref.x);
  m.floor.assign(m.x0.size(), 0.0);
  for (const auto& row : m.ref) {
    for (std::size_t i = 0; i < row.size(); ++i) m.floor[i] = std::max(m.floor[i], std::abs(row[i]));
  }
  // A state that stays exactly 0 in the reference is judged on the runs' atol: Raia's
  // receptor complexes at il13_level = 0 came out of odeSD as ~1e-26 (rounding), which a floor
  // of 1e-300 reported as an error of 8e273.
  for (double& f : m.floor) f = std::max(1e-6 * f, atol);
  return true;
}

std::shared_ptr<const CompiledModel> compile(const fs::path& file) {
  const auto model = sensode::model::importSbmlFile(file);
  return std::make_shared<const CompiledModel>(sensode::symbolic::buildOdeSystem(model));
}

void setInitialState(BenchModel& m) {
  m.x0.assign(static_cast<std::size_t>(m.model->nx()), 0.0);
  m.model->initialState(0.0, m.p.data(), m.x0.data());
}

}  // namespace

std::vector<BenchModel> petabModels(const Settings& s, std::ostream& log) {
  std::vector<BenchModel> out;
  if (!fs::is_directory(s.petabDir)) {
    log << "note: no PEtab folder at " << s.petabDir << "\n";
    return out;
  }
  std::vector<fs::path> problems;
  for (const auto& d : fs::directory_iterator(s.petabDir))
    if (d.is_directory()) problems.push_back(d.path());
  std::sort(problems.begin(), problems.end());
  for (const fs::path& dir : problems) {
    std::vector<fs::path> files;
    fs::path measurements, parameters;
    for (const auto& f : fs::directory_iterator(dir)) {
      const std::string fn = f.path().filename().string();
      if (fn.starts_with("model_") && fn.ends_with(".xml")) files.push_back(f.path());
      if (fn.starts_with("measurementData_") && fn.ends_with(".tsv")) measurements = f.path();
      if (fn.starts_with("parameters_") && fn.ends_with(".tsv")) parameters = f.path();
    }
    std::sort(files.begin(), files.end());
    double T = 0;
    std::vector<double> measurementTimes;  // the finite ones, ascending, with 0
    if (!measurements.empty()) {
      for (const auto& row : readTsv(measurements)) {
        auto it = row.find("time");
        if (it == row.end()) continue;
        if (auto v = toDouble(it->second); v && std::isfinite(*v) && *v >= 0) {
          T = std::max(T, *v);
          measurementTimes.push_back(*v);
        }
      }
    }
    if (!(T > 0)) {
      T = 100;
      measurementTimes.clear();
    } else {
      measurementTimes.push_back(0);
      std::sort(measurementTimes.begin(), measurementTimes.end());
      measurementTimes.erase(std::unique(measurementTimes.begin(), measurementTimes.end()),
                             measurementTimes.end());
    }
    std::map<std::string, double> nominal;
    if (!parameters.empty()) {
      for (const auto& row : readTsv(parameters)) {
        auto id = row.find("parameterId"), v = row.find("nominalValue");
        if (id == row.end() || v == row.end()) continue;
        if (auto value = toDouble(v->second)) nominal[id->second] = *value;
      }
    }
    for (const fs::path& file : files) {
      const std::string fn = file.filename().string();
      BenchModel m;
      m.name = fn.substr(6, fn.size() - 10);
      if (!s.only.empty() && m.name.find(s.only) == std::string::npos) continue;
      try {
        m.model = compile(file);
      } catch (const std::exception& e) {
        log << "note: " << m.name << " skipped: " << e.what() << "\n";
        continue;
      }
      m.p = m.model->nominalParameters();
      const auto& params = m.model->system().params;
      for (std::size_t k = 0; k < params.size(); ++k) {
        if (auto it = nominal.find(params[k].id); it != nominal.end()) m.p[k] = it->second;
      }
      setInitialState(m);
      if (s.points > 0 || measurementTimes.empty()) {
        const int pts = s.points > 0 ? s.points : 101;
        for (int i = 0; i < pts; ++i) m.times.push_back(T * i / (pts - 1));
      } else {
        m.times = measurementTimes;
      }
      if (prepare(m, s.atol, log)) out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<BenchModel> suiteModels(const Settings& s, std::ostream& log) {
  std::vector<BenchModel> out;
  if (s.suiteTop <= 0 || !fs::is_directory(s.suiteDir)) return out;
  // Candidates: the largest model file of each case, the 60 largest files.
  const auto files = sensode::bench::largestSuiteCaseFiles(s.suiteDir, 60);
  struct Candidate {
    int size;
    BenchModel m;
  };
  std::vector<Candidate> candidates;
  for (const auto& [id, path] : files) {
    try {
      const auto model = sensode::model::importSbmlFile(path);
      const int size = static_cast<int>(model.species.size() + model.reactions.size());
      const auto tc = sensode::suite::loadTestCase(s.suiteDir, id, nullptr);
      if (tc.testType != "TimeCourse") continue;
      BenchModel m;
      m.name = "suite " + id;
      if (!s.only.empty() && m.name.find(s.only) == std::string::npos) continue;
      m.model = std::make_shared<const CompiledModel>(sensode::symbolic::buildOdeSystem(model));
      if (m.model->nx() == 0) continue;
      m.p = m.model->nominalParameters();
      setInitialState(m);
      m.times = tc.settings.outputTimes();
      candidates.push_back({size, std::move(m)});
    } catch (const std::exception&) {
      continue;  // unsupported feature or malformed: not a candidate
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.size > b.size; });
  for (auto& c : candidates) {
    if (static_cast<int>(out.size()) >= s.suiteTop) break;
    if (prepare(c.m, s.atol, log)) out.push_back(std::move(c.m));
  }
  return out;
}

}  // namespace bench_integrators
