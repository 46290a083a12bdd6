// SPDX-License-Identifier: MIT
// A model with events in every GUI task of the sensode_tasks plugin (issue 15): the time course
// (odeSD and CVODES) and the parameter sensitivities (every method, and all compared in one run)
// succeed on it; the time-course and sensitivity charts mark the event time with a dashed line
// whose tooltip names the event, on screen and in the PNG export (written to the build tree,
// event-marks-*.png, to look at).
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QPluginLoader>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <memory>

#include "gui/plugin_api/task_plugin.h"
#include "plugin/sensitivities/sensitivities_task.h"
#include "plugin/time_course/time_course_task.h"
#include "plugin/views/event_marks_chart_view.h"
#include "plugin/views/time_series_chart_view.h"
#include "support/event_models.h"

using namespace sensode;

namespace {

api::TaskPlugin* staticTaskPlugin() {
  for (QObject* instance : QPluginLoader::staticInstances()) {
    if (auto* p = qobject_cast<api::TaskPlugin*>(instance)) return p;
  }
  return nullptr;
}

std::unique_ptr<api::TaskRunner> runnerFor(const QString& id) {
  for (const api::TaskDescription& t : staticTaskPlugin()->tasks())
    if (t.id == id) return t.createRunner();
  return nullptr;
}

std::shared_ptr<const api::TaskResult> runAndWait(api::TaskRunner& runner, const QString& file,
                                                  const QJsonObject& settings) {
  QFuture<void> f = runner.start({file, QStringLiteral("sbml"), {}}, settings);
  f.waitForFinished();
  return runner.takeResult();
}

// x' = −k·x with a dose D = 4 at t = 5.
std::string doseModel() {
  return testing::decayWithEvents(
      R"(<parameter id="D" value="4" constant="true"/>)",
      testing::eventXml("dose",
                        "<apply><geq/>" + std::string(testing::kMathTime) + "<cn>5</cn></apply>",
                        testing::eventAssignment("x", "<apply><plus/><ci>x</ci><ci>D</ci></apply>")));
}

// The share of the rows [top, bottom) of `image` where column x (±1) has the marks' grey
// (dashes leave gaps).
double greyShare(const QImage& image, int x, int top, int bottom) {
  int grey = 0, all = 0;
  for (int y = top; y < bottom; ++y) {
    bool hit = false;
    for (int dx = -1; dx <= 1; ++dx) {
      const QColor c = image.pixelColor(x + dx, y);
      // Grey (r = g = b), darker than the grid lines (0xe0 and lighter).
      hit = hit || (std::abs(c.red() - c.green()) < 16 && std::abs(c.green() - c.blue()) < 16 &&
                    c.red() < 0xc8);
    }
    grey += hit;
    ++all;
  }
  return all ? double(grey) / all : 0;
}

// Shows `view` with `series`, checks the mark's line and tooltip on screen, exports a PNG.
void checkMarks(plugin::TimeSeriesChartView& view,
                std::shared_ptr<const tasks::TimeCourseResult> series, const QString& pngName) {
  view.resize(900, 600);
  view.setSeries(std::move(series));
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  QCoreApplication::processEvents();
  plugin::EventMarksChartView* chart = view.chartView();
  QCOMPARE(chart->eventMarks().size(), 1);
  QCOMPARE(chart->eventMarks().first().label, QStringLiteral("dose"));
  const double x = chart->markPixel(0);
  QVERIFY2(std::isfinite(x), "the event time is outside the plot area");
  QVERIFY2(chart->toolTipAt(x).contains(QStringLiteral("dose")), qPrintable(chart->toolTipAt(x)));
  QVERIFY(chart->toolTipAt(x).contains(QStringLiteral("t = 5")));
  QVERIFY(chart->toolTipAt(x + 40).isEmpty());
  // The line is there: most of its column is the marks' grey (a column 40 px away is not).
  const QImage shot = chart->viewport()->grab().toImage();
  const QRectF area = chart->chart()->plotArea();
  const int top = int(area.top()) + 20, bottom = int(area.bottom()) - 5;
  QVERIFY2(greyShare(shot, int(std::lround(x)), top, bottom) > 0.4,
           qPrintable(QString::number(greyShare(shot, int(std::lround(x)), top, bottom))));
  QVERIFY(greyShare(shot, int(std::lround(x)) + 40, top, bottom) < 0.2);
  const QString png = QDir(QStringLiteral(SENSODE_TEST_OUTPUT_DIR)).filePath(pngName);
  QString error;
  QVERIFY2(view.exportTo(QStringLiteral("png"), png, &error), qPrintable(error));
  QVERIFY(QImage(png).width() > 200);
}

}  // namespace

