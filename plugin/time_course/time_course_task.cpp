// SPDX-License-Identifier: MIT
#include "plugin/time_course/time_course_task.h"

#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

#include "core/common/errors.h"
#include "plugin/common/model_cache.h"
#include "plugin/common/model_overview.h"
#include "plugin/common/provenance.h"
#include "plugin/forms/settings_reader.h"
#include "plugin/common/task_icons.h"
#include "plugin/models/time_series_table_model.h"
#include "plugin/runner/task_runner.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/time_series_chart_view.h"

namespace sensode::plugin::timecourse {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }


// The set-up widget: the options form, the outputs chooser, a note on edited model values,
// Restore defaults.
class SetupWidget : public api::TaskSetupWidget {
 public:
  explicit SetupWidget(QWidget* parent) : api::TaskSetupWidget(parent) {
    form_ = new OptionsForm(fields(), this);
    form_->setObjectName(QStringLiteral("options"));
    outputs_ = newOutputPicker(this);
    note_ = new QLabel(this);
    note_->setObjectName(QStringLiteral("sessionNote"));
    note_->setWordWrap(true);
    note_->setEnabled(false);
    auto* defaults = new QPushButton(tr("Restore defaults"), this);
    defaults->setObjectName(QStringLiteral("restoreDefaults"));
    connect(defaults, &QPushButton::clicked, this, [this] {
      form_->resetToDefaults();
      outputs_->setSelected({});
    });
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(defaults);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(form_);
    layout->addWidget(outputs_);
    layout->addLayout(row);
    layout->addWidget(note_);
    setSession({});
  }

  QJsonObject settings() const override {
    QJsonObject o = form_->values();
    outputs_->writeSettings(o, QStringLiteral("outputs"));
    return o;
  }
  void setSettings(const QJsonObject& settings) override {
    form_->setValues(settings);
    outputs_->readSettings(settings, QStringLiteral("outputs"));
  }
  void setSession(const api::ModelSession& session) override {
    outputs_->setModelPath(session.format == QLatin1String("sbml") ? session.filePath : QString());
    if (!session.isOpen()) {
      note_->setText(tr("No model open."));
    } else if (session.overrides.isEmpty()) {
      note_->setText(tr("Uses the values in the model file."));
    } else {
      note_->setText(tr("Uses %n value(s) edited in the model browser.", "",
                        int(session.overrides.size())));
    }
  }
  QString validate() const override {
    const QString form = form_->validate();
    return form.isEmpty() ? outputs_->validate() : form;
  }

 private:
  OptionsForm* form_ = nullptr;
  IdPicker* outputs_ = nullptr;
  QLabel* note_ = nullptr;
};

std::shared_ptr<const tasks::TimeCourseResult> seriesOf(
    const std::shared_ptr<const api::TaskResult>& result) {
  const auto* r = dynamic_cast<const Result*>(result.get());
  return r ? r->core() : nullptr;
}

}  // namespace

const QList<FieldSpec>& fields() {
  using K = FieldSpec::Kind;
  const double inf = std::numeric_limits<double>::infinity();
  // Defaults are the core's (TimeCourseOptions, IntegratorOptions), so the GUI, the CLI and a
  // direct runTimeCourse() call agree on what "default" means.
  const tasks::TimeCourseOptions core;
  static const QList<FieldSpec> specs = {
      {QStringLiteral("method"), QStringLiteral("Method"),
       QStringLiteral("Integrator. CVODES: variable-order BDF with Newton iterations on the exact "
                      "sparse Jacobian. odeSD: the second-derivative method using ẍ = J·f."),
       {}, K::Choice, QString::fromLatin1(integrators::toString(core.method)), -inf, inf, false,
       false, {QStringLiteral("odesd"), QStringLiteral("cvodes")},
       {QStringLiteral("odeSD"), QStringLiteral("CVODES (BDF)")}},
      {QStringLiteral("t_end"), QStringLiteral("End time"),
       QStringLiteral("Integration runs from t = 0 to this time, in the model's time units."),
       {}, K::Real, tasks::kDefaultEndTime, 0, inf, true, false, {}, {}},
      {QStringLiteral("points"), QStringLiteral("Output points"),
       QStringLiteral("Number of output times, equally spaced from 0 to the end time, both "
                      "included."),
       {}, K::Integer, qlonglong(tasks::kDefaultOutputPoints), 2, 10'000'000, false, false, {}, {}},
      {QStringLiteral("rtol"), QStringLiteral("Relative tolerance"),
       QStringLiteral("rtol of the local error test: |e_i| <= rtol*|x_i| + atol (weighted RMS)."),
       {}, K::Real, core.integrator.rtol, 0, 1, true, true, {}, {}},
      {QStringLiteral("atol"), QStringLiteral("Absolute tolerance"),
       QStringLiteral("atol of the local error test, in the units of the values shown: a species "
                      "in concentration gets atol x its compartment's size on its amount."),
       {}, K::Real, core.integrator.atol, 0, inf, true, false, {}, {}},
      {QStringLiteral("max_steps"), QStringLiteral("Max steps"),
       QStringLiteral("Most steps between two output times before the run stops with 'too much "
                      "work'."),
       {}, K::Integer, qlonglong(core.integrator.maxSteps), 1, 1e12, false, false, {}, {}},
  };
  return specs;
}

