// SPDX-License-Identifier: MIT
// The Parameter sensitivities task and its five methods (odeSD direct, CVODES forward, PBSR,
// Exp, central finite differences) on:
//   - closed forms: NUMERICS.md §7.5's random linear n = 10 system (exact S), Linear2 (exact S),
//     A ⇄ B conversion (analytic S, singular J, a species-initial-value parameter);
//   - NUMERICS.md §11's S references (Michaelis–Menten, Robertson T = 40, Chua,
//     repressilator);
//   - every method against a tight CVODES forward reference (rtol 1e-10) on SBML Test Suite
//     cases (local parameters, assignment rules depending on parameters, initial assignments)
//     and PEtab models (Boehm, Fujita), outputs through the chain rule;
//   - scaled vs unscaled, guards, errors, cancellation, and the CLI's CSV/JSON contract.
// Tolerances are per method and state the measured errors they were set from.
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
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

RandomLinear randomLinearData(int n) {
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
Model randomLinearModel(const RandomLinear& d) {
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
Eigen::MatrixXd randomLinearExactS(const RandomLinear& d, double t) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(d.a);
  const Eigen::VectorXd lambda = es.eigenvalues();
  Eigen::VectorXd phi(lambda.size());
  for (Eigen::Index i = 0; i < lambda.size(); ++i) phi(i) = std::expm1(lambda(i) * t) / lambda(i);
  const Eigen::MatrixXd v = es.eigenvectors();
  return v * phi.asDiagonal() * v.transpose() * (2 * d.p).asDiagonal();
}

// ---- NUMERICS.md §11 problems ----

// A ⇄ B (kf, kb), A(0) = A0 (a species initial value), B(0) = 0.
Model conversionModel() {
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
Eigen::MatrixXd conversionExactS(double t) {
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
Model pulseAtStartModel() {
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

Model sbmlModel(const std::filesystem::path& file) {
  return std::make_shared<const symbolic::CompiledModel>(
      symbolic::buildOdeSystem(model::importSbmlFile(file)));
}

std::vector<double> linspace(double t0, double t1, int n) {
  std::vector<double> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = t0 + (t1 - t0) * i / (n - 1);
  t.back() = t1;
  return t;
}

SensitivityResult run(Model model, SensitivityMethod method, const std::vector<double>& times,
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
Eigen::MatrixXd stateS(const SensitivityResult& r, std::size_t it) {
  Eigen::MatrixXd s(r.stateIds.size(), r.parameterIds.size());
  for (std::size_t i = 0; i < r.stateIds.size(); ++i)
    for (std::size_t j = 0; j < r.parameterIds.size(); ++j)
      s(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = r.stateAt(it, i, j);
  return s;
}

// max over columns of ‖S_:j − R_:j‖₂ / ‖R_:j‖₂ (each parameter's sensitivities on their scale).
// NaN when s has a non-finite entry (written so that a NaN is never skipped by a comparison).
double columnRelativeError(const Eigen::MatrixXd& s, const Eigen::MatrixXd& ref) {
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
SeriesError seriesError(const SensitivityResult& r, const SensitivityResult& ref, const Model& model) {
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

bool odeSdUnavailable(const SensitivityResult& r) {
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

void addMethodRows(const char* prefix, std::initializer_list<std::pair<SensitivityMethod, double>>
                                           rows) {
  for (const auto& [method, tol] : rows) {
    QTest::newRow((std::string(prefix) + tasks::toString(method)).c_str()) << method << tol;
  }
}

}  // namespace

class TestSensitivities : public QObject {
  Q_OBJECT

 private slots:
  // ---- options, names ----

  void defaultOptionsAreValid() {
    QVERIFY(!SensitivityOptions{}.validate().has_value());
    QVERIFY(!sensitivity::PeanoBakerOptions{}.validate().has_value());
  }

  void invalidOptionsNameFieldValueAndConstraint() {
    SensitivityOptions o;
    o.fdRelativeStep = -1;
    QCOMPARE(QString::fromStdString(o.validate().value()),
             QString("SensitivityOptions::fdRelativeStep = -1. Violated constraint: 0 < "
                     "fdRelativeStep < 0.5"));
    o = {};
    o.integrator.rtol = 0;
    QVERIFY(o.validate().value().find("IntegratorOptions::rtol") != std::string::npos);
    o = {};
    o.peanoBaker.maxSubintervals = 0;
    QVERIFY(o.validate().value().find("maxSubintervals") != std::string::npos);
    o = {};
    o.peanoBaker.mergeTolerance = -1;
    QCOMPARE(QString::fromStdString(o.validate().value()),
             QString("PeanoBakerOptions::mergeTolerance = -1. Violated constraint: 0 <= "
                     "mergeTolerance < inf"));
    o = {};
    o.fdRtol = std::nan("");
    QVERIFY(o.validate().value().find("fdRtol") != std::string::npos);
  }

  void methodNamesRoundTrip() {
    for (const auto m : {SensitivityMethod::OdeSd, SensitivityMethod::Cvodes,
                         SensitivityMethod::Pbsr, SensitivityMethod::Exp,
                         SensitivityMethod::FiniteDifferences}) {
      QCOMPARE(tasks::sensitivityMethodFromString(tasks::toString(m)).value(), m);
    }
    QCOMPARE(tasks::sensitivityMethodFromString("EXP").value(), SensitivityMethod::Exp);
    QVERIFY(!tasks::sensitivityMethodFromString("adjoint").has_value());
  }

  // ---- the exponential formula (NUMERICS.md §7.3) ----

  void exponentialStepIsExactForConstantJacobians() {
    // Random linear n = 10: one step over [0, 10] is exact (both augmented forms).
    const RandomLinear d = randomLinearData(10);
    const Eigen::MatrixXd b = (2 * d.p).asDiagonal();
    sensitivity::ExponentialWorkspace work;
    Eigen::MatrixXd s = Eigen::MatrixXd::Zero(10, 10);
    sensitivity::exponentialStep(d.a, b, 10.0, s, work);  // ns = n: the (2n)² form
    const Eigen::MatrixXd exact = randomLinearExactS(d, 10.0);
    // measured 8.7e-15
    SENSODE_EXPECT_CLOSE((s - exact).norm() / exact.norm(), 0, 1e-12, 0, "2n form", 0);
    Eigen::MatrixXd s3 = Eigen::MatrixXd::Zero(10, 3);
    sensitivity::exponentialStep(d.a, b.leftCols(3), 10.0, s3, work);  // ns < n: (n + ns)²
    SENSODE_EXPECT_CLOSE((s3 - exact.leftCols(3)).norm() / exact.leftCols(3).norm(), 0, 1e-12, 0,
                         "n+ns form", 0);
    // The §11 reference values.
    SENSODE_EXPECT_CLOSE(s(0, 0), 7.1588294936, 0, 1e-10, "S[0,0]", 0);
    SENSODE_EXPECT_CLOSE(s(0, 1), 1.1223868435e-2, 0, 1e-9, "S[0,1]", 0);
    SENSODE_EXPECT_CLOSE(s(0, 2), -1.8950361595, 0, 1e-10, "S[0,2]", 0);
    SENSODE_EXPECT_CLOSE(s(9, 9), 5.2350295626, 0, 1e-10, "S[9,9]", 0);
    SENSODE_EXPECT_CLOSE(s.norm(), 16.419367586, 0, 1e-10, "|S|_F", 0);

    // Singular A (conservation law): A = [[−k, k], [k, −k]], B = I; Φ₁ exact by eigenvectors.
    const double k = 3, dt = 1e4;
    Eigen::MatrixXd a(2, 2);
    a << -k, k, k, -k;
    Eigen::MatrixXd s2 = Eigen::MatrixXd::Zero(2, 2);
    sensitivity::exponentialStep(a, Eigen::MatrixXd::Identity(2, 2), dt, s2, work);
    const double phi0 = dt, phi1 = std::expm1(-2 * k * dt) / (-2 * k);
    Eigen::MatrixXd phi(2, 2);
    phi << (phi0 + phi1) / 2, (phi0 - phi1) / 2, (phi0 - phi1) / 2, (phi0 + phi1) / 2;
    // measured 5.7e-13
    SENSODE_EXPECT_CLOSE((s2 - phi).norm() / phi.norm(), 0, 1e-11, 0, "singular A", 0);

    // Stiff: Linear2's A over Δt = 1000 (‖ΔtA‖ = 1e6): the printed formula's e^{−ΔtA} would
    // overflow; the augmented form stays accurate (measured 2.9e-11).
    Eigen::MatrixXd stiff(2, 2);
    stiff << -1000, 1, 0, -1;
    Eigen::MatrixXd s4 = Eigen::MatrixXd::Zero(2, 2);
    sensitivity::exponentialStep(stiff, Eigen::MatrixXd::Identity(2, 2), 1000.0, s4, work);
    const double p11 = std::expm1(-1000.0 * 1000) / -1000, p22 = std::expm1(-1000.0) / -1;
    Eigen::MatrixXd px(2, 2);
    px << p11, (p11 - p22) / (-1000 + 1), 0, p22;
    SENSODE_EXPECT_CLOSE((s4 - px).norm() / px.norm(), 0, 1e-9, 0, "stiff A", 0);
  }

  void structuredExponentialMatchesTheAugmentedExpm() {
    // integratedExponential against Eigen's exp() of the 2n × 2n augmented matrix over norms that
    // select every Padé degree (3, 5, 7, 9, 13 with 0 … 25 squarings), including a singular A.
    // Both are the same algorithm; they differ by rounding that the squarings amplify, ~1e-16
    // per unit of ‖ΔtA‖₁ on the non-normal singular variant (measured against a long-double
    // exp(): Eigen 2.2e-12 / structured 1.3e-11 at ‖ΔtA‖₁ = 3e2, 8.9e-8 / 1.2e-7 at 3e7); the
    // tolerance is 1e-13·max(1, ‖ΔtA‖₁) (worst measured ratio to it: 0.4).
    const RandomLinear d = randomLinearData(10);
    sensitivity::ExponentialWorkspace work;
    Eigen::MatrixXd e, phi;
    long checked = 0;
    for (const double dt : {1e-4, 5e-3, 2e-2, 5e-2, 0.1, 1.0, 10.0, 1e3, 1e6}) {
      for (int variant = 0; variant < 2; ++variant) {
        Eigen::MatrixXd a = d.a;
        if (variant == 1) a.row(0) = -a.bottomRows(9).colwise().sum();  // columns sum to 0
        Eigen::MatrixXd m = Eigen::MatrixXd::Zero(20, 20);
        m.topLeftCorner(10, 10) = dt * a;
        m.topRightCorner(10, 10) = dt * Eigen::MatrixXd::Identity(10, 10);
        const Eigen::MatrixXd full = sensitivity::expm(m);
        sensitivity::integratedExponential(a, dt, e, phi, work);
        const double tol = 1e-13 * std::max(1.0, dt * a.cwiseAbs().colwise().sum().maxCoeff());
        const Eigen::MatrixXd fullE = full.topLeftCorner(10, 10);
        const Eigen::MatrixXd fullPhi = full.topRightCorner(10, 10);
        // E underflows to 0 for the stable A at Δt = 1e6: compare absolutely there.
        SENSODE_EXPECT_CLOSE((e - fullE).norm() / std::max(fullE.norm(), 1.0), 0, tol, 0,
                             "E vs exp()", checked);
        SENSODE_EXPECT_CLOSE((phi - fullPhi).norm() / fullPhi.norm(), 0, tol, 0, "Phi1 vs exp()",
                             checked);
        ++checked;
      }
    }
    QCOMPARE(checked, 18L);
  }

  // ---- closed forms through the task ----

  void randomLinearSystem_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // column-relative error of S at every output time
    // Measured (rtol 1e-8, atol 1e-12, 11 outputs over [0, 10]): cvodes 5.3e-9, odesd 3.0e-9,
    // exp and pbsr 1.1e-14 (constant Jacobians: the switch chooses the exact exponential formula
    // on every interval), fd 6.8e-5 in the column of p1 = 0.0037 (its step δ = 3.7e-7 moves x by
    // ~4e-9, close to the integration noise of the two runs).
    addMethodRows("", {{SensitivityMethod::Cvodes, 1e-7},
                       {SensitivityMethod::OdeSd, 1e-7},
                       {SensitivityMethod::FiniteDifferences, 3e-4},
                       {SensitivityMethod::Exp, 1e-12},
                       {SensitivityMethod::Pbsr, 1e-12}});
  }
  void randomLinearSystem() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    const SensitivityResult r = run(randomLinearModel(d), method, times, 1e-8, 1e-12);
    REQUIRE_SUCCESS(r);
    double worst = 0;
    for (std::size_t it = 1; it < times.size(); ++it) {
      keepWorst(worst, columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
    }
    qInfo("%s: worst column-relative error of S %.2e", tasks::toString(method), worst);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "column-relative error", 0);
    const std::size_t last = times.size() - 1;
    SENSODE_EXPECT_CLOSE(r.stateAt(last, 9, 9), 5.2350295626, 0, std::max(tolerance, 1e-9),
                         "S[9,9](10)", 0);
    if (method == SensitivityMethod::Pbsr) {
      QCOMPARE(r.stats.peanoBaker.refinedIntervals, 0L);
      QVERIFY(r.stats.peanoBaker.exponentialSteps > 0);
    }
  }

  void pbsrWithoutTheSwitchIsSetByTheRefinementRule() {
    // NUMERICS.md §7.5: PBSR refining always (switch removed) has ~5e-6 final error set by the
    // n_int rule (Δt_sub·‖A‖₁ ≈ 0.1), independent of the base grid. Measured here (CVODES grid,
    // rtol 1e-8): 5.5e-6 final, 2.4e-5 worst over the outputs.
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    const SensitivityResult r =
        run(randomLinearModel(d), SensitivityMethod::Pbsr, times, 1e-8, 1e-12,
            [](SensitivityProblem&, SensitivityOptions& o) {
              o.peanoBaker.constantTolerance = 0;
              o.peanoBaker.maxSubintervals = 1'000'000;
            });
    REQUIRE_SUCCESS(r);
    const double final =
        columnRelativeError(stateS(r, times.size() - 1), randomLinearExactS(d, 10.0));
    qInfo("PBSR without switch: final %.2e, %ld sub-intervals", final,
          r.stats.peanoBaker.subintervals);
    QVERIFY(r.stats.peanoBaker.exponentialSteps == 0);
    QVERIFY(r.stats.peanoBaker.subintervals > 2000);  // ≈ 10·T·‖A‖₁ = 2967 (+ rounding up)
    SENSODE_EXPECT_CLOSE(final, 0, 2e-5, 0, "final error", 0);
    QVERIFY2(final > 1e-7, "PBS should not be exact here");
  }

  // ---- Exp's cost cuts: exponential reuse and the merged grid (peano_baker.h) ----

  void exponentialReuseIsBitIdentical() {
    // Random linear n = 10 (constant A, B): E, Φ₁ depend on A and Δt only, so reusing them when
    // both repeat changes no bit of S. Merged (default): one step per output interval, all of
    // length 1 → one exponential computed for the 10 steps; unmerged: one step per CVODES step,
    // reused wherever CVODES kept its step size (measured: 74 computed for 325 steps).
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    for (const double merge : {1e-4, 0.0}) {
      auto withReuse = [merge](bool reuse) {
        return [merge, reuse](SensitivityProblem&, SensitivityOptions& o) {
          o.peanoBaker.mergeTolerance = merge;
          o.peanoBaker.reuseExponential = reuse;
          o.peanoBaker.shiftExponential = false;  // not bit-identical by design
        };
      };
      const SensitivityResult on =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12, withReuse(true));
      const SensitivityResult off =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12, withReuse(false));
      REQUIRE_SUCCESS(on);
      REQUIRE_SUCCESS(off);
      const auto& a = on.stats.peanoBaker;
      const auto& b = off.stats.peanoBaker;
      qInfo("merge %g: %ld intervals, %ld exponential steps, %ld computed with reuse, %ld without",
            merge, a.intervals, a.exponentialSteps, a.expmEvaluations, b.expmEvaluations);
      QVERIFY(on.stateSensitivities == off.stateSensitivities);  // bitwise
      QVERIFY(on.values == off.values);
      QCOMPARE(a.exponentialSteps, b.exponentialSteps);
      QCOMPARE(b.expmEvaluations, b.exponentialSteps);
      QVERIFY(a.expmEvaluations < a.exponentialSteps);
      if (merge > 0) {
        QCOMPARE(a.exponentialSteps, 10L);
        QCOMPARE(a.expmEvaluations, 1L);
      }
    }
  }

  void shiftedExponentialsStayExact_data() {
    QTest::addColumn<double>("stiffness");
    QTest::newRow("Δt‖A‖₁ ≈ 150") << 1.0;
    // ‖A‖₁ ≈ 1.2e4: a backward shift (e^{δA}, δ < 0) would overflow on the stiff modes.
    QTest::newRow("stiff, Δt‖A‖₁ ≈ 6e4") << 400.0;
  }

  void shiftedExponentialsStayExact() {
    // Constant A, merged steps between output times 0, 5.05, 10.15, 15.3, 20.3, … (lengths 5 +
    // 0.05·(k mod 4); squarings needed): where the length grows, E, Φ₁ are shifted from the
    // previous length (e^{δA} and two products) instead of recomputed; where it shrinks
    // (k mod 4 = 0) they are computed afresh, never shifted backwards. S stays exact (measured
    // 5.5e-14 shifted, 3.5e-14 recomputed on the non-stiff row).
    QFETCH(double, stiffness);
    RandomLinear d = randomLinearData(10);
    d.a *= stiffness;
    std::vector<double> times = {0.0};
    for (int k = 1; k <= 10; ++k) times.push_back(times.back() + 5.0 + 0.05 * (k % 4));
    double errors[2] = {0, 0};
    sensitivity::PeanoBakerStats stats[2];
    for (int shifted = 0; shifted < 2; ++shifted) {
      const SensitivityResult r =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12,
              [shifted](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.shiftExponential = shifted != 0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[shifted],
                  columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
      }
      stats[shifted] = r.stats.peanoBaker;
    }
    qInfo("recomputed: %ld computed, error %.2e; shifted: %ld computed, %ld shifted, error %.2e",
          stats[0].expmEvaluations, errors[0], stats[1].expmEvaluations, stats[1].expmShifted,
          errors[1]);
    QCOMPARE(stats[0].exponentialSteps, 10L);
    QCOMPARE(stats[0].expmShifted, 0L);
    QCOMPARE(stats[1].expmEvaluations, 3L);  // the first length and the two shrinking ones
    QCOMPARE(stats[1].expmEvaluations + stats[1].expmShifted, stats[0].expmEvaluations);
    SENSODE_EXPECT_CLOSE(errors[1], 0, 1e-12, 0, "shifted", 0);
    SENSODE_EXPECT_CLOSE(errors[0], 0, 1e-12, 0, "recomputed", 0);
  }

  void mergedGridIsExactForConstantJacobians() {
    // NUMERICS.md §7.5: the exponential formula is exact for constant A, B at any step length, so
    // merging every interval between two output times keeps S exact (measured 1.5e-14 merged,
    // 1.0e-14 unmerged) with one exponential step per output interval instead of one per CVODES
    // step (10 instead of 325).
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    double errors[2] = {0, 0};
    long steps[2] = {0, 0};
    for (int merged = 0; merged < 2; ++merged) {
      const SensitivityResult r =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12,
              [merged](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.mergeTolerance = merged ? 1e-4 : 0.0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[merged],
                  columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
      }
      steps[merged] = r.stats.peanoBaker.exponentialSteps;
      if (merged) {
        QCOMPARE(r.stats.peanoBaker.mergedIntervals,
                 r.stats.peanoBaker.intervals - r.stats.peanoBaker.exponentialSteps);
      } else {
        QCOMPARE(steps[0], r.stats.peanoBaker.intervals);
      }
    }
    qInfo("unmerged: %ld steps, error %.2e; merged: %ld steps, error %.2e", steps[0], errors[0],
          steps[1], errors[1]);
    QCOMPARE(steps[1], 10L);
    QVERIFY(steps[0] > 5 * steps[1]);
    SENSODE_EXPECT_CLOSE(errors[1], 0, 1e-12, 0, "merged", 0);
    SENSODE_EXPECT_CLOSE(errors[0], 0, 1e-12, 0, "unmerged", 0);
  }

  void mergedStepUsesItsOwnNorms() {
    // Regression: a merged step begun after a failed merge inherited the failed step's largest
    // ‖B_j‖, a looser bound than peano_baker.h derives. x' = −k x + q y with y fed by the
    // "trajectory" (y' = 0 in the model): A is constant, B = ∂f/∂q = (y, 0) follows y = 1000 on
    // [0, 2), 1 on [2, 3), 1.1 after. [1, 2] joins [0, 1] (B unchanged); [2, 3] cannot join them
    // (spread 999). [3, 4] has spread 0.1 against the new step's first B: ½h²‖A‖₁·0.1 = 0.2 >
    // 1e-4·(‖S(2)‖₁ + h·1.1) = 0.087 with its own norms (‖S(2)‖₁ = 1000(1 − e⁻²)), so it must
    // not join; with the inherited 1000 the bound was 1e-4·(865 + 2000) = 0.29 and it did.
    SystemBuilder b;
    auto& e = b.e();
    const Expr k = b.param("k", 1.0), q = b.param("q", 1.0);
    const Expr x = b.state("x", 0.0), y = b.state("y", 1000.0);
    b.rhs(x, add(e, {e.mul(e.neg(k), x), e.mul(q, y)}));
    b.rhs(y, b.c(0.0));
    const Model model = b.compile();
    QCOMPARE(model->nx(), 2);
    QCOMPARE(model->system().params[1].id, std::string("q"));
    sensitivity::PeanoBakerOptions options;
    options.method = sensitivity::PeanoBakerMethod::Exp;
    options.mergeTolerance = 1e-4;
    sensitivity::PeanoBakerPropagator propagator(model, {1.0, 1.0}, {1}, options);
    const sensitivity::StateSource states = [](double t, std::vector<double>& xs) {
      xs = {0.0, t < 2 ? 1000.0 : t < 3 ? 1.0 : 1.1};
    };
    propagator.start(0, {0.0, 1000.0}, {0.0, 0.0});
    for (const double t1 : {1.0, 2.0, 3.0, 4.0}) propagator.advance(t1, states);
    std::vector<double> s;
    propagator.sensitivities(s);
    QCOMPARE(propagator.stats().mergedIntervals, 1L);
    QCOMPARE(propagator.stats().exponentialSteps, 3L);
    // S_x(4) for this B, exactly: 1000(1 − e⁻²)e⁻² + (1 − e⁻¹)e⁻¹ + 1.1(1 − e⁻¹) to the
    // exponential formula's accuracy (B constant within each step: exact).
    const double exact = 1000 * (1 - std::exp(-2.0)) * std::exp(-2.0) +
                         (1 - std::exp(-1.0)) * std::exp(-1.0) + 1.1 * (1 - std::exp(-1.0));
    SENSODE_EXPECT_CLOSE(s[0], exact, 1e-12, 1e-12, "S_x(4)", 0);
  }

  void mergedGridOnNonlinearModels_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<double>("merge");          // PeanoBakerOptions::mergeTolerance
    QTest::addColumn<double>("tolerance");      // worst column-relative error of S, merged
    QTest::addColumn<double>("growth");         // merged error ≤ growth × unmerged error
    QTest::addColumn<double>("stepFraction");   // exponential steps ≤ this × intervals
    // Exp at rtol 1e-6 (atol 1e-12) against CVODES forward at rtol 1e-10 / atol 1e-14, 21 outputs
    // on [0, 10]; the unmerged run: MM 4.01e-3 in 205 steps, Chua 1.05e-3 in 321. Measured
    // merged (worst error, exponential steps):
    //   default 1e-4: MM 4.01e-3 in 199, Chua 1.05e-3 in 315 (the bound η keeps the error and
    //                 merges little: these Jacobians change on every step)
    //   1e-2:         MM 4.01e-3 in 128, Chua 8.27e-3 in 182 (looser: Chua's error grows 8×)
    QTest::newRow("mm") << QString("mm") << 1e-4 << 5e-3 << 1.01 << 0.98;
    QTest::newRow("chua") << QString("chua") << 1e-4 << 2e-3 << 1.01 << 0.99;
    QTest::newRow("mm 1e-2") << QString("mm") << 1e-2 << 5e-3 << 1.01 << 0.65;
    QTest::newRow("chua 1e-2") << QString("chua") << 1e-2 << 1.2e-2 << 10.0 << 0.6;
  }
  void mergedGridOnNonlinearModels() {
    QFETCH(QString, problem);
    QFETCH(double, merge);
    QFETCH(double, tolerance);
    QFETCH(double, growth);
    QFETCH(double, stepFraction);
    const Model model = problem == "mm" ? michaelisMentenModel() : chuaModel();
    const auto times = linspace(0, 10, 21);
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-14);
    REQUIRE_SUCCESS(ref);
    double errors[2] = {0, 0};
    sensitivity::PeanoBakerStats stats[2];
    for (int merged = 0; merged < 2; ++merged) {
      const SensitivityResult r =
          run(model, SensitivityMethod::Exp, times, 1e-6, 1e-12,
              [merged, merge](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.mergeTolerance = merged ? merge : 0.0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[merged], columnRelativeError(stateS(r, it), stateS(ref, it)));
      }
      stats[merged] = r.stats.peanoBaker;
    }
    qInfo("%s, merge %g: unmerged %.2e in %ld exponential steps, merged %.2e in %ld (%ld "
          "intervals)",
          qPrintable(problem), merge, errors[0], stats[0].exponentialSteps, errors[1],
          stats[1].exponentialSteps, stats[1].intervals);
    QCOMPARE(stats[0].exponentialSteps, stats[0].intervals);
    QCOMPARE(stats[1].intervals, stats[0].intervals);  // same trajectory
    QVERIFY(static_cast<double>(stats[1].exponentialSteps) <=
            stepFraction * static_cast<double>(stats[1].intervals));
    SENSODE_EXPECT_CLOSE(errors[1], 0, tolerance, 0, "merged", 0);
    SENSODE_EXPECT_CLOSE(errors[1], 0, growth * errors[0], 0, "merged vs unmerged", 0);
  }

  void linear2Exact_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // Measured at rtol 1e-8 (column-relative error at T = 10 against the exact S): cvodes
    // 1.2e-7, odesd 6.1e-7, fd 6.0e-4 (column p0: y0 ≈ 4.5e-8 sits on a stiff slow manifold and
    // moves by 1e-4 relative per step), exp = pbsr 1.6e-2 (n_int > 100 everywhere, so PBSR is
    // Exp): the stiff component of S tracks −A⁻¹B(t), and the midpoint B lags the interval end
    // by Δt/2 — the exponential midpoint rule's order reduction on stiff problems, in column p0).
    addMethodRows("", {{SensitivityMethod::Cvodes, 5e-6},
                       {SensitivityMethod::OdeSd, 5e-6},
                       {SensitivityMethod::FiniteDifferences, 2e-3},
                       {SensitivityMethod::Exp, 5e-2},
                       {SensitivityMethod::Pbsr, 5e-2}});
  }
  void linear2Exact() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const SensitivityResult r = run(linear2Model(), method, {0.0, 1.0, 10.0}, 1e-8, 1e-14);
    REQUIRE_SUCCESS(r);
    Eigen::MatrixXd exact(2, 2);
    exact << -4.5490866004e-11, -4.0896288537e-7, 0, -4.5399929762e-4;
    const double err = columnRelativeError(stateS(r, 2), exact);
    qInfo("%s: Linear2 column-relative error %.2e", tasks::toString(method), err);
    SENSODE_EXPECT_CLOSE(err, 0, tolerance, 0, "Linear2 S(10)", 0);
  }

  void conversionAnalytic_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // A ⇄ B: J is singular (A + B conserved), A0 is a species-initial parameter (S0 ≠ 0).
    // Measured at rtol 1e-8 (worst column-relative error over 21 outputs on [0, 5]): cvodes
    // 3.4e-8, odesd 4.6e-8, fd 5.3e-7, exp 1.0e-4, pbsr 7.2e-4.
    addMethodRows("", {{SensitivityMethod::Cvodes, 1e-6},
                       {SensitivityMethod::OdeSd, 1e-6},
                       {SensitivityMethod::FiniteDifferences, 3e-6},
                       {SensitivityMethod::Exp, 5e-4},
                       {SensitivityMethod::Pbsr, 3e-3}});
  }
  void conversionAnalytic() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto times = linspace(0, 5, 21);
    const SensitivityResult r = run(conversionModel(), method, times, 1e-8, 1e-12);
    REQUIRE_SUCCESS(r);
    // S0 from the initial value: ∂A(0)/∂A0 = 1.
    SENSODE_EXPECT_CLOSE(r.stateAt(0, 0, 2), 1.0, 0, 0, "S0 A/A0", 0);
    double worst = 0;
    for (std::size_t it = 1; it < times.size(); ++it)
      keepWorst(worst, columnRelativeError(stateS(r, it), conversionExactS(times[it])));
    qInfo("%s: A<->B worst column-relative error %.2e", tasks::toString(method), worst);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "A <-> B", 0);
  }

  // ---- NUMERICS.md §11 references ----

  void numericsReferences_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // column-relative error of S(T) vs the reference
    // Measured column-relative errors at rtol 1e-8, atol 1e-12 (Robertson atol 1e-14); PBSR and
    // Exp on the CVODES grid of the same run (416, 472, 579, 1965 intervals):
    //                 cvodes   odesd    fd       exp      pbsr
    //   MM            1.5e-8   3.7e-8   2.8e-7   7.7e-5   2.6e-4
    //   Robertson 40  6.7e-8   3.8e-8   9.4e-8   3.1e-6   3.1e-6
    //   Chua          9.4e-7   1.0e-6   1.9e-7   1.8e-4   1.0e-3
    //   repressilator 7.3e-8   2.1e-7   3.3e-5   1.1e-2   4.0e-4
    // PBSR's error is set by its refinement rule (Δt_sub·‖A‖₁ ≈ 0.1) and does not shrink with
    // rtol; Exp-midpoint is second order in the grid's Δt, so it wins on fine grids (MM, Chua)
    // and loses on the oscillator, whose Jacobian rotates within each step. FD (δ = 1e-4·p,
    // rtol 1e-12) on the repressilator: truncation δ²·S''' with S growing secularly.
    struct Row {
      const char* problem;
      double cvodes, odesd, fd, exp, pbsr;
    };
    for (const Row& row : {Row{"mm", 1e-6, 1e-6, 2e-6, 3e-4, 1e-3},
                           Row{"robertson", 1e-6, 1e-6, 1e-6, 2e-5, 2e-5},
                           Row{"chua", 1e-5, 1e-5, 2e-6, 1e-3, 5e-3},
                           Row{"repressilator", 2e-6, 2e-6, 2e-4, 5e-2, 2e-3}}) {
      for (const auto& [method, tol] :
           {std::pair{SensitivityMethod::Cvodes, row.cvodes}, {SensitivityMethod::OdeSd, row.odesd},
            {SensitivityMethod::FiniteDifferences, row.fd}, {SensitivityMethod::Exp, row.exp},
            {SensitivityMethod::Pbsr, row.pbsr}}) {
        QTest::newRow((std::string(row.problem) + "/" + tasks::toString(method)).c_str())
            << QString(row.problem) << method << tol;
      }
    }
  }
  void numericsReferences() {
    QFETCH(QString, problem);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    Model model;
    double tEnd = 0, atol = 1e-12;
    Eigen::MatrixXd ref;
    std::vector<std::string> rows;  // reference rows (state ids)
    if (problem == "mm") {
      model = michaelisMentenModel();
      tEnd = 10;
      ref.resize(4, 3);
      ref << -4.66134174e-6, 4.64398189e-5, 8.55193667e-2, -1.14387803e-4, 1.13290830e-3,
          -4.97034333e-1, 4.66134174e-6, -4.64398189e-5, -8.55193667e-2, 1.09726462e-4,
          -1.08646848e-3, 5.82553700e-1;
    } else if (problem == "robertson") {
      model = robertsonModel();
      tEnd = 40;
      atol = 1e-14;
      ref.resize(3, 3);
      ref << -4.24755877, 1.37308080e-5, -2.28835509e-9, 4.59119625e-5, -2.35719211e-10,
          -1.13805951e-13, 4.24751286, -1.37305723e-5, 2.28846889e-9;
    } else if (problem == "chua") {
      model = chuaModel();
      tEnd = 10;
      ref.resize(3, 2);
      ref << 3.19560574e-2, -1.04331856e-1, -8.00466848e-2, -4.77291055e-2, -2.81654975e-1,
          1.40961061e-1;
    } else {
      model = repressilatorModel();
      tEnd = 50;
      ref.resize(2, 4);  // rows m1, m2
      ref << -2.62427316, 7.20869419e-3, -6.57122211e-1, 7.30467933, 6.81515713e2,
          -1.01162103, 1.30770845e2, -1.57945664e3;
    }
    const SensitivityResult r = run(model, method, {0.0, tEnd}, 1e-8, atol);
    REQUIRE_SUCCESS(r);
    const Eigen::MatrixXd s = stateS(r, 1).topRows(ref.rows());
    const double err = columnRelativeError(s, ref);
    qInfo("%s/%s: column-relative error of S(T) %.2e (steps %ld, sens evals %ld)",
          qPrintable(problem), tasks::toString(method), err, r.stats.integrator.steps,
          r.stats.sensitivityEvals);
    SENSODE_EXPECT_CLOSE(err, 0, tolerance, 0, qPrintable(problem), 0);
  }

  // ---- SBML Test Suite and PEtab models: every method against a tight reference ----

  void suiteCases_data() {
    QTest::addColumn<QString>("caseId");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // worst series error vs CVODES forward at 1e-10
    // Methods at rtol 1e-6 (atol 1e-12), against CVODES forward at rtol 1e-10, atol 1e-16; the
    // worst (output, parameter) series, normalised by the series' largest |value|:
    //   00001 (S1 → S2, compartment), 00010 (2 reactions), 00036 (initial assignment
    //   S1 = k1·S2: S0 depends on k1 and S2_0), 00038 (assignment rule S3 = k1·S2: ∂y/∂p),
    //   00057 (local parameters R1.k, R2.k), 00100 (function definition, 0-D compartment).
    // Measured worst errors (seriesError: per output, on the scale of its log-sensitivities):
    //            cvodes   odesd    fd       exp      pbsr
    //   00001    2.2e-6   7.0e-7   5.5e-8   5.1e-5   7.0e-5
    //   00010    9.8e-7   7.0e-7   2.9e-8   4.9e-5   4.0e-5
    //   00036    4.7e-7   6.9e-7   8.6e-8   6.8e-5   7.2e-5
    //   00038    2.3e-6   6.8e-7   2.6e-8   4.1e-5   6.4e-5
    //   00057    1.5e-7   2.2e-7   5.5e-9   2.1e-5   7.5e-5
    //   00100    9.9e-7   6.9e-7   2.0e-8   4.1e-5   3.6e-5
    for (const char* id : {"00001", "00010", "00036", "00038", "00057", "00100"}) {
      for (const auto& [method, tol] : {std::pair{SensitivityMethod::Cvodes, 2e-5},
                                        {SensitivityMethod::OdeSd, 2e-5},
                                        {SensitivityMethod::FiniteDifferences, 1e-6},
                                        {SensitivityMethod::Exp, 5e-4},
                                        {SensitivityMethod::Pbsr, 5e-4}}) {
        QTest::newRow((std::string(id) + "/" + tasks::toString(method)).c_str())
            << QString(id) << method << tol;
      }
    }
  }
  void suiteCases() {
    QFETCH(QString, caseId);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const suite::TestCase tc = suite::loadTestCase(kCases, caseId.toStdString(), nullptr);
    const Model model = sbmlModel(tc.sbmlFile);
    auto setup = [&](SensitivityProblem& p, SensitivityOptions&) {
      p.t0 = tc.settings.start;
      p.outputs = tc.settings.variables;
      p.forceAmount = tc.settings.amount;
      p.forceConcentration = tc.settings.concentration;
    };
    const auto times = tc.settings.outputTimes();
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16, setup);
    QVERIFY2(ref.termination == tasks::Termination::Success, ref.message.c_str());
    const SensitivityResult r = run(model, method, times, 1e-6, 1e-12, setup);
    REQUIRE_SUCCESS(r);
    QCOMPARE(r.values.size(), ref.values.size());
    QCOMPARE(r.parameterIds, ref.parameterIds);
    const SeriesError e = seriesError(r, ref, model);
    qInfo("%s/%s: worst series error %.2e at %s", qPrintable(caseId), tasks::toString(method),
          e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, tolerance, 0, e.where, 0);
  }

  void initialAssignmentsAndRulesEnterTheSensitivities() {
    // 00036: S1(0) = k1·S2(0) (initial assignment): ∂S1(0)/∂k1 = S2(0), ∂S1(0)/∂S2 = k1.
    {
      const Model model = sbmlModel(kCases / "00036" / "00036-sbml-l3v2.xml");
      const SensitivityResult r = run(model, SensitivityMethod::Cvodes, {0.0, 0.1}, 1e-8, 1e-14,
                                      [](SensitivityProblem& p, SensitivityOptions&) {
                                        p.parameters = {"k1", "S2"};
                                        p.outputs = {"S1"};
                                        p.forceAmount = {"S1"};
                                      });
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      const auto& sys = model->system();
      const double k1 = sys.params[static_cast<std::size_t>(sys.findParam("k1"))].nominal;
      const double s2 = sys.params[static_cast<std::size_t>(sys.findParam("S2"))].nominal;
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 0), s2, 0, 1e-14, "dS1(0)/dk1", 0);
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 1), k1, 0, 1e-14, "dS1(0)/dS2", 0);
    }
    // 00038: S3 = k1·S2 (assignment rule): dS3/dk1 = S2 + k1·dS2/dk1 and dS2/dk1 = 0, so the
    // output sensitivity is S2 itself — only the ∂y/∂p term of the chain rule gives it.
    {
      const Model model = sbmlModel(kCases / "00038" / "00038-sbml-l3v2.xml");
      const SensitivityResult r = run(model, SensitivityMethod::Cvodes, linspace(0, 0.1, 6),
                                      1e-8, 1e-20, [](SensitivityProblem& p, SensitivityOptions&) {
                                        p.parameters = {"k1"};
                                        p.outputs = {"S2", "S3"};
                                        p.forceAmount = {"S2", "S3"};
                                      });
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      for (std::size_t it = 0; it < r.times.size(); ++it) {
        SENSODE_EXPECT_CLOSE(r.at(it, 1, 0), r.outputAt(it, 0), 0, 1e-12, "dS3/dk1 = S2",
                             static_cast<long>(it));
      }
    }
  }

  void reactionRatesAndConcentrations() {
    // Outputs beyond species amounts: a reaction rate and concentrations (divided by a
    // compartment size that is itself a parameter) on Boehm, against finite differences of
    // the outputs themselves. Measured 2.4e-8 (both at rtol 1e-10; FD at its 1e-12).
    const auto file = kShared / "petab" / "Boehm_JProteomeRes2014" / "model_Boehm_JProteomeRes2014.xml";
    const Model model = sbmlModel(file);
    const auto& sys = model->system();
    std::vector<std::string> outputs;
    for (const auto& o : sys.outputs) {
      if (o.kind == symbolic::OutputKind::Reaction && outputs.size() < 3) outputs.push_back(o.id);
    }
    QVERIFY(!outputs.empty());
    std::vector<std::string> params;
    for (const auto& p : sys.params) {
      if (p.kind == symbolic::ParamKind::CompartmentSize) params.push_back(p.id);
    }
    for (const auto& p : sys.params) {
      if (p.kind == symbolic::ParamKind::GlobalParameter && params.size() < 6) params.push_back(p.id);
    }
    std::vector<std::string> species;
    for (const auto& o : sys.outputs) {
      if (o.kind == symbolic::OutputKind::Species && species.size() < 3) species.push_back(o.id);
    }
    auto setup = [&](SensitivityProblem& p, SensitivityOptions&) {
      p.outputs = outputs;
      p.outputs.insert(p.outputs.end(), species.begin(), species.end());
      p.forceConcentration = species;
      p.parameters = params;
          };
    const auto times = linspace(0, 240, 9);
    const SensitivityResult fd =
        run(model, SensitivityMethod::FiniteDifferences, times, 1e-10, 1e-16, setup);
    const SensitivityResult cv = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16, setup);
    QVERIFY2(fd.termination == tasks::Termination::Success, fd.message.c_str());
    QVERIFY2(cv.termination == tasks::Termination::Success, cv.message.c_str());
    const SeriesError e = seriesError(cv, fd, model);
    qInfo("Boehm rates/concentrations: cvodes vs fd %.2e at %s", e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, 1e-6, 0, e.where, 0);
  }

  void odeSdStartsFromTheRightHandLimit_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // Measured (rtol 1e-8; worst relative S error / x error): odesd 6.2e-8 / 4.2e-8, cvodes
    // 1.1e-7 / 5.1e-8.
    addMethodRows("", {{SensitivityMethod::OdeSd, 1e-6}, {SensitivityMethod::Cvodes, 1e-6}});
  }
  void odeSdStartsFromTheRightHandLimit() {
    // A right-hand side that switches at t0 itself: the start derivatives must be the
    // right-hand limits (f_p,u = 0 on (0, T]); with the values at t = 0 odeSD's first-step error
    // test failed at every step size ("error test failed 10 times" at t = 0, as on Fujita).
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto times = linspace(0, 4, 5);
    const SensitivityResult r =
        run(pulseAtStartModel(), method, times, 1e-8, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k", "u", "x0"}; });
    REQUIRE_SUCCESS(r);
    double worstX = 0, worstS = 0;
    for (std::size_t it = 0; it < times.size(); ++it) {
      const double t = times[it], decay = std::exp(-0.5 * t);
      Eigen::MatrixXd exact(1, 3);
      exact << -t * 2 * decay, 0.0, decay;
      // ∂x/∂u is exactly 0: measure it against the scale of ∂x/∂x0.
      Eigen::MatrixXd got = stateS(r, it);
      const double eK = it == 0 ? std::abs(got(0, 0)) : std::abs(got(0, 0) / exact(0, 0) - 1);
      const double eU = std::abs(got(0, 1)) / decay;
      const double eX0 = std::abs(got(0, 2) / exact(0, 2) - 1);
      worstS = std::max({worstS, eK, eU, eX0});
      SENSODE_EXPECT_CLOSE(std::max({eK, eU, eX0}), 0, tolerance, 0, "S", static_cast<long>(it));
      worstX = std::max(worstX, std::abs(r.states[it] / (2 * decay) - 1));
    }
    qInfo("%s: S error %.2e, state error %.2e, %ld steps", tasks::toString(method), worstS,
          worstX, r.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(worstX, 0, tolerance, 0, "x", 0);
  }

  void petabModels_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("tEnd");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // All parameters, 21 outputs, rtol 1e-6 / atol 1e-12 against CVODES forward at rtol 1e-10.
    // Measured worst errors (seriesError):
    //            cvodes   odesd    fd       exp      pbsr
    //   Boehm    3.1e-7   4.6e-7   1.1e-8   8.4e-5   8.4e-5
    //   Fujita   2.4e-7   2.4e-7   4.2e-7   7.6e-5   7.6e-5
    // (stiff: n_int > 100 on every interval, so PBSR is Exp). On Fujita ∂f/∂EGF_0 is non-zero
    // at t = 0 only (piecewise "time ≤ EGF_end" with EGF_end = 0): odeSD failed at t = 0 until
    // it took its start derivatives as right-hand limits (odeSdStartsFromTheRightHandLimit).
    for (const auto& [name, tEnd] : {std::pair{"Boehm_JProteomeRes2014", 240.0},
                                     {"Fujita_SciSignal2010", 3600.0}}) {
      for (const auto& [method, tol] : {std::pair{SensitivityMethod::Cvodes, 1e-5},
                                        {SensitivityMethod::OdeSd, 1e-5},
                                        {SensitivityMethod::FiniteDifferences, 2e-6},
                                        {SensitivityMethod::Exp, 1e-3},
                                        {SensitivityMethod::Pbsr, 1e-3}}) {
        QTest::newRow((std::string(name) + "/" + tasks::toString(method)).c_str())
            << QString(name) << tEnd << method << tol;
      }
    }
  }
  void petabModels() {
    QFETCH(QString, name);
    QFETCH(double, tEnd);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto file =
        kShared / "petab" / name.toStdString() / ("model_" + name.toStdString() + ".xml");
    const Model model = sbmlModel(file);
    const auto times = linspace(0, tEnd, 21);
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16);
    QVERIFY2(ref.termination == tasks::Termination::Success, ref.message.c_str());
    const SensitivityResult r = run(model, method, times, 1e-6, 1e-12);
    REQUIRE_SUCCESS(r);
    const SeriesError e = seriesError(r, ref, model);
    qInfo("%s/%s: worst series error %.2e at %s (wall %.3g s)", qPrintable(name),
          tasks::toString(method), e.error, e.where.c_str(), r.wallSeconds);
    SENSODE_EXPECT_CLOSE(e.error, 0, tolerance, 0, e.where, 0);
  }

  // ---- scaling ----

  void scaledIsPOverYTimesUnscaled() {
    const Model model = michaelisMentenModel();
    const auto times = linspace(0, 10, 11);
    const SensitivityResult u = run(model, SensitivityMethod::Cvodes, times, 1e-8, 1e-12);
    const SensitivityResult s = run(model, SensitivityMethod::Cvodes, times, 1e-8, 1e-12,
                                    [](SensitivityProblem&, SensitivityOptions& o) {
                                      o.scaled = true;
                                    });
    QVERIFY2(s.termination == tasks::Termination::Success, s.message.c_str());
    QVERIFY(s.scaled && !u.scaled);
    const std::vector<double> p = model->nominalParameters();
    long guarded = 0;
    for (std::size_t it = 0; it < times.size(); ++it) {
      for (std::size_t iy = 0; iy < s.outputIds.size(); ++iy) {
        const double y = u.outputAt(it, iy);
        const bool flag = s.guarded[it * s.outputIds.size() + iy] != 0;
        QCOMPARE(flag, std::abs(y) <= 1e-12);  // guard = atol
        guarded += flag ? 1 : 0;
        for (std::size_t ip = 0; ip < s.parameterIds.size(); ++ip) {
          const double expected = flag ? 0.0 : p[ip] / y * u.at(it, iy, ip);
          SENSODE_EXPECT_CLOSE(s.at(it, iy, ip), expected, 1e-300, 1e-14, "scaled",
                               static_cast<long>(it));
        }
      }
    }
    // C(0) = P(0) = 0: both guarded at t = 0 (their unscaled sensitivities are 0 there too).
    QCOMPARE(s.guardedCount, guarded);
    QVERIFY(s.guarded[2] == 1 && s.guarded[3] == 1);
    // State sensitivities are never scaled.
    QCOMPARE(s.stateSensitivities, u.stateSensitivities);
  }

  void scaledAgreesAcrossMethods() {
    // Scaled sensitivities of FD and CVODES agree like the unscaled ones (Robertson, where they
    // span 13 orders of magnitude unscaled). Measured 1.1e-7.
    const auto times = linspace(0, 40, 5);
    auto scaled = [](SensitivityProblem&, SensitivityOptions& o) { o.scaled = true; };
    const SensitivityResult cv =
        run(robertsonModel(), SensitivityMethod::Cvodes, times, 1e-10, 1e-16, scaled);
    const SensitivityResult fd =
        run(robertsonModel(), SensitivityMethod::FiniteDifferences, times, 1e-10, 1e-16, scaled);
    QVERIFY2(cv.termination == tasks::Termination::Success, cv.message.c_str());
    QVERIFY2(fd.termination == tasks::Termination::Success, fd.message.c_str());
    const SeriesError e = seriesError(fd, cv, robertsonModel());
    qInfo("Robertson scaled fd vs cvodes: %.2e at %s", e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, 1e-6, 0, e.where, 0);
  }

  // ---- options that change the method ----

  void errorControlOffStillConverges() {
    // CVODES without S in the error test: fewer steps, S still close (MM, rtol 1e-8). Measured
    // 1.5e-8 with (528 steps), 7.1e-8 without (420 steps).
    Eigen::MatrixXd ref(4, 3);
    ref << -4.66134174e-6, 4.64398189e-5, 8.55193667e-2, -1.14387803e-4, 1.13290830e-3,
        -4.97034333e-1, 4.66134174e-6, -4.64398189e-5, -8.55193667e-2, 1.09726462e-4,
        -1.08646848e-3, 5.82553700e-1;
    const SensitivityResult on = run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 10.0},
                                     1e-8, 1e-12);
    const SensitivityResult off =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 10.0}, 1e-8, 1e-12,
            [](SensitivityProblem&, SensitivityOptions& o) { o.errorControl = false; });
    QVERIFY(on.termination == tasks::Termination::Success);
    QVERIFY(off.termination == tasks::Termination::Success);
    const double eOn = columnRelativeError(stateS(on, 1), ref);
    const double eOff = columnRelativeError(stateS(off, 1), ref);
    qInfo("MM cvodes error control on %.2e (%ld steps), off %.2e (%ld steps)", eOn,
          on.stats.integrator.steps, eOff, off.stats.integrator.steps);
    QVERIFY(off.stats.integrator.steps <= on.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(eOff, 0, 1e-4, 0, "errcon off", 0);
    QVERIFY(on.stats.integrator.sensitivityRhsEvals > 0);
  }

  void cvodesCorrectorsAgree_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("tEnd");
    QTest::addColumn<double>("tolerance");
    // Every parameter, rtol 1e-6, against CVODES (staggered) at rtol 1e-10. Measured worst
    // series errors: Boehm staggered 3.1e-7 (500 steps), simultaneous 6.2e-7 (699 steps),
    // between them 7.0e-7; Fujita 2.4e-7, 2.9e-7 (488 steps each), 5.4e-8. Augmented: the
    // simultaneous numbers exactly (Boehm 6.2e-7 in 699 steps, Fujita 2.9e-7 in 488 steps): the
    // same Newton iteration, error test and norms, on one vector.
    QTest::newRow("Boehm") << QString("Boehm_JProteomeRes2014") << 240.0 << 1e-5;
    QTest::newRow("Fujita") << QString("Fujita_SciSignal2010") << 3600.0 << 1e-5;
  }
  void cvodesCorrectorsAgree() {
    // The correctors solve the same corrector equations differently (one Newton iteration on
    // states and S together vs states first, then S; augmented: the simultaneous iteration on
    // [x; S] as one vector, without the sensitivity module); all must reach the reference.
    QFETCH(QString, name);
    QFETCH(double, tEnd);
    QFETCH(double, tolerance);
    const Model model = sbmlModel(kShared / "petab" / name.toStdString() /
                                  ("model_" + name.toStdString() + ".xml"));
    const auto times = linspace(0, tEnd, 21);
    using integrators::SensitivityCorrector;
    auto with = [](SensitivityCorrector c) {
      return [c](SensitivityProblem&, SensitivityOptions& o) {
        o.integrator.sensitivityCorrector = c;
      };
    };
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16);
    const SensitivityResult stag = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                       with(SensitivityCorrector::Staggered));
    const SensitivityResult sim = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                      with(SensitivityCorrector::Simultaneous));
    const SensitivityResult aug = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                      with(SensitivityCorrector::Augmented));
    REQUIRE_SUCCESS(ref);
    REQUIRE_SUCCESS(stag);
    REQUIRE_SUCCESS(sim);
    REQUIRE_SUCCESS(aug);
    // Augmented: no sensitivity module (one right-hand side for x and S, one error test).
    QCOMPARE(aug.stats.integrator.sensitivityRhsEvals, aug.stats.integrator.rhsEvals);
    QCOMPARE(aug.stats.integrator.sensitivityErrorTestFailures, 0L);
    // The option reaches CVODES: another algorithm, other rounding and step sequence.
    QVERIFY(sim.stateSensitivities != stag.stateSensitivities);
    const SeriesError eStag = seriesError(stag, ref, model), eSim = seriesError(sim, ref, model);
    const SeriesError eBoth = seriesError(sim, stag, model);
    const SeriesError eAug = seriesError(aug, ref, model), eAugStag = seriesError(aug, stag, model);
    const SeriesError eAugSim = seriesError(aug, sim, model);
    qInfo("%s: staggered %.2e (%ld steps), simultaneous %.2e (%ld steps), between %.2e; "
          "augmented %.2e (%ld steps, at %s), vs staggered %.2e, vs simultaneous %.2e",
          qPrintable(name), eStag.error, stag.stats.integrator.steps, eSim.error,
          sim.stats.integrator.steps, eBoth.error, eAug.error, aug.stats.integrator.steps,
          eAug.where.c_str(), eAugStag.error, eAugSim.error);
    SENSODE_EXPECT_CLOSE(eStag.error, 0, tolerance, 0, eStag.where, 0);
    SENSODE_EXPECT_CLOSE(eSim.error, 0, tolerance, 0, eSim.where, 0);
    SENSODE_EXPECT_CLOSE(eBoth.error, 0, 2 * tolerance, 0, eBoth.where, 0);
    SENSODE_EXPECT_CLOSE(eAug.error, 0, tolerance, 0, eAug.where, 0);
    SENSODE_EXPECT_CLOSE(eAugStag.error, 0, 2 * tolerance, 0, eAugStag.where, 0);
    // The augmented mode is CV_SIMULTANEOUS on one vector (same Newton matrix, tolerances and
    // max-over-blocks norm), so it agrees with it to rounding: measured 1.5e-11 (Boehm), 2.6e-14
    // (Fujita); an RMS over the whole vector instead of CVODES's norm gives ~1e-6 here.
    SENSODE_EXPECT_CLOSE(eAugSim.error, 0, 1e-9, 0, eAugSim.where, 0);
  }

  void cvodesAugmentedAgreesWithTheModule_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<double>("tolerance");  // augmented vs module, worst over the outputs
    QTest::addColumn<double>("exactTolerance");  // vs the closed form (0: none)
    // rtol 1e-8 (atol 1e-14 for Linear2 and Robertson, else 1e-12); S at every output time.
    // Measured worst column-relative differences augmented vs staggered module / vs the closed
    // form: Linear2 2.1e-8 / 1.4e-7, MM 3.6e-8, Robertson 2.2e-8, pulse 5.8e-8 / 4.7e-8,
    // A ⇄ B 1.7e-8 / 3.2e-8.
    QTest::newRow("linear2") << QString("linear2") << 1e-5 << 5e-6;
    QTest::newRow("mm") << QString("mm") << 1e-5 << 0.0;
    QTest::newRow("robertson") << QString("robertson") << 1e-5 << 0.0;
    // f jumps at t0 (piecewise input at the single point t = 0): the discontinuity case.
    QTest::newRow("pulse") << QString("pulse") << 1e-5 << 1e-6;
    // S0 ≠ 0 (A0 is the initial amount of A).
    QTest::newRow("conversion") << QString("conversion") << 1e-5 << 1e-6;
  }
  void cvodesAugmentedAgreesWithTheModule() {
    QFETCH(QString, problem);
    QFETCH(double, tolerance);
    QFETCH(double, exactTolerance);
    Model model;
    std::vector<double> times;
    double atol = 1e-12;
    std::function<Eigen::MatrixXd(double)> exact;
    std::vector<std::string> params;  // empty: all
    if (problem == "linear2") {
      model = linear2Model();
      times = linspace(0, 10, 11);
      atol = 1e-14;
      // y1 = e^{−bt}, y0 = (1 − r)e^{−at} + r·e^{−bt} with a = p0, b = p1, r = b/(a − b).
      exact = [](double t) {
        const double a = 1000, b = 1, r = b / (a - b);
        const double ra = -b / ((a - b) * (a - b)), rb = a / ((a - b) * (a - b));
        const double ea = std::exp(-a * t), eb = std::exp(-b * t);
        Eigen::MatrixXd e(2, 2);
        e << -ra * ea - (1 - r) * t * ea + ra * eb, -rb * ea + rb * eb - r * t * eb,  //
            0.0, -t * eb;
        return e;
      };
    } else if (problem == "mm") {
      model = michaelisMentenModel();
      times = linspace(0, 10, 11);
    } else if (problem == "robertson") {
      model = robertsonModel();
      times = {0, 0.4, 4, 40};
      atol = 1e-14;
    } else if (problem == "pulse") {
      model = pulseAtStartModel();
      times = linspace(0, 4, 5);
      params = {"k", "u", "x0"};
      exact = [](double t) {
        Eigen::MatrixXd e(1, 3);
        const double decay = std::exp(-0.5 * t);
        e << -t * 2 * decay, 0.0, decay;
        return e;
      };
    } else {
      model = conversionModel();
      times = linspace(0, 5, 11);
      exact = conversionExactS;
    }
    using integrators::SensitivityCorrector;
    auto with = [&params](SensitivityCorrector c) {
      return [c, &params](SensitivityProblem& p, SensitivityOptions& o) {
        o.integrator.sensitivityCorrector = c;
        if (!params.empty()) p.parameters = params;
      };
    };
    const SensitivityResult mod = run(model, SensitivityMethod::Cvodes, times, 1e-8, atol,
                                      with(SensitivityCorrector::Staggered));
    const SensitivityResult aug = run(model, SensitivityMethod::Cvodes, times, 1e-8, atol,
                                      with(SensitivityCorrector::Augmented));
    REQUIRE_SUCCESS(mod);
    REQUIRE_SUCCESS(aug);
    QCOMPARE(aug.stats.integrator.sensitivityRhsEvals, aug.stats.integrator.rhsEvals);
    QVERIFY(aug.stats.integrator.rhsEvals > 0);
    double worst = 0, worstExact = 0;
    for (std::size_t it = 1; it < times.size(); ++it) {
      const Eigen::MatrixXd a = stateS(aug, it);
      keepWorst(worst, columnRelativeError(a, stateS(mod, it)));
      if (exact) keepWorst(worstExact, columnRelativeError(a, exact(times[it])));
    }
    // S0 is the initial-value sensitivity in both modes (conversion: ∂A(0)/∂A0 = 1).
    const Eigen::MatrixXd s0Aug = stateS(aug, 0), s0Mod = stateS(mod, 0);
    QVERIFY(s0Aug == s0Mod);
    qInfo("%s: augmented vs module %.2e, vs exact %.2e; steps augmented %ld, module %ld",
          qPrintable(problem), worst, worstExact, aug.stats.integrator.steps,
          mod.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "augmented vs module", 0);
    if (exactTolerance > 0) {
      SENSODE_EXPECT_CLOSE(worstExact, 0, exactTolerance, 0, "augmented vs closed form", 0);
    }
  }

  void stepCallbackTilesTheRunWithDenseOutput_data() {
    QTest::addColumn<integrators::Method>("method");
    QTest::newRow("odesd") << integrators::Method::OdeSd;
    QTest::newRow("cvodes") << integrators::Method::Cvodes;
  }
  void stepCallbackTilesTheRunWithDenseOutput() {
    // The step callback (what PBSR/Exp take their grid and states from) sees every accepted
    // step once, contiguous from t0 to the last step, and its dense output inside a step is
    // what advanceTo() returns for those times: a second run of the same integrator (same
    // first step, so the same steps) advanced to the quarter points of every step must give
    // the same values to rounding. Both are the solution of the pulse model (x = 2e^{−t/2} on
    // (0, T]) to the global error of rtol 1e-8 (measured max relative error: odesd 2.3e-7,
    // cvodes 1.0e-7 over t ≤ 7; vs advanceTo: 0).
    QFETCH(integrators::Method, method);
    const Model model = pulseAtStartModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-8;
    o.initialStepSize = 1e-3;
    const std::vector<double> p = model->nominalParameters();
    std::vector<double> x0(1);
    model->initialState(0, p.data(), x0.data());
    auto integrator = integrators::makeIntegrator(method);
    integrator->initialize(model, o, 0, x0, p);
    double tLast = 0, worst = 0;
    long steps = 0;
    bool contiguous = true;
    std::vector<std::pair<double, double>> seen;  // (t, dense x(t))
    integrator->setStepCallback(
        [&](double ta, double tb, integrators::StepDenseOutput& dense) {
          contiguous = contiguous && ta == tLast && tb > ta;
          tLast = tb;
          ++steps;
          for (const double th : {0.25, 0.5, 0.75, 1.0}) {
            const double t = ta + th * (tb - ta);
            double x = 0;
            dense.state(t, &x);
            seen.emplace_back(t, x);
            worst = std::max(worst, std::abs(x / (2 * std::exp(-0.5 * t)) - 1));
          }
        });
    std::vector<double> x;
    integrator->advanceTo(3, x, {});
    integrator->advanceTo(7, x, {});
    QVERIFY(contiguous);
    QCOMPARE(steps, integrator->stats().steps);
    QVERIFY(tLast >= 7);

    auto replay = integrators::makeIntegrator(method);
    replay->initialize(model, o, 0, x0, p);
    double worstReplay = 0;
    for (const auto& [t, xt] : seen) {
      if (t > 7) break;  // the replay must not step past its last tout differently
      replay->advanceTo(t, x, {});
      worstReplay = std::max(worstReplay, std::abs(x[0] - xt) / std::abs(xt));
    }
    qInfo("%s: %ld steps, dense output vs closed form %.2e, vs advanceTo %.2e",
          integrators::toString(method), steps, worst, worstReplay);
    SENSODE_EXPECT_CLOSE(worstReplay, 0, 1e-12, 0, "dense vs advanceTo", 0);
    SENSODE_EXPECT_CLOSE(worst, 0, 2e-6, 0, "dense vs closed form", 0);
  }

  void exponentialMidpointBeatsLeftPoint() {
    // NUMERICS.md §7.4: the paper's left-point Exp is first order, the midpoint variant second
    // order (MM: 4.8e-2 vs 5.2e-3 on a rtol 1e-5 BDF grid). Measured here (CVODES grid, rtol
    // 1e-5, atol 1e-6): left point 2.4e-2, midpoint 8.1e-4.
    Eigen::MatrixXd ref(4, 3);
    ref << -4.66134174e-6, 4.64398189e-5, 8.55193667e-2, -1.14387803e-4, 1.13290830e-3,
        -4.97034333e-1, 4.66134174e-6, -4.64398189e-5, -8.55193667e-2, 1.09726462e-4,
        -1.08646848e-3, 5.82553700e-1;
    auto errorWith = [&](bool midpoint) {
      const SensitivityResult r =
          run(michaelisMentenModel(), SensitivityMethod::Exp, {0.0, 10.0}, 1e-5, 1e-6,
              [midpoint](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.midpoint = midpoint;
              });
      return columnRelativeError(stateS(r, 1), ref);
    };
    const double left = errorWith(false), mid = errorWith(true);
    qInfo("MM Exp: left point %.2e, midpoint %.2e", left, mid);
    QVERIFY(mid < left / 5);
    SENSODE_EXPECT_CLOSE(mid, 0, 1e-2, 0, "midpoint Exp", 0);
  }

  void trajectoryFromOdeSd() {
    // PBSR/Exp on odeSD's trajectory (grid and dense output) instead of CVODES's. Measured on
    // MM at rtol 1e-8: Exp 2.5e-3 on odeSD's 124 steps (7.7e-5 on CVODES's 416); PBSR the same
    // (n_int > 100 on every one of these long steps, so it takes the exponential formula).
    Eigen::MatrixXd ref(4, 3);
    ref << -4.66134174e-6, 4.64398189e-5, 8.55193667e-2, -1.14387803e-4, 1.13290830e-3,
        -4.97034333e-1, 4.66134174e-6, -4.64398189e-5, -8.55193667e-2, 1.09726462e-4,
        -1.08646848e-3, 5.82553700e-1;
    for (const auto method : {SensitivityMethod::Exp, SensitivityMethod::Pbsr}) {
      const SensitivityResult r =
          run(michaelisMentenModel(), method, {0.0, 10.0}, 1e-8, 1e-12,
              [](SensitivityProblem&, SensitivityOptions& o) {
                o.trajectory = integrators::Method::OdeSd;
              });
      if (r.termination == tasks::Termination::InvalidInput &&
          r.message.find("not available") != std::string::npos)
        QSKIP("odeSD not available");
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      const double err = columnRelativeError(stateS(r, 1), ref);
      qInfo("MM %s on the odeSD trajectory: %.2e (%ld intervals)", tasks::toString(method), err,
            r.stats.peanoBaker.intervals);
      SENSODE_EXPECT_CLOSE(err, 0, 1e-2, 0, tasks::toString(method), 0);
    }
  }

  // ---- problems, failures, cancellation ----

  void unknownAndRepeatedParametersAreInvalidInput() {
    const SensitivityResult r = run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 1.0},
                                    1e-6, 1e-12, [](SensitivityProblem& p, SensitivityOptions&) {
                                      p.parameters = {"k1", "kx"};
                                    });
    QCOMPARE(r.termination, tasks::Termination::InvalidInput);
    QVERIFY2(r.message.find("unknown parameter id 'kx'") != std::string::npos, r.message.c_str());
    const SensitivityResult twice =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 1.0}, 1e-6, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k1", "k1"}; });
    QCOMPARE(twice.termination, tasks::Termination::InvalidInput);
    QVERIFY(twice.message.find("'k1' given twice") != std::string::npos);
  }

  void selectedParametersKeepTheirOrder() {
    const SensitivityResult all =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 2.0}, 1e-8, 1e-12);
    const SensitivityResult some =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 2.0}, 1e-8, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k3", "k1"}; });
    QVERIFY(some.termination == tasks::Termination::Success);
    QCOMPARE(some.parameterIds, (std::vector<std::string>{"k3", "k1"}));
    for (std::size_t iy = 0; iy < 4; ++iy) {
      SENSODE_EXPECT_CLOSE(some.at(1, iy, 0), all.at(1, iy, 2), 1e-14, 1e-5, "k3", 0);
      SENSODE_EXPECT_CLOSE(some.at(1, iy, 1), all.at(1, iy, 0), 1e-14, 1e-5, "k1", 0);
    }
  }

  void outputsAtT0OnlyNeedNoIntegration() {
    for (const auto method : {SensitivityMethod::Cvodes, SensitivityMethod::Exp,
                              SensitivityMethod::FiniteDifferences}) {
      const SensitivityResult r = run(conversionModel(), method, {0.0}, 1e-8, 1e-12);
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      QCOMPARE(r.times.size(), std::size_t{1});
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 2), 1.0, 1e-9, 0, "dA(0)/dA0", 0);
    }
  }

  void cancellationIsUserAbort() {
    for (const auto method : {SensitivityMethod::Cvodes, SensitivityMethod::Pbsr,
                              SensitivityMethod::FiniteDifferences}) {
      SensitivityProblem problem;
      problem.model = repressilatorModel();
      problem.times = linspace(0, 50, 11);
      SensitivityOptions options;
      options.method = method;
      ProgressMonitor monitor;
      long calls = 0;
      monitor.callback = [&calls](const ProgressInfo& info) {
        if (!(info.t >= 0 && info.t <= info.tEnd)) return Decision::Continue;  // checked below
        return ++calls > 20 ? Decision::Abort : Decision::Continue;
      };
      const SensitivityResult r = tasks::runSensitivities(problem, options, monitor);
      QCOMPARE(r.termination, tasks::Termination::UserAbort);
      QVERIFY(r.message.find("cancelled") != std::string::npos);
    }
  }

  void progressCoversTheWholeRun() {
    // FD runs 4·np + 1 simulations (central differences at δ and δ/2 for the extrapolation);
    // the monitor sees one monotone sweep over [t0, tEnd].
    SensitivityProblem problem;
    problem.model = michaelisMentenModel();
    problem.times = linspace(0, 10, 3);
    SensitivityOptions options;
    options.method = SensitivityMethod::FiniteDifferences;
    ProgressMonitor monitor;
    double last = -1, maxT = 0;
    bool monotone = true;
    monitor.callback = [&](const ProgressInfo& info) {
      monotone = monotone && info.t >= last - 1e-12 && info.tEnd == 10;
      last = info.t;
      maxT = std::max(maxT, info.t);
      return Decision::Continue;
    };
    const SensitivityResult r = tasks::runSensitivities(problem, options, monitor);
    QVERIFY(r.termination == tasks::Termination::Success);
    QVERIFY(monotone);
    QVERIFY(maxT > 9.9);
    QCOMPARE(r.stats.simulations, 13L);
  }

  // ---- the CLI ----

  void cliWritesTheLongCsvAndStats() {
    QTemporaryDir dir;
    const QString csv = dir.filePath("s.csv"), json = dir.filePath("s.json");
    const QString model = QString::fromStdString((kCases / "00001" / "00001-sbml-l3v2.xml").string());
    QProcess p;
    p.start(SENSODE_CLI_PATH, {"sensitivities", model, "--params", "k1,S1", "--method", "cvodes",
                              "--t-end", "5", "--points", "6", "--out", csv, "--stats", json});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QString("time,variable,parameter,value"));
    // 6 times × 2 outputs (S1, S2) × 2 parameters, times outermost, then outputs, parameters.
    QCOMPARE(lines.size(), 1 + 6 * 2 * 2);
    QCOMPARE(lines[1].section(',', 0, 2), QString("0,S1,k1"));
    QCOMPARE(lines[2].section(',', 0, 2), QString("0,S1,S1"));
    QCOMPARE(lines[3].section(',', 0, 2), QString("0,S2,k1"));
    QCOMPARE(lines[5].section(',', 0, 2), QString("1,S1,k1"));
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(',');
      QCOMPARE(cells.size(), 4);
      bool ok = false;
      cells[0].toDouble(&ok);
      QVERIFY(ok);
      cells[3].toDouble(&ok);
      QVERIFY2(ok, qPrintable(lines[i]));
    }
    // dS1(0)/dS1 = 1 (S1 is an initial amount); S1(5) decays as e^{−5}·S1(0)... dS1(5)/dS1 =
    // e^{-5} (k1 = 1, compartment 1).
    QCOMPARE(lines[2].section(',', 3).toDouble(), 1.0);
    SENSODE_EXPECT_CLOSE(lines[22].section(',', 3).toDouble(), std::exp(-5.0), 0, 1e-4,
                         qPrintable(lines[22]), 0);
    QFile j(json);
    QVERIFY(j.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(j.readAll()).object();
    for (const char* key : {"method", "wall_seconds", "steps", "rhs_evals", "jac_evals",
                            "lu_factorizations", "newton_iterations", "error_test_failures",
                            "sens_evals"}) {
      QVERIFY2(o.contains(key), key);
    }
    QCOMPARE(o["method"].toString(), QString("cvodes"));
    QCOMPARE(o["corrector"].toString(), QString("staggered"));
    QVERIFY(o["sens_evals"].toDouble() > 0);

    // --corrector simultaneous and augmented (CVODE on [x; S]): the same values to the
    // tolerance, the choice in the stats; for odesd the option and the stats name the corrector
    // of its CVODES hand-over (default augmented).
    const QString csv2 = dir.filePath("s2.csv");
    for (const auto& [method, corrector, expected] :
         {std::tuple{"cvodes", "simultaneous", "simultaneous"}, {"cvodes", "augmented", "augmented"},
          {"odesd", "staggered", "staggered"}, {"odesd", "", "augmented"}}) {
      QStringList args{"sensitivities", model, "--params", "k1,S1", "--method", method,
                       "--t-end", "5", "--points", "6", "--out", csv2, "--stats", json};
      if (*corrector != '\0') args << "--corrector" << corrector;
      QProcess p3;
      p3.start(SENSODE_CLI_PATH, args);
      QVERIFY(p3.waitForFinished(60000));
      QVERIFY2(p3.exitCode() == 0, p3.readAllStandardError().constData());
      QFile f3(csv2);
      QVERIFY(f3.open(QIODevice::ReadOnly));
      const QStringList lines3 = QString::fromUtf8(f3.readAll()).split('\n', Qt::SkipEmptyParts);
      QCOMPARE(lines3.size(), lines.size());
      SENSODE_EXPECT_CLOSE(lines3[22].section(',', 3).toDouble(), std::exp(-5.0), 0, 1e-4,
                           qPrintable(lines3[22]), 0);
      QFile j3(json);
      QVERIFY(j3.open(QIODevice::ReadOnly));
      QCOMPARE(QJsonDocument::fromJson(j3.readAll()).object()["corrector"].toString(),
               QString(expected));
    }
  }

  void cliMethodsAndErrors() {
    QTemporaryDir dir;
    const QString model = QString::fromStdString((kCases / "00001" / "00001-sbml-l3v2.xml").string());
    for (const char* method : {"pbsr", "exp", "fd"}) {
      QProcess p;
      p.start(SENSODE_CLI_PATH, {"sensitivities", model, "--method", method, "--scaled",
                                "--trajectory", "cvodes", "--out", dir.filePath("x.csv")});
      QVERIFY(p.waitForFinished(60000));
      QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }
    struct Bad {
      QStringList args;
      int status;
      const char* text;
    };
    for (const Bad& bad : {Bad{{"--method", "adjoint"}, 2, "--method"},
                           Bad{{"--params", "k1,nope"}, 1, "unknown parameter id 'nope'"},
                           Bad{{"--method", "cvodes", "--trajectory", "odesd"}, 2, "--trajectory"},
                           Bad{{"--fd-step", "-1"}, 2, "fdRelativeStep"},
                           Bad{{"--corrector", "both"}, 2, "--corrector"},
                           Bad{{"--method", "exp", "--corrector", "staggered"}, 2, "--corrector"}}) {
      QProcess p;
      p.start(SENSODE_CLI_PATH, QStringList{"sensitivities", model} + bad.args);
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
      QCOMPARE(p.exitCode(), bad.status);
      QVERIFY2(err.contains(bad.text), qPrintable(err));
      QCOMPARE(err.count('\n'), 0);
    }
  }
};

QTEST_GUILESS_MAIN(TestSensitivities)
#include "tst_sensitivities.moc"
