// SPDX-License-Identifier: MIT
// Saving an edited model (core/model/sbml_writer.h): every free value of a model (global and
// local parameters, species initial amounts and concentrations, compartment sizes) edited, the
// model saved, the saved file reloaded: the same time course to 1e-12 relative with the same
// solver settings (the independent reference is the original file run with the edits as
// overrides). The saved file validates with libSBML. A value an initial assignment sets: the
// assignment is replaced and the reload follows the analytic solution with the saved value.
// Bad ids and unwritable paths give one-line errors naming the file.
#include <QtTest/QtTest>

#include <sbml/SBMLTypes.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/model/sbml_writer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"
#include "support/numeric_compare.h"

namespace {

namespace fs = std::filesystem;
using sensode::model::ValueEdits;

fs::path shared(const std::string& relative) { return fs::path(SENSODE_SHARED_DIR) / relative; }

std::shared_ptr<const sensode::symbolic::CompiledModel> compile(const fs::path& file) {
  return std::make_shared<const sensode::symbolic::CompiledModel>(
      sensode::symbolic::buildOdeSystem(sensode::model::importSbmlFile(file)));
}

sensode::tasks::TimeCourseResult simulate(const fs::path& file, const ValueEdits& edits) {
  sensode::tasks::TimeCourseProblem problem;
  problem.model = compile(file);
  for (int i = 0; i <= 50; ++i) problem.times.push_back(0.2 * i);
  problem.overrides = edits;
  sensode::tasks::TimeCourseOptions options;
  options.method = sensode::integrators::Method::Cvodes;
  options.integrator.rtol = 1e-8;
  options.integrator.atol = 1e-14;
  auto r = sensode::tasks::runTimeCourse(problem, options);
  if (r.termination != sensode::tasks::Termination::Success)
    throw sensode::Error(file.string() + ": " + r.message);
  return r;
}

// libSBML's errors (units and modeling practice off, as the importer has them) of a file.
unsigned int validationErrors(const fs::path& file, std::string* first) {
  std::unique_ptr<SBMLDocument> doc(readSBMLFromFile(file.c_str()));
  doc->setConsistencyChecks(LIBSBML_CAT_UNITS_CONSISTENCY, false);
  doc->setConsistencyChecks(LIBSBML_CAT_MODELING_PRACTICE, false);
  doc->checkConsistency();
  unsigned int n = 0;
  for (unsigned int i = 0; i < doc->getNumErrors(); ++i)
    if (doc->getError(i)->getSeverity() >= LIBSBML_SEV_ERROR) {
      if (n++ == 0 && first) *first = doc->getError(i)->getMessage();
    }
  return n;
}

std::string readText(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}


}  // namespace

class TestSbmlWriter : public QObject {
  Q_OBJECT

 private slots:
  void init() { QVERIFY(dir_.isValid()); }

  void editedValuesReloadToTheSameTimeCourse_data() {
    QTest::addColumn<QString>("file");
    // L2V4 BioModel: local kinetic-law parameters, initialConcentration and initialAmount
    // species, three compartments, annotations and notes.
    QTest::newRow("BIOMD0000000016 L2") << "biomodels/BIOMD0000000016.xml";
    // L3V2: global parameters, amount species, a compartment.
    QTest::newRow("suite 00001 L3") << "sbml-test-suite/cases/00001/00001-sbml-l3v2.xml";
    // L3V1 with local parameters.
    QTest::newRow("suite 00059 L3V1 locals") << "sbml-test-suite/cases/00059/00059-sbml-l3v1.xml";
    // L2V5.
    QTest::newRow("suite 00068 L2V5") << "sbml-test-suite/cases/00068/00068-sbml-l2v5.xml";
  }
  void editedValuesReloadToTheSameTimeCourse() {
    QFETCH(QString, file);
    const fs::path source = shared(file.toStdString());
    // Every free value of the model, 10 % up (0 becomes 0.1): each kind the browser edits.
    const auto model = compile(source);
    ValueEdits edits;
    std::set<sensode::symbolic::ParamKind> kinds;
    for (const auto& p : model->system().params) {
      edits.emplace_back(p.id, p.nominal == 0 ? 0.1 : p.nominal * 1.1);
      kinds.insert(p.kind);
    }
    QVERIFY2(kinds.size() >= 2, "the model should have several kinds of values");
    const fs::path saved = fs::path(dir_.path().toStdString()) / "saved.xml";
    const std::vector<std::string> warnings =
        sensode::model::writeSbmlWithValues(source, edits, saved);
    QVERIFY2(warnings.empty(), warnings.empty() ? "" : warnings.front().c_str());

    std::string firstError;
    QVERIFY2(validationErrors(saved, &firstError) == 0, firstError.c_str());

    const auto expected = simulate(source, edits);
    const auto actual = simulate(saved, {});
    QCOMPARE(actual.columns, expected.columns);
    QCOMPARE(actual.values.size(), expected.values.size());
    for (std::size_t i = 0; i < expected.values.size(); ++i)
      SENSODE_EXPECT_CLOSE(actual.values[i], expected.values[i], 1e-300, 1e-12,
                           expected.columns[i % expected.columns.size()], long(i));

    // The saved file's nominal values are the edits.
    const auto reloaded = compile(saved);
    for (const auto& [id, value] : edits) {
      const int k = reloaded->system().findParam(id);
      QVERIFY2(k >= 0, id.c_str());
      SENSODE_EXPECT_CLOSE(reloaded->system().params[std::size_t(k)].nominal, value, 0, 1e-15,
                           id, k);
    }
    // Annotations and notes survive.
    const std::string original = readText(source), written = readText(saved);
    QCOMPARE(written.find("<annotation") != std::string::npos,
             original.find("<annotation") != std::string::npos);
    QCOMPARE(written.find("<notes") != std::string::npos,
             original.find("<notes") != std::string::npos);
  }

