// SPDX-License-Identifier: MIT
// The PEtab v1 reader on small fixtures (tests/data/petab/decay): TSV as files in the wild write
// it (UTF-8 byte-order mark, CRLF, quoted fields with tabs, quotes and line breaks, blank lines,
// rows shorter or longer than the header), YAML with lists indented under their keys and a
// quoted file name, several condition/observable/measurement files, a fixed log10 parameter with
// nominal value 0, every objective prior type (value and gradient against the densities written
// out independently here) and Laplace noise on lin, log and log10 scale. The decay model
// x' = −k x has the closed form x(t) = x(0) e^{−kt}, so the whole objective, priors included,
// is computed here without an ODE solver and compared with evaluateObjective and its gradients.
// tests/data/petab/reset: a species set by the simulation condition after pre-equilibration.
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "core/petab/priors.h"
#include "core/petab/tables.h"
#include "support/numeric_compare.h"

namespace petab = sensode::petab;
using petab::PetabError;
using petab::PriorType;
using petab::Scale;

namespace {

const std::filesystem::path kDecay = std::filesystem::path(SENSODE_TEST_DATA_DIR) / "petab" / "decay";

// The message of the PetabError `f` throws ("" when it throws none).
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const PetabError& e) {
    return e.what();
  }
  return "";
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

// The decay fixture's objective at q = (log10 k, ln x0, sd_n, ln b_l), written out from the
// closed form x(t) = x(0) e^{−kt} and the PEtab densities. `prior` receives the prior part.
double decayObjective(const std::vector<double>& q, double* prior = nullptr) {
  const double k = std::pow(10.0, q[0]), x0 = std::exp(q[1]), sd = q[2], b = std::exp(q[3]);
  const double pi = std::numbers::pi, ln10 = std::numbers::ln10;
  const auto xA = [&](double t) { return x0 * std::exp(-k * t); };
  const auto xB = [&](double t) { return 2 * std::exp(-k * t); };
  double j = 0;
  // obs_n = scale·x + offset (offset fixed at 0), normal noise sd_n.
  const auto normal = [&](double m, double y) {
    j += 0.5 * std::log(2 * pi * sd * sd) + 0.5 * std::pow((m - y) / sd, 2);
  };
  normal(1.2, xA(0.5));
  normal(0.85, xA(1));
  normal(0.45, 1.1 * xA(2.5));
  // Laplace densities of m: p(m) = exp(−|z|/σ)/(2σ) · |dz/dm|.
  const auto laplace = [&](double z, double sigma, double jacobian) {
    j += -std::log(std::exp(-std::abs(z) / sigma) / (2 * sigma) * jacobian);
  };
  laplace(std::log(1.5) - std::log(xB(0.5)), b, 1 / 1.5);  // obs_l: log scale
  laplace(std::log(1.3) - std::log(xB(1)), b, 1 / 1.3);
  laplace(std::log10(0.6) - std::log10(xB(2)), b, 1 / (0.6 * ln10));  // obs_l10
  laplace(0.9 - xB(1.5), 2 * b, 1);  // obs_lin, σ = 2·b_l
  laplace(0.2 - xA(3), 2 * b, 1);
  // Priors: k ~ normal(0.4, 0.2) on k; ln x0 ~ Laplace(0.3, 0.5) on its scale; b_l ~
  // logNormal(−1.5, 0.4).
  const double pk = std::exp(-std::pow(k - 0.4, 2) / (2 * 0.04)) / (0.2 * std::sqrt(2 * pi));
  const double px = std::exp(-std::abs(q[1] - 0.3) / 0.5) / (2 * 0.5);
  const double pb =
      std::exp(-std::pow(std::log(b) + 1.5, 2) / (2 * 0.16)) / (b * 0.4 * std::sqrt(2 * pi));
  const double priorTerm = -std::log(pk) - std::log(px) - std::log(pb);
  if (prior) *prior = priorTerm;
  return j + priorTerm;
}

const std::filesystem::path kReset = std::filesystem::path(SENSODE_TEST_DATA_DIR) / "petab" / "reset";