Settings parseSettings(const QJsonObject& json) {
  Settings s;
  const SettingsReader in(json, "time course setting");
  if (const auto name = in.text("method")) {
    const auto m = integrators::methodFromString(*name);
    if (!m) in.violated("method", "'" + *name + "'", "one of cvodes, odesd");
    s.method = *m;
  }
  s.tEnd = in.positive("t_end", s.tEnd);
  s.points = in.whole("points", s.points, 2, 1e8);
  s.options.method = s.method;
  s.options.integrator.rtol = in.number("rtol", s.options.integrator.rtol);
  s.options.integrator.atol = in.number("atol", s.options.integrator.atol);
  s.options.integrator.maxSteps = in.whole("max_steps", s.options.integrator.maxSteps, 1, 1e15);
  for (const QJsonValue& v : json.value(QStringLiteral("outputs")).toArray())
    s.outputs.push_back(v.toString().toStdString());
  if (auto why = s.options.validate()) throw InvalidOptions(*why);
  return s;
}

IdPicker* newOutputPicker(QWidget* parent) {
  auto* picker = new IdPicker(
      QObject::tr("All outputs"), QObject::tr("Outputs"), QStringLiteral("outputs"),
      [](const QString& path) {
        QList<IdPicker::Item> items;
        for (const OutputInfo& o : readModelOutputs(path)) {
          const QString about = o.name.isEmpty() || o.name == o.id ? o.kind : o.name + "; " + o.kind;
          items.append({o.id, QStringLiteral("%1  (%2)").arg(o.id, about)});
        }
        return items;
      },
      parent);
  picker->setToolTip(QObject::tr("The outputs that are computed, plotted and exported (the "
                                 "command line's --outputs), in the list's order"));
  return picker;
}

Result::Result(std::shared_ptr<const tasks::TimeCourseResult> core, QJsonObject provenance,
               std::shared_ptr<const QHash<QString, QString>> names)
    : core_(std::move(core)), names_(std::move(names)), provenance_(std::move(provenance)) {}

api::TaskStatus Result::status() const {
  switch (core_->termination) {
    case tasks::Termination::Success: return api::TaskStatus::Succeeded;
    case tasks::Termination::UserAbort: return api::TaskStatus::Cancelled;
    case tasks::Termination::IntegrationFailure:
    case tasks::Termination::InvalidInput: return api::TaskStatus::Failed;
  }
  return api::TaskStatus::Failed;
}

QString Result::message() const { return q(core_->message); }

QString Result::details() const { return q(core_->details); }

