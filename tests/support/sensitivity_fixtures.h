// SPDX-License-Identifier: MIT
// Fixtures shared by the sensitivity tests (tst_sensitivities, tst_sensitivity_propagators,
// tst_sensitivities_cli): closed-form models with exact S, the task run with tolerances, error
// measures, and the method rows of data-driven tests. Each test executable includes it once.
#pragma once

#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <Eigen/Dense>

#include "core/common/errors.h"
#include "core/common/progress.h"
#include "core/model/sbml_importer.h"
#include "core/sensitivity/matrix_exponential.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/suite/test_case.h"
#include "core/tasks/sensitivities_task.h"
#include "support/hand_built_models.h"
#include "support/numeric_compare.h"


using namespace sensode;
using namespace sensode::testing;
using sensode::symbolic::Expr;
using sensode::symbolic::OdeSystem;
using sensode::tasks::SensitivityMethod;
using sensode::tasks::SensitivityOptions;
using sensode::tasks::SensitivityProblem;
using sensode::tasks::SensitivityResult;
using Model = std::shared_ptr<const symbolic::CompiledModel>;

Q_DECLARE_METATYPE(sensode::tasks::SensitivityMethod)
Q_DECLARE_METATYPE(sensode::integrators::Method)

using sensode::test::keepWorst;

namespace {

const std::filesystem::path kShared = SENSODE_SHARED_DIR;
const std::filesystem::path kCases = kShared / "sbml-test-suite" / "cases";


// ---- NUMERICS.md §7.5: random linear system ----

struct RandomLinear {
  Eigen::MatrixXd a;
  Eigen::VectorXd p;
};

inline RandomLinear randomLinearData(int n) {
  std::uint64_t u = 12345;
  auto next = [&u] {
    u = (1103515245ULL * u + 12345ULL) % (1ULL << 31);
    return static_cast<double>(u) / static_cast<double>(1ULL << 31);
  };
  Eigen::MatrixXd b(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) b(i, j) = next();
  RandomLinear d;
  d.p.resize(n);
  for (int i = 0; i < n; ++i) d.p(i) = next();
  d.a = -b.transpose() * b;
  return d;
}

// ẋ = A x + p² + 1, x(0) = 0.
inline Model randomLinearModel(const RandomLinear& d) {
  SystemBuilder b;
  auto& e = b.e();
  const auto n = static_cast<int>(d.p.size());
  std::vector<Expr> p, x;
  for (int i = 0; i < n; ++i) p.push_back(b.param("p" + std::to_string(i), d.p(i)));
  for (int i = 0; i < n; ++i) x.push_back(b.state("x" + std::to_string(i), 0.0));
  for (int i = 0; i < n; ++i) {
    std::vector<Expr> terms;
    for (int j = 0; j < n; ++j) terms.push_back(e.mul(b.c(d.a(i, j)), x[static_cast<std::size_t>(j)]));
    terms.push_back(e.mul(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(i)]));
    terms.push_back(b.c(1.0));
    b.rhs(x[static_cast<std::size_t>(i)], e.add(std::span<const Expr>(terms)));
  }
  return b.compile();
}

// Exact S(t) = A⁻¹(e^{At} − I)·2 diag(p) (A symmetric negative definite: eigen-decomposition).
inline Eigen::MatrixXd randomLinearExactS(const RandomLinear& d, double t) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(d.a);
  const Eigen::VectorXd lambda = es.eigenvalues();
  Eigen::VectorXd phi(lambda.size());
  for (Eigen::Index i = 0; i < lambda.size(); ++i) phi(i) = std::expm1(lambda(i) * t) / lambda(i);
  const Eigen::MatrixXd v = es.eigenvectors();
  return v * phi.asDiagonal() * v.transpose() * (2 * d.p).asDiagonal();
}

// ---- NUMERICS.md §11 problems ----

// A ⇄ B (kf, kb), A(0) = A0 (a species initial value), B(0) = 0.
// S = dx/dk of michaelisMentenModel() at t = 10, rows the states, columns the parameters: the
// reference of NUMERICS.md §11 (to 9 digits; tst_odesd_sensitivities holds it too).
inline Eigen::MatrixXd michaelisMentenReferenceAt10() {
  Eigen::MatrixXd ref(4, 3);
  ref << -4.66134174e-6, 4.64398189e-5, 8.55193667e-2, -1.14387803e-4, 1.13290830e-3,
      -4.97034333e-1, 4.66134174e-6, -4.64398189e-5, -8.55193667e-2, 1.09726462e-4,
      -1.08646848e-3, 5.82553700e-1;
  return ref;
}

inline Model conversionModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr kf = b.param("kf", 2.0), kb = b.param("kb", 0.5);
  const Expr a0 = b.param("A0", 3.0, symbolic::ParamKind::SpeciesInitial);
  const Expr A = b.state("A", a0), B = b.state("B", 0.0);
  const Expr v = e.sub(e.mul(kf, A), e.mul(kb, B));
  b.rhs(A, e.neg(v));
  b.rhs(B, v);
  return b.compile();
}

