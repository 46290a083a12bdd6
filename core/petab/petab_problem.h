// SPDX-License-Identifier: MIT
// PEtab v1 problems (https://petab.readthedocs.io/en/latest/v1/documentation_data_format.html):
// the yaml file (core/petab/yaml_file.h: format_version 1, parameter files, one problem with
// one SBML model and any number of condition, measurement and observable files), the parameter
// table (lin/log/log10 scales, estimate flag, bounds, nominal values on linear scale, objective
// priors: core/petab/priors.h), conditions (overrides of parameters, species initial values and
// compartment sizes by number or parameter id, also where the model gives them by an initial
// assignment, which the condition wins over; empty or NaN keeps the model's value),
// observables (formulas with observableParameter placeholders, noise formulas with
// noiseParameter placeholders, core/petab/formula.h; lin/log/log10 transformations, normal and
// Laplace noise) and measurements (time = inf for steady-state data,
// preequilibrationConditionId). Tables are read by core/petab/tables.h (BOM, CRLF, quotes).
//
// The scale of a parameter is the scale estimation works on: a parameter with estimate = 0 is
// used at its nominal value on linear scale whatever its scale says (the specification: the
// nominal value "must be provided in linear space, independent of parameterScale"), so a fixed
// log10 parameter may have the nominal value 0.
//
// Anything outside this (several models, unknown identifiers, ...) is refused with a PetabError
// naming the file, table, row and column.
#pragma once

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/common/errors.h"
#include "core/petab/formula.h"
#include "core/petab/initial_assignment_overrides.h"
#include "core/petab/priors.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/expression.h"

namespace sensode::steadystate {
class ConservedModel;
}

namespace sensode::petab {

// A PEtab file that cannot be read or uses an unsupported feature. what() is one line:
// "<file>: <table> table, row <n>, column <c>: <reason>" (row = line number in the file).
class PetabError : public Error {
 public:
  using Error::Error;
};

enum class Scale { Lin, Log, Log10 };
const char* toString(Scale s);
double toScale(Scale s, double linear);
double fromScale(Scale s, double scaled);

struct Parameter {
  std::string id, name;
  Scale scale = Scale::Lin;
  double lowerBound = -std::numeric_limits<double>::infinity();  // linear scale
  double upperBound = std::numeric_limits<double>::infinity();   // linear scale
  double nominalValue = 0;                                       // linear scale
  bool estimate = false;
  Prior prior;  // objectivePriorType/objectivePriorParameters (type None: no prior)
};

// A number or the id of a parameter (condition and measurement tables).
struct Value {
  double number = std::numeric_limits<double>::quiet_NaN();
  std::string parameterId;  // non-empty: a parameter id instead of a number
  bool isParameter() const { return !parameterId.empty(); }
};

struct Condition {
  std::string id, name;
  // Model parameter index (CompiledModel parameter vector) and the value to give it. NaN
  // numbers are dropped (they mean "keep").
  std::vector<std::pair<int, Value>> overrides;
};

enum class Transformation { Lin, Log, Log10 };
const char* toString(Transformation t);

// The noise model of the transformed observable: normal (σ its standard deviation) or Laplace
// (σ its scale b, density exp(−|m − y|/b)/(2b)).
enum class NoiseDistribution { Normal, Laplace };
const char* toString(NoiseDistribution d);

struct Observable {
  std::string id, name;
  std::string formulaText, noiseText;
  symbolic::Expr formula = 0, noise = 0;  // in the model's ExprPool
  Transformation transformation = Transformation::Lin;
  NoiseDistribution distribution = NoiseDistribution::Normal;
  int numObservableParameters = 0;  // placeholders observableParameter1_<id> ... (highest n)
  int numNoiseParameters = 0;       // placeholders noiseParameter1_<id> ...
};

struct Measurement {
  int observable = -1;
  int simulationCondition = -1;
  int preequilibrationCondition = -1;  // -1: none
  double value = 0;
  double time = 0;  // +inf: at the steady state
  std::vector<Value> observableParameters, noiseParameters;
  int row = 0;   // line number in its measurement file
  int file = 0;  // index into Problem::measurementFiles
};

// The model's conservation analysis and reduced model (steadystate::ConservedModel), built on
// the first objective evaluation and kept with the problem. Built per evaluation it cost a fit
// about half its time: a conservation analysis, a reduced model and a tcc compilation of it
// (Boehm: 46 % of all CPU time of `sensode estimate`, docs/benchmarks/estimation.md). Keyed by
// the model it was built from, so a problem whose model is replaced builds it afresh. A copy of
// the problem starts empty: copies go to other threads, and compiled models are not shared
// between threads (core/symbolic/compiled_model.h).
class ConservedModelCache {
 public:
  ConservedModelCache() = default;
  ConservedModelCache(const ConservedModelCache&) {}
  ConservedModelCache& operator=(const ConservedModelCache&) {
    const std::lock_guard lock(mutex_);
    value_.reset();
    return *this;
  }
  std::shared_ptr<const steadystate::ConservedModel> get(
      const std::shared_ptr<const symbolic::CompiledModel>& model) const;

 private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const steadystate::ConservedModel> value_;
};

struct Problem {
  std::filesystem::path yamlFile, sbmlFile;
  std::vector<std::filesystem::path> parameterFiles, conditionFiles, observableFiles,
      measurementFiles;
  std::shared_ptr<const symbolic::CompiledModel> model;
  std::vector<Parameter> parameters;
  std::vector<Condition> conditions;
  std::vector<Observable> observables;
  std::vector<Measurement> measurements;
  // Model parameters that had an SBML initial assignment and that a condition table sets
  // (core/petab/initial_assignment_overrides.h): a condition that leaves one empty or NaN gives
  // it the assignment's value. In dependency order.
  std::vector<InitialAssignmentDefault> initialAssignmentDefaults;
  // Symbols of PEtab-only parameters and placeholders ("@petab:<id>") used in formulas.
  std::vector<std::pair<std::string, symbolic::Expr>> extraSymbols;
  ConservedModelCache conserved;  // of `model`; see ConservedModelCache

  int findParameter(const std::string& id) const;  // -1 when absent
  int findCondition(const std::string& id) const;
  int findObservable(const std::string& id) const;
};

// Reads the problem and compiles its model. Throws PetabError (or SbmlError for the model).
Problem loadProblem(const std::filesystem::path& yamlFile);

}  // namespace sensode::petab