// The reset fixture's objective at q = (ln k1, k2, a0, b1): pre-equilibration of A <=> B from
// (a0, 0), then B := b1 with A kept at its pre-equilibrated value, relaxation to the new steady
// state; normal noise 0.1 on A and 0.05 on B.
double resetObjective(const std::vector<double>& q) {
  const double k1 = std::exp(q[0]), k2 = q[1], a0 = q[2], b1 = q[3];
  const double aPre = a0 * k2 / (k1 + k2), total = aPre + b1, aInf = total * k2 / (k1 + k2);
  const auto a = [&](double t) { return aInf + (aPre - aInf) * std::exp(-(k1 + k2) * t); };
  const auto term = [](double m, double y, double s) {
    return 0.5 * std::log(2 * std::numbers::pi * s * s) + 0.5 * std::pow((m - y) / s, 2);
  };
  return term(0.35, a(0), 0.1) + term(0.45, a(0.5), 0.1) + term(1.0, total - a(1), 0.05) +
         term(0.6, a(2), 0.1) + term(1.1, total - aInf, 0.05) + term(0.5, aInf, 0.1);
}

// −log of the prior density written out (not through priors.cpp), at q on `scale`.
double priorByDensity(PriorType type, double a, double b, Scale scale, double q) {
  const double pi = std::numbers::pi;
  const double x = petab::fromScale(scale, q);
  double p = 0;
  switch (type) {
    case PriorType::Uniform: p = (x >= a && x <= b) ? 1 / (b - a) : 0; break;
    case PriorType::ParameterScaleUniform: p = (q >= a && q <= b) ? 1 / (b - a) : 0; break;
    case PriorType::Normal: p = std::exp(-std::pow(x - a, 2) / (2 * b * b)) / (b * std::sqrt(2 * pi)); break;
    case PriorType::ParameterScaleNormal:
      p = std::exp(-std::pow(q - a, 2) / (2 * b * b)) / (b * std::sqrt(2 * pi));
      break;
    case PriorType::Laplace: p = std::exp(-std::abs(x - a) / b) / (2 * b); break;
    case PriorType::ParameterScaleLaplace: p = std::exp(-std::abs(q - a) / b) / (2 * b); break;
    case PriorType::LogNormal:
      p = std::exp(-std::pow(std::log(x) - a, 2) / (2 * b * b)) / (x * b * std::sqrt(2 * pi));
      break;
    case PriorType::LogLaplace: p = std::exp(-std::abs(std::log(x) - a) / b) / (2 * b * x); break;
    case PriorType::None: return 0;
  }
  return -std::log(p);
}

}  // namespace

class TestPetabReader : public QObject {
  Q_OBJECT

 private slots:
  // ---- TSV --------------------------------------------------------------------------------

  void tsvQuirks() {
    const std::string text =
        "\xEF\xBB\xBF"
        "id\tformula\tnote\r\n"              // BOM, CRLF
        "a\t\"x\ty\"\t\"say \"\"hi\"\"\"\r\n"  // tab and doubled quotes inside quotes
        "\r\n"                               // blank line
        "b\t\"two\nlines\"\t\t\t\r\n"        // line break inside quotes, trailing empty cells
        "c\n"                                // short row, LF only
        "  d  \t e \r";                      // white space trimmed, lone CR, no final LF
    const petab::Table t = petab::parseTable(text, "t.tsv", "test");
    QCOMPARE(t.header, (std::vector<std::string>{"id", "formula", "note"}));
    QCOMPARE(t.rows.size(), std::size_t(4));
    QCOMPARE(t.cell(0, "id"), std::string("a"));
    QCOMPARE(t.cell(0, "formula"), std::string("x\ty"));
    QCOMPARE(t.cell(0, "note"), std::string("say \"hi\""));
    QCOMPARE(t.cell(1, "formula"), std::string("two\nlines"));
    QCOMPARE(t.cell(1, "note"), std::string());
    QCOMPARE(t.cell(2, "id"), std::string("c"));
    QCOMPARE(t.cell(2, "formula"), std::string());
    QCOMPARE(t.cell(3, "id"), std::string("d"));
    QCOMPARE(t.cell(3, "formula"), std::string("e"));
    QCOMPARE(t.lines, (std::vector<int>{2, 4, 6, 7}));  // file lines, for error messages
  }

