// SPDX-License-Identifier: MIT
// PEtab v1 reader: the formula parser (precedence, functions, errors with position), every
// problem in the shared PEtab collection (each yaml loads, except Zhao's petab_test yaml, which
// names an SBML file the collection does not ship; the refusal names the file and the reason),
// and the contents read from Blasi, Zheng and Liu (whose condition table overrides u_2, a
// parameter the SBML sets by an initial assignment).
// The reader's details on small fixtures: tst_petab_reader.
#include <QtCore/QDir>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/petab/petab_problem.h"
#include "support/numeric_compare.h"

using sensode::petab::PetabError;
using sensode::petab::Problem;
using sensode::symbolic::Expr;
using sensode::symbolic::ExprPool;

namespace {

const std::filesystem::path kPetab = SENSODE_SHARED_DIR "/petab";

double evalFormula(const std::string& text, const std::map<std::string, double>& values) {
  ExprPool pool;
  const Expr e = sensode::petab::parseFormula(
      text, pool, [&](const std::string& id) { return pool.symbol(id); }, "test");
  std::vector<double> v(pool.numSymbols(), 0.0);
  for (const auto& [id, x] : values) {
    Expr s;
    if (pool.findSymbol(id, s)) v[pool.node(s).symbol] = x;
  }
  return pool.evaluate(e, v);
}

}  // namespace

class TestPetab : public QObject {
  Q_OBJECT

 private slots:
  void formulaParser_data() {
    QTest::addColumn<QString>("formula");
    QTest::addColumn<double>("expected");
    const double x = 2, y = 3;
    QTest::newRow("precedence") << "1 + 2*x^2 - y/3" << 1 + 2 * x * x - y / 3;
    QTest::newRow("unary minus") << "-x^2" << -(x * x);
    QTest::newRow("right assoc power") << "2^3^2" << std::pow(2.0, 9.0);
    QTest::newRow("star star") << "x**3" << 8.0;
    QTest::newRow("functions") << "exp(x) + log(y) + ln(x) + log10(100) + sqrt(16) + abs(-y)"
                               << std::exp(x) + std::log(y) + std::log(x) + 2 + 4 + y;
    QTest::newRow("log base") << "log(8, 2)" << 3.0;
    QTest::newRow("scientific") << "1e-3 * x + .5E1" << 1e-3 * x + 5;
    QTest::newRow("parentheses") << "(x + y) * (x - y)" << (x + y) * (x - y);
  }
  void formulaParser() {
    QFETCH(QString, formula);
    QFETCH(double, expected);
    SENSODE_EXPECT_CLOSE(evalFormula(formula.toStdString(), {{"x", 2}, {"y", 3}}), expected, 0,
                         1e-14, formula.toStdString().c_str(), 0);
  }

  void formulaErrors() {
    for (const char* bad : {"x +", "foo(x)", "(x", "x $ y", "log(1,2,3)"}) {
      try {
        evalFormula(bad, {});
        QFAIL(bad);
      } catch (const PetabError& e) {
        const std::string m = e.what();
        QVERIFY2(m.find("test: cannot parse formula") == 0 && m.find("position") != std::string::npos,
                 m.c_str());
      }
    }
  }

  // Every problem file of the collection loads, except the two refused for a stated reason.
  void collection_data() {
    QTest::addColumn<QString>("yaml");
    for (const auto& dir : std::filesystem::directory_iterator(kPetab)) {
      if (!dir.is_directory()) continue;
      for (const auto& f : std::filesystem::directory_iterator(dir.path()))
        if (f.path().extension() == ".yaml")
          QTest::newRow((dir.path().filename().string() + "/" + f.path().filename().string()).c_str())
              << QString::fromStdString(f.path().string());
    }
  }
  void collection() {
    QFETCH(QString, yaml);
    const std::filesystem::path file = yaml.toStdString();
    const std::string n = file.parent_path().filename().string() + "/" + file.filename().string();
    try {
      const Problem p = sensode::petab::loadProblem(file);
      QVERIFY(p.model);
      QVERIFY(!p.measurements.empty());
      qInfo("%s: loaded: %zu parameters, %zu conditions, %zu observables, %zu measurements, "
            "%d states", n.c_str(), p.parameters.size(), p.conditions.size(),
            p.observables.size(), p.measurements.size(), p.model->nx());
      QVERIFY2(n.find("petab_test_") == std::string::npos, n.c_str());
    } catch (const sensode::Error& e) {
      const std::string m = e.what();
      qInfo("%s: refused: %s", n.c_str(), m.c_str());
      if (n.find("petab_test_Zhao") != std::string::npos) {
        QVERIFY2(m.find("petab_test_Zhao_QuantBiol2020.yaml: key 'problems/sbml_files' names the "
                        "file 'SBML_Zhao_QuantBiol2020.xml', which does not exist") == 0,
                 m.c_str());
      } else {
        QFAIL(m.c_str());
      }
    }
  }