QString Result::summary() const {
  if (core_->termination != tasks::Termination::Success) return message();
  return QStringLiteral("Time course: %1 points x %2 outputs, %3 steps, %4 s%5")
      .arg(core_->times.size())
      .arg(core_->columns.size())
      .arg(core_->stats.steps)
      .arg(core_->wallSeconds, 0, 'g', 3)
      .arg(fallbackNote(core_->stats.fallbacks) + undefinedNote(core_->undefinedOutputs));
}

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settingsJson, RunContext& context) {
  const Settings settings = parseSettings(settingsJson);
  context.setPhase(QStringLiteral("Reading the model..."));
  const LoadedModel loaded =
      loadModel(session.filePath, [&context](const QString& text) { context.setPhase(text); });
  if (context.cancelled()) {
    return std::make_shared<MessageResult>(api::TaskStatus::Cancelled,
                                           QStringLiteral("cancelled while compiling the model"));
  }
  context.setPhase(QStringLiteral("Integrating..."));

  tasks::TimeCourseProblem problem;
  problem.model = loaded.model;
  problem.t0 = 0;
  problem.times = tasks::equallySpacedTimes(settings.tEnd, settings.points);
  // A dose plotted as a vertical jump at its time, not a slope to the next output time.
  problem.eventRows = true;
  problem.outputs = settings.outputs;
  for (auto it = session.overrides.cbegin(); it != session.overrides.cend(); ++it) {
    problem.overrides.emplace_back(it.key().toStdString(), it.value());
  }
  auto core = std::make_shared<tasks::TimeCourseResult>(
      tasks::runTimeCourse(problem, settings.options, context.monitor()));

  QJsonObject provenance =
      baseProvenance(QString::fromLatin1(kTaskId), QStringLiteral("Time course"), loaded, session,
                     settingsJson);
  provenance.insert(QStringLiteral("method"), QString::fromLatin1(integrators::toString(settings.method)));
  provenance.insert(QStringLiteral("tolerances"),
                    QJsonObject{{QStringLiteral("rtol"), settings.options.integrator.rtol},
                                {QStringLiteral("atol"), settings.options.integrator.atol}});
  provenance.insert(QStringLiteral("output_times"),
                    QJsonObject{{QStringLiteral("t0"), problem.t0},
                                {QStringLiteral("t_end"), settings.tEnd},
                                {QStringLiteral("points"), static_cast<double>(settings.points)}});
  QJsonArray columns;
  for (const std::string& c : core->columns) columns.append(q(c));
  provenance.insert(QStringLiteral("columns"), columns);
  provenance.insert(
      QStringLiteral("run"),
      QJsonObject{{QStringLiteral("termination"), QString::fromLatin1(tasks::toString(core->termination))},
                  {QStringLiteral("message"), q(core->message)},
                  {QStringLiteral("details"), q(core->details)},
                  {QStringLiteral("wall_seconds"), core->wallSeconds},
                  {QStringLiteral("model_load_seconds"), loaded.loadSeconds},
                  {QStringLiteral("model_from_cache"), loaded.fromCache}});
  provenance.insert(QStringLiteral("statistics"), statsJson(core->stats));
  provenance.insert(QStringLiteral("undefined_outputs"), undefinedJson(core->undefinedOutputs));
  return std::make_shared<Result>(std::move(core), std::move(provenance), loaded.names);
}

api::TaskDescription description() {
  api::TaskDescription d;
  d.id = QString::fromLatin1(kTaskId);
  d.displayName = QStringLiteral("Time course");
  d.menuPath = QStringLiteral("Tasks");
  d.toolTip = QStringLiteral("Integrate the model from t = 0 and plot its species and rules");
  d.icon = taskIcon(IconKind::TimeCourse);
  d.order = 10;
  d.sessionFormats = {QStringLiteral("sbml")};
  d.createSetupWidget = [](QWidget* parent) -> api::TaskSetupWidget* {
    return new SetupWidget(parent);
  };
  d.createRunner = []() -> std::unique_ptr<api::TaskRunner> {
    return std::make_unique<CoreTaskRunner>(&run);
  };
  d.createResultViews = [](QWidget* parent) {
    auto* tableModel = new TimeSeriesTableModel;
    auto* table = new TableResultView(
        QStringLiteral("Table"), tableModel,
        [tableModel](const std::shared_ptr<const api::TaskResult>& r) {
          tableModel->setSeries(seriesOf(r));
        },
        parent);
    auto* chart = new TimeSeriesChartView(QStringLiteral("Chart"), QStringLiteral("value"),
                                          &seriesOf, parent);
    chart->setNameSource([](const std::shared_ptr<const api::TaskResult>& result) {
      const auto* r = dynamic_cast<const Result*>(result.get());
      return r ? r->names() : QHash<QString, QString>{};
    });
    auto* stats = new KeyValueView(
        QStringLiteral("Statistics"),
        [](const std::shared_ptr<const api::TaskResult>& result) {
          QList<KeyValueTableModel::Entry> rows;
          const auto* r = dynamic_cast<const Result*>(result.get());
          if (!r) return rows;
          const tasks::TimeCourseResult& c = *r->core();
          const QJsonObject p = r->provenance();
          using E = KeyValueTableModel::Entry;
          rows << E{QStringLiteral("method"), QStringLiteral("Method"),
                    p.value(QStringLiteral("method")).toString(), {}};
          const QJsonObject tol = p.value(QStringLiteral("tolerances")).toObject();
          rows << E{QStringLiteral("rtol"), QStringLiteral("rtol"), tol.value(QStringLiteral("rtol")).toDouble(), {}};
          rows << E{QStringLiteral("atol"), QStringLiteral("atol"), tol.value(QStringLiteral("atol")).toDouble(), {}};
          rows << E{QStringLiteral("wall_seconds"), QStringLiteral("Wall time (s)"), c.wallSeconds,
                    QStringLiteral("integration only; model loading is in the provenance file")};
          rows << statsEntries(c.stats);
          rows << E{QStringLiteral("derivative_source"), QStringLiteral("Derivatives"),
                    QString::fromLatin1(kExactSymbolic), QStringLiteral("J and ∂f/∂p from the symbolic pipeline")};
          return rows;
        },
        parent);
    return QList<api::TaskResultView*>{chart, table, stats};
  };
  return d;
}

}  // namespace sensode::plugin::timecourse