  void tsvErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("unclosed quote") << "id\tv\na\t\"open\n"
                                    << "t.tsv: test table, row 2: a quoted field is not closed";
    QTest::newRow("cell beyond header") << "id\tv\na\t1\t7\n"
                                        << "t.tsv: test table, row 2, column 3: value '7' beyond "
                                           "the 2 header columns";
    QTest::newRow("duplicate column") << "id\tv\tv\n"
                                      << "t.tsv: test table, row 1, column v: the column appears "
                                         "twice in the header";
    QTest::newRow("unnamed column") << "id\t\tv\n" << "t.tsv: test table, row 1: header column 2 has no name";
    QTest::newRow("empty") << "\n \n" << "t.tsv: the test table is empty";
  }
  void tsvErrors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    const std::string m = errorOf([&] { petab::parseTable(text.toStdString(), "t.tsv", "test"); });
    QCOMPARE(QString::fromStdString(m), message);
  }

  // ---- YAML and the whole problem ---------------------------------------------------------

  void decayProblemLoads() {
    const petab::Problem p = petab::loadProblem(kDecay / "problem.yaml");
    QCOMPARE(p.conditionFiles.size(), std::size_t(2));
    QCOMPARE(p.observableFiles.size(), std::size_t(2));
    QCOMPARE(p.measurementFiles.size(), std::size_t(2));
    QCOMPARE(p.measurementFiles[1].filename().string(), std::string("measurements laplace.tsv"));
    QCOMPARE(p.parameters.size(), std::size_t(5));
    QCOMPARE(p.parameters[0].name, std::string("decay rate, 1/h"));  // quoted, with a comma
    QCOMPARE(p.conditions.size(), std::size_t(2));
    QCOMPARE(p.conditions[0].id, std::string("condA"));  // behind the byte-order mark
    QCOMPARE(p.conditions[0].name, std::string("start at x0"));
    QCOMPARE(p.observables.size(), std::size_t(4));
    QCOMPARE(p.observables[0].formulaText, std::string("observableParameter1_obs_n *\tx + offset"));
    QCOMPARE(p.observables[1].distribution, petab::NoiseDistribution::Laplace);
    QCOMPARE(p.observables[2].transformation, petab::Transformation::Log10);
    QCOMPARE(p.measurements.size(), std::size_t(8));
    QCOMPARE(p.measurements[3].file, 1);
    QCOMPARE(p.measurements[3].row, 2);
    // Priors as read.
    QCOMPARE(p.parameters[0].prior, (petab::Prior{PriorType::Normal, 0.4, 0.2}));
    QCOMPARE(p.parameters[1].prior, (petab::Prior{PriorType::ParameterScaleLaplace, 0.3, 0.5}));
    QCOMPARE(p.parameters[2].prior.type, PriorType::None);
    QCOMPARE(p.parameters[3].prior, (petab::Prior{PriorType::LogNormal, -1.5, 0.4}));
  }

  // A fixed parameter is its nominal value on linear scale whatever its scale (PEtab v1:
  // "independent of parameterScale"): offset is log10 with nominal 0 and adds 0, not 10^0.
  void fixedLog10ParameterWithNominalZero() {
    const petab::Problem p = petab::loadProblem(kDecay / "problem.yaml");
    const auto& off = p.parameters[static_cast<std::size_t>(p.findParameter("offset"))];
    QVERIFY(!off.estimate);
    QCOMPARE(off.scale, Scale::Log10);
    QCOMPARE(off.nominalValue, 0.0);
    const auto r = petab::evaluateObjective(p, petab::nominalScaledParameters(p),
                                            petab::GradientMethod::None);
    SENSODE_EXPECT_CLOSE(r.simulated[0], 1.5 * std::exp(-0.5 * 0.5), 1e-9, 1e-8, "obs_n(0.5)", 0);
    SENSODE_EXPECT_CLOSE(r.simulated[5], 2 * std::exp(-0.5 * 2), 1e-9, 1e-8, "obs_l10(2)", 5);
  }

  void yamlErrors_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("message");
    const QString rest = "problems:\n  - condition_files: [conditions_a.tsv]\n"
                         "    measurement_files: [measurements_normal.tsv]\n"
                         "    observable_files: [observables_normal.tsv]\n"
                         "    sbml_files: [model.xml]\n";
    QTest::newRow("missing file")
        << "format_version: 1\nparameter_file: params.tsv\n" + rest
        << "problem.yaml: key 'parameter_file' names the file 'params.tsv', which does not exist in ";
    QTest::newRow("missing sbml")
        << "format_version: 1\nparameter_file: parameters.tsv\n" +
               QString(rest).replace("model.xml", "other.xml")
        << "problem.yaml: key 'problems/sbml_files' names the file 'other.xml', which does not exist in ";
    QTest::newRow("unknown key") << "format_version: 1\nparameter_file: parameters.tsv\n" +
                                        QString(rest).replace("sbml_files", "sbml_file")
                                 << "problem.yaml: key 'problems/sbml_file' (line 7, column 5) is "
                                    "not supported";
    QTest::newRow("bad yaml") << "format_version: 1\nparameter_file: [parameters.tsv\n"
                              << "problem.yaml: not valid YAML: line ";
    QTest::newRow("version 2") << "format_version: 2.0.0\nparameter_file: parameters.tsv\n" + rest
                               << "problem.yaml: format_version '2.0.0' is not supported";
    QTest::newRow("no measurements")
        << "format_version: 1\nparameter_file: parameters.tsv\n" +
               QString(rest).replace("[measurements_normal.tsv]", "[]")
        << "problem.yaml: key 'problems/measurement_files' names no file";
  }
  void yamlErrors() {
    QFETCH(QString, yaml);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path dir = tmp.path().toStdString();
    for (const auto& e : std::filesystem::directory_iterator(kDecay))
      std::filesystem::copy_file(e.path(), dir / e.path().filename());
    std::filesystem::remove(dir / "problem.yaml");
    write(dir / "problem.yaml", yaml.toStdString());
    const std::string m = errorOf([&] { petab::loadProblem(dir / "problem.yaml"); });
    QVERIFY2(m.rfind(message.toStdString(), 0) == 0, m.c_str());
  }

  void priorTableErrors_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("params");
    QTest::addColumn<QString>("message");
    const QString where = "parameters.tsv: parameters table, row 2, column ";
    QTest::newRow("type") << "gamma" << "1;2" << where + "objectivePriorType: 'gamma' is not one of";
    QTest::newRow("count") << "normal" << "1" << where + "objectivePriorParameters: '1': a normal prior takes two";
    QTest::newRow("sigma") << "normal" << "1;0" << where + "objectivePriorParameters: '1;0': the standard deviation";
    QTest::newRow("uniform") << "uniform" << "2;1" << where + "objectivePriorParameters: '2;1': a uniform prior needs";
    QTest::newRow("no type") << "" << "1;2" << where + "objectivePriorParameters: parameters '1;2' without";
  }
  void priorTableErrors() {
    QFETCH(QString, type);
    QFETCH(QString, params);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path dir = tmp.path().toStdString();
    for (const auto& e : std::filesystem::directory_iterator(kDecay))
      std::filesystem::copy_file(e.path(), dir / e.path().filename());
    std::filesystem::remove(dir / "parameters.tsv");
    write(dir / "parameters.tsv",
          "parameterId\tparameterScale\tlowerBound\tupperBound\tnominalValue\testimate\t"
          "objectivePriorType\tobjectivePriorParameters\n"
          "k\tlog10\t0.01\t10\t0.5\t1\t" + type.toStdString() + "\t" + params.toStdString() + "\n"
          "x0\tlog\t0.1\t10\t1.5\t1\n"
          "sd_n\tlin\t0.01\t1\t0.1\t1\n"
          "b_l\tlog\t0.01\t1\t0.2\t1\n"
          "offset\tlog10\t\t\t0\t0\n");
    const std::string m = errorOf([&] { petab::loadProblem(dir / "problem.yaml"); });
    QVERIFY2(m.rfind(message.toStdString(), 0) == 0, m.c_str());
  }

  // ---- Priors -----------------------------------------------------------------------------

  // Each type on each scale: −log p against the density written out above, and d/dq against
  // central differences of that density (step 1e-6; error O(h²) ≈ 1e-12 relative).
  void priorValueAndGradient_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<double>("a");
    QTest::addColumn<double>("b");
    struct Case {
      const char* name;
      PriorType type;
      double a, b;
    };
    for (const Case& c : {Case{"uniform", PriorType::Uniform, 0.5, 3},
                          Case{"normal", PriorType::Normal, 1.2, 0.7},
                          Case{"laplace", PriorType::Laplace, 0.8, 0.4},
                          Case{"logNormal", PriorType::LogNormal, 0.1, 0.6},
                          Case{"logLaplace", PriorType::LogLaplace, -0.2, 0.3},
                          Case{"parameterScaleUniform", PriorType::ParameterScaleUniform, -1, 1},
                          Case{"parameterScaleNormal", PriorType::ParameterScaleNormal, 0.3, 0.5},
                          Case{"parameterScaleLaplace", PriorType::ParameterScaleLaplace, -0.4, 0.2}})
      QTest::newRow(c.name) << static_cast<int>(c.type) << c.a << c.b;
  }
  void priorValueAndGradient() {
    QFETCH(int, type);
    QFETCH(double, a);
    QFETCH(double, b);
    const auto t = static_cast<PriorType>(type);
    QCOMPARE(petab::priorTypeFromString(petab::toString(t)), std::optional<PriorType>(t));
    const petab::Prior prior{t, a, b};
    QVERIFY(!petab::validatePrior(prior));
    long index = 0;
    for (Scale scale : {Scale::Lin, Scale::Log, Scale::Log10}) {
      // Linear values inside every support used (uniform [0.5, 3]), away from Laplace kinks.
      for (double x : {0.7, 1.3, 2.6}) {
        const double q = petab::toScale(scale, x);
        const petab::PriorValue v = petab::evaluatePrior(prior, scale, q);
        const double expected = priorByDensity(t, a, b, scale, q);
        if (std::isinf(expected)) {  // outside a uniform prior's support
          QVERIFY(std::isinf(v.value) && v.value > 0);
          ++index;
          continue;
        }
        SENSODE_EXPECT_CLOSE(v.value, expected, 1e-13, 1e-12, "value", index);
        const double h = 1e-6;
        const double fd = (priorByDensity(t, a, b, scale, q + h) -
                           priorByDensity(t, a, b, scale, q - h)) / (2 * h);
        SENSODE_EXPECT_CLOSE(v.derivative, fd, 1e-8, 1e-7, "derivative", index);
        ++index;
      }
    }
  }

  void priorOutsideSupport() {
    const auto v = petab::evaluatePrior({PriorType::Uniform, 1, 2}, Scale::Log10, 0.5);  // x = 3.16
    QVERIFY(std::isinf(v.value) && v.value > 0);
    QVERIFY(petab::validatePrior({PriorType::Laplace, 0, -1}).has_value());
  }

  // ---- The objective against the closed form ------------------------------------------------

  // Objective (likelihood with normal and Laplace noise on lin/log/log10, and the priors) at the
  // nominal parameters and at a second point, and its gradient by every method against central
  // differences of the closed form (step 1e-5: truncation ≈ 1e-10·|f'''|, far below the 1e-6
  // relative tolerance that the ODE tolerances 1e-10/1e-12 allow).
  void objectiveMatchesClosedForm_data() {
    QTest::addColumn<int>("method");
    QTest::newRow("forward") << static_cast<int>(petab::GradientMethod::Forward);
    QTest::newRow("adjoint") << static_cast<int>(petab::GradientMethod::Adjoint);
    QTest::newRow("ssasa") << static_cast<int>(petab::GradientMethod::Ssasa);
    QTest::newRow("fd") << static_cast<int>(petab::GradientMethod::FiniteDifferences);
  }
  void objectiveMatchesClosedForm() {
    QFETCH(int, method);
    const petab::Problem p = petab::loadProblem(kDecay / "problem.yaml");
    const std::vector<double> nominal = petab::nominalScaledParameters(p);
    for (const std::vector<double>& q : {nominal, std::vector<double>{-0.1, 0.2, 0.15, -1.2}}) {
      const auto r = petab::evaluateObjective(p, q, static_cast<petab::GradientMethod>(method));
      double prior = 0;
      const double expected = decayObjective(q, &prior);
      SENSODE_EXPECT_CLOSE(r.objective, expected, 1e-8, 1e-8, "objective", 0);
      SENSODE_EXPECT_CLOSE(r.priorTerm, prior, 1e-12, 1e-12, "prior term", 0);
      QCOMPARE(r.gradient.size(), q.size());
      for (std::size_t i = 0; i < q.size(); ++i) {
        auto qp = q, qm = q;
        const double h = 1e-5;
        qp[i] += h;
        qm[i] -= h;
        const double fd = (decayObjective(qp) - decayObjective(qm)) / (2 * h);
        const double rtol = method == static_cast<int>(petab::GradientMethod::FiniteDifferences) ? 1e-5 : 1e-6;
        SENSODE_EXPECT_CLOSE(r.gradient[i], fd, 1e-7, rtol, "gradient", static_cast<long>(i));
      }
    }
  }

  // An objective error names the measurement file too (there are two here).
  void objectiveErrorNamesFileAndRow() {
    const petab::Problem p = petab::loadProblem(kDecay / "problem.yaml");
    std::vector<double> q = petab::nominalScaledParameters(p);
    q[3] = -INFINITY;  // b_l = 0: the Laplace rows have no noise; condA (first) has row 6
    try {
      petab::evaluateObjective(p, q, petab::GradientMethod::None);
      QFAIL("zero noise accepted");
    } catch (const sensode::Error& e) {
      const std::string m = e.what();
      QVERIFY2(m.rfind("measurements laplace.tsv: measurement row 6 (observable 'obs_lin'): noise 0 "
                       "is not a positive number", 0) == 0,
               m.c_str());
    }
  }

  // A species the simulation condition sets after pre-equilibration starts from that value; a
  // NaN cell keeps the pre-equilibrated value (PEtab v1). Objective and every gradient method
  // against the closed form (the reset value b1 is estimated, so its derivative flows through
  // the reinitialization, a0 only through the pre-equilibration).
  void preEquilibrationThenReset_data() { objectiveMatchesClosedForm_data(); }
  void preEquilibrationThenReset() {
    QFETCH(int, method);
    const petab::Problem p = petab::loadProblem(kReset / "problem.yaml");
    const std::vector<double> q = petab::nominalScaledParameters(p);
    const auto r = petab::evaluateObjective(p, q, static_cast<petab::GradientMethod>(method));
    SENSODE_EXPECT_CLOSE(r.objective, resetObjective(q), 1e-7, 1e-8, "objective", 0);
    SENSODE_EXPECT_CLOSE(r.simulated[0], 1.2 * 0.3 / (0.8 + 0.3), 1e-9, 1e-8, "A(0) = A*", 0);
    for (std::size_t i = 0; i < q.size(); ++i) {
      auto qp = q, qm = q;
      const double h = 1e-5;
      qp[i] += h;
      qm[i] -= h;
      const double fd = (resetObjective(qp) - resetObjective(qm)) / (2 * h);
      const double rtol = method == static_cast<int>(petab::GradientMethod::FiniteDifferences) ? 1e-5 : 1e-6;
      SENSODE_EXPECT_CLOSE(r.gradient[i], fd, 1e-6, rtol, "gradient", static_cast<long>(i));
    }
  }

  // The CLI reports the objective with and without the priors, in text and JSON, and writes the
  // simulation table; --method none evaluates the objective only.
  void cliReportsPriorTerm() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString stats = tmp.filePath("stats.json"), sims = tmp.filePath("sim.tsv");
    QProcess cli;
    cli.start(SENSODE_CLI_PATH, {"gradient", QString::fromStdString((kDecay / "problem.yaml").string()),
                                 "--method", "none", "--stats", stats, "--simulations", sims});
    QVERIFY(cli.waitForFinished(60000));
    const QString out = QString::fromUtf8(cli.readAllStandardOutput());
    QVERIFY2(cli.exitCode() == 0, qPrintable(out + cli.readAllStandardError()));
    QVERIFY2(out.contains("objective without priors") && out.contains("prior term"), qPrintable(out));
    QFile json(stats);
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(json.readAll()).object();
    double prior = 0;
    const double expected = decayObjective(petab::nominalScaledParameters(
                                               petab::loadProblem(kDecay / "problem.yaml")),
                                           &prior);
    SENSODE_EXPECT_CLOSE(o["objective"].toDouble(), expected, 1e-8, 1e-8, "objective", 0);
    SENSODE_EXPECT_CLOSE(o["prior_term"].toDouble(), prior, 1e-12, 1e-12, "prior_term", 0);
    SENSODE_EXPECT_CLOSE(o["objective_without_priors"].toDouble(), expected - prior, 1e-8, 1e-8,
                         "objective_without_priors", 0);
    QFile table(sims);
    QVERIFY(table.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(table.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 9);  // header + 8 measurements
    QVERIFY(lines[0].startsWith("observableId\tpreequilibrationConditionId\tsimulationConditionId\tsimulation"));
    const QStringList first = lines[1].split('\t');
    SENSODE_EXPECT_CLOSE(first[3].toDouble(), 1.5 * std::exp(-0.25), 1e-9, 1e-8, "simulation", 1);
  }
};

QTEST_GUILESS_MAIN(TestPetabReader)
#include "tst_petab_reader.moc"