class TestEventViews : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(staticTaskPlugin());
    QVERIFY(dir_.isValid());
    file_ = dir_.filePath(QStringLiteral("dose.xml"));
    QFile f(file_);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(doseModel()));
  }

  void timeCourseMarksTheDose_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("odesd") << QStringLiteral("odesd");
    QTest::newRow("cvodes") << QStringLiteral("cvodes");
  }
  void timeCourseMarksTheDose() {
    QFETCH(QString, method);
    auto runner = runnerFor(QString::fromLatin1(plugin::timecourse::kTaskId));
    QVERIFY(runner);
    const auto result = runAndWait(*runner, file_,
                                   {{"method", method}, {"t_end", 10.0}, {"points", 101}});
    QVERIFY(result);
    QVERIFY2(result->status() == api::TaskStatus::Succeeded, qPrintable(result->message()));
    const auto* r = dynamic_cast<const plugin::timecourse::Result*>(result.get());
    QVERIFY(r);
    QCOMPARE(r->core()->eventTimes, std::vector<double>{5.0});
    QCOMPARE(r->core()->eventIds, std::vector<std::string>{"dose"});
    plugin::TimeSeriesChartView view(QStringLiteral("Chart"), QStringLiteral("value"), {});
    checkMarks(view, r->core(), QStringLiteral("event-marks-time-course-%1.png").arg(method));
  }

  // Every sensitivity method on the event model, then all of them compared in one run; the
  // chart of one parameter's dy/dp marks the dose.
  void sensitivitiesRunEveryMethod_data() {
    QTest::addColumn<QString>("method");
    for (const char* m : {"odesd", "cvodes", "pbsr", "exp", "fd"}) QTest::newRow(m) << QString(m);
  }
  void sensitivitiesRunEveryMethod() {
    QFETCH(QString, method);
    auto runner = runnerFor(QString::fromLatin1(plugin::sensitivities::kTaskId));
    QVERIFY(runner);
    QJsonObject settings{{"method", method}, {"t_end", 10.0}, {"points", 21},
                         {"parameters", QJsonArray{"k", "D"}}};
    if (method == QLatin1String("odesd"))
      settings.insert("compare", QJsonArray{"cvodes", "pbsr", "exp", "fd"});
    const auto result = runAndWait(*runner, file_, settings);
    QVERIFY(result);
    QVERIFY2(result->status() == api::TaskStatus::Succeeded, qPrintable(result->message()));
    const auto* r = dynamic_cast<const plugin::sensitivities::Result*>(result.get());
    QVERIFY(r);
    // dx/dD = e^{−k(t−5)} after the dose (t = 10: e^{−1.5}), 0 before.
    const auto& core = *r->core();
    QCOMPARE(core.times.size(), std::size_t(21));
    QVERIFY(std::abs(core.at(20, 0, 1) - std::exp(-1.5)) < 1e-3);
    QCOMPARE(core.at(8, 0, 1), 0.0);
    for (const auto& c : r->comparisons())
      QVERIFY2(c.result && c.result->termination == tasks::Termination::Success,
               c.result ? c.result->message.c_str() : "no result");
    if (method == QLatin1String("odesd")) QCOMPARE(r->comparisons().size(), std::size_t(4));
    if (method == QLatin1String("fd")) return;  // several simulations: no single event list
    QCOMPARE(core.eventTimes, std::vector<double>{5.0});
    plugin::TimeSeriesChartView view(QStringLiteral("Chart"), QStringLiteral("dy/dp"), {});
    checkMarks(view, plugin::sensitivities::parameterSlice(core, 1),
               QStringLiteral("event-marks-sensitivities-%1.png").arg(method));
  }

 private:
  QTemporaryDir dir_;
  QString file_;
};

QTEST_MAIN(TestEventViews)
#include "tst_event_views.moc"
