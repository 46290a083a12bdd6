// SPDX-License-Identifier: MIT
#include "core/common/errors.h"
#include "core/petab/petab_problem.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/model/sbml_importer.h"
#include "core/steadystate/steady_state_solver.h"
#include "core/petab/initial_assignment_overrides.h"
#include "core/petab/tables.h"
#include "core/petab/yaml_file.h"
#include "core/symbolic/ode_system.h"

namespace sensode::petab {

namespace fs = std::filesystem;
using symbolic::Expr;
using symbolic::ExprPool;
using symbolic::Op;

const char* toString(Scale s) {
  switch (s) {
    case Scale::Lin: return "lin";
    case Scale::Log: return "log";
    case Scale::Log10: return "log10";
  }
  return "unknown";
}

double toScale(Scale s, double v) {
  switch (s) {
    case Scale::Lin: return v;
    case Scale::Log: return std::log(v);
    case Scale::Log10: return std::log10(v);
  }
  return v;
}

double fromScale(Scale s, double v) {
  switch (s) {
    case Scale::Lin: return v;
    case Scale::Log: return std::exp(v);
    case Scale::Log10: return std::pow(10.0, v);
  }
  return v;
}

const char* toString(NoiseDistribution d) {
  switch (d) {
    case NoiseDistribution::Normal: return "normal";
    case NoiseDistribution::Laplace: return "laplace";
  }
  return "unknown";
}

const char* toString(Transformation t) {
  switch (t) {
    case Transformation::Lin: return "lin";
    case Transformation::Log: return "log";
    case Transformation::Log10: return "log10";
  }
  return "unknown";
}

int Problem::findParameter(const std::string& id) const {
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].id == id) return static_cast<int>(i);
  return -1;
}
int Problem::findCondition(const std::string& id) const {
  for (std::size_t i = 0; i < conditions.size(); ++i)
    if (conditions[i].id == id) return static_cast<int>(i);
  return -1;
}
int Problem::findObservable(const std::string& id) const {
  for (std::size_t i = 0; i < observables.size(); ++i)
    if (observables[i].id == id) return static_cast<int>(i);
  return -1;
}


