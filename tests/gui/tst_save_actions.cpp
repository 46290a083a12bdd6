// SPDX-License-Identifier: MIT
// Keeping edited values and fits, in the host window, offscreen, with both plugins linked
// statically:
//  - File ▸ Save model as: a value edited in the model browser is in the saved file (reopened,
//    the browser shows it as the file's value and the same time course runs), the action is
//    off for PEtab problems and without a model, an unwritable path is reported naming it;
//  - the estimation task's Best fit view: "Apply best fit" makes the best point the open PEtab
//    problem's edited values (the browser shows them, the gradient task evaluates there: its
//    objective is the fit's), and on an open SBML model sets the parameters it has and names the
//    others; "Save fitted problem" writes problem.yaml whose nominal values are the fit.
// With SENSODE_SCREENSHOT_DIR set, the File menu and the Best fit view are saved there as PNGs.
#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QToolBox>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>

#include "core/estimation/estimation.h"
#include "core/petab/petab_problem.h"
#include "gui/main_window.h"
#include "gui/model_browser.h"
#include "gui/model_table_model.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/estimation/best_fit_view.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/gradient/gradient_task.h"
#include "support/numeric_compare.h"

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");
const QString kDecay = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/problem.yaml");
const QString kDecayModel = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/model.xml");

// The row of `id` in a browser table, or -1.
int rowOf(const gui::ModelTableModel* m, const QString& id) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->table().rows[r].overrideId == id) return r;
  return -1;
}

void screenshot(QWidget* widget, const QString& name) {
  const QString dir = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  // Twice: a wrapped label's new height is a layout request posted while handling the first.
  QCoreApplication::processEvents();
  QCoreApplication::processEvents();
  widget->grab().save(dir + QLatin1Char('/') + name);
}

QJsonObject decaySettings(const QString& problem) {
  return {{"problem", problem}, {"optimizer", "auto"}, {"starts", 3}, {"seed", 5},
          {"use_start_values", true}, {"gradient", "forward"}, {"max_iterations", 200},
          {"threads", 1}, {"rtol", 1e-8}, {"atol", 1e-10}, {"parameters", QJsonObject{}},
          {"profile", QJsonArray{}}};
}

plugin::estimation::BestFitView* bestFitView(TaskPanel* panel) {
  return dynamic_cast<plugin::estimation::BestFitView*>(panel->resultView(QStringLiteral("Best fit")));
}

}  // namespace

