// SPDX-License-Identifier: MIT
#include "plugin/gradient/gradient_task.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <optional>

#include "core/common/errors.h"
#include "core/petab/observable_curves.h"
#include "core/petab/petab_problem.h"
#include "plugin/common/model_cache.h"
#include "plugin/common/provenance.h"
#include "plugin/common/task_icons.h"
#include "plugin/forms/settings_reader.h"
#include "plugin/gradient/steady_state_table.h"
#include "plugin/models/number_format.h"
#include "plugin/models/record_table_model.h"
#include "plugin/runner/task_runner.h"
#include "plugin/views/bar_chart_view.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/table_text.h"

namespace sensode::plugin::gradient {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }


std::string numberText(double v) { return QString::number(v, 'g', 17).toStdString(); }

const Result* resultOf(const std::shared_ptr<const api::TaskResult>& r) {
  return dynamic_cast<const Result*>(r.get());
}

QString methodLabel(petab::GradientMethod m) {
  switch (m) {
    case petab::GradientMethod::Ssasa: return QStringLiteral("steady-state adjoint (ssASA)");
    case petab::GradientMethod::Adjoint: return QStringLiteral("standard adjoint");
    case petab::GradientMethod::Forward: return QStringLiteral("forward sensitivities");
    case petab::GradientMethod::FiniteDifferences: return QStringLiteral("finite differences");
    case petab::GradientMethod::None: break;
  }
  return QStringLiteral("objective only");
}

// The estimated parameters of the chosen problem with editable values (linear scale). Only
// edited values go into the settings, so a changed problem file keeps its own nominal values.
class ParameterEditor : public QWidget {
 public:
  explicit ParameterEditor(QWidget* parent) : QWidget(parent) {
    table_ = new QTableWidget(0, 5, this);
    table_->setObjectName(QStringLiteral("parameterValues"));
    table_->setHorizontalHeaderLabels({tr("Parameter"), tr("Scale"), tr("Bounds"),
                                       tr("Nominal"), tr("Value")});
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    keepCellTextWhole(table_);
    table_->setMinimumHeight(160);
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    auto* nominal = new QPushButton(tr("Nominal values"), this);
    nominal->setObjectName(QStringLiteral("nominalValues"));
    connect(nominal, &QPushButton::clicked, this, [this] { setEdited({}); });
    auto* row = new QHBoxLayout;
    row->addWidget(note_, 1);
    row->addWidget(nominal);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* title = new QLabel(tr("Estimated parameters (linear scale; edit a value to evaluate "
                                "the gradient elsewhere)"),
                             this);
    title->setWordWrap(true);  // one line would set the settings column's minimum width
    layout->addWidget(title);
    layout->addWidget(table_, 1);
    layout->addLayout(row);
  }

  void setProblemPath(const QString& path) {
    if (path == path_) return;
    const QJsonObject keep = edited();
    path_ = path;
    table_->setRowCount(0);
    note_->clear();
    steadyStates_ = std::nullopt;
    if (path.isEmpty()) return;
    try {
      const petab::Problem pr = petab::loadProblem(QFile::encodeName(path).toStdString());
      steadyStates_ = std::any_of(pr.measurements.begin(), pr.measurements.end(),
                                  [](const petab::Measurement& m) {
                                    return m.preequilibrationCondition >= 0 || std::isinf(m.time);
                                  });
      for (const petab::Parameter& p : pr.parameters) {
        if (!p.estimate) continue;
        const int r = table_->rowCount();
        table_->insertRow(r);
        const auto fixed = [](const QString& text) {
          auto* item = new QTableWidgetItem(text);
          item->setFlags(item->flags() & ~Qt::ItemIsEditable);
          return item;
        };
        table_->setItem(r, 0, fixed(q(p.id)));
        table_->setItem(r, 1, fixed(QString::fromLatin1(petab::toString(p.scale))));
        table_->setItem(r, 2, fixed(QStringLiteral("[%1, %2]").arg(shortNumber(p.lowerBound),
                                                                   shortNumber(p.upperBound))));
        auto* nominal = fixed(shortNumber(p.nominalValue));
        nominal->setData(Qt::UserRole, p.nominalValue);
        nominal->setToolTip(exactNumber(p.nominalValue));
        table_->setItem(r, 3, nominal);
        auto* value = new QTableWidgetItem;
        showNumberInCell(value, p.nominalValue);
        table_->setItem(r, 4, value);
      }
      note_->setText(tr("%n estimated parameter(s)", "", table_->rowCount()));
    } catch (const std::exception& e) {
      note_->setText(QString::fromStdString(e.what()));
    }
    setEdited(pending_.isEmpty() ? keep : pending_);
  }