  void blasi() {
    const Problem p =
        sensode::petab::loadProblem(kPetab / "Blasi_CellSystems2016" / "Blasi_CellSystems2016.yaml");
    QCOMPARE(p.parameters.size(), std::size_t(10));
    QCOMPARE(p.observables.size(), std::size_t(16));
    QCOMPARE(p.measurements.size(), std::size_t(252));
    for (const auto& m : p.measurements) {
      QVERIFY(std::isinf(m.time));  // all steady-state data
      QCOMPARE(m.preequilibrationCondition, -1);
      QCOMPARE(m.noiseParameters.size(), std::size_t(1));
    }
    QCOMPARE(p.observables[0].transformation, sensode::petab::Transformation::Log);
    QCOMPARE(p.observables[0].numNoiseParameters, 1);
    const auto& a = p.parameters[static_cast<std::size_t>(p.findParameter("a_basal"))];
    QCOMPARE(a.scale, sensode::petab::Scale::Log10);
    QVERIFY(a.estimate);
    SENSODE_EXPECT_CLOSE(a.nominalValue, 0.066799999926855, 0, 1e-15, "a_basal", 0);
    SENSODE_EXPECT_CLOSE(a.lowerBound, 1e-12, 0, 1e-15, "a_basal lower", 0);
  }

  void zheng() {
    const Problem p = sensode::petab::loadProblem(kPetab / "Zheng_PNAS2012" / "Zheng_PNAS2012.yaml");
    QCOMPARE(p.conditions.size(), std::size_t(2));
    const int pre = p.findCondition("preequilibration"), sim = p.findCondition("simCondition");
    QVERIFY(pre >= 0 && sim >= 0);
    QCOMPARE(p.conditions[static_cast<std::size_t>(pre)].overrides.size(), std::size_t(1));
    SENSODE_EXPECT_CLOSE(p.conditions[static_cast<std::size_t>(pre)].overrides[0].second.number,
                         1.0, 0, 0, "dilution", 0);
    for (const auto& m : p.measurements) {
      QCOMPARE(m.preequilibrationCondition, pre);
      QCOMPARE(m.simulationCondition, sim);
      QVERIFY(std::isfinite(m.time));
    }
    QCOMPARE(p.observables.size(), std::size_t(15));
  }

  // u_2 has an initial assignment (1e9) and the condition table sets it (1e9 in vvDD, 0 in
  // ctrl): it became a model parameter, and V(0) = u_2 follows it.
  void liu() {
    const Problem p = sensode::petab::loadProblem(kPetab / "Liu_IFACPapersOnLine2025" /
                                                  "Liu_IFACPapersOnLine2025.yaml");
    const auto& sys = p.model->system();
    const int u2 = sys.findParam("u_2");
    QVERIFY(u2 >= 0);
    SENSODE_EXPECT_CLOSE(sys.params[static_cast<std::size_t>(u2)].nominal, 1e9, 0, 0, "u_2", 0);
    const int ctrl = p.findCondition("ctrl");
    QVERIFY(ctrl >= 0);
    const auto& o = p.conditions[static_cast<std::size_t>(ctrl)].overrides;
    QCOMPARE(o.size(), std::size_t(1));
    QCOMPARE(o[0].first, u2);
    SENSODE_EXPECT_CLOSE(o[0].second.number, 0.0, 0, 0, "u_2 in ctrl", 0);
    QCOMPARE(sys.events.size(), std::size_t(1));
  }

  // A refused feature names file, table, row and column.
  void refusalNamesTableRowColumn() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path dir = tmp.path().toStdString();
    const auto src = kPetab / "Zheng_PNAS2012";
    for (const auto& e : std::filesystem::directory_iterator(src))
      if (e.is_regular_file()) std::filesystem::copy_file(e.path(), dir / e.path().filename());
    {
      std::ifstream in(dir / "observables_Zheng_PNAS2012.tsv");
      std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto pos = all.find("\tnormal");
      QVERIFY(pos != std::string::npos);
      all.replace(pos, 7, "\tcauchy");
      std::ofstream out(dir / "observables_Zheng_PNAS2012.tsv");
      out << all;
    }
    try {
      sensode::petab::loadProblem(dir / "Zheng_PNAS2012.yaml");
      QFAIL("cauchy accepted");
    } catch (const PetabError& e) {
      const std::string m = e.what();
      QVERIFY2(m.find("observables_Zheng_PNAS2012.tsv: observables table, row 2, column "
                      "noiseDistribution: 'cauchy' is not one of normal, laplace") == 0,
               m.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestPetab)
#include "tst_petab.moc"