// Analytic S for conversionModel: rows A, B; columns kf, kb, A0.
inline Eigen::MatrixXd conversionExactS(double t) {
  const double kf = 2, kb = 0.5, total = 3, s = kf + kb, E = std::exp(-s * t);
  const double a = total * (kb + kf * E) / s;
  Eigen::MatrixXd S(2, 3);
  S(0, 0) = total * kb * (E - 1) / (s * s) - total * kf * t * E / s;
  S(0, 1) = total * kf * (1 - E) / (s * s) - total * kf * t * E / s;
  S(0, 2) = a / total;
  S.row(1) = -S.row(0);
  S(1, 2) = 1 - a / total;
  return S;
}

// ẋ = −k·x + piecewise(u, time ≤ t_end, 0) with t_end = 0 (Fujita's EGF input with
// EGF_end = 0): the input acts at the single point t = 0, so x = x0·e^{−kt} and
// ∂x/∂u ≡ 0, ∂x/∂k = −t·x0·e^{−kt}, ∂x/∂x0 = e^{−kt}. With u = 1, f itself jumps at t0 too.
inline Model pulseAtStartModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr k = b.param("k", 0.5), u = b.param("u", 1.0), tEnd = b.param("t_end", 0.0);
  const Expr x0 = b.param("x0", 2.0);
  const Expr x = b.state("x", x0);
  const Expr input = e.binary(symbolic::Op::Le, b.t(), tEnd);
  const Expr pieces[] = {u, input};
  b.rhs(x, e.add(e.neg(e.mul(k, x)), e.piecewise(pieces, e.zero())));
  return b.compile();
}

// A compartment of size V = 2 whose size moves species read in concentration three ways
// (k = 0.5, kb = 0.3, v0 = 0.7):
//   A: initial amount a0 = 3, rate k·A in amount/time:  [A] = (a0/V)·e^{−kt/V};
//   B: initial concentration b0 = 1.5, rate V·kb·B:       [B] = b0·e^{−kb·t}, ∂[B]/∂V ≡ 0;
//   C: initial concentration 0, constant influx v0:       [C] = v0·t/V.
// In amounts: n_A = a0·e^{−kt/V}, n_B = V·[B], n_C = v0·t (∂n_C/∂V ≡ 0).
inline Model compartmentSizeModel() {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2"><model id="m">
<listOfCompartments><compartment id="V" size="2" constant="true" spatialDimensions="3"/></listOfCompartments>
<listOfSpecies>
<species id="A" compartment="V" initialAmount="3" hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/>
<species id="B" compartment="V" initialConcentration="1.5" hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/>
<species id="C" compartment="V" initialConcentration="0" hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/>
</listOfSpecies>
<listOfParameters><parameter id="k" value="0.5" constant="true"/><parameter id="kb" value="0.3" constant="true"/>
<parameter id="v0" value="0.7" constant="true"/></listOfParameters>
<listOfReactions>
<reaction id="rA" reversible="false"><listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/></listOfReactants>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><ci>k</ci><ci>A</ci></apply></math></kineticLaw></reaction>
<reaction id="rB" reversible="false"><listOfReactants><speciesReference species="B" stoichiometry="1" constant="true"/></listOfReactants>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><ci>V</ci><ci>kb</ci><ci>B</ci></apply></math></kineticLaw></reaction>
<reaction id="rC" reversible="false"><listOfProducts><speciesReference species="C" stoichiometry="1" constant="true"/></listOfProducts>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><ci>v0</ci></math></kineticLaw></reaction>
</listOfReactions></model></sbml>)";
  return std::make_shared<const symbolic::CompiledModel>(
      symbolic::buildOdeSystem(model::importSbmlString(xml, "compartment_size.xml")));
}

// compartmentSizeModel's outputs A, B, C at t (concentrations, or amounts): {y, ∂y/∂V} each.
inline std::array<std::pair<double, double>, 3> compartmentSizeClosedForm(double t, bool amounts) {
  const double V = 2, k = 0.5, kb = 0.3, v0 = 0.7, a0 = 3, b0 = 1.5;
  const double eA = std::exp(-k * t / V), eB = std::exp(-kb * t);
  if (amounts) return {{{a0 * eA, a0 * eA * k * t / (V * V)}, {V * b0 * eB, b0 * eB}, {v0 * t, 0.0}}};
  return {{{a0 / V * eA, -a0 / (V * V) * eA + a0 / V * eA * k * t / (V * V)},
           {b0 * eB, 0.0},
           {v0 * t / V, -v0 * t / (V * V)}}};
}

