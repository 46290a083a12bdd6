// SPDX-License-Identifier: MIT
// sensode-gui [--open FILE] [--run TASK_ID] [--settings JSON] [--screenshot FILE.png]
//             [--every-tab] [--size WxH] [--fresh] [FILE]
#include <QApplication>
#include <QCommandLineParser>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSize>
#include <QTimer>

#include <cstdio>

#include "gui/main_window.h"
#include "gui/scripted_run.h"

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("Sensode"));
  QCoreApplication::setApplicationName(QStringLiteral("sensode-gui"));
  QCoreApplication::setApplicationVersion(QStringLiteral(SENSODE_VERSION));
  QGuiApplication::setApplicationDisplayName(QStringLiteral("Sensode"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral(
      "Sensode desktop host: time courses, sensitivities and steady-state gradients of SBML "
      "models through task plugins."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption open(QStringLiteral("open"),
                                QStringLiteral("Open FILE (SBML, or PEtab yaml) at start."),
                                QStringLiteral("FILE"));
  const QCommandLineOption run(QStringLiteral("run"),
                               QStringLiteral("Run the task TASK_ID (timecourse, sensitivities, "
                                              "ssgradient, ...) with its current settings once "
                                              "the model is open."),
                               QStringLiteral("TASK_ID"));
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QStringLiteral("When the run has finished and its results are shown, save the main window "
                     "as PNG to FILE and quit."),
      QStringLiteral("FILE"));
  const QCommandLineOption fresh(QStringLiteral("fresh"),
                                 QStringLiteral("Ignore stored settings (window, task settings, "
                                                "recent files) and store none."));
  const QCommandLineOption settings(
      QStringLiteral("settings"),
      QStringLiteral("With --run: task settings as a JSON object (keys as in the task's "
                     "provenance 'settings', e.g. {\"t_end\": 50}); other keys keep their values."),
      QStringLiteral("JSON"));
  const QCommandLineOption everyTab(
      QStringLiteral("every-tab"),
      QStringLiteral("With --screenshot FILE.png: one PNG per result tab, FILE-<tab>.png."));
  const QCommandLineOption size(QStringLiteral("size"),
                                QStringLiteral("Window size WIDTHxHEIGHT (e.g. 1280x800)."),
                                QStringLiteral("WxH"));
  parser.addOptions({open, run, settings, screenshot, everyTab, size, fresh});
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Model to open."),
                               QStringLiteral("[FILE]"));
  parser.process(app);

  sensode::gui::ScriptedRun::Plan plan;
  plan.open = parser.value(open);
  if (plan.open.isEmpty() && !parser.positionalArguments().isEmpty()) {
    plan.open = parser.positionalArguments().first();
  }
  plan.run = parser.value(run);
  plan.screenshot = parser.value(screenshot);
  plan.everyTab = parser.isSet(everyTab);
  if (parser.isSet(settings)) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(parser.value(settings).toUtf8(), &error);
    if (!doc.isObject()) {
      std::fprintf(stderr, "sensode-gui: --settings: not a JSON object (%s)\n",
                   qPrintable(error.errorString()));
      return 2;
    }
    plan.settings = doc.object();
  }
  QSize windowSize;
  if (parser.isSet(size)) {
    const QStringList wh = parser.value(size).split(QLatin1Char('x'));
    const int w = wh.size() == 2 ? wh[0].toInt() : 0;
    const int h = wh.size() == 2 ? wh[1].toInt() : 0;
    if (w < 200 || h < 150) {
      std::fprintf(stderr, "sensode-gui: --size %s: expected WIDTHxHEIGHT, at least 200x150\n",
                   qPrintable(parser.value(size)));
      return 2;
    }
    windowSize = QSize(w, h);
  }
  if (!plan.run.isEmpty() && plan.open.isEmpty()) {
    std::fprintf(stderr, "sensode-gui: --run needs a model (--open FILE)\n");
    return 2;
  }

  sensode::gui::MainWindow::Options options;
  options.useSettings = !parser.isSet(fresh);
  options.interactive = plan.screenshot.isEmpty();
  sensode::gui::MainWindow window(options);
  if (windowSize.isValid()) window.resize(windowSize);
  window.show();

  sensode::gui::ScriptedRun script(&window, plan);
  QObject::connect(&script, &sensode::gui::ScriptedRun::finished, &app,
                   [](int code) { QCoreApplication::exit(code); });
  if (!plan.open.isEmpty() || !plan.screenshot.isEmpty()) script.start();
  return app.exec();
}