class TestSaveActions : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_save_actions"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
  }

  void saveModelAsKeepsTheEditedValue() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    auto* action = w.findChild<QAction*>(QStringLiteral("actionSaveModelAs"));
    QVERIFY(action);
    QVERIFY(!action->isEnabled());  // nothing open
    QVERIFY(w.openModel(kRepressilator));
    QVERIFY(action->isEnabled());

    gui::ModelTableModel* params = w.modelBrowser()->tableModel(QStringLiteral("Parameters"));
    const int row = rowOf(params, QStringLiteral("alpha"));
    QVERIFY(row >= 0);
    const QModelIndex cell = params->index(row, params->table().valueColumn);
    QVERIFY(params->setData(cell, QStringLiteral("150")));

    // The action in its place, in the File menu.
    for (QAction* a : w.menuBar()->actions())
      if (a->menu() && a->menu()->actions().contains(action)) {
        a->menu()->popup(w.mapToGlobal(QPoint(0, w.menuBar()->height())));
        a->menu()->setActiveAction(action);
        screenshot(a->menu(), QStringLiteral("save-model-as-menu.png"));
        a->menu()->hide();
      }

    const QString saved = dir_.filePath(QStringLiteral("repressilator_edited.xml"));
    QVERIFY2(w.saveModelAs(saved), qPrintable(w.lastError()));
    QVERIFY(w.session().filePath.endsWith(QStringLiteral("repressilator.xml")));  // unchanged

    // Reopened: alpha is the file's value now, not an edit.
    MainWindow reopened(testing::testWindowOptions());
    QVERIFY(reopened.openModel(saved));
    gui::ModelTableModel* again = reopened.modelBrowser()->tableModel(QStringLiteral("Parameters"));
    const int r2 = rowOf(again, QStringLiteral("alpha"));
    QVERIFY(r2 >= 0);
    SENSODE_EXPECT_CLOSE(again->table().rows[r2].nominal, 150.0, 0, 0, "alpha", r2);
    QVERIFY(reopened.session().overrides.isEmpty());

    // The same time course: the edited original against the saved file.
    const QJsonObject settings{{"method", "cvodes"}, {"t_end", 20.0}, {"points", 41},
                               {"rtol", 1e-8}, {"atol", 1e-12}};
    TaskPanel* edited = w.openTask(QStringLiteral("timecourse"));
    edited->setupWidget()->setSettings(settings);
    QCOMPARE(int(testing::clickRunAndWait(edited)), int(api::TaskStatus::Succeeded));
    TaskPanel* fromFile = reopened.openTask(QStringLiteral("timecourse"));
    fromFile->setupWidget()->setSettings(settings);
    QCOMPARE(int(testing::clickRunAndWait(fromFile)), int(api::TaskStatus::Succeeded));
    // The exported tables: every output at every time.
    const auto exportCsv = [&](TaskPanel* panel, const QString& name) {
      for (const TaskPanel::ExportTarget& t : panel->exportTargets())
        if (t.format.id == QLatin1String("csv")) {
          QString why;
          const QString path = dir_.filePath(name);
          if (panel->exportResult(t.view, t.format.id, path, &why)) return path;
        }
      return QString();
    };
    const QString csvA = exportCsv(edited, QStringLiteral("a.csv"));
    const QString csvB = exportCsv(fromFile, QStringLiteral("b.csv"));
    QVERIFY(!csvA.isEmpty() && !csvB.isEmpty());
    QFile fa(csvA), fb(csvB);
    QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
    const QList<QByteArray> la = fa.readAll().split('\n'), lb = fb.readAll().split('\n');
    QVERIFY2(la.size() >= 42, "the export is the 41-point time-course table");
    QCOMPARE(la.size(), lb.size());
    QCOMPARE(la[0], lb[0]);
    for (qsizetype i = 1; i < la.size(); ++i) {
      const QList<QByteArray> ca = la[i].split(','), cb = lb[i].split(',');
      QCOMPARE(ca.size(), cb.size());
      for (qsizetype j = 0; j < ca.size(); ++j)
        if (!ca[j].isEmpty())
          SENSODE_EXPECT_CLOSE(cb[j].toDouble(), ca[j].toDouble(), 1e-300, 1e-12, "csv", long(i));
    }
  }

  void saveModelAsReportsAnUnwritablePath() {
    MainWindow w(testing::testWindowOptions());
    QVERIFY(w.openModel(kRepressilator));
    const QString target = dir_.filePath(QStringLiteral("no/such/folder/x.xml"));
    QVERIFY(!w.saveModelAs(target));
    QVERIFY2(w.lastError().contains(target) && w.lastError().contains(QStringLiteral("cannot write")),
             qPrintable(w.lastError()));
  }

  void applyAndSaveTheBestFitOfAPetabProblem() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    w.resize(1450, 880);
    QVERIFY(w.openModel(kDecay));
    QVERIFY(!w.findChild<QAction*>(QStringLiteral("actionSaveModelAs"))->isEnabled());
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    panel->setupWidget()->setSettings(decaySettings(QString()));
    plugin::estimation::BestFitView* view = bestFitView(panel);
    QVERIFY(view);
    QVERIFY(!view->applyButton()->isEnabled());
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto* result = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
    const estimation::EstimationResult& fit = *result->core();
    QVERIFY(view->applyButton()->isEnabled());
    QTest::mouseClick(view->applyButton(), Qt::LeftButton);
    // In place: the browser on its PEtab parameters, the panel scrolled to the Best fit box.
    w.modelBrowser()->findChild<QToolBox*>()->setCurrentIndex(0);
    QCoreApplication::processEvents();
    panel->findChild<QScrollArea*>()->ensureWidgetVisible(view->parentWidget());
    screenshot(&w, QStringLiteral("apply-best-fit.png"));

    // The browser's PEtab parameters hold the fit (linear values), as edits.
    gui::ModelTableModel* petabTable = w.modelBrowser()->tableModel(QStringLiteral("PEtab parameters"));
    QVERIFY(petabTable);
    for (std::size_t i = 0; i < fit.parameters.size(); ++i) {
      const QString id = QString::fromStdString(fit.parameters[i].id);
      const double linear = petab::fromScale(fit.parameters[i].scale, fit.best[i]);
      QVERIFY2(w.session().overrides.contains(id), qPrintable(id));
      SENSODE_EXPECT_CLOSE(w.session().overrides.value(id), linear, 0, 0, id.toStdString(), long(i));
      const int row = rowOf(petabTable, id);
      QVERIFY(row >= 0);
      QVERIFY(petabTable->data(petabTable->index(row, petabTable->table().valueColumn), Qt::FontRole)
                  .value<QFont>()
                  .bold());
    }
    QVERIFY2(view->statusText().contains(QStringLiteral("Applied 2")), qPrintable(view->statusText()));

    // The gradient task evaluates the problem there: its objective is the fit's.
    TaskPanel* gradient = w.openTask(QStringLiteral("ssgradient"));
    gradient->setupWidget()->setSettings({{"method", "forward"}, {"rtol", 1e-8}, {"atol", 1e-10},
                                          {"problem", QString()}, {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(gradient)), int(api::TaskStatus::Succeeded));
    const auto* g = dynamic_cast<const plugin::gradient::Result*>(gradient->shownResult().get());
    QVERIFY(g);
    SENSODE_EXPECT_CLOSE(g->core()->objective, fit.bestObjective, 0, 1e-6, "objective at the applied fit", 0);

    // Save fitted problem: problem.yaml loads, its nominal values are the fit.
    const QString out = dir_.filePath(QStringLiteral("fitted"));
    QString why;
    QVERIFY2(view->saveFittedProblem(out, &why), qPrintable(why));
    panel->findChild<QScrollArea*>()->ensureWidgetVisible(view);
    screenshot(view->parentWidget(), QStringLiteral("best-fit-view.png"));
    const petab::Problem written = petab::loadProblem((out + QStringLiteral("/problem.yaml")).toStdString());
    for (std::size_t i = 0; i < fit.parameters.size(); ++i) {
      const int k = written.findParameter(fit.parameters[i].id);
      QVERIFY(k >= 0);
      SENSODE_EXPECT_CLOSE(written.parameters[std::size_t(k)].nominalValue,
                           petab::fromScale(fit.parameters[i].scale, fit.best[i]), 0, 1e-15,
                           fit.parameters[i].id, long(i));
    }
    QVERIFY(!view->saveFittedProblem(QFileInfo(kDecay).absolutePath(), &why));
    QVERIFY2(why.contains(QStringLiteral("choose another folder")), qPrintable(why));
  }

  void applyBestFitToAnOpenSbmlModel() {
    MainWindow w(testing::testWindowOptions());
    QVERIFY(w.openModel(kDecayModel));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    panel->setupWidget()->setSettings(decaySettings(kDecay));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    plugin::estimation::BestFitView* view = bestFitView(panel);
    QString why;
    QVERIFY2(view->applyBestFit(&why), qPrintable(why));
    // k is a parameter of the model; x0 is the PEtab problem's own (a condition's value).
    QCOMPARE(w.session().overrides.keys(), QStringList{QStringLiteral("k")});
    QVERIFY2(view->statusText().contains(QStringLiteral("x0")), qPrintable(view->statusText()));
    const auto* result = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
    const auto& fit = *result->core();
    for (std::size_t i = 0; i < fit.parameters.size(); ++i)
      if (fit.parameters[i].id == "k")
        SENSODE_EXPECT_CLOSE(w.session().overrides.value(QStringLiteral("k")),
                             petab::fromScale(fit.parameters[i].scale, fit.best[i]), 0, 0, "k", 0);
  }

 private:
  QTemporaryDir dir_;
};

QTEST_MAIN(TestSaveActions)
#include "tst_save_actions.moc"
