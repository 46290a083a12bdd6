// SPDX-License-Identifier: MIT
// sensode-gui [--open FILE] [--run TASK_ID] [--screenshot FILE.png] [--fresh] [FILE]
#include <QApplication>
#include <QCommandLineParser>
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
  parser.addOptions({open, run, screenshot, fresh});
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
  if (!plan.run.isEmpty() && plan.open.isEmpty()) {
    std::fprintf(stderr, "sensode-gui: --run needs a model (--open FILE)\n");
    return 2;
  }

  sensode::gui::MainWindow::Options options;
  options.useSettings = !parser.isSet(fresh);
  options.interactive = plan.screenshot.isEmpty();
  sensode::gui::MainWindow window(options);
  window.show();

  sensode::gui::ScriptedRun script(&window, plan);
  QObject::connect(&script, &sensode::gui::ScriptedRun::finished, &app,
                   [](int code) { QCoreApplication::exit(code); });
  if (!plan.open.isEmpty() || !plan.screenshot.isEmpty()) script.start();
  return app.exec();
}
