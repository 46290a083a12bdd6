// SPDX-License-Identifier: MIT
#include "plugin/sensitivities/sensitivities_task.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "core/common/errors.h"
#include "plugin/common/model_cache.h"
#include "plugin/common/model_overview.h"
#include "plugin/common/provenance.h"
#include "plugin/common/task_icons.h"
#include "plugin/forms/id_picker.h"
#include "plugin/forms/settings_reader.h"
#include "plugin/models/sensitivity_table_model.h"
#include "plugin/runner/task_runner.h"
#include "plugin/sensitivities/sensitivity_views.h"
#include "plugin/time_course/time_course_task.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/time_series_chart_view.h"

namespace sensode::plugin::sensitivities {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }


const Result* resultOf(const std::shared_ptr<const api::TaskResult>& r) {
  return dynamic_cast<const Result*>(r.get());
}

// Which parameters to differentiate against: all, or the checked ones of the open model.
IdPicker* newParameterPicker(QWidget* parent) {
  return new IdPicker(QObject::tr("All parameters"), QObject::tr("Parameters"),
                      QStringLiteral("parameters"),
                      [](const QString& path) {
                        QList<IdPicker::Item> items;
                        for (const ParameterInfo& p : readModelParameters(path))
                          items.append({p.id, QStringLiteral("%1  (%2)").arg(p.id, p.kind)});
                        return items;
                      },
                      parent);
}

class SetupWidget : public api::TaskSetupWidget {
 public:
  explicit SetupWidget(QWidget* parent) : api::TaskSetupWidget(parent) {
    form_ = new OptionsForm(fields(), this);
    form_->setObjectName(QStringLiteral("options"));
    picker_ = newParameterPicker(this);
    outputs_ = timecourse::newOutputPicker(this);
    // Compare methods: the checked ones run after the reference (the Method field) on the same
    // settings; the Compare tab shows how far each is from the reference.
    compare_ = new QGroupBox(tr("Compare methods"), this);
    compare_->setObjectName(QStringLiteral("compareMethods"));
    compare_->setCheckable(true);
    compare_->setChecked(false);
    compare_->setToolTip(tr("Run the checked methods too and show their discrepancies from the "
                            "method above (max and median relative difference)"));
    auto* grid = new QGridLayout(compare_);
    const FieldSpec& method = fields().front();
    for (qsizetype i = 0; i < method.choices.size(); ++i) {
      auto* box = new QCheckBox(method.choiceLabels[i], compare_);
      box->setObjectName(QStringLiteral("compare_") + method.choices[i]);
      box->setProperty("method", method.choices[i]);
      grid->addWidget(box, static_cast<int>(i / 2), static_cast<int>(i % 2));
      compareBoxes_ << box;
    }
    auto* defaults = new QPushButton(tr("Restore defaults"), this);
    connect(defaults, &QPushButton::clicked, this, [this] {
      form_->resetToDefaults();
      picker_->setSelected({});
      outputs_->setSelected({});
      compare_->setChecked(false);
    });
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(defaults);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(form_);
    layout->addWidget(picker_);
    layout->addWidget(outputs_);
    layout->addWidget(compare_);
    layout->addLayout(row);
  }

  QJsonObject settings() const override {
    QJsonObject o = form_->values();
    picker_->writeSettings(o, QStringLiteral("parameters"));
    outputs_->writeSettings(o, QStringLiteral("outputs"));
    QJsonArray compare;
    if (compare_->isChecked()) {
      const QString reference = o.value(QStringLiteral("method")).toString();
      for (QCheckBox* box : compareBoxes_) {
        const QString m = box->property("method").toString();
        if (box->isChecked() && m != reference) compare.append(m);
      }
    }
    o.insert(QStringLiteral("compare"), compare);
    return o;
  }
  void setSettings(const QJsonObject& settings) override {
    form_->setValues(settings);
    picker_->readSettings(settings, QStringLiteral("parameters"));
    outputs_->readSettings(settings, QStringLiteral("outputs"));
    if (settings.contains(QStringLiteral("compare"))) {
      QStringList methods;
      for (const QJsonValue& v : settings.value(QStringLiteral("compare")).toArray()) methods << v.toString();
      compare_->setChecked(!methods.isEmpty());
      for (QCheckBox* box : compareBoxes_) box->setChecked(methods.contains(box->property("method").toString()));
    }
  }
  void setSession(const api::ModelSession& session) override {
    const QString sbml = session.format == QLatin1String("sbml") ? session.filePath : QString();
    picker_->setModelPath(sbml);
    outputs_->setModelPath(sbml);
  }
  QString validate() const override {
    const QString form = form_->validate();
    if (!form.isEmpty()) return form;
    if (compare_->isChecked() && settings().value(QStringLiteral("compare")).toArray().isEmpty())
      return tr("Compare methods: check at least one method other than the Method above");
    if (const QString why = picker_->validate(); !why.isEmpty()) return why;
    return outputs_->validate();
  }