  // Values that differ from the nominal ones, by id (invalid texts are left out; validate()).
  QJsonObject edited() const {
    if (table_->rowCount() == 0) return pending_;
    QJsonObject o;
    for (int r = 0; r < table_->rowCount(); ++r) {
      const std::optional<double> v = numberInCell(table_->item(r, 4));
      if (v && *v != table_->item(r, 3)->data(Qt::UserRole).toDouble())
        o.insert(table_->item(r, 0)->text(), *v);
    }
    return o;
  }

  void setEdited(const QJsonObject& values) {
    if (table_->rowCount() == 0) {
      pending_ = values;
      return;
    }
    pending_ = {};
    for (int r = 0; r < table_->rowCount(); ++r) {
      const QJsonValue v = values.value(table_->item(r, 0)->text());
      const double nominal = table_->item(r, 3)->data(Qt::UserRole).toDouble();
      showNumberInCell(table_->item(r, 4), v.isDouble() ? v.toDouble() : nominal);
    }
  }

  QString validate() const {
    for (int r = 0; r < table_->rowCount(); ++r) {
      if (!numberInCell(table_->item(r, 4)))
        return tr("Parameter %1: '%2' is not a number")
            .arg(table_->item(r, 0)->text(), table_->item(r, 4)->text());
    }
    return {};
  }

  QTableWidget* table() const { return table_; }
  // Whether the loaded problem has steady-state data (pre-equilibration or t = inf
  // measurements); nullopt while no problem is loaded.
  std::optional<bool> hasSteadyStateData() const { return steadyStates_; }

 private:
  QTableWidget* table_ = nullptr;
  std::optional<bool> steadyStates_;
  QLabel* note_ = nullptr;
  QString path_;
  QJsonObject pending_;
};

class SetupWidget : public api::TaskSetupWidget {
 public:
  explicit SetupWidget(QWidget* parent) : api::TaskSetupWidget(parent) {
    problem_ = new QLineEdit(this);
    problem_->setObjectName(QStringLiteral("problemFile"));
    problem_->setPlaceholderText(tr("the open PEtab problem"));
    // Never narrower than the placeholder: an empty-looking field hides which problem runs.
    problem_->setMinimumWidth(problem_->fontMetrics().horizontalAdvance(problem_->placeholderText()) + 16);
    auto* browse = new QPushButton(tr("Browse..."), this);
    connect(browse, &QPushButton::clicked, this, [this] {
      const QString file = QFileDialog::getOpenFileName(
          this, tr("PEtab problem"), QFileInfo(effectivePath()).absolutePath(),
          tr("PEtab problems (*.yaml *.yml)"));
      if (!file.isEmpty()) {
        problem_->setText(file);
        loadProblem();
      }
    });
    connect(problem_, &QLineEdit::editingFinished, this, [this] { loadProblem(); });
    form_ = new OptionsForm(fields(), this);
    form_->setObjectName(QStringLiteral("options"));
    editor_ = new ParameterEditor(this);
    auto* defaults = new QPushButton(tr("Restore defaults"), this);
    connect(defaults, &QPushButton::clicked, this, [this] {
      form_->resetToDefaults();
      editor_->setEdited({});
    });
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(new QLabel(tr("PEtab problem"), this));
    fileRow->addWidget(problem_, 1);
    fileRow->addWidget(browse);
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(defaults);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(fileRow);
    layout->addWidget(form_);
    layout->addWidget(editor_, 1);
    layout->addLayout(row);
  }