namespace {

Value parseValue(const Table& t, std::size_t row, const std::string& col, const std::string& text) {
  Value v;
  if (const auto n = parseNumber(text)) {
    v.number = *n;
  } else if (isIdentifier(text)) {
    v.parameterId = text;
  } else {
    t.fail(row, col, "'" + text + "' is neither a number nor a parameter id");
  }
  return v;
}

std::vector<Value> parseValueList(const Table& t, std::size_t row, const std::string& col) {
  std::vector<Value> out;
  const std::string text = t.cell(row, col);
  if (text.empty()) return out;
  for (const auto& part : split(text, ';')) out.push_back(parseValue(t, row, col, trim(part)));
  return out;
}

// objectivePriorType and objectivePriorParameters of a parameter row (no prior when the type
// is empty).
Prior readPrior(const Table& t, std::size_t r) {
  Prior prior;
  const std::string type = t.cell(r, "objectivePriorType");
  const std::string params = t.cell(r, "objectivePriorParameters");
  if (type.empty()) {
    if (!params.empty())
      t.fail(r, "objectivePriorParameters", "parameters '" + params + "' without an objectivePriorType");
    return prior;
  }
  const auto parsed = priorTypeFromString(type);
  if (!parsed)
    t.fail(r, "objectivePriorType",
           "'" + type + "' is not one of uniform, normal, laplace, logNormal, logLaplace, "
                        "parameterScaleUniform, parameterScaleNormal, parameterScaleLaplace");
  prior.type = *parsed;
  const std::vector<std::string> parts = split(params, ';');
  if (params.empty() || parts.size() != 2)
    t.fail(r, "objectivePriorParameters",
           "'" + params + "': a " + type + " prior takes two parameters separated by ';'");
  const auto a = parseNumber(trim(parts[0])), b = parseNumber(trim(parts[1]));
  if (!a || !b)
    t.fail(r, "objectivePriorParameters", "'" + params + "' are not two numbers");
  prior.a = *a;
  prior.b = *b;
  if (const auto why = validatePrior(prior))
    t.fail(r, "objectivePriorParameters", "'" + params + "': " + *why);
  return prior;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Loading

std::shared_ptr<const steadystate::ConservedModel> ConservedModelCache::get(
    const std::shared_ptr<const symbolic::CompiledModel>& model) const {
  const std::lock_guard lock(mutex_);
  if (!value_ || value_->fullPtr() != model)
    value_ = std::make_shared<const steadystate::ConservedModel>(model);
  return value_;
}

Problem loadProblem(const fs::path& yamlFile) {
  Problem pr;
  pr.yamlFile = yamlFile;
  const std::string yname = yamlFile.filename().string();
  const YamlFile y = readYamlFile(yamlFile);
  if (y.formatVersion != "1" && y.formatVersion != "1.0.0")
    throw PetabError(yname + ": format_version '" + y.formatVersion +
                     "' is not supported (PEtab v1 only)");
  if (y.parameterFiles.empty()) throw PetabError(yname + ": key 'parameter_file' names no file");
  if (y.problems.size() != 1)
    throw PetabError(yname + ": key 'problems' lists " + std::to_string(y.problems.size()) +
                     " problems; Sensode supports exactly one");
  const YamlProblem& files = y.problems[0];
  const auto requireFiles = [&](const std::vector<fs::path>& list, const char* key) {
    if (list.empty()) throw PetabError(yname + ": key 'problems/" + key + "' names no file");
  };
  requireFiles(files.sbmlFiles, "sbml_files");
  requireFiles(files.conditionFiles, "condition_files");
  requireFiles(files.measurementFiles, "measurement_files");
  requireFiles(files.observableFiles, "observable_files");
  if (files.sbmlFiles.size() != 1)
    throw PetabError(yname + ": key 'problems/sbml_files' lists " +
                     std::to_string(files.sbmlFiles.size()) + " models; Sensode supports exactly one");
  pr.sbmlFile = files.sbmlFiles[0];
  pr.parameterFiles = y.parameterFiles;
  pr.conditionFiles = files.conditionFiles;
  pr.observableFiles = files.observableFiles;
  pr.measurementFiles = files.measurementFiles;

  // Model: the condition tables' targets with initial assignments become free constants first
  // (core/petab/initial_assignment_overrides.h).
  std::vector<Table> conditionTables;
  std::set<std::string> conditionTargets;
  for (const fs::path& file : pr.conditionFiles) {
    conditionTables.push_back(readTable(file, "conditions"));
    for (const std::string& col : conditionTables.back().header) conditionTargets.insert(col);
  }
  model::Model m = model::importSbmlFile(fs::absolute(pr.sbmlFile));
  const std::vector<FreedTarget> freed = freeInitialAssignmentTargets(m, conditionTargets);
  symbolic::OdeSystem built = symbolic::buildOdeSystem(m);
  pr.initialAssignmentDefaults = takeInitialAssignmentDefaults(built, freed);
  auto compiled = namingFileOfErrors(pr.sbmlFile.string(), [&] {
    return std::make_shared<symbolic::CompiledModel>(std::move(built));
  });
  const symbolic::OdeSystem& sys = compiled->system();
  ExprPool& pool = *sys.pool;

  // Parameters (several files are one table split up).
  for (const fs::path& file : pr.parameterFiles) {
    const Table t = readTable(file, "parameters");
    t.require({"parameterId", "parameterScale", "nominalValue", "estimate"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Parameter p;
      p.id = t.cell(r, "parameterId");
      if (!isIdentifier(p.id)) t.fail(r, "parameterId", "'" + p.id + "' is not a valid id");
      if (pr.findParameter(p.id) >= 0) t.fail(r, "parameterId", "duplicate id '" + p.id + "'");
      p.name = t.cell(r, "parameterName");
      const std::string scale = t.cell(r, "parameterScale");
      if (scale == "lin") p.scale = Scale::Lin;
      else if (scale == "log") p.scale = Scale::Log;
      else if (scale == "log10") p.scale = Scale::Log10;
      else t.fail(r, "parameterScale", "'" + scale + "' is not one of lin, log, log10");
      const std::string est = t.cell(r, "estimate");
      if (est == "1") p.estimate = true;
      else if (est == "0") p.estimate = false;
      else t.fail(r, "estimate", "'" + est + "' is not 0 or 1");
      const auto nominal = parseNumber(t.cell(r, "nominalValue"));
      if (!nominal || !std::isfinite(*nominal))
        t.fail(r, "nominalValue", "'" + t.cell(r, "nominalValue") + "' is not a finite number");
      p.nominalValue = *nominal;
      if (p.estimate) {
        t.require({"lowerBound", "upperBound"});
        const auto lo = parseNumber(t.cell(r, "lowerBound")), hi = parseNumber(t.cell(r, "upperBound"));
        if (!lo) t.fail(r, "lowerBound", "'" + t.cell(r, "lowerBound") + "' is not a number");
        if (!hi) t.fail(r, "upperBound", "'" + t.cell(r, "upperBound") + "' is not a number");
        if (!(*lo <= *hi)) t.fail(r, "lowerBound", "lowerBound > upperBound");
        if (p.scale != Scale::Lin && !(*lo > 0))
          t.fail(r, "lowerBound", "a bound <= 0 on " + std::string(toString(p.scale)) + " scale");
        p.lowerBound = *lo;
        p.upperBound = *hi;
      }
      // Only estimation works on the scale: a fixed parameter is its linear nominal value. An
      // estimated one on log scale may start at 0 (−inf on its scale, Lang's kDpApc_1), not
      // below.
      if (p.estimate && p.scale != Scale::Lin && !(p.nominalValue >= 0))
        t.fail(r, "nominalValue", "nominal value < 0 of an estimated parameter on " +
                                      std::string(toString(p.scale)) + " scale");
      p.prior = readPrior(t, r);
      pr.parameters.push_back(p);
    }
  }

  // Conditions.
  for (const Table& t : conditionTables) {
    t.require({"conditionId"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Condition c;
      c.id = t.cell(r, "conditionId");
      if (!isIdentifier(c.id)) t.fail(r, "conditionId", "'" + c.id + "' is not a valid id");
      c.name = t.cell(r, "conditionName");
      for (const std::string& col : t.header) {
        if (col == "conditionId" || col == "conditionName") continue;
        const std::string text = t.cell(r, col);
        const int k = sys.findParam(col);
        if (k < 0)
          t.fail(r, col, "target '" + col +
                             "' is not a constant model parameter, species initial value or "
                             "compartment size (assignment-rule targets, species references and "
                             "unknown ids are not supported)");
        if (text.empty()) continue;
        const Value v = parseValue(t, r, col, text);
        if (!v.isParameter() && std::isnan(v.number)) continue;  // keep
        if (v.isParameter() && pr.findParameter(v.parameterId) < 0 &&
            sys.findParam(v.parameterId) < 0)
          t.fail(r, col, "unknown parameter id '" + v.parameterId + "'");
        c.overrides.emplace_back(k, v);
      }
      pr.conditions.push_back(std::move(c));
    }
  }

  // Observables.
  std::map<std::string, Expr> extra;  // "@petab:<id>" symbols by id
  const auto extraSymbol = [&](const std::string& id) {
    auto it = extra.find(id);
    if (it != extra.end()) return it->second;
    const Expr e = pool.symbol("@petab:" + id);
    extra[id] = e;
    pr.extraSymbols.emplace_back(id, e);
    return e;
  };
  for (const fs::path& file : pr.observableFiles) {
    const Table t = readTable(file, "observables");
    t.require({"observableId", "observableFormula", "noiseFormula"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Observable o;
      o.id = t.cell(r, "observableId");
      if (!isIdentifier(o.id)) t.fail(r, "observableId", "'" + o.id + "' is not a valid id");
      o.name = t.cell(r, "observableName");
      const std::string tr = t.cell(r, "observableTransformation");
      if (tr.empty() || tr == "lin") o.transformation = Transformation::Lin;
      else if (tr == "log") o.transformation = Transformation::Log;
      else if (tr == "log10") o.transformation = Transformation::Log10;
      else t.fail(r, "observableTransformation", "'" + tr + "' is not one of lin, log, log10");
      const std::string nd = t.cell(r, "noiseDistribution");
      if (nd.empty() || nd == "normal") o.distribution = NoiseDistribution::Normal;
      else if (nd == "laplace") o.distribution = NoiseDistribution::Laplace;
      else t.fail(r, "noiseDistribution", "'" + nd + "' is not one of normal, laplace");
      const auto resolver = [&](const std::string& column) {
        return [&, column](const std::string& id) -> Expr {
          for (const char* kind : {"observableParameter", "noiseParameter"}) {
            const std::string prefix = kind;
            const std::string suffix = "_" + o.id;
            if (id.rfind(prefix, 0) == 0 && id.size() > prefix.size() + suffix.size() &&
                id.compare(id.size() - suffix.size(), suffix.size(), suffix) == 0) {
              const std::string digits =
                  id.substr(prefix.size(), id.size() - prefix.size() - suffix.size());
              if (!digits.empty() &&
                  std::all_of(digits.begin(), digits.end(),
                              [](unsigned char ch) { return std::isdigit(ch); })) {
                const int n = std::stoi(digits);
                if (prefix == "observableParameter") {
                  o.numObservableParameters = std::max(o.numObservableParameters, n);
                } else {
                  if (column == "observableFormula")
                    t.fail(r, column, "noise placeholder '" + id + "' in the observable formula");
                  o.numNoiseParameters = std::max(o.numNoiseParameters, n);
                }
                return extraSymbol(id);
              }
            }
          }
          if (id == "time" || id == "t") return sys.time;
          if (const int k = sys.findOutput(id); k >= 0)
            return sys.outputs[static_cast<std::size_t>(k)].value;
          if (const int k = sys.findParam(id); k >= 0)
            return sys.params[static_cast<std::size_t>(k)].symbol;
          if (pr.findParameter(id) >= 0) return extraSymbol(id);
          t.fail(r, column, "unknown identifier '" + id + "'");
        };
      };
      o.formulaText = t.cell(r, "observableFormula");
      o.noiseText = t.cell(r, "noiseFormula");
      if (o.formulaText.empty()) t.fail(r, "observableFormula", "empty formula");
      if (o.noiseText.empty()) t.fail(r, "noiseFormula", "empty formula");
      o.formula = parseFormula(o.formulaText, pool, resolver("observableFormula"),
                               t.where(r, "observableFormula"));
      o.noise = parseFormula(o.noiseText, pool, resolver("noiseFormula"),
                             t.where(r, "noiseFormula"));
      if (pr.findObservable(o.id) >= 0) t.fail(r, "observableId", "duplicate id '" + o.id + "'");
      pr.observables.push_back(std::move(o));
    }
  }

  // Measurements.
  for (std::size_t f = 0; f < pr.measurementFiles.size(); ++f) {
    const Table t = readTable(pr.measurementFiles[f], "measurements");
    t.require({"observableId", "simulationConditionId", "measurement", "time"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Measurement ms;
      ms.row = t.lines[r];
      ms.file = static_cast<int>(f);
      const std::string oid = t.cell(r, "observableId");
      ms.observable = pr.findObservable(oid);
      if (ms.observable < 0) t.fail(r, "observableId", "unknown observable '" + oid + "'");
      const std::string sc = t.cell(r, "simulationConditionId");
      ms.simulationCondition = pr.findCondition(sc);
      if (ms.simulationCondition < 0)
        t.fail(r, "simulationConditionId", "unknown condition '" + sc + "'");
      const std::string pc = t.cell(r, "preequilibrationConditionId");
      if (!pc.empty()) {
        ms.preequilibrationCondition = pr.findCondition(pc);
        if (ms.preequilibrationCondition < 0)
          t.fail(r, "preequilibrationConditionId", "unknown condition '" + pc + "'");
      }
      const auto v = parseNumber(t.cell(r, "measurement"));
      if (!v || !std::isfinite(*v))
        t.fail(r, "measurement", "'" + t.cell(r, "measurement") + "' is not a finite number");
      ms.value = *v;
      const auto time = parseNumber(t.cell(r, "time"));
      if (!time || std::isnan(*time) || *time < 0)
        t.fail(r, "time", "'" + t.cell(r, "time") + "' is not a time >= 0 or inf");
      ms.time = *time;
      ms.observableParameters = parseValueList(t, r, "observableParameters");
      ms.noiseParameters = parseValueList(t, r, "noiseParameters");
      const Observable& o = pr.observables[static_cast<std::size_t>(ms.observable)];
      if (static_cast<int>(ms.observableParameters.size()) != o.numObservableParameters)
        t.fail(r, "observableParameters",
               std::to_string(ms.observableParameters.size()) + " value(s) for observable '" +
                   o.id + "', which has " + std::to_string(o.numObservableParameters) +
                   " placeholder(s)");
      if (static_cast<int>(ms.noiseParameters.size()) != o.numNoiseParameters)
        t.fail(r, "noiseParameters",
               std::to_string(ms.noiseParameters.size()) + " value(s) for observable '" + o.id +
                   "', which has " + std::to_string(o.numNoiseParameters) + " placeholder(s)");
      for (const auto* list : {&ms.observableParameters, &ms.noiseParameters})
        for (const Value& val : *list)
          if (val.isParameter() && pr.findParameter(val.parameterId) < 0)
            t.fail(r, list == &ms.noiseParameters ? "noiseParameters" : "observableParameters",
                   "unknown parameter id '" + val.parameterId + "'");
      if (o.transformation != Transformation::Lin && !(ms.value > 0))
        t.fail(r, "measurement", "value " + t.cell(r, "measurement") + " <= 0 for the " +
                                     toString(o.transformation) + "-transformed observable '" +
                                     o.id + "'");
      pr.measurements.push_back(std::move(ms));
    }
  }
  if (pr.measurements.empty()) throw PetabError(yname + ": no measurements");
  pr.model = std::move(compiled);
  return pr;
}

}  // namespace sensode::petab