 private:
  OptionsForm* form_ = nullptr;
  IdPicker* picker_ = nullptr;
  IdPicker* outputs_ = nullptr;
  QGroupBox* compare_ = nullptr;
  QList<QCheckBox*> compareBoxes_;
};

// The chart tab: pick a parameter, see dy/dp of every output over time.
class ChartView : public api::TaskResultView {
 public:
  explicit ChartView(QWidget* parent) : api::TaskResultView(parent) {
    parameter_ = new QComboBox(this);
    parameter_->setObjectName(QStringLiteral("sensitivityParameter"));
    parameter_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    chart_ = new TimeSeriesChartView(QStringLiteral("Chart"), QStringLiteral("dy/dp"), {}, this);
    connect(parameter_, &QComboBox::currentIndexChanged, this, [this](int index) { plot(index); });
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(new QLabel(tr("Sensitivities with respect to"), this));
    bar->addWidget(parameter_);
    bar->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(chart_, 1);
  }

  QString title() const override { return QStringLiteral("Chart"); }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override {
    const Result* r = resultOf(result);
    if (!r) return;
    core_ = r->core();
    const QString previous = parameter_->currentText();
    QSignalBlocker block(parameter_);
    parameter_->clear();
    for (const std::string& id : core_->parameterIds) parameter_->addItem(q(id));
    chart_->setDisplayNames(r->names());
    // A re-run keeps the parameter looked at; a new result opens on the one with the largest
    // effect (not on the first, which may move nothing).
    const int keep = parameter_->findText(previous);
    parameter_->setCurrentIndex(
        keep >= 0 ? keep : int(tasks::mostInfluentialParameter(*core_, r->guard())));
    plot(parameter_->currentIndex());
  }
  QList<api::ExportFormat> exportFormats() const override { return chart_->exportFormats(); }
  bool exportTo(const QString& formatId, const QString& path, QString* errorString) const override {
    return chart_->exportTo(formatId, path, errorString);
  }

 private:
  void plot(int index) {
    if (!core_ || index < 0 || static_cast<std::size_t>(index) >= core_->parameterIds.size()) return;
    chart_->setSeries(parameterSlice(*core_, static_cast<std::size_t>(index)));
  }

  QComboBox* parameter_ = nullptr;
  TimeSeriesChartView* chart_ = nullptr;
  std::shared_ptr<const tasks::SensitivityResult> core_;
};

}  // namespace