  QJsonObject settings() const override {
    QJsonObject o = form_->values();
    o.insert(QStringLiteral("problem"), problem_->text().trimmed());
    o.insert(QStringLiteral("parameters"), editor_->edited());
    return o;
  }
  void setSettings(const QJsonObject& settings) override {
    form_->setValues(settings);
    if (settings.contains(QStringLiteral("problem")))
      problem_->setText(settings.value(QStringLiteral("problem")).toString());
    if (settings.contains(QStringLiteral("parameters")))
      editor_->setEdited(settings.value(QStringLiteral("parameters")).toObject());
    loadProblem();
  }
  void setSession(const api::ModelSession& session) override {
    sessionPath_ = session.format == QLatin1String("petab") ? session.filePath : QString();
    loadProblem();
  }
  QString validate() const override {
    if (effectivePath().isEmpty())
      return tr("PEtab problem: open a PEtab problem (.yaml) or choose one here");
    const QString form = form_->validate();
    return form.isEmpty() ? editor_->validate() : form;
  }

 private:
  QString effectivePath() const {
    const QString chosen = problem_->text().trimmed();
    return chosen.isEmpty() ? sessionPath_ : chosen;
  }

  // The parameter table, and the methods that make sense for the problem: without steady-state
  // data ssASA is the standard adjoint (both integrate the time course backward; they differ
  // only in how an equilibration is treated), so the list offers "Standard adjoint" and says
  // why ssASA is greyed.
  void loadProblem() {
    editor_->setProblemPath(effectivePath());
    const bool withoutSteadyStates = editor_->hasSteadyStateData() == false;
    form_->setChoiceAvailable(
        QStringLiteral("method"), QStringLiteral("ssasa"), !withoutSteadyStates,
        tr("This problem has no steady-state data (no pre-equilibration, no t = inf "
           "measurement): ssASA would compute exactly the standard adjoint."),
        QStringLiteral("adjoint"));
  }

  QLineEdit* problem_ = nullptr;
  OptionsForm* form_ = nullptr;
  ParameterEditor* editor_ = nullptr;
  QString sessionPath_;
};

QList<RecordTableModel::Row> gradientRows(const Result& r) {
  QList<RecordTableModel::Row> rows;
  const petab::ObjectiveResult& c = *r.core();
  for (std::size_t i = 0; i < r.parameters().size(); ++i) {
    const ParameterRow& p = r.parameters()[i];
    const double scaled = i < c.parameters.size() ? c.parameters[i] : NAN;
    const double g = i < c.gradient.size() ? c.gradient[i] : NAN;
    rows.append({{q(p.id), QString::fromLatin1(petab::toString(p.scale)), scaled, p.value, g,
                  p.edited ? QStringLiteral("edited") : QStringLiteral("nominal")},
                 {}});
  }
  return rows;
}

}  // namespace

