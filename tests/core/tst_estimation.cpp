// SPDX-License-Identifier: MIT
// Parameter estimation (core/estimation) on small PEtab problems written by the test, checked
// against independent answers:
//   linear        y = a + b·t (x' = b, x(0) = a) with known σ: the optimum and the covariance
//                 are the weighted linear least-squares solution (XᵀWX)⁻¹XᵀWy and (XᵀWX)⁻¹
//                 (normal equations by Eigen); the quasi-Newton optimiser reaches the same
//                 optimum; the profile likelihood interval equals the Wald interval (the
//                 objective is exactly quadratic).
//   decay         y = x0·exp(−k t) on log10 scales with known σ, data from 20 seeds: the FIM
//                 equals JᵀJ/σ² with J the analytic derivatives at the estimate, and the 95 %
//                 intervals cover the true values in at least 17 of 20 seeds each.
//   noise         the same decay with σ estimated: least squares (with the noise residuals) and
//                 L-BFGS reach the same optimum, where σ̂² = mean (m − y)² (the normal MLE).
//   laplace       Laplace noise and priors: least squares falls back to L-BFGS and says so.
//   starts        the Latin hypercube: one point per stratum per coordinate, reproducible from
//                 the seed; bad options and a cancelled run end with a clear status.
//   screen        the start screen keeps the best candidates by objective (checked against
//                 every candidate evaluated here), the same for a seed whatever the threads.
//   ess           the scatter-search global phase: its evaluations reported, distinct starts,
//                 the same for a seed with one thread or two, the first the best it saw.
//   polish        the best start is continued at tighter tolerances, once per optimum.
//   stalled       a start that stalls on the integration error at a loose rtol continues at
//                 rtol / 100 and ends nearer the truth.
//   held          LM with the bounded optimum of a nearly collinear linear problem on a bound.
//   geodesic      bounded LM on curved valleys with known optima (Rosenbrock's and a steeper
//                 one), with and without geodesic acceleration: both reach the optimum, and the
//                 acceleration takes markedly fewer iterations (counts measured, below).
//   redraw        a start where the objective evaluates but its Jacobian does not is redrawn.
//   cli           `sensode estimate` writes the tables and summary with the optimum above, and
//                 refuses a bad --method with exit status 2.
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/estimation/estimation.h"
#include "core/estimation/fit_statistics.h"
#include "core/estimation/latin_hypercube.h"
#include "core/estimation/local_optimizers.h"
#include "core/estimation/start_screen.h"
#include "support/cli_process.h"
#include "support/numeric_compare.h"

namespace est = sensode::estimation;
namespace fs = std::filesystem;

namespace {

// r = (k(y − x²), 1 − x): Rosenbrock's function for k = 10 (½|r|² has its minimum 0 at (1, 1),
// in a parabolic valley whose walls steepen with k), in the box [−5, 5]².
class CurvedValley final : public est::detail::ResidualFunction {
 public:
  explicit CurvedValley(double k) : k_(k) {}
  int size() const override { return 2; }
  const std::vector<double>& lower() const override { return lower_; }
  const std::vector<double>& upper() const override { return upper_; }
  Values evaluate(const double* p, bool jacobian) override {
    ++(jacobian ? jacobians : residualsOnly);
    Values v;
    v.values = Eigen::Vector2d(k_ * (p[1] - p[0] * p[0]), 1 - p[0]);
    v.objective = 0.5 * v.values.squaredNorm();
    if (jacobian) {
      v.jacobian.resize(2, 2);
      v.jacobian << -2 * k_ * p[0], k_, -1, 0;
    }
    return v;
  }
  long jacobians = 0, residualsOnly = 0;

 private:
  double k_;
  std::vector<double> lower_{-5, -5}, upper_{5, 5};
};

// r = J x − J x* with correlated columns (J = [1 1; 1 1.1]) and x* = (−3, 4) outside the box
// x₀ ≥ 0: the bounded optimum is x₀ = 0, x₁ = (J₂·J x*)/|J₂|². At (0, 0) the gradient pulls x₀
// inwards while the coupled LM step (−3, 4) pushes it outwards; clamped, that step goes uphill.
class CollinearOnBound final : public est::detail::ResidualFunction {
 public:
  CollinearOnBound() { j_ << 1, 1, 1, 1.1; }
  int size() const override { return 2; }
  const std::vector<double>& lower() const override { return lower_; }
  const std::vector<double>& upper() const override { return upper_; }
  Values evaluate(const double* p, bool jacobian) override {
    ++evaluations;
    Values v;
    v.values = j_ * (Eigen::Vector2d(p[0], p[1]) - Eigen::Vector2d(-3, 4));
    v.objective = 0.5 * v.values.squaredNorm();
    if (jacobian) v.jacobian = j_;
    return v;
  }
  double optimumX1() const {
    const Eigen::Vector2d b = j_ * Eigen::Vector2d(-3, 4);
    return j_.col(1).dot(b) / j_.col(1).squaredNorm();
  }
  long evaluations = 0;