const QList<FieldSpec>& fields() {
  using K = FieldSpec::Kind;
  const double inf = std::numeric_limits<double>::infinity();
  const tasks::SensitivityOptions core;  // the core's defaults
  static const QList<FieldSpec> specs = {
      {QStringLiteral("method"), QStringLiteral("Method"),
       QStringLiteral("odeSD direct and CVODES forward integrate S = dx/dp with the states; PBSR "
                      "and the exponential formula propagate S over the state trajectory; "
                      "finite differences re-run the model (2 runs per parameter)."),
       {}, K::Choice, QString::fromLatin1(tasks::toString(core.method)), -inf, inf, false, false,
       {QStringLiteral("odesd"), QStringLiteral("cvodes"), QStringLiteral("pbsr"),
        QStringLiteral("exp"), QStringLiteral("fd")},
       {QStringLiteral("odeSD direct"), QStringLiteral("CVODES forward"),
        QStringLiteral("Peano-Baker series (PBSR)"), QStringLiteral("Exponential formula"),
        QStringLiteral("Finite differences")}},
      {QStringLiteral("t_end"), QStringLiteral("End time"),
       QStringLiteral("Output times run from t = 0 to this time."), {}, K::Real,
       tasks::kDefaultEndTime, 0, inf, true, false, {}, {}},
      {QStringLiteral("points"), QStringLiteral("Output points"),
       QStringLiteral("Number of output times, equally spaced, both ends included."), {},
       K::Integer, qlonglong(tasks::kDefaultOutputPoints), 2, 1'000'000, false, false, {}, {}},
      {QStringLiteral("rtol"), QStringLiteral("Relative tolerance"),
       QStringLiteral("rtol of the integration (states and, with error control, S)."), {},
       K::Real, core.integrator.rtol, 0, 1, true, true, {}, {}},
      {QStringLiteral("atol"), QStringLiteral("Absolute tolerance"),
       QStringLiteral("atol of the integration, in the units of the values shown (a species in "
                      "concentration: atol x its compartment's size on its amount); also the "
                      "guard of scaled values (|y| <= atol gives 0)."),
       {}, K::Real, core.integrator.atol, 0, inf, true, false, {}, {}},
      {QStringLiteral("scaled"), QStringLiteral("Scaled (p/y)·dy/dp"),
       QStringLiteral("Report COPASI's scaled sensitivities instead of dy/dp."), {}, K::Flag,
       core.scaled, -inf, inf, false, false, {}, {}},
      {QStringLiteral("error_control"), QStringLiteral("Error control on S"),
       QStringLiteral("odeSD/CVODES: include S in the local error test."), {}, K::Flag,
       core.errorControl, -inf, inf, false, false, {}, {}},
      {QStringLiteral("error_test_budget"), QStringLiteral("Step budget for S's error test"),
       QStringLiteral("odeSD: when S in the error test costs over 8x the steps of the states "
                      "alone, use the states' error test at a 1000x tighter rtol instead (said "
                      "under Fallbacks). Off: S stays in the test whatever it costs."),
       {}, K::Flag, core.errorTestBudget, -inf, inf, false, false, {}, {}},
  };
  return specs;
}

Settings parseSettings(const QJsonObject& json) {
  Settings s;
  const SettingsReader in(json, "sensitivities setting");
  if (const auto name = in.text("method")) {
    const auto m = tasks::sensitivityMethodFromString(*name);
    if (!m) in.violated("method", "'" + *name + "'", "one of odesd, cvodes, pbsr, exp, fd");
    s.options.method = *m;
  }
  s.tEnd = in.positive("t_end", s.tEnd);
  s.points = in.whole("points", s.points, 2, 1e8);
  s.options.integrator.rtol = in.number("rtol", s.options.integrator.rtol);
  s.options.integrator.atol = in.number("atol", s.options.integrator.atol);
  s.options.scaled = json.value(QStringLiteral("scaled")).toBool(s.options.scaled);
  s.options.errorControl = json.value(QStringLiteral("error_control")).toBool(s.options.errorControl);
  s.options.errorTestBudget =
      json.value(QStringLiteral("error_test_budget")).toBool(s.options.errorTestBudget);
  for (const QJsonValue& v : json.value(QStringLiteral("parameters")).toArray()) {
    s.parameters.push_back(v.toString().toStdString());
  }
  for (const QJsonValue& v : json.value(QStringLiteral("outputs")).toArray())
    s.outputs.push_back(v.toString().toStdString());
  for (const QJsonValue& v : json.value(QStringLiteral("compare")).toArray()) {
    const std::string name = v.toString().toStdString();
    const auto m = tasks::sensitivityMethodFromString(name);
    if (!m) {
      throw InvalidOptions("sensitivities setting compare contains '" + name +
                           "'. Violated constraint: one of odesd, cvodes, pbsr, exp, fd");
    }
    if (*m != s.options.method && std::find(s.compare.begin(), s.compare.end(), *m) == s.compare.end())
      s.compare.push_back(*m);
  }
  if (auto why = s.options.validate()) throw InvalidOptions(*why);
  return s;
}

Result::Result(std::shared_ptr<const tasks::SensitivityResult> core, QJsonObject provenance,
               std::vector<Comparison> comparisons, double guard,
               std::shared_ptr<const QHash<QString, QString>> names)
    : core_(std::move(core)),
      provenance_(std::move(provenance)),
      comparisons_(std::move(comparisons)),
      guard_(guard),
      names_(std::move(names)) {}