const QList<FieldSpec>& fields() {
  using K = FieldSpec::Kind;
  const double inf = std::numeric_limits<double>::infinity();
  const petab::ObjectiveOptions core;
  static const QList<FieldSpec> specs = {
      {QStringLiteral("method"), QStringLiteral("Method"),
       QStringLiteral("ssASA: backward adjoint over the time course and one transposed J_r solve "
                      "per steady state. Standard adjoint: integrates backward through the "
                      "equilibrations too. Forward: forward sensitivities. Finite differences: "
                      "2 objective evaluations per parameter."),
       {}, K::Choice, QStringLiteral("ssasa"), -inf, inf, false, false,
       {QStringLiteral("ssasa"), QStringLiteral("adjoint"), QStringLiteral("forward"),
        QStringLiteral("fd")},
       {QStringLiteral("Steady-state adjoint (ssASA)"), QStringLiteral("Standard adjoint"),
        QStringLiteral("Forward sensitivities"), QStringLiteral("Finite differences")}},
      {QStringLiteral("rtol"), QStringLiteral("Relative tolerance"),
       QStringLiteral("rtol of the time courses (CVODES)."), {}, K::Real, core.integrator.rtol, 0,
       1, true, true, {}, {}},
      {QStringLiteral("atol"), QStringLiteral("Absolute tolerance"),
       QStringLiteral("atol of the time courses (CVODES)."), {}, K::Real, core.integrator.atol, 0,
       inf, true, false, {}, {}},
      {QStringLiteral("ss_rtol"), QStringLiteral("Steady-state rtol"),
       QStringLiteral("Steady state when ‖f(x)‖ with weights 1/(rtol·|x| + atol) is below 1."),
       {}, K::Real, core.steadyState.rtol, 0, 1, true, true, {}, {}},
      {QStringLiteral("ss_atol"), QStringLiteral("Steady-state atol"),
       QStringLiteral("atol of the steady-state criterion."), {}, K::Real, core.steadyState.atol, 0,
       inf, true, false, {}, {}},
      {QStringLiteral("fd_step"), QStringLiteral("Finite-difference step"),
       QStringLiteral("Central-difference step on the parameter scale (method fd)."), {}, K::Real,
       core.fdStep, 0, 1, true, false, {}, {}},
  };
  return specs;
}

Settings parseSettings(const QJsonObject& json) {
  Settings s;
  const SettingsReader in(json, "ssgradient setting");
  if (const auto name = in.text("method")) {
    const auto m = petab::gradientMethodFromString(*name);
    if (!m || *m == petab::GradientMethod::None)
      in.violated("method", "'" + *name + "'", "one of ssasa, adjoint, forward, fd");
    s.method = *m;
  }
  s.options.integrator.rtol = in.number("rtol", s.options.integrator.rtol);
  s.options.integrator.atol = in.number("atol", s.options.integrator.atol);
  s.options.steadyState.rtol = in.number("ss_rtol", s.options.steadyState.rtol);
  s.options.steadyState.atol = in.number("ss_atol", s.options.steadyState.atol);
  s.options.fdStep = in.positive("fd_step", s.options.fdStep);
  if (auto why = s.options.integrator.validate()) throw InvalidOptions(*why);
  if (auto why = s.options.steadyState.validate()) throw InvalidOptions(*why);
  s.problem = json.value(QStringLiteral("problem")).toString().trimmed();
  const QJsonObject values = json.value(QStringLiteral("parameters")).toObject();
  for (auto it = values.begin(); it != values.end(); ++it) {
    if (!it.value().isDouble())
      throw InvalidOptions("ssgradient setting parameters." + it.key().toStdString() +
                           " is not a number");
    s.parameters.emplace_back(it.key().toStdString(), it.value().toDouble());
  }
  return s;
}

std::vector<ParameterRow> parameterRows(const petab::Problem& problem,
                                        const std::vector<std::pair<std::string, double>>& overrides,
                                        std::vector<double>* scaled) {
  std::vector<ParameterRow> rows;
  for (int j : petab::estimatedParameters(problem)) {
    const petab::Parameter& p = problem.parameters[static_cast<std::size_t>(j)];
    rows.push_back({p.id, p.scale, p.lowerBound, p.upperBound, p.nominalValue, p.nominalValue,
                    false});
  }
  for (const auto& [id, value] : overrides) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const ParameterRow& r) { return r.id == id; });
    if (it == rows.end())
      throw InvalidOptions("parameter '" + id + "' is not an estimated parameter of " +
                           problem.yamlFile.string());
    if (it->scale != petab::Scale::Lin && !(value > 0))
      throw InvalidOptions("parameter '" + id + "' = " + numberText(value) + " has scale " +
                           petab::toString(it->scale) + ": the value must be > 0");
    if (!std::isfinite(value))
      throw InvalidOptions("parameter '" + id + "' = " + numberText(value) + " is not finite");
    it->value = value;
    it->edited = value != it->nominal;
  }
  if (scaled) {
    scaled->clear();
    for (const ParameterRow& r : rows) scaled->push_back(petab::toScale(r.scale, r.value));
  }
  return rows;
}