  void initialAssignmentIsReplacedByTheSavedValue() {
    // dS/dt = -k·S with k set by an initial assignment k = 2·k0: S(t) = S0·exp(-k·t).
    const fs::path source = fs::path(SENSODE_TEST_DATA_DIR) / "models" / "assigned_rate.xml";
    const fs::path saved = fs::path(dir_.path().toStdString()) / "assigned_saved.xml";
    const auto warnings = sensode::model::writeSbmlWithValues(source, {{"k", 0.7}}, saved);
    QCOMPARE(warnings.size(), std::size_t(1));
    QVERIFY2(warnings[0].find("initial assignment of 'k'") != std::string::npos, warnings[0].c_str());
    std::string firstError;
    QVERIFY2(validationErrors(saved, &firstError) == 0, firstError.c_str());
    QVERIFY(readText(saved).find("kept through the save") != std::string::npos);

    const auto r = simulate(saved, {});
    const std::size_t s = std::size_t(std::find(r.columns.begin(), r.columns.end(), "S") -
                                      r.columns.begin());
    QVERIFY(s < r.columns.size());
    for (std::size_t i = 0; i < r.times.size(); ++i)
      SENSODE_EXPECT_CLOSE(r.at(i, s), 2 * std::exp(-0.7 * r.times[i]), 1e-12, 1e-6, "S", long(i));
  }

  void speciesKeepTheAttributeTheFileUses() {
    // M is given by initialConcentration, EmptySet by initialAmount (BIOMD0000000016).
    const fs::path source = shared("biomodels/BIOMD0000000016.xml");
    const fs::path saved = fs::path(dir_.path().toStdString()) / "species.xml";
    sensode::model::writeSbmlWithValues(source, {{"M", 0.3}, {"EmptySet", 2.5}}, saved);
    const sensode::model::Model m = sensode::model::importSbmlFile(saved);
    for (const auto& sp : m.species) {
      if (sp.id == "M") {
        SENSODE_EXPECT_CLOSE(sp.initialConcentration, 0.3, 0, 0, "M", 0);
        QVERIFY(std::isnan(sp.initialAmount));
      }
      if (sp.id == "EmptySet") {
        SENSODE_EXPECT_CLOSE(sp.initialAmount, 2.5, 0, 0, "EmptySet", 0);
        QVERIFY(std::isnan(sp.initialConcentration));
      }
    }
  }

  void compModelsAreSavedFlattened() {
    const fs::path source = shared("sbml-test-suite/cases/01124/01124-sbml-l3v2.xml");
    const auto model = compile(source);
    QVERIFY(!model->system().params.empty());
    const auto& p = model->system().params.front();
    const fs::path saved = fs::path(dir_.path().toStdString()) / "flat.xml";
    const auto warnings = sensode::model::writeSbmlWithValues(source, {{p.id, 1.5}}, saved);
    QCOMPARE(warnings.size(), std::size_t(1));
    QVERIFY2(warnings[0].find("flattened") != std::string::npos, warnings[0].c_str());
    QVERIFY(readText(saved).find("comp:submodel") == std::string::npos);
    const auto expected = simulate(source, {{p.id, 1.5}});
    const auto actual = simulate(saved, {});
    QCOMPARE(actual.columns, expected.columns);
    for (std::size_t i = 0; i < expected.values.size(); ++i)
      SENSODE_EXPECT_CLOSE(actual.values[i], expected.values[i], 1e-300, 1e-12,
                           expected.columns[i % expected.columns.size()], long(i));
  }

  void badInputGivesOneLineErrors() {
    const fs::path source = shared("sbml-test-suite/cases/00001/00001-sbml-l3v2.xml");
    const fs::path saved = fs::path(dir_.path().toStdString()) / "x.xml";
    try {
      sensode::model::writeSbmlWithValues(source, {{"nope", 1}}, saved);
      QFAIL("an unknown id was accepted");
    } catch (const sensode::SbmlError& e) {
      QCOMPARE(e.element(), std::string("nope"));
      QVERIFY2(std::string(e.what()).find(source.string()) == 0, e.what());
    }
    const fs::path unwritable = fs::path(dir_.path().toStdString()) / "no" / "such" / "dir.xml";
    try {
      sensode::model::writeSbmlWithValues(source, {{"k1", 1}}, unwritable);
      QFAIL("an unwritable path was accepted");
    } catch (const sensode::Error& e) {
      QVERIFY2(std::string(e.what()).rfind(unwritable.string() + ": cannot write", 0) == 0,
               e.what());
      QVERIFY(std::string(e.what()).find('\n') == std::string::npos);
    }
    QVERIFY(!fs::exists(saved));
  }

 private:
  QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestSbmlWriter)
#include "tst_sbml_writer.moc"