QString methodLabel(tasks::SensitivityMethod method) {
  const FieldSpec& spec = fields().front();
  const qsizetype i = spec.choices.indexOf(QString::fromLatin1(tasks::toString(method)));
  return i >= 0 ? spec.choiceLabels[i] : QString::fromLatin1(tasks::toString(method));
}

api::TaskStatus Result::status() const {
  switch (core_->termination) {
    case tasks::Termination::Success: return api::TaskStatus::Succeeded;
    case tasks::Termination::UserAbort: return api::TaskStatus::Cancelled;
    default: return api::TaskStatus::Failed;
  }
}

QString Result::message() const { return q(core_->message); }

QString Result::details() const { return q(core_->details); }

std::vector<std::string> Result::fallbacks() const {
  std::vector<std::string> all = core_->stats.fallbacks;
  all.insert(all.end(), core_->stats.integrator.fallbacks.begin(),
             core_->stats.integrator.fallbacks.end());
  return all;
}

QString Result::summary() const {
  if (core_->termination != tasks::Termination::Success) return message();
  QString text = QStringLiteral("Sensitivities: %1 times x %2 outputs x %3 parameters, %4 s")
                     .arg(core_->times.size())
                     .arg(core_->outputIds.size())
                     .arg(core_->parameterIds.size())
                     .arg(core_->wallSeconds, 0, 'g', 3);
  if (!comparisons_.empty())
    text += QStringLiteral("; compared with %1 method(s) (see Compare)").arg(comparisons_.size());
  return text + fallbackNote(fallbacks()) + undefinedNote(core_->undefinedOutputs);
}