Result::Result(std::shared_ptr<const petab::ObjectiveResult> core, std::vector<ParameterRow> rows,
               std::shared_ptr<const MeasurementPoints> measurements, QString methodName,
               double wallSeconds, QJsonObject provenance)
    : core_(std::move(core)),
      rows_(std::move(rows)),
      measurements_(std::move(measurements)),
      methodName_(std::move(methodName)),
      wallSeconds_(wallSeconds),
      provenance_(std::move(provenance)) {}

QString Result::summary() const {
  return QStringLiteral("Gradient (%1): objective %2, %3 parameters, %4 measurements, %5 steady "
                        "states, %6 s")
      .arg(methodName_, shortNumber(core_->objective))
      .arg(core_->gradient.size())
      .arg(measurements_ ? measurements_->size() : 0)
      .arg(core_->steadyStates)
      .arg(wallSeconds_, 0, 'g', 3) + fallbackNote(core_->fallbacks);
}

MeasurementPoints measurementPoints(const petab::Problem& problem,
                                    const petab::ObjectiveResult& result) {
  MeasurementPoints points;
  points.reserve(problem.measurements.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto conditionId = [&](int c) {
    return c >= 0 ? q(problem.conditions[static_cast<std::size_t>(c)].id) : QString();
  };
  for (std::size_t i = 0; i < problem.measurements.size(); ++i) {
    const petab::Measurement& m = problem.measurements[i];
    const petab::Observable& o = problem.observables[static_cast<std::size_t>(m.observable)];
    points.push_back({q(o.id), conditionId(m.simulationCondition),
                      conditionId(m.preequilibrationCondition), m.time, m.value,
                      i < result.simulated.size() ? result.simulated[i] : nan,
                      i < result.sigma.size() ? result.sigma[i] : nan, o.transformation,
                      q(petab::observableParametersText(m))});
  }
  return points;
}

namespace {

// The open PEtab problem's edited nominal values (the model browser's PEtab parameters, e.g. an
// applied best fit) under the task's own parameter values, which win.
std::vector<std::pair<std::string, double>> withSessionValues(
    const api::ModelSession& session, const QString& path,
    const std::vector<std::pair<std::string, double>>& taskValues) {
  std::vector<std::pair<std::string, double>> values;
  if (session.format != QLatin1String("petab") || QFileInfo(path) != QFileInfo(session.filePath))
    return taskValues;
  for (auto it = session.overrides.cbegin(); it != session.overrides.cend(); ++it) {
    const std::string id = it.key().toStdString();
    if (std::none_of(taskValues.begin(), taskValues.end(),
                     [&](const auto& v) { return v.first == id; }))
      values.emplace_back(id, it.value());
  }
  values.insert(values.end(), taskValues.begin(), taskValues.end());
  return values;
}

}  // namespace

SimulatedCurves simulatedCurves(const petab::Problem& problem, const std::vector<double>& scaled,
                                const petab::ObjectiveOptions& options,
                                const ProgressMonitor& monitor) {
  const auto conditionId = [&](int c) {
    return c >= 0 ? q(problem.conditions[static_cast<std::size_t>(c)].id) : QString();
  };
  SimulatedCurves curves;
  for (petab::ObservableCurve& c : petab::observableCurves(problem, scaled, options, 301, monitor)) {
    curves.push_back({q(problem.observables[static_cast<std::size_t>(c.observable)].id),
                      conditionId(c.simulationCondition), conditionId(c.preequilibrationCondition),
                      q(c.observableParameters), std::move(c.times), std::move(c.values)});
  }
  return curves;
}

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settingsJson, RunContext& context) {
  const Settings settings = parseSettings(settingsJson);
  const QString path = !settings.problem.isEmpty() ? settings.problem
                       : session.format == QLatin1String("petab")
                           ? session.filePath
                           : QString();
  if (path.isEmpty())
    throw InvalidOptions("ssgradient: no PEtab problem (the open file " +
                         session.filePath.toStdString() +
                         " is SBML; open a PEtab yaml or choose one in the task)");
  context.setPhase(QStringLiteral("Reading the PEtab problem and compiling its model..."));
  QElapsedTimer loadTimer;
  loadTimer.start();
  const petab::Problem problem = petab::loadProblem(QFile::encodeName(path).toStdString());
  const double loadSeconds = static_cast<double>(loadTimer.nsecsElapsed()) * 1e-9;
  std::vector<double> scaled;
  std::vector<ParameterRow> rows =
      parameterRows(problem, withSessionValues(session, path, settings.parameters), &scaled);
  if (context.cancelled())
    return std::make_shared<MessageResult>(api::TaskStatus::Cancelled,
                                           QStringLiteral("cancelled while reading the problem"));
  context.setPhase(QStringLiteral("Computing the objective and its gradient..."));

  QElapsedTimer timer;
  timer.start();
  std::shared_ptr<petab::ObjectiveResult> core;
  try {
    core = std::make_shared<petab::ObjectiveResult>(
        petab::evaluateObjective(problem, scaled, settings.method, settings.options,
                                 context.monitor()));
  } catch (const Cancelled& e) {
    return std::make_shared<MessageResult>(
        api::TaskStatus::Cancelled,
        QStringLiteral("cancelled (%1); the previous results stay").arg(QString::fromStdString(e.what())));
  }
  const double wall = static_cast<double>(timer.nsecsElapsed()) * 1e-9;

  // The problem's model is not one of the model cache's (the PEtab reader compiles it), so
  // the provenance gets its file facts here and its size below.
  LoadedModel model;
  model.path = QFileInfo(path).absoluteFilePath();
  model.sha256 = sha256OfFile(path);
  model.loadSeconds = loadSeconds;
  api::ModelSession used = session;
  used.format = QStringLiteral("petab");
  QJsonObject provenance = baseProvenance(QString::fromLatin1(kTaskId),
                                          QString::fromLatin1(kDisplayName), model, used,
                                          settingsJson);
  QJsonObject modelJson = provenance.value(QStringLiteral("model")).toObject();
  modelJson.insert(QStringLiteral("states"), problem.model->nx());
  modelJson.insert(QStringLiteral("parameters"), problem.model->np());
  provenance.insert(QStringLiteral("model"), modelJson);
  provenance.insert(QStringLiteral("petab"),
                    QJsonObject{{QStringLiteral("yaml"), model.path},
                                {QStringLiteral("sbml"), q(problem.sbmlFile.string())},
                                {QStringLiteral("sbml_sha256"), sha256OfFile(q(problem.sbmlFile.string()))}});
  provenance.insert(QStringLiteral("method"), QString::fromLatin1(petab::toString(settings.method)));
  provenance.insert(QStringLiteral("tolerances"),
                    QJsonObject{{QStringLiteral("rtol"), settings.options.integrator.rtol},
                                {QStringLiteral("atol"), settings.options.integrator.atol},
                                {QStringLiteral("ss_rtol"), settings.options.steadyState.rtol},
                                {QStringLiteral("ss_atol"), settings.options.steadyState.atol}});
  if (settings.method == petab::GradientMethod::FiniteDifferences)
    provenance.insert(QStringLiteral("derivative_source"),
                      QStringLiteral("central finite differences of the objective, step %1 on "
                                     "the parameter scale")
                          .arg(settings.options.fdStep));
  QJsonObject values;
  for (const ParameterRow& r : rows) values.insert(q(r.id), r.value);
  provenance.insert(QStringLiteral("parameters"), values);
  provenance.insert(QStringLiteral("run"),
                    QJsonObject{{QStringLiteral("objective"), core->objective},
                                {QStringLiteral("notes"), q(core->notes)},
                                {QStringLiteral("wall_seconds"), wall},
                                {QStringLiteral("model_load_seconds"), loadSeconds},
                                {QStringLiteral("simulations"), static_cast<double>(core->simulations)},
                                {QStringLiteral("steady_states"), static_cast<double>(core->steadyStates)}});
  auto measurements = std::make_shared<const MeasurementPoints>(measurementPoints(problem, *core));
  // The observables on a fine grid for the chart: one more simulation per experiment, without
  // derivatives. A failure there (a grid time where an observable is not finite) leaves the
  // chart its lines through the measurement times and says why; a cancel cancels the task.
  context.setPhase(QStringLiteral("Simulating the observables on a fine time grid..."));
  std::shared_ptr<const SimulatedCurves> curves;
  QString curveError;
  try {
    curves = std::make_shared<const SimulatedCurves>(
        simulatedCurves(problem, scaled, settings.options, context.monitor()));
  } catch (const Cancelled& e) {
    return std::make_shared<MessageResult>(
        api::TaskStatus::Cancelled,
        QStringLiteral("cancelled (%1); the previous results stay").arg(QString::fromStdString(e.what())));
  } catch (const std::exception& e) {
    curveError = QString::fromStdString(e.what());
  }
  auto result = std::make_shared<Result>(std::move(core), std::move(rows), std::move(measurements),
                                         methodLabel(settings.method), wall, std::move(provenance));
  result->setCurves(std::move(curves), std::move(curveError));
  return result;
}

