// SPDX-License-Identifier: MIT
// `sensode sensitivities` as users run it: the long CSV, the --stats JSON, methods and error
// messages. Fixtures: tests/support/sensitivity_fixtures.h.

#include "support/sensitivity_fixtures.h"

class TestSensitivitiesCli : public QObject {
  Q_OBJECT

 private slots:
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

QTEST_GUILESS_MAIN(TestSensitivitiesCli)
#include "tst_sensitivities_cli.moc"