inline Model sbmlModel(const std::filesystem::path& file) {
  return std::make_shared<const symbolic::CompiledModel>(
      symbolic::buildOdeSystem(model::importSbmlFile(file)));
}

inline std::vector<double> linspace(double t0, double t1, int n) {
  std::vector<double> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = t0 + (t1 - t0) * i / (n - 1);
  t.back() = t1;
  return t;
}

inline SensitivityResult run(Model model, SensitivityMethod method, const std::vector<double>& times,
                      double rtol, double atol,
                      const std::function<void(SensitivityProblem&, SensitivityOptions&)>& tweak =
                          {}) {
  SensitivityProblem problem;
  problem.model = std::move(model);
  problem.times = times;
  SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = rtol;
  options.integrator.atol = atol;
  if (tweak) tweak(problem, options);
  return tasks::runSensitivities(problem, options);
}

// S at output time `it` as a dense nx × np matrix.
inline Eigen::MatrixXd stateS(const SensitivityResult& r, std::size_t it) {
  Eigen::MatrixXd s(r.stateIds.size(), r.parameterIds.size());
  for (std::size_t i = 0; i < r.stateIds.size(); ++i)
    for (std::size_t j = 0; j < r.parameterIds.size(); ++j)
      s(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = r.stateAt(it, i, j);
  return s;
}

// max over columns of ‖S_:j − R_:j‖₂ / ‖R_:j‖₂ (each parameter's sensitivities on their scale).
// NaN when s has a non-finite entry (written so that a NaN is never skipped by a comparison).
inline double columnRelativeError(const Eigen::MatrixXd& s, const Eigen::MatrixXd& ref) {
  double worst = 0;
  for (Eigen::Index j = 0; j < ref.cols(); ++j) {
    const double scale = ref.col(j).norm();
    const double diff = (s.col(j) - ref.col(j)).norm();
    const double e = scale > 0 ? diff / scale : diff;
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

// Error of `r` against `ref` over all output times, per output on the scale of its
// log-sensitivities: with w_p = |p| (1 for p = 0),
//   error(y) = max_{t,p} w_p·|v − v_ref| / max_{t,p} w_p·|v_ref|,
// the worst output. (Normalising each (output, parameter) series by itself instead would flag
// cancellation, e.g. d[concentration]/d[compartment size] = S/V − x/V² ≈ 0 on Boehm.)
struct SeriesError {
  double error = 0;
  std::string where;
};
inline SeriesError seriesError(const SensitivityResult& r, const SensitivityResult& ref, const Model& model) {
  const std::size_t nt = ref.times.size(), ny = ref.outputIds.size(),
                    np = ref.parameterIds.size();
  const std::vector<double> p = model->nominalParameters();
  std::vector<double> w(np);
  for (std::size_t ip = 0; ip < np; ++ip) {
    const double v = p[static_cast<std::size_t>(model->system().findParam(ref.parameterIds[ip]))];
    w[ip] = v != 0 ? std::abs(v) : 1.0;
  }
  SeriesError worst;
  for (std::size_t iy = 0; iy < ny; ++iy) {
    double scale = 0, diff = 0;
    std::size_t at = 0;
    for (std::size_t ip = 0; ip < np; ++ip) {
      for (std::size_t it = 0; it < nt; ++it) {
        scale = std::max(scale, w[ip] * std::abs(ref.at(it, iy, ip)));
        const double d = w[ip] * std::abs(r.at(it, iy, ip) - ref.at(it, iy, ip));
        if (!(d <= diff)) {  // NaN propagates
          if (std::isnan(diff)) continue;
          diff = d;
          at = ip;
        }
      }
    }
    const double e = scale > 0 ? diff / scale : diff;
    if (!(e <= worst.error) && !std::isnan(worst.error)) {
      worst.error = e;
      worst.where = "d " + ref.outputIds[iy] + " / d " + ref.parameterIds[at];
    }
  }
  return worst;
}

inline bool odeSdUnavailable(const SensitivityResult& r) {
  return r.termination == tasks::Termination::InvalidInput &&
         r.message.find("not available") != std::string::npos;
}

#define SKIP_IF_ODESD_MISSING(r)                                                          \
  do {                                                                                    \
    if (odeSdUnavailable(r)) QSKIP(("odeSD sensitivities not available: " + (r).message).c_str()); \
  } while (0)

#define REQUIRE_SUCCESS(r)                                                                  \
  do {                                                                                      \
    SKIP_IF_ODESD_MISSING(r);                                                               \
    QVERIFY2((r).termination == tasks::Termination::Success, (r).message.c_str());          \
  } while (0)

inline void addMethodRows(const char* prefix, std::initializer_list<std::pair<SensitivityMethod, double>>
                                           rows) {
  for (const auto& [method, tol] : rows) {
    QTest::newRow((std::string(prefix) + tasks::toString(method)).c_str()) << method << tol;
  }
}

}  // namespace