 private:
  Eigen::Matrix2d j_;
  std::vector<double> lower_{0, -10}, upper_{10, 10};
};

void write(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
}

// The PEtab yaml over the four tables the tests write beside it (parameters.tsv, conditions.tsv,
// measurements.tsv, observables.tsv) and model.xml.
fs::path writeProblemYaml(const fs::path& dir) {
  write(dir / "problem.yaml",
        "format_version: 1\nparameter_file: parameters.tsv\nproblems:\n"
        "  - condition_files: [conditions.tsv]\n    measurement_files: [measurements.tsv]\n"
        "    observable_files: [observables.tsv]\n    sbml_files: [model.xml]\n");
  return dir / "problem.yaml";
}

// x' = rate (a zero-order inflow `b`, or −k·x), x(0) from the condition table.
std::string model(bool decay) {
  const std::string law = decay ? "<apply><times/><ci>k</ci><ci>x</ci></apply>" : "<ci>b</ci>";
  const std::string refs =
      decay ? "<listOfReactants><speciesReference species=\"x\" stoichiometry=\"1\" constant=\"true\"/></listOfReactants>"
            : "<listOfProducts><speciesReference species=\"x\" stoichiometry=\"1\" constant=\"true\"/></listOfProducts>";
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" level="3" version="1">
  <model id="m">
    <listOfCompartments><compartment id="cell" size="1" constant="true" spatialDimensions="3"/></listOfCompartments>
    <listOfSpecies><species id="x" compartment="cell" initialConcentration="1" hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/></listOfSpecies>
    <listOfParameters><parameter id=")" + std::string(decay ? "k" : "b") +
         R"(" value="1" constant="true"/></listOfParameters>
    <listOfReactions><reaction id="R" reversible="false" fast="false">)" +
         refs + "<kineticLaw><math xmlns=\"http://www.w3.org/1998/Math/MathML\">" + law +
         "</math></kineticLaw></reaction></listOfReactions>\n  </model>\n</sbml>\n";
}

struct Data {
  std::vector<double> t, y;
};

// A PEtab problem in `dir`: parameters (id, scale, lower, upper, nominal) estimated, the
// initial value parameter named by `x0Id`, noise formula `noise`.
fs::path writeProblem(const fs::path& dir, bool decay, const std::string& parameterRows,
                      const std::string& x0Id, const std::string& noise, const Data& d) {
  write(dir / "model.xml", model(decay));
  write(dir / "parameters.tsv",
        "parameterId\tparameterScale\tlowerBound\tupperBound\tnominalValue\testimate\n" +
            parameterRows);
  write(dir / "conditions.tsv", "conditionId\tx\nc1\t" + x0Id + "\n");
  write(dir / "observables.tsv",
        "observableId\tobservableFormula\tnoiseFormula\nobs\tx\t" + noise + "\n");
  std::string m = "observableId\tsimulationConditionId\tmeasurement\ttime\n";
  for (std::size_t i = 0; i < d.t.size(); ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "obs\tc1\t%.17g\t%.17g\n", d.y[i], d.t[i]);
    m += line;
  }
  write(dir / "measurements.tsv", m);
  return writeProblemYaml(dir);
}

est::EstimationOptions quickOptions(int starts) {
  est::EstimationOptions o;
  o.starts = starts;
  o.threads = 2;
  o.objective.integrator.rtol = 1e-10;
  o.objective.integrator.atol = 1e-12;
  o.functionTolerance = 1e-12;
  o.parameterTolerance = 1e-12;
  o.gradientTolerance = 1e-10;
  return o;
}

const Data kLinearData{{0.5, 1, 2, 3, 4, 6}, {1.9, 2.4, 3.2, 4.4, 4.9, 7.1}};
constexpr double kLinearSigma = 0.3;

Data decayData(std::uint64_t seed, double x0, double k, double sigma) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sigma);
  Data d;
  for (double t : {0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0}) {
    d.t.push_back(t);
    d.y.push_back(x0 * std::exp(-k * t) + noise(rng));
  }
  return d;
}

}  // namespace

class TestEstimation : public QObject {
  Q_OBJECT

 private slots:
  void defaultOptionsValidate() { QVERIFY(!est::EstimationOptions{}.validate()); }