api::TaskDescription description() {
  api::TaskDescription d;
  d.id = QString::fromLatin1(kTaskId);
  d.displayName = QString::fromLatin1(kDisplayName);
  d.menuPath = QStringLiteral("Tasks");
  d.toolTip = QStringLiteral("Negative log-likelihood of a PEtab problem (time-course and "
                             "steady-state data), its gradient (ssASA, adjoint, forward, finite "
                             "differences) and the measurements against the simulation");
  d.icon = taskIcon(IconKind::Gradient);
  d.order = 30;
  // A PEtab problem is needed; with an SBML model open it can be chosen in the task.
  d.sessionFormats = {QStringLiteral("petab"), QStringLiteral("sbml")};
  d.createSetupWidget = [](QWidget* parent) -> api::TaskSetupWidget* {
    return new SetupWidget(parent);
  };
  d.createRunner = []() -> std::unique_ptr<api::TaskRunner> {
    return std::make_unique<CoreTaskRunner>(&run);
  };
  d.createResultViews = [](QWidget* parent) {
    auto* observables = new MeasurementChartView(
        QStringLiteral("Observables"),
        [](const std::shared_ptr<const api::TaskResult>& result) {
          const Result* r = resultOf(result);
          return r ? r->measurements() : nullptr;
        },
        parent);
    observables->setCurveSource([](const std::shared_ptr<const api::TaskResult>& result) {
      const Result* r = resultOf(result);
      return r ? r->curves() : nullptr;
    });
    auto* chart = new BarChartView(
        QStringLiteral("Gradient"),
        [](const std::shared_ptr<const api::TaskResult>& result) {
          BarData bars;
          const Result* r = resultOf(result);
          if (!r) return bars;
          for (std::size_t i = 0; i < r->parameters().size() && i < r->core()->gradient.size(); ++i) {
            bars.labels << q(r->parameters()[i].id);
            bars.values << r->core()->gradient[i];
          }
          bars.valueTitle = QStringLiteral("d(-log L) / d parameter (on its scale)");
          bars.caption = QStringLiteral("Objective (negative log-likelihood) %1 by %2; %3")
                             .arg(exactNumber(r->core()->objective), r->methodName(),
                                  q(r->core()->notes));
          return bars;
        },
        parent);
    // Gradients span decades (a noise parameter's entry dwarfs the rates'): symmetric log first.
    chart->setSymlog(true);
    auto* gradientModel = new RecordTableModel(
        {QStringLiteral("parameter"), QStringLiteral("scale"), QStringLiteral("value (scale)"),
         QStringLiteral("value (linear)"), QStringLiteral("gradient"), QStringLiteral("source")});
    auto* table = new TableResultView(
        QStringLiteral("Table"), gradientModel,
        [gradientModel](const std::shared_ptr<const api::TaskResult>& r) {
          const Result* result = resultOf(r);
          gradientModel->setRows(result ? gradientRows(*result) : QList<RecordTableModel::Row>{});
        },
        parent);
    auto* ssModel = new RecordTableModel({QStringLiteral("diagnostic")});
    // Numbers and long texts share each column: left-aligned, a short number stays beside its
    // label instead of at the far edge of a column widened by the conservation laws.
    ssModel->setUniformAlignment(Qt::AlignLeft);
    auto* steady = new TableResultView(
        QStringLiteral("Steady states"), ssModel,
        [ssModel](const std::shared_ptr<const api::TaskResult>& r) {
          const Result* result = resultOf(r);
          if (result)
            ssModel->setTable(equilibrationHeaders(result->core()->equilibrations),
                              equilibrationRows(result->core()->equilibrations));
          else ssModel->setTable({QStringLiteral("diagnostic")}, {});
        },
        parent);
    auto* stats = new KeyValueView(
        QStringLiteral("Statistics"),
        [](const std::shared_ptr<const api::TaskResult>& result) {
          QList<KeyValueTableModel::Entry> rows;
          const Result* r = resultOf(result);
          if (!r) return rows;
          const petab::ObjectiveResult& c = *r->core();
          using E = KeyValueTableModel::Entry;
          int stable = 0, fallbacks = 0;
          for (const auto& e : c.equilibrations) {
            stable += e.solution.stable ? 1 : 0;
            fallbacks += e.solution.foundBy == steadystate::FoundBy::Fallback ? 1 : 0;
          }
          rows << E{QStringLiteral("method"), QStringLiteral("Method"), r->methodName(), {}};
          rows << E{QStringLiteral("objective"), QStringLiteral("Objective (−log L)"), c.objective,
                    QStringLiteral("negative log-likelihood with its constant terms")};
          rows << E{QStringLiteral("parameters"), QStringLiteral("Estimated parameters"),
                    qlonglong(c.gradient.size()), {}};
          rows << E{QStringLiteral("measurements"), QStringLiteral("Measurements"),
                    qlonglong(r->measurements() ? r->measurements()->size() : 0), {}};
          rows << E{QStringLiteral("wall_seconds"), QStringLiteral("Wall time (s)"), r->wallSeconds(), {}};
          rows << E{QStringLiteral("simulations"), QStringLiteral("Time courses"),
                    qlonglong(c.simulations), QStringLiteral("forward and backward integrations")};
          rows << E{QStringLiteral("steady_states"), QStringLiteral("Steady states solved"),
                    qlonglong(c.steadyStates), {}};
          rows << E{QStringLiteral("stable"), QStringLiteral("Stable steady states"),
                    QStringLiteral("%1 of %2").arg(stable).arg(c.equilibrations.size()), {}};
          rows << E{QStringLiteral("fallbacks"), QStringLiteral("Found by fallback"),
                    qlonglong(fallbacks), QStringLiteral("first path failed; see Steady states")};
          rows << E{QStringLiteral("notes"), QStringLiteral("How"), q(c.notes), q(c.notes)};
          rows << fallbackEntries(c.fallbacks);
          return rows;
        },
        parent);
    return QList<api::TaskResultView*>{observables, chart, table, steady, stats};
  };
  return d;
}

}  // namespace sensode::plugin::gradient