std::shared_ptr<const tasks::TimeCourseResult> parameterSlice(const tasks::SensitivityResult& r,
                                                              std::size_t parameter) {
  auto slice = std::make_shared<tasks::TimeCourseResult>();
  slice->times = r.times;
  slice->columns = r.outputIds;
  slice->eventTimes = r.eventTimes;
  slice->eventIds = r.eventIds;
  slice->undefinedOutputs = r.undefinedOutputs;
  slice->values.reserve(r.times.size() * r.outputIds.size());
  for (std::size_t it = 0; it < r.times.size(); ++it) {
    for (std::size_t iy = 0; iy < r.outputIds.size(); ++iy) {
      slice->values.push_back(r.at(it, iy, parameter));
    }
  }
  return slice;
}

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settingsJson, RunContext& context) {
  const Settings settings = parseSettings(settingsJson);
  context.setPhase(QStringLiteral("Reading and compiling the model..."));
  const LoadedModel loaded = loadModel(session.filePath);
  if (context.cancelled()) {
    return std::make_shared<MessageResult>(api::TaskStatus::Cancelled,
                                           QStringLiteral("cancelled while compiling the model"));
  }
  context.setPhase(QStringLiteral("Integrating..."));

  tasks::SensitivityProblem problem;
  problem.model = loaded.model;
  problem.times = tasks::equallySpacedTimes(settings.tEnd, settings.points);
  problem.parameters = settings.parameters;
  problem.outputs = settings.outputs;
  for (auto it = session.overrides.cbegin(); it != session.overrides.cend(); ++it) {
    problem.overrides.emplace_back(it.key().toStdString(), it.value());
  }
  const std::size_t runs = 1 + settings.compare.size();
  if (runs > 1) {
    context.setTextPrefix(QStringLiteral("Run 1 of %1 (%2): ").arg(runs).arg(methodLabel(settings.options.method)));
    context.setRunSlice(0, static_cast<int>(runs));
  }
  auto core = std::make_shared<tasks::SensitivityResult>(
      tasks::runSensitivities(problem, settings.options, context.monitor()));

  // The compared methods, on the same problem and options but for the method, only after the
  // reference succeeded (there is nothing to compare with otherwise).
  std::vector<Comparison> comparisons;
  if (core->termination == tasks::Termination::Success) {
    for (std::size_t i = 0; i < settings.compare.size(); ++i) {
      tasks::SensitivityOptions options = settings.options;
      options.method = settings.compare[i];
      context.setTextPrefix(QStringLiteral("Run %1 of %2 (%3): ").arg(i + 2).arg(runs).arg(methodLabel(options.method)));
      context.setRunSlice(static_cast<int>(i + 1), static_cast<int>(runs));
      auto other = std::make_shared<tasks::SensitivityResult>(
          tasks::runSensitivities(problem, options, context.monitor()));
      if (other->termination == tasks::Termination::UserAbort) {
        return std::make_shared<MessageResult>(
            api::TaskStatus::Cancelled,
            QStringLiteral("cancelled while comparing (%1)").arg(q(other->message)));
      }
      Comparison c{options.method, other, std::nullopt};
      if (other->termination == tasks::Termination::Success)
        c.discrepancy =
            tasks::compareSensitivities(*other, *core, settings.options.integrator.rtol);
      comparisons.push_back(std::move(c));
    }
  }

  QJsonObject provenance = baseProvenance(QString::fromLatin1(kTaskId),
                                          QStringLiteral("Parameter sensitivities"), loaded,
                                          session, settingsJson);
  const bool fd = settings.options.method == tasks::SensitivityMethod::FiniteDifferences;
  provenance.insert(QStringLiteral("method"), QString::fromLatin1(tasks::toString(settings.options.method)));
  provenance.insert(QStringLiteral("tolerances"),
                    QJsonObject{{QStringLiteral("rtol"), settings.options.integrator.rtol},
                                {QStringLiteral("atol"), settings.options.integrator.atol}});
  if (fd) {
    provenance.insert(
        QStringLiteral("derivative_source"),
        QStringLiteral("central finite differences (relative step %1, rtol %2, atol %3); model "
                       "Jacobians exact symbolic")
            .arg(settings.options.fdRelativeStep)
            .arg(std::min(settings.options.integrator.rtol, settings.options.fdRtol))
            .arg(std::min(settings.options.integrator.atol, settings.options.fdAtol)));
  }
  if (fd) {
    // The step each parameter's differences were taken with (the method chooses it per parameter).
    QJsonArray steps;
    for (std::size_t j = 0; j < core->stats.fdSteps.size() && j < core->parameterIds.size(); ++j) {
      const sensitivity::FiniteDifferenceStep& step = core->stats.fdSteps[j];
      steps.append(QJsonObject{{QStringLiteral("parameter"), q(core->parameterIds[j])},
                               {QStringLiteral("step"), step.delta},
                               {QStringLiteral("scheme"), q(sensitivity::describe(step))}});
    }
    provenance.insert(QStringLiteral("fd_steps"), steps);
  }
  provenance.insert(QStringLiteral("scaled"), settings.options.scaled);
  QJsonArray parameters;
  for (const std::string& id : core->parameterIds) parameters.append(q(id));
  provenance.insert(QStringLiteral("parameters"), parameters);
  provenance.insert(
      QStringLiteral("run"),
      QJsonObject{{QStringLiteral("termination"), QString::fromLatin1(tasks::toString(core->termination))},
                  {QStringLiteral("message"), q(core->message)},
                  {QStringLiteral("details"), q(core->details)},
                  {QStringLiteral("wall_seconds"), core->wallSeconds},
                  {QStringLiteral("model_load_seconds"), loaded.loadSeconds},
                  {QStringLiteral("simulations"), static_cast<double>(core->stats.simulations)},
                  {QStringLiteral("guarded"), static_cast<double>(core->guardedCount)}});
  QJsonObject stats = statsJson(core->stats.integrator);
  stats.insert(QStringLiteral("sens_evals"), static_cast<double>(core->stats.sensitivityEvals));
  QJsonArray fallbacks;  // the task's sentences, then the integrator's (as Result::fallbacks)
  for (const std::string& f : core->stats.fallbacks) fallbacks.append(q(f));
  for (const std::string& f : core->stats.integrator.fallbacks) fallbacks.append(q(f));
  stats.insert(QStringLiteral("fallbacks"), fallbacks);
  provenance.insert(QStringLiteral("statistics"), stats);
  provenance.insert(QStringLiteral("undefined_outputs"), undefinedJson(core->undefinedOutputs));
  if (!comparisons.empty()) {
    QJsonArray compared;
    for (const Comparison& c : comparisons) {
      QJsonObject o{{QStringLiteral("method"), QString::fromLatin1(tasks::toString(c.method))},
                    {QStringLiteral("termination"), QString::fromLatin1(tasks::toString(c.result->termination))},
                    {QStringLiteral("wall_seconds"), c.result->wallSeconds}};
      if (c.discrepancy) {
        o.insert(QStringLiteral("max_relative_discrepancy"), c.discrepancy->maxRelative);
        o.insert(QStringLiteral("median_relative_discrepancy"), c.discrepancy->medianRelative);
      } else {
        o.insert(QStringLiteral("message"), q(c.result->message));
      }
      compared.append(o);
    }
    provenance.insert(QStringLiteral("compared_methods"), compared);
  }
  return std::make_shared<Result>(std::move(core), std::move(provenance), std::move(comparisons),
                                  settings.options.integrator.atol, loaded.names);
}