  // Weighted linear least squares: the optimum, covariance, SEs, χ² and the objective.
  void linearLeastSquares() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       std::to_string(kLinearSigma), kLinearData);
    const auto n = static_cast<Eigen::Index>(kLinearData.t.size());
    Eigen::MatrixXd X(n, 2);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      X(i, 0) = 1;
      X(i, 1) = kLinearData.t[static_cast<std::size_t>(i)];
      y(i) = kLinearData.y[static_cast<std::size_t>(i)];
    }
    const Eigen::MatrixXd fim = X.transpose() * X / (kLinearSigma * kLinearSigma);
    const Eigen::MatrixXd cov = fim.inverse();
    const Eigen::VectorXd theta = (X.transpose() * X).ldlt().solve(X.transpose() * y);
    const double chi2 = (y - X * theta).squaredNorm() / (kLinearSigma * kLinearSigma);
    const double objective =
        0.5 * chi2 + 0.5 * static_cast<double>(n) * std::log(2 * M_PI * kLinearSigma * kLinearSigma);

    for (const est::Optimizer method : {est::Optimizer::LeastSquares, est::Optimizer::QuasiNewton}) {
      est::EstimationOptions o = quickOptions(4);
      o.optimizer = method;
      if (method == est::Optimizer::LeastSquares) o.profileParameters = {"a", "b"};
      const est::EstimationResult r = est::runEstimation({yaml}, o);
      QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
      QCOMPARE(r.optimizer, method);
      const std::string what = std::string("optimum by ") + est::toString(method);
      for (int i = 0; i < 2; ++i)
        SENSODE_EXPECT_CLOSE(r.best[static_cast<std::size_t>(i)], theta(i), 1e-6, 0, what, i);
      SENSODE_EXPECT_CLOSE(r.bestObjective, objective, 1e-8, 1e-9, "objective", 0);
      // Every start of a convex problem ends at the optimum.
      for (const est::StartResult& s : r.starts)
        SENSODE_EXPECT_CLOSE(s.objective, objective, 1e-6, 0, "start objective", s.index);
      const est::FitStatistics& st = r.statistics;
      QVERIFY2(st.available, st.message.c_str());
      QCOMPARE(st.rank, 2);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) SENSODE_EXPECT_CLOSE(st.covariance(i, j), cov(i, j), 0, 1e-6, "cov", 2 * i + j);
      for (int i = 0; i < 2; ++i) {
        SENSODE_EXPECT_CLOSE(st.standardErrors[static_cast<std::size_t>(i)], std::sqrt(cov(i, i)), 0, 1e-6, "SE", i);
        SENSODE_EXPECT_CLOSE(st.upper[static_cast<std::size_t>(i)] - st.lower[static_cast<std::size_t>(i)],
                             2 * 1.959963984540054 * std::sqrt(cov(i, i)), 0, 1e-6, "CI width", i);
      }
      SENSODE_EXPECT_CLOSE(st.correlation(0, 1), cov(0, 1) / std::sqrt(cov(0, 0) * cov(1, 1)), 1e-8, 0, "corr", 0);
      SENSODE_EXPECT_CLOSE(st.chiSquare, chi2, 1e-8, 1e-8, "chi2", 0);
      QCOMPARE(st.degreesOfFreedom, static_cast<int>(n) - 2);
      if (method != est::Optimizer::LeastSquares) continue;
      // Quadratic objective: the profile crosses the threshold at the Wald interval's ends.
      QCOMPARE(r.profiles.size(), std::size_t(2));
      for (int i = 0; i < 2; ++i) {
        const est::Profile& p = r.profiles[static_cast<std::size_t>(i)];
        const double se = std::sqrt(cov(i, i));
        SENSODE_EXPECT_CLOSE(p.threshold - p.optimumObjective, 1.959963984540054 * 1.959963984540054 / 2, 1e-12, 0, "threshold", i);
        SENSODE_EXPECT_CLOSE(p.lower, st.lower[static_cast<std::size_t>(i)], 0.02 * se, 0, "profile lower", i);
        SENSODE_EXPECT_CLOSE(p.upper, st.upper[static_cast<std::size_t>(i)], 0.02 * se, 0, "profile upper", i);
        for (const est::ProfilePoint& q : p.points) {
          const double expected = p.optimumObjective + 0.5 * std::pow(q.value - theta(i), 2) / cov(i, i);
          SENSODE_EXPECT_CLOSE(q.objective, expected, 1e-6, 1e-8, "profile point", i);
        }
      }
    }
  }

  // Nonlinear decay, log10 scales: FIM against the analytic Jacobian; interval coverage.
  void decayCoverage() {
    const double x0 = 2.0, k = 0.7, sigma = 0.05;
    int inside[2] = {0, 0};
    const int seeds = 20;
    for (int seed = 1; seed <= seeds; ++seed) {
      QTemporaryDir tmp;
      const Data d = decayData(static_cast<std::uint64_t>(seed), x0, k, sigma);
      const fs::path yaml =
          writeProblem(tmp.path().toStdString(), true,
                       "k\tlog10\t0.01\t10\t1\t1\nx0\tlog10\t0.1\t10\t1\t1\n", "x0",
                       std::to_string(sigma), d);
      est::EstimationOptions o = quickOptions(3);
      o.seed = static_cast<std::uint64_t>(seed);
      const est::EstimationResult r = est::runEstimation({yaml}, o);
      QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
      const double kHat = std::pow(10.0, r.best[0]), xHat = std::pow(10.0, r.best[1]);
      // J_i = [∂y/∂log10 k, ∂y/∂log10 x0] = [−t·k·y·ln10, y·ln10], y = x0 e^{−kt}.
      Eigen::MatrixXd J(static_cast<Eigen::Index>(d.t.size()), 2);
      for (std::size_t i = 0; i < d.t.size(); ++i) {
        const double yi = xHat * std::exp(-kHat * d.t[i]);
        J(static_cast<Eigen::Index>(i), 0) = -d.t[i] * kHat * yi * M_LN10;
        J(static_cast<Eigen::Index>(i), 1) = yi * M_LN10;
      }
      const Eigen::MatrixXd fim = J.transpose() * J / (sigma * sigma);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          SENSODE_EXPECT_CLOSE(r.statistics.fisher(i, j), fim(i, j), 0, 1e-6, "FIM", 2 * i + j);
      const double truth[2] = {std::log10(k), std::log10(x0)};
      for (int i = 0; i < 2; ++i)
        if (r.statistics.lower[static_cast<std::size_t>(i)] <= truth[i] &&
            truth[i] <= r.statistics.upper[static_cast<std::size_t>(i)])
          ++inside[i];
    }
    qInfo("95 %% Wald intervals covered k in %d and x0 in %d of %d seeds", inside[0], inside[1], seeds);
    // Binomial(20, 0.95): P(X <= 16) = 1.6 %; the seeds are fixed, so this is deterministic.
    QVERIFY2(inside[0] >= 17 && inside[1] >= 17, "coverage below 17 of 20");
  }

  // σ estimated: LS with noise residuals and L-BFGS agree; σ̂² is the mean squared residual.
  void estimatedNoise() {
    QTemporaryDir tmp;
    const Data d = decayData(3, 2.0, 0.7, 0.05);
    const fs::path yaml =
        writeProblem(tmp.path().toStdString(), true,
                     "k\tlog10\t0.01\t10\t1\t1\nx0\tlog10\t0.1\t10\t1\t1\nsd\tlog10\t0.001\t1\t0.1\t1\n",
                     "x0", "sd", d);
    double objectives[2];
    int run = 0;
    for (const est::Optimizer method : {est::Optimizer::Auto, est::Optimizer::QuasiNewton}) {
      est::EstimationOptions o = quickOptions(4);
      o.optimizer = method;
      const est::EstimationResult r = est::runEstimation({yaml}, o);
      QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
      if (method == est::Optimizer::Auto) {
        QCOMPARE(r.optimizer, est::Optimizer::LeastSquares);
        QVERIFY2(r.optimizerReason.find("noise terms") != std::string::npos, r.optimizerReason.c_str());
      }
      double sum = 0;
      for (std::size_t i = 0; i < d.t.size(); ++i)
        sum += std::pow(d.y[i] - r.bestFit.simulated[i], 2);
      const double sigmaHat = std::pow(10.0, r.best[2]);
      SENSODE_EXPECT_CLOSE(sigmaHat * sigmaHat, sum / static_cast<double>(d.t.size()), 0, 1e-4, "sigma^2", run);
      objectives[run++] = r.bestObjective;
    }
    SENSODE_EXPECT_CLOSE(objectives[1], objectives[0], 1e-6, 0, "qn vs ls objective", 0);
  }

  // Laplace noise and non-normal priors (the reader's decay fixture): not least squares, so a
  // requested LS falls back to L-BFGS and says why; the fit improves on the nominal values.
  void laplaceFallsBackToQuasiNewton() {
    const fs::path yaml = fs::path(SENSODE_TEST_DATA_DIR) / "petab" / "decay" / "problem.yaml";
    est::EstimationOptions o = quickOptions(3);
    o.optimizer = est::Optimizer::LeastSquares;
    const est::EstimationResult r = est::runEstimation({yaml}, o);
    QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
    QCOMPARE(r.optimizer, est::Optimizer::QuasiNewton);
    QCOMPARE(r.fallbacks.size(), std::size_t(1));
    QVERIFY2(r.fallbacks[0].find("laplace noise") != std::string::npos &&
                 r.fallbacks[0].find("L-BFGS ran instead") != std::string::npos,
             r.fallbacks[0].c_str());
    QVERIFY2(r.bestObjective < r.nominalObjective, "no improvement on the nominal values");
    // Every start of this small problem ends at the same optimum.
    for (const est::StartResult& s : r.starts)
      SENSODE_EXPECT_CLOSE(s.objective, r.bestObjective, 1e-5, 0, "start objective", s.index);
  }

  // Geodesic acceleration (core/estimation/geodesic_acceleration.h) on curved valleys from the
  // classic start (−1.2, 1) and a start on the far side of the valley's bend.
  void geodesicAcceleration() {
    struct Case {
      double k;
      std::vector<double> start;
    };
    for (const Case& c : {Case{10, {-1.2, 1}}, Case{100, {-1.2, 1}}, Case{10, {-3, 4}},
                          Case{100, {-3, 4}}}) {
      int iterations[2] = {0, 0};
      long jacobians[2] = {0, 0};
      for (int accel = 0; accel < 2; ++accel) {
        CurvedValley f(c.k);
        est::detail::LocalSettings settings;
        settings.maxIterations = 10000;
        settings.functionTolerance = settings.parameterTolerance = 1e-14;
        settings.gradientTolerance = 1e-10;
        settings.geodesicAcceleration = accel == 1;
        const est::detail::LocalResult r = est::detail::minimizeLeastSquares(f, c.start, settings);
        qInfo("k %g start (%g, %g) acceleration %d: %s, %d iterations, %ld Jacobians, %ld "
              "residual-only evaluations, x = (%.12g, %.12g), %s",
              c.k, c.start[0], c.start[1], accel, est::toString(r.status), r.iterations,
              f.jacobians, f.residualsOnly, r.x[0], r.x[1], r.message.c_str());
        QCOMPARE(r.status, est::StartStatus::Converged);
        SENSODE_EXPECT_CLOSE(r.x[0], 1.0, 1e-7, 0, "x", accel);
        SENSODE_EXPECT_CLOSE(r.x[1], 1.0, 1e-7, 0, "y", accel);
        iterations[accel] = r.iterations;
        jacobians[accel] = f.jacobians;
      }
      // Measured (2026-11-26): iterations without / with acceleration 17 / 10 and 16 / 10 for
      // k = 10, 56 / 17 and 78 / 17 for k = 100; Jacobians 21 / 15, 18 / 11, 58 / 19, 81 / 18.
      // The steeper the walls, the larger the gain.
      const double gain = c.k >= 100 ? 1.0 / 3 : 0.65;
      QVERIFY2(iterations[1] <= gain * iterations[0],
               qPrintable(QString("k %1: %2 iterations with acceleration, %3 without")
                              .arg(c.k).arg(iterations[1]).arg(iterations[0])));
      QVERIFY2(jacobians[1] < jacobians[0], "acceleration did not save Jacobian evaluations");
    }
  }

  // A bound parameter that the coupled step pushes outwards is held and the step re-solved
  // for the others (least_squares.cpp, "Bounds").
  void heldOnBound() {
    CollinearOnBound f;
    est::detail::LocalSettings settings;
    settings.maxIterations = 10000;
    settings.gradientTolerance = 1e-10;
    const est::detail::LocalResult r = est::detail::minimizeLeastSquares(f, {0, 0}, settings);
    qInfo("%s, %d iterations, %ld evaluations, x = (%.12g, %.12g), %s", est::toString(r.status),
          r.iterations, f.evaluations, r.x[0], r.x[1], r.message.c_str());
    QCOMPARE(r.status, est::StartStatus::Converged);
    QCOMPARE(r.x[0], 0.0);
    SENSODE_EXPECT_CLOSE(r.x[1], f.optimumX1(), 1e-9, 0, "x1", 0);
    // Measured: 3 iterations, 5 evaluations; with the step clamped instead (the LM before
    // 2026-11-26), the first trial is rejected: 4 iterations, 7 evaluations.
    QVERIFY2(r.iterations <= 3 && f.evaluations <= 5,
             qPrintable(QString("%1 iterations, %2 evaluations").arg(r.iterations).arg(f.evaluations)));
  }

  void latinHypercube() {
    const std::vector<double> lower{-1, 0, 2}, upper{1, 5, 3};
    const int count = 7;
    const auto points = est::detail::latinHypercube(lower, upper, count, 42);
    QCOMPARE(points.size(), std::size_t(count));
    for (std::size_t i = 0; i < lower.size(); ++i) {
      std::vector<int> seen(count, 0);
      for (const auto& p : points) {
        const double u = (p[i] - lower[i]) / (upper[i] - lower[i]);
        QVERIFY(u >= 0 && u < 1);
        ++seen[static_cast<std::size_t>(u * count)];
      }
      for (int s : seen) QCOMPARE(s, 1);
    }
    QVERIFY(est::detail::latinHypercube(lower, upper, count, 42) == points);
    QVERIFY(est::detail::latinHypercube(lower, upper, count, 43) != points);
  }

  void normalQuantile() {
    // Φ⁻¹ at published values (Abramowitz & Stegun table 26.5 / the 95 % two-sided z).
    SENSODE_EXPECT_CLOSE(est::detail::normalQuantile(0.975), 1.959963984540054, 1e-12, 0, "z", 0);
    SENSODE_EXPECT_CLOSE(est::detail::normalQuantile(0.5), 0.0, 1e-15, 0, "z", 1);
    SENSODE_EXPECT_CLOSE(est::detail::normalQuantile(0.001), -3.090232306167814, 1e-12, 0, "z", 2);
    SENSODE_EXPECT_CLOSE(est::detail::normalQuantile(0.9999), 3.719016485455709, 1e-11, 0, "z", 3);
  }

  void reproducibleStarts() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    est::EstimationOptions o = quickOptions(5);
    o.useStartValues = false;
    o.seed = 9;
    o.threads = 1;
    const est::EstimationResult one = est::runEstimation({yaml}, o);
    o.threads = 2;
    const est::EstimationResult two = est::runEstimation({yaml}, o);
    QCOMPARE(one.starts.size(), std::size_t(5));
    const auto byIndex = [](const est::EstimationResult& r, int index) {
      for (const auto& s : r.starts)
        if (s.index == index) return s.start;
      return std::vector<double>{};
    };
    for (int i = 0; i < 5; ++i) QVERIFY(byIndex(one, i) == byIndex(two, i));
  }

  void bestCandidates() {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    const std::vector<double> v{3, nan, 1, inf, 1, 2};
    QVERIFY((est::detail::bestCandidates(v, 3) == std::vector<int>{2, 4, 5}));
    // Fewer finite than asked: the non-finite ones follow in position order.
    QVERIFY((est::detail::bestCandidates(v, 6) == std::vector<int>{2, 4, 5, 0, 1, 3}));
    QVERIFY((est::detail::bestCandidates(v, 9).size() == 6));
    QVERIFY(est::detail::bestCandidates(v, 0).empty());
  }

  // The screen returns the `count` best of its candidates (every candidate evaluated here
  // independently), reproducibly for a seed and whatever the thread count; runEstimation starts
  // from them and reports how many points it screened.
  void screenKeepsBest() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    const sensode::petab::Problem problem = sensode::petab::loadProblem(yaml);
    est::detail::FitSetup setup;
    setup.point = {0, 0};
    setup.free = {0, 1};
    setup.lower = {-10, -10};
    setup.upper = {10, 10};
    setup.objective = est::EstimationOptions::defaultObjectiveOptions();
    const int count = 4, factor = 5;
    const auto one = est::detail::screenStarts(yaml, problem, setup, count, factor, 3, 1, {});
    const auto two = est::detail::screenStarts(yaml, problem, setup, count, factor, 3, 2, {});
    QCOMPARE(one.screened, count * factor);
    QCOMPARE(one.starts.size(), std::size_t(count));
    QVERIFY(one.starts == two.starts);
    QVERIFY(one.objectives == two.objectives);
    QVERIFY(est::detail::screenStarts(yaml, problem, setup, count, factor, 4, 1, {}).starts !=
            one.starts);

    const auto candidates = est::detail::screenCandidates(setup, count, factor, 3);
    QCOMPARE(candidates.size(), std::size_t(count * factor));
    est::detail::FitObjective f(problem, setup, {});
    std::vector<double> values;
    for (const auto& x : candidates) values.push_back(f.value(x.data(), nullptr));
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k < count; ++k) {
      SENSODE_EXPECT_CLOSE(one.objectives[static_cast<std::size_t>(k)],
                           sorted[static_cast<std::size_t>(k)], 1e-12, 0, "screened objective", k);
      const auto it = std::find(candidates.begin(), candidates.end(),
                                one.starts[static_cast<std::size_t>(k)]);
      QVERIFY(it != candidates.end());
      QCOMPARE(values[static_cast<std::size_t>(it - candidates.begin())],
               one.objectives[static_cast<std::size_t>(k)]);
    }

    est::EstimationOptions o = quickOptions(count);
    o.useStartValues = false;
    o.seed = 3;
    o.global = est::GlobalPhase::Screen;
    o.screen = factor;
    const est::EstimationResult r = est::runEstimation({yaml}, o);
    QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
    QCOMPARE(r.screenedPoints, count * factor);
    for (const est::StartResult& s : r.starts) {
      QVERIFY(s.index >= 0 && s.index < count);
      QVERIFY(s.start == one.starts[static_cast<std::size_t>(s.index)]);
    }
    o.screen = -1;
    QVERIFY(o.validate().has_value());
  }

  // The scatter-search global phase through runEstimation: it reports its evaluations (the
  // budget, passed by at most a few batches), starts from distinct points, the same ones for a
  // seed with one thread or two, and its best start is at least as good as the screen's best
  // of the same number of points would need to be to be useful: below the Latin hypercube's.
  void scatterSearchStarts() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    const int count = 4;
    est::EstimationOptions o = quickOptions(count);
    o.useStartValues = false;
    o.seed = 5;
    o.global = est::GlobalPhase::ScatterSearch;
    o.globalEvaluations = 600;
    o.threads = 1;
    const est::EstimationResult one = est::runEstimation({yaml}, o);
    QVERIFY2(one.status == est::EstimationResult::Status::Success, one.message.c_str());
    QCOMPARE(int(one.global), int(est::GlobalPhase::ScatterSearch));
    QVERIFY2(one.globalEvaluations >= 600 && one.globalEvaluations < 900,
             qPrintable(QString::number(one.globalEvaluations)));
    QVERIFY(one.globalGenerations > 0);
    QVERIFY(std::isfinite(one.globalBest));
    QCOMPARE(one.screenedPoints, 0);
    o.threads = 2;
    const est::EstimationResult two = est::runEstimation({yaml}, o);
    QCOMPARE(two.starts.size(), one.starts.size());
    std::vector<std::vector<double>> startsOne, startsTwo;
    for (const auto& s : one.starts) startsOne.push_back(s.start);
    for (const auto& s : two.starts) startsTwo.push_back(s.start);
    std::sort(startsOne.begin(), startsOne.end());
    std::sort(startsTwo.begin(), startsTwo.end());
    QVERIFY(startsOne == startsTwo);
    for (std::size_t i = 0; i < startsOne.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) QVERIFY(startsOne[i] != startsOne[j]);
    // The start chosen first is the best point the search saw.
    double bestStart = std::numeric_limits<double>::infinity();
    for (const auto& s : one.starts) bestStart = std::min(bestStart, s.startObjective);
    SENSODE_EXPECT_CLOSE(bestStart, one.globalBest, 1e-9, 1e-9, "best start objective", 0);
    o.globalEvaluations = -1;
    QVERIFY(o.validate().has_value());
    QCOMPARE(est::globalPhaseFromString("ESS"), std::optional(est::GlobalPhase::ScatterSearch));
    QVERIFY(!est::globalPhaseFromString("dream").has_value());
  }

  // The polish continues one start per optimum at tighter tolerances and never worsens it.
  void polishBest() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    est::EstimationOptions o = est::EstimationOptions{};
    o.starts = 3;
    o.threads = 2;
    o.useStartValues = false;
    o.polish = 0;
    const est::EstimationResult plain = est::runEstimation({yaml}, o);
    o.polish = 2;
    const est::EstimationResult polished = est::runEstimation({yaml}, o);
    QVERIFY2(polished.status == est::EstimationResult::Status::Success, polished.message.c_str());
    QVERIFY(polished.bestObjective <= plain.bestObjective + 1e-9);
    // Every start ends at the one optimum: only the first is polished.
    int count = 0;
    for (const est::StartResult& s : polished.starts)
      if (s.message.find("polished at rtol 1e-10") != std::string::npos) ++count;
    QCOMPARE(count, 1);
    QVERIFY(polished.starts.front().message.find("polished") != std::string::npos);
    // best − nominal at one rtol: the nominal objective follows the best start's rtol.
    for (const est::StartResult& s : plain.starts) QCOMPARE(s.objectiveRtol, o.objective.integrator.rtol);
    QCOMPARE(plain.nominalObjectiveRtol, o.objective.integrator.rtol);
    QCOMPARE(polished.nominalObjectiveRtol, polished.starts.front().objectiveRtol);
    qInfo("best at rtol %g; nominal %.12g (run's rtol: %.12g)", polished.nominalObjectiveRtol,
          polished.nominalObjective, polished.nominalObjectiveRunRtol);
    o.polish = -1;
    QVERIFY(o.validate().has_value());
  }

  // A start that stalls on the objective's integration error continues at rtol / 100. The decay
  // with σ = 1e-6 at rtol 1e-4: the objective's error (~(1e-4·y/σ)²) is far above what ftol
  // asks, so LM stalls; the continuation at 1e-6 gets closer to the truth.
  void stalledContinues() {
    QTemporaryDir tmp;
    const double x0 = 2.0, k = 0.7, sigma = 1e-6;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), true,
                                       "k\tlog10\t0.01\t10\t1\t1\nx0\tlog10\t0.1\t10\t1\t1\n",
                                       "x0", std::to_string(sigma), decayData(1, x0, k, sigma));
    est::EstimationOptions o = quickOptions(4);
    o.useStartValues = false;
    o.polish = 0;
    o.objective.integrator.rtol = 1e-4;
    o.objective.integrator.atol = 1e-8;
    // The stalls this test counts are CVODES's integration error at rtol 1e-4 (with odeSD's the
    // continuation at 1e-6 stalls again on some starts and goes on to 1e-8).
    o.objective.forwardIntegrator = sensode::integrators::Method::Cvodes;
    o.continueStalled = false;
    const est::EstimationResult plain = est::runEstimation({yaml}, o);
    QVERIFY2(plain.status == est::EstimationResult::Status::Success, plain.message.c_str());
    o.continueStalled = true;
    const est::EstimationResult continued = est::runEstimation({yaml}, o);
    QVERIFY2(continued.status == est::EstimationResult::Status::Success, continued.message.c_str());
    int stalled = 0, went = 0;
    for (const est::StartResult& s : plain.starts) {
      qInfo("plain start %d: %s %.9g %s", s.index, est::toString(s.status), s.objective, s.message.c_str());
      stalled += s.status == est::StartStatus::Stalled;
    }
    for (const est::StartResult& s : continued.starts) {
      qInfo("continued start %d: %s %.9g at rtol %g: %s", s.index, est::toString(s.status),
            s.objective, s.objectiveRtol, s.message.c_str());
      if (s.message.find("stalled; continued at rtol 1e-06") == std::string::npos) continue;
      ++went;
      QCOMPARE(s.objectiveRtol, 1e-6);
    }
    QVERIFY2(stalled > 0, "no start stalled at rtol 1e-4: the test no longer exercises the rule");
    QCOMPARE(went, stalled);
    const auto error = [&](const est::EstimationResult& r) {
      return std::max(std::abs(std::pow(10.0, r.best[0]) - k) / k,
                      std::abs(std::pow(10.0, r.best[1]) - x0) / x0);
    };
    qInfo("relative error of the best fit: %.3g stalled, %.3g continued", error(plain), error(continued));
    QVERIFY(error(continued) < 0.1 * error(plain));
    QCOMPARE(continued.nominalObjectiveRtol, continued.starts.front().objectiveRtol);

    // From rtol 3e-3 the first continuation (3e-5) can stall again at a lower point; then the
    // second (3e-7) converges as near the truth as the single one from 1e-4 did. (Others
    // "converge" at 3e-5 on the integration error: the rule only acts on stalls.)
    o.objective.integrator.rtol = 3e-3;
    o.objective.integrator.atol = 3e-7;
    const est::EstimationResult twice = est::runEstimation({yaml}, o);
    QVERIFY2(twice.status == est::EstimationResult::Status::Success, twice.message.c_str());
    int both = 0;
    for (const est::StartResult& s : twice.starts) {
      if (s.message.find("stalled; continued at rtol 3e-05") == std::string::npos ||
          s.message.find("stalled; continued at rtol 3e-07") == std::string::npos)
        continue;
      ++both;
      const double e = std::max(std::abs(std::pow(10.0, s.parameters[0]) - k) / k,
                                std::abs(std::pow(10.0, s.parameters[1]) - x0) / x0);
      qInfo("from rtol 3e-3, start %d continued twice: %s, relative error %.3g: %s", s.index,
            est::toString(s.status), e, s.message.c_str());
      QCOMPARE(s.objectiveRtol, 3e-7);
      QVERIFY(e < 0.1 * error(plain));
    }
    QVERIFY2(both > 0, "no start continued twice from rtol 3e-3");
  }

  void cli() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const fs::path yaml = writeProblem(dir, false, "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n",
                                       "a", "0.3", kLinearData);
    const QString cliPath = SENSODE_CLI_PATH;  // --out makes the folder it is given
    const auto run = sensode::test::runProcess(
        cliPath, {"estimate", QString::fromStdString(yaml.string()), "--starts", "3", "--threads", "1",
                  "--profile", "b", "--out", QString::fromStdString((dir / "out").string())},
        120000);
    QVERIFY2(run.exitCode == 0, qPrintable(run.errLines.join("\n")));
    QCOMPARE(run.errLines.size(), 3);  // one progress line per start
    const auto lines = [](const fs::path& file) {
      std::ifstream in(file);
      std::vector<std::string> out;
      for (std::string l; std::getline(in, l);) out.push_back(l);
      return out;
    };
    const auto params = lines(dir / "out" / "parameters.csv");
    QCOMPARE(params.size(), std::size_t(3));
    QVERIFY2(params[0].rfind("parameterId,scale,estimated,value,se,ci_lower,ci_upper", 0) == 0, params[0].c_str());
    // b = slope of the weighted fit (kLinearData, normal equations: 0.8607...).
    const auto cells = [](const std::string& line) {
      std::vector<std::string> c;
      std::stringstream in(line);
      for (std::string x; std::getline(in, x, ',');) c.push_back(x);
      return c;
    };
    Eigen::MatrixXd X(6, 2);
    Eigen::VectorXd y(6);
    for (int i = 0; i < 6; ++i) {
      X(i, 0) = 1;
      X(i, 1) = kLinearData.t[static_cast<std::size_t>(i)];
      y(i) = kLinearData.y[static_cast<std::size_t>(i)];
    }
    const Eigen::VectorXd theta = (X.transpose() * X).ldlt().solve(X.transpose() * y);
    SENSODE_EXPECT_CLOSE(std::stod(cells(params[2])[3]), theta(1), 1e-6, 0, "b in parameters.csv", 0);
    QCOMPARE(lines(dir / "out" / "multistart.csv").size(), std::size_t(4));
    QVERIFY(lines(dir / "out" / "profile_b.csv").size() > 3);
    const auto summary = lines(dir / "out" / "summary.json");
    std::string all;
    for (const auto& l : summary) all += l + "\n";
    QVERIFY2(all.find("\"optimizer\": \"ls\"") != std::string::npos, all.c_str());
    QVERIFY2(all.find("\"successes\": 3") != std::string::npos, all.c_str());
    const auto bad = sensode::test::runProcess(
        cliPath, {"estimate", QString::fromStdString(yaml.string()), "--method", "simplex"}, 60000);
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.errLines.size() == 1 && bad.errLines[0].contains("--method: 'simplex'"),
             qPrintable(bad.errLines.join("\n")));
    QVERIFY2(all.find("\"continue_stalled\": true") != std::string::npos, all.c_str());
    const auto badSwitch = sensode::test::runProcess(
        cliPath, {"estimate", QString::fromStdString(yaml.string()), "--continue-stalled", "maybe"},
        60000);
    QCOMPARE(badSwitch.exitCode, 2);
    QVERIFY2(badSwitch.errLines.size() == 1 &&
                 badSwitch.errLines[0].contains("--continue-stalled: 'maybe'"),
             qPrintable(badSwitch.errLines.join("\n")));
  }

  // A start where the objective evaluates but the least-squares Jacobian does not (here the
  // pre-equilibration's steady-state sensitivities: x' = 0 for k < 0.5, so J_r = 0 is
  // singular, while the steady state itself is the initial state) is redrawn, not a failed
  // start (Brannmark_JBC2010 lost a start to this). The starts below 0.5 are found from the
  // same seed as the run.
  void startWithoutJacobianRedrawn() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::string sbml = model(true);
    const std::string law = "<apply><times/><ci>k</ci><ci>x</ci></apply>";
    sbml.replace(sbml.find(law), law.size(),
                 "<piecewise><piece><cn>0</cn><apply><lt/><ci>k</ci><cn>0.5</cn></apply></piece>"
                 "<otherwise>" + law + "</otherwise></piecewise>");
    write(dir / "model.xml", sbml);
    write(dir / "parameters.tsv",
          "parameterId\tparameterScale\tlowerBound\tupperBound\tnominalValue\testimate\n"
          "k\tlin\t0\t2\t1\t1\nx0\tlin\t0.1\t10\t1\t1\n");
    write(dir / "conditions.tsv", "conditionId\tx\npre\tx0\nsim\tx0\n");
    write(dir / "observables.tsv", "observableId\tobservableFormula\tnoiseFormula\nobs\tx\t0.1\n");
    std::string m = "observableId\tpreequilibrationConditionId\tsimulationConditionId\tmeasurement\ttime\n";
    for (double t : {0.0, 0.5, 1.0, 2.0, 3.0}) {
      char line[128];
      std::snprintf(line, sizeof line, "obs\tpre\tsim\t%.17g\t%.17g\n", 2 * std::exp(-t), t);
      m += line;
    }
    write(dir / "measurements.tsv", m);
    writeProblemYaml(dir);
    est::EstimationOptions o = quickOptions(6);
    o.useStartValues = false;
    o.optimizer = est::Optimizer::LeastSquares;
    o.seed = 1;
    o.global = est::GlobalPhase::None;  // the starts are the hypercube below
    o.polish = 0;
    // For k < 0.5 every state is a steady state (J_r = 0): by default the steady state's
    // sensitivities then come from forward integration (and are right: x* = x₀); the linear
    // solve alone fails there, which is the failing Jacobian this test needs.
    o.objective.steadyState.sensitivityMethod =
        sensode::steadystate::SteadyStateSensitivityMethod::LinearSolve;
    // Every start converging is CVODES's outcome; with odeSD one start stalls at a projected
    // gradient of 7e-10 and ends "stalled" after its continuation converged (the redraws this
    // test is about are the same).
    o.objective.forwardIntegrator = sensode::integrators::Method::Cvodes;
    const auto hypercube = est::detail::latinHypercube({0, 0.1}, {2, 10}, 6, o.seed);
    int below = 0;
    for (const auto& q : hypercube) below += q[0] < 0.5 ? 1 : 0;
    QVERIFY2(below > 0, "no start of this seed lies where the Jacobian fails: pick another seed");
    const est::EstimationResult r = est::runEstimation({dir / "problem.yaml"}, o);
    QVERIFY2(r.status == est::EstimationResult::Status::Success, r.message.c_str());
    QCOMPARE(r.optimizer, est::Optimizer::LeastSquares);
    int redrawn = 0;
    for (const auto& s : r.starts) {
      QVERIFY2(s.status == est::StartStatus::Converged, s.message.c_str());
      QVERIFY2(std::abs(s.objective - r.bestObjective) < 1e-6, s.message.c_str());
      QVERIFY(s.start[0] >= 0.5);
      if (s.message.find("start point redrawn") != std::string::npos) ++redrawn;
    }
    QCOMPARE(redrawn, below);
  }

  void badInputAndCancel() {
    QTemporaryDir tmp;
    const fs::path yaml = writeProblem(tmp.path().toStdString(), false,
                                       "a\tlin\t-10\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    est::EstimationOptions o = quickOptions(2);
    o.profileParameters = {"c"};
    est::EstimationResult r = est::runEstimation({yaml}, o);
    QCOMPARE(r.status, est::EstimationResult::Status::InvalidInput);
    QVERIFY2(r.message.find("'c' is not a parameter this fit estimates") != std::string::npos, r.message.c_str());
    o.profileParameters.clear();
    o.starts = 0;
    r = est::runEstimation({yaml}, o);
    QCOMPARE(r.status, est::EstimationResult::Status::InvalidInput);
    QVERIFY2(r.message.find("starts = 0") != std::string::npos, r.message.c_str());
    o.starts = 3;
    r = est::runEstimation({tmp.path().toStdString() + "/missing.yaml"}, o);
    QCOMPARE(r.status, est::EstimationResult::Status::InvalidInput);
    QVERIFY2(r.message.find("missing.yaml") != std::string::npos, r.message.c_str());
    // Unbounded estimated parameter: no box to sample starts in.
    QTemporaryDir tmp2;
    const fs::path open = writeProblem(tmp2.path().toStdString(), false,
                                       "a\tlin\t-inf\t10\t0\t1\nb\tlin\t-10\t10\t0\t1\n", "a",
                                       "0.3", kLinearData);
    r = est::runEstimation({open}, o);
    QCOMPARE(r.status, est::EstimationResult::Status::InvalidInput);
    QVERIFY2(r.message.find("parameter 'a': lowerBound") != std::string::npos, r.message.c_str());
    sensode::ProgressMonitor cancelled;
    cancelled.token.cancel();
    r = est::runEstimation({yaml}, o, cancelled);
    QCOMPARE(r.status, est::EstimationResult::Status::UserAbort);
  }
};

QTEST_GUILESS_MAIN(TestEstimation)
#include "tst_estimation.moc"
