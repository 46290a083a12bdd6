// SPDX-License-Identifier: MIT
// Broken and unsupported SBML files (tests/data/bad_sbml): each must be refused with an
// SbmlError whose message names the file, the element (where there is one) and the reason;
// unsupported constructs with an UnsupportedFeature naming the feature.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/model/xml_nesting.h"

class TestBadInput : public QObject {
  Q_OBJECT

 private slots:
  void refusedWithMessage_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("element");  // empty: the error names no element
    QTest::addColumn<QString>("reason");   // a substring of the reason
    QTest::addColumn<QString>("feature");  // empty: a plain SbmlError, not UnsupportedFeature

    auto row = [](const char* file, const char* element, const char* reason,
                  const char* feature = "") {
      QTest::newRow(file) << file << element << reason << feature;
    };
    row("truncated.xml", "", "line 11: Badly formed XML");
    row("not_sbml.xml", "", "not an SBML document");
    row("empty.xml", "", "empty file");
    row("does_not_exist.xml", "", "cannot open file");
    row("missing_species.xml", "R1", "references species 'X', which is undefined");
    row("undefined_symbol_kinetic_law.xml", "R1", "undefined symbol 'k_missing' in math");
    row("undefined_symbol_rule.xml", "p1", "undefined symbol 'q_missing' in math");
    row("undefined_function.xml", "p2", "call of undefined function 'hill'");
    row("nonfinite_initial_value.xml", "S1", "non-finite initial value");
    row("rateof_expression.xml", "p3", "rateOf");
    row("missing_external_model.xml", "ext1", "no_such_file.xml");
    row("delay_one_argument.xml", "p2", "Incorrect number of arguments");
    row("required_package.xml", "", "unsupported SBML feature: package distrib",
        "package distrib");
    row("fbc_objective.xml", "obj1", "unsupported SBML feature: fbc", "fbc");
  }

  void refusedWithMessage() {
    QFETCH(QString, file);
    QFETCH(QString, element);
    QFETCH(QString, reason);
    QFETCH(QString, feature);
    const std::filesystem::path path =
        std::filesystem::path(SENSODE_TEST_DATA_DIR) / "bad_sbml" / file.toStdString();
    try {
      sensode::model::importSbmlFile(path);
      QFAIL("the file was imported");
    } catch (const sensode::SbmlError& e) {
      const QString what = QString::fromStdString(e.what());
      QVERIFY2(!what.contains('\n'), qPrintable("not one line: " + what));
      QVERIFY2(what.startsWith(QString::fromStdString(path.string()) + ":"),
               qPrintable("no file name: " + what));
      QCOMPARE(QString::fromStdString(e.element()), element);
      if (!element.isEmpty()) {
        QVERIFY2(what.contains("element '" + element + "'"), qPrintable(what));
      }
      QVERIFY2(QString::fromStdString(e.reason()).contains(reason), qPrintable(what));
      const auto* unsupported = dynamic_cast<const sensode::UnsupportedFeature*>(&e);
      if (feature.isEmpty()) {
        QVERIFY2(unsupported == nullptr, qPrintable("reported as unsupported: " + what));
      } else {
        QVERIFY2(unsupported != nullptr, qPrintable("not an UnsupportedFeature: " + what));
        QCOMPARE(QString::fromStdString(unsupported->feature()), feature);
      }
    }
  }

  // Large models skip libSBML's general and MathML consistency checks (superlinear in model
  // size); the importer's own linear checks must still refuse the same broken input with the
  // element and reason. 1200 species + reactions is above the limit.
  void largeModelStillRefused_data() {
    QTest::addColumn<QString>("breakage");
    QTest::addColumn<QString>("element");
    QTest::addColumn<QString>("reason");
    QTest::newRow("reactant") << "reactant" << "R300" << "references species 'X', which is undefined";
    QTest::newRow("modifier") << "modifier" << "R300" << "references species 'Y', which is undefined";
    QTest::newRow("symbol") << "symbol" << "R300" << "undefined symbol 'k_missing' in math";
    QTest::newRow("function") << "function" << "R300" << "call of undefined function 'hill'";
    QTest::newRow("rateOf") << "rateOf" << "q" << "rateOf";
    QTest::newRow("none") << "none" << "" << "";
  }

  void largeModelStillRefused() {
    QFETCH(QString, breakage);
    QFETCH(QString, element);
    QFETCH(QString, reason);
    const std::string b = breakage.toStdString();
    const int n = 600;
    // (the namespace URI is split so that no string literal holds two slashes: moc chokes on it)
    std::string xml = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sbml xmlns=\"http:/") +
                      "/www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\">\n"
                      "<model id=\"big\"><listOfCompartments><compartment id=\"c\" "
                      "spatialDimensions=\"3\" size=\"1\" constant=\"true\"/></listOfCompartments>"
                      "<listOfSpecies>";
    for (int i = 0; i <= n; ++i)
      xml += "<species id=\"S" + std::to_string(i) + "\" compartment=\"c\" initialConcentration=\"1\" "
             "hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" constant=\"false\"/>";
    xml += "</listOfSpecies><listOfParameters><parameter id=\"k\" value=\"0.5\" constant=\"true\"/>"
           "<parameter id=\"q\" value=\"0\" constant=\"false\"/></listOfParameters>";
    const std::string mathml = std::string("<math xmlns=\"http:/") + "/www.w3.org/1998/Math/MathML\">";
    if (b == "rateOf")
      xml += "<listOfRules><assignmentRule variable=\"q\">" + mathml + "<apply><csymbol encoding=\"text\" "
             "definitionURL=\"http:/" "/www.sbml.org/sbml/symbols/rateOf\">rateOf</csymbol><apply><plus/>"
             "<ci>S1</ci><ci>S2</ci></apply></apply></math></assignmentRule></listOfRules>";
    xml += "<listOfReactions>";
    for (int i = 0; i < n; ++i) {
      const bool broken = i == 300;
      const std::string from = broken && b == "reactant" ? "X" : "S" + std::to_string(i);
      std::string law = "<apply><times/><ci>k</ci><ci>" + from + "</ci></apply>";
      if (broken && b == "symbol") law = "<apply><times/><ci>k_missing</ci><ci>" + from + "</ci></apply>";
      if (broken && b == "function") law = "<apply><ci>hill</ci><ci>" + from + "</ci></apply>";
      xml += "<reaction id=\"R" + std::to_string(i) + "\" reversible=\"false\"><listOfReactants>"
             "<speciesReference species=\"" + from + "\" stoichiometry=\"1\" constant=\"true\"/>"
             "</listOfReactants><listOfProducts><speciesReference species=\"S" + std::to_string(i + 1) +
             "\" stoichiometry=\"1\" constant=\"true\"/></listOfProducts>";
      if (broken && b == "modifier")
        xml += "<listOfModifiers><modifierSpeciesReference species=\"Y\"/></listOfModifiers>";
      xml += "<kineticLaw>" + mathml + law + "</math></kineticLaw></reaction>";
    }
    xml += "</listOfReactions></model></sbml>\n";
    if (b == "none") {
      const auto model = sensode::model::importSbmlString(xml, "large model");  // the control
      QCOMPARE(static_cast<int>(model.reactions.size()), n);
      return;
    }
    try {
      sensode::model::importSbmlString(xml, "large model");
      QFAIL("the broken model was imported");
    } catch (const sensode::SbmlError& e) {
      QCOMPARE(QString::fromStdString(e.element()), element);
      QVERIFY2(QString::fromStdString(e.reason()).contains(reason), e.what());
    }
  }

  // The same text from memory: the source name stands in for the file.
  void stringSourceNamedInMessage() {
    try {
      sensode::model::importSbmlString("<sbml", "pasted model");
      QFAIL("malformed text was imported");
    } catch (const sensode::SbmlError& e) {
      QCOMPARE(e.file(), std::string("pasted model"));
      QVERIFY(std::string(e.what()).rfind("pasted model: ", 0) == 0);
    }
    try {
      sensode::model::importSbmlString("  \n", "blank");
      QFAIL("blank text was imported");
    } catch (const sensode::SbmlError& e) {
      QCOMPARE(e.reason(), std::string("empty document"));
    }
  }

  // MathML nested far deeper than any model would overflow the stack inside libSBML's reader;
  // it is refused before parsing, naming the rule's variable. Just under the limit it imports.
  void deeplyNestedMathIsRefusedNotACrash() {
    const auto document = [](int depth) {
      std::string math;
      for (int i = 0; i < depth; ++i) math += "<apply><plus/><cn>1</cn>";
      math += "<ci>k</ci>";
      for (int i = 0; i < depth; ++i) math += "</apply>";
      return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\">"
             "<model id=\"deep\"><listOfCompartments><compartment id=\"c\" size=\"1\" constant=\"true\"/>"
             "</listOfCompartments><listOfSpecies><species id=\"S\" compartment=\"c\" "
             "initialConcentration=\"1\" hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" "
             "constant=\"false\"/></listOfSpecies><listOfParameters><parameter id=\"k\" value=\"1\" "
             "constant=\"true\"/></listOfParameters><listOfRules><rateRule variable=\"S\"><math "
             "xmlns=\"http://www.w3.org/1998/Math/MathML\">" +
             math + "</math></rateRule></listOfRules></model></sbml>";
    };
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / "sensode_tst_bad_input_deep.xml";
    {
      std::ofstream out(file);
      out << document(50000);  // measured: libSBML's reader crashes from about 20,000 levels
    }
    try {
      sensode::model::importSbmlFile(file);
      QFAIL("a 50,000-level document was imported");
    } catch (const sensode::SbmlError& e) {
      QCOMPARE(e.element(), std::string("S"));
      QVERIFY2(e.reason().find("nested more than 1000 levels") != std::string::npos, e.what());
    }
    std::filesystem::remove(file);
    QVERIFY_THROWS_EXCEPTION(sensode::SbmlError, sensode::model::importSbmlString(document(50000), "pasted"));
    const sensode::model::Model m = sensode::model::importSbmlString(document(990), "pasted");
    QCOMPARE(m.rules.size(), std::size_t(1));
  }

  // The scan itself: comments, CDATA, processing instructions and quoted '>' do not count.
  void nestingScan() {
    using sensode::model::measureXmlNesting;
    QCOMPARE(measureXmlNesting("<a><b/><c id='x'><d>t</d></c></a>").maxDepth, std::size_t(3));
    QCOMPARE(measureXmlNesting("<a><b/><c id='x'><d>t</d></c></a>").deepestOwner, std::string("x"));
    QCOMPARE(measureXmlNesting("<?xml version='1.0'?><!DOCTYPE a><a><!-- <b><c> --><![CDATA[<x><y>]]>"
                               "<e name='1 > 0'>t</e></a>").maxDepth,
             std::size_t(2));
    std::string opened;
    for (int i = 0; i < 5000; ++i) opened += "<a>";
    const auto deep = measureXmlNesting(opened, 100);
    QCOMPARE(deep.maxDepth, std::size_t(101));  // stops just past the limit
  }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_bad_input.moc"