api::TaskDescription description() {
  api::TaskDescription d;
  d.id = QString::fromLatin1(kTaskId);
  d.displayName = QStringLiteral("Parameter sensitivities");
  d.menuPath = QStringLiteral("Tasks");
  d.toolTip = QStringLiteral("dy/dp of the outputs over time, by five methods");
  d.icon = taskIcon(IconKind::Sensitivities);
  d.order = 20;
  d.createSetupWidget = [](QWidget* parent) -> api::TaskSetupWidget* {
    return new SetupWidget(parent);
  };
  d.createRunner = []() -> std::unique_ptr<api::TaskRunner> {
    return std::make_unique<CoreTaskRunner>(&run);
  };
  d.createResultViews = [](QWidget* parent) {
    auto* tableModel = new SensitivityTableModel;
    auto* table = new TableResultView(
        QStringLiteral("Table"), tableModel,
        [tableModel](const std::shared_ptr<const api::TaskResult>& r) {
          const Result* result = resultOf(r);
          tableModel->setResult(result ? result->core() : nullptr);
        },
        parent);
    auto* chart = new ChartView(parent);
    auto* stats = new KeyValueView(
        QStringLiteral("Statistics"),
        [](const std::shared_ptr<const api::TaskResult>& result) {
          QList<KeyValueTableModel::Entry> rows;
          const Result* r = resultOf(result);
          if (!r) return rows;
          const tasks::SensitivityResult& c = *r->core();
          using E = KeyValueTableModel::Entry;
          rows << E{QStringLiteral("method"), QStringLiteral("Method"),
                    r->provenance().value(QStringLiteral("method")).toString(), {}};
          rows << E{QStringLiteral("parameters"), QStringLiteral("Parameters"),
                    qlonglong(c.parameterIds.size()), {}};
          rows << E{QStringLiteral("wall_seconds"), QStringLiteral("Wall time (s)"), c.wallSeconds, {}};
          rows << E{QStringLiteral("simulations"), QStringLiteral("Integrations"),
                    qlonglong(c.stats.simulations), {}};
          rows << E{QStringLiteral("sens_evals"), QStringLiteral("Sensitivity evaluations"),
                    qlonglong(c.stats.sensitivityEvals), {}};
          if (c.scaled) {
            rows << E{QStringLiteral("guarded"), QStringLiteral("Guarded (|y| <= atol)"),
                      qlonglong(c.guardedCount), QStringLiteral("scaled values reported as 0")};
          }
          // Finite differences: the step taken for each parameter, and how.
          for (std::size_t j = 0; j < c.stats.fdSteps.size() && j < c.parameterIds.size(); ++j) {
            const sensitivity::FiniteDifferenceStep& step = c.stats.fdSteps[j];
            rows << E{QStringLiteral("fd_step_") + q(c.parameterIds[j]),
                      QStringLiteral("FD step, ") + q(c.parameterIds[j]),
                      QStringLiteral("%1 (%2)")
                          .arg(QString::number(step.delta, 'g', 4), q(sensitivity::describe(step))),
                      {}};
          }
          // The task's fallbacks first (another method, another step), then the integrator's.
          rows << fallbackEntries(c.stats.fallbacks, QStringLiteral("task_fallback"));
          for (const E& e : statsEntries(c.stats.integrator)) {
            if (e.key != QLatin1String("sens_evals")) rows << e;  // counted above, per method
          }
          return rows;
        },
        parent);
    auto* heatMap = new HeatMapView(parent);
    auto* compare = new CompareView(parent);
    return QList<api::TaskResultView*>{chart, heatMap, compare, table, stats};
  };
  return d;
}

}  // namespace sensode::plugin::sensitivities
