// SPDX-License-Identifier: MIT
#include "plugin/estimation/estimation_task.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "core/common/errors.h"
#include "core/petab/petab_problem.h"
#include "plugin/common/model_cache.h"
#include "plugin/common/provenance.h"
#include "plugin/estimation/estimation_icon.h"
#include "plugin/estimation/estimation_views.h"
#include "plugin/estimation/setup_widget.h"
#include "plugin/forms/settings_reader.h"
#include "plugin/gradient/gradient_task.h"
#include "plugin/models/number_format.h"
#include "plugin/runner/task_runner.h"

namespace sensode::plugin::estimation {

namespace core = sensode::estimation;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string numberText(double v) { return QString::number(v, 'g', 17).toStdString(); }

const char* kWhat = "estimation setting";

std::optional<double> optionalNumber(const QJsonObject& o, const QString& key,
                                     const std::string& where) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined() || v.isNull()) return std::nullopt;
  if (!v.isDouble())
    throw InvalidOptions(std::string(kWhat) + " " + where + "." + key.toStdString() +
                         " is not a number");
  return v.toDouble();
}

}  // namespace

QString optimizerLabel(core::Optimizer optimizer) {
  switch (optimizer) {
    case core::Optimizer::LeastSquares: return QStringLiteral("Levenberg–Marquardt least squares");
    case core::Optimizer::QuasiNewton: return QStringLiteral("quasi-Newton (L-BFGS)");
    case core::Optimizer::Auto: break;
  }
  return QStringLiteral("automatic");
}

const QList<FieldSpec>& fields() {
  using K = FieldSpec::Kind;
  const double inf = std::numeric_limits<double>::infinity();
  const core::EstimationOptions defaults;
  static const QList<FieldSpec> specs = {
      {QStringLiteral("optimizer"), QStringLiteral("Optimiser"),
       QStringLiteral("Least squares: bounded Levenberg–Marquardt on the weighted residuals "
                      "and their exact Jacobian (forward sensitivities). Quasi-Newton: "
                      "bounded L-BFGS on the objective and its gradient, for objectives that are "
                      "not sums of squares (Laplace noise, non-normal priors). Automatic: least "
                      "squares whenever the objective allows it."),
       {}, K::Choice, QStringLiteral("auto"), -inf, inf, false, false,
       {QStringLiteral("auto"), QStringLiteral("ls"), QStringLiteral("qn")},
       {QStringLiteral("Automatic"), QStringLiteral("Levenberg–Marquardt least squares"),
        QStringLiteral("Quasi-Newton (L-BFGS)")}},
      {QStringLiteral("starts"), QStringLiteral("Starts"),
       QStringLiteral("Local optimisations; start 1 at the start values (when checked below), "
                      "the others a Latin hypercube in the bounds on the parameter scales."),
       {}, K::Integer, defaults.starts, 1, 100000, false, false, {}, {}},
      {QStringLiteral("seed"), QStringLiteral("Seed"),
       QStringLiteral("Seed of the Latin hypercube: the same seed gives the same starts."), {},
       K::Integer, static_cast<qint64>(defaults.seed), 0, 1e15, false, false, {}, {}},
      {QStringLiteral("use_start_values"), QStringLiteral("First start at the start values"),
       QStringLiteral("Start 1 from the Start column of the table (the PEtab nominal values by "
                      "default); unchecked, every start is sampled."),
       {}, K::Flag, defaults.useStartValues, -inf, inf, false, false, {}, {}},
      {QStringLiteral("global"), QStringLiteral("Global phase"),
       QStringLiteral("How the sampled starts are chosen, by the objective alone (one simulation "
                      "per point). Screen: the best of a Latin hypercube K times larger (below). "
                      "Scatter search: enhanced scatter search (eSS) combining good points, then "
                      "its best points that lie apart from each other — for problems whose best "
                      "fit is rare among random starts. None: the Latin hypercube itself."),
       {}, K::Choice, QString::fromLatin1(core::toString(defaults.global)), -inf, inf, false,
       false, {QStringLiteral("screen"), QStringLiteral("ess"), QStringLiteral("none")},
       {QStringLiteral("Screen"), QStringLiteral("Scatter search"), QStringLiteral("None")}},
      {QStringLiteral("global_evaluations"), QStringLiteral("Scatter search evaluations"),
       QStringLiteral("Objective evaluations of the scatter search; 0: 1000 per estimated "
                      "parameter."),
       {}, K::Integer, static_cast<qint64>(defaults.globalEvaluations), 0, 1e12, false, false,
       {}, {}},
      {QStringLiteral("screen"), QStringLiteral("Screened points per start"),
       QStringLiteral("With the global phase Screen. 0: the sampled starts are a Latin "
                      "hypercube. K > 0: the objective alone is evaluated at K times as many "
                      "Latin-hypercube points and the starts are the best of them (cheap: one "
                      "simulation per point)."),
       {}, K::Integer, defaults.screen, 0, 10000, false, false, {}, {}},
      {QStringLiteral("polish"), QStringLiteral("Polished starts"),
       QStringLiteral("The best K starts (one per optimum) are continued by L-BFGS, then "
                      "least squares, with the integration tolerances divided by 100 and the "
                      "function and step tolerances by 10000, so that the best objective is not "
                      "limited by integration noise. 0: none."),
       {}, K::Integer, defaults.polish, 0, 100000, false, false, {}, {}},
      {QStringLiteral("continue_stalled"), QStringLiteral("Continue stalled starts"),
       QStringLiteral("A start that stalls (no decrease found while the gradient is not yet "
                      "small, usually because the objective's integration error hides the "
                      "remaining descent) continues with the integration tolerances "
                      "divided by 100, and when it stalls again lower, by 10000 (not below "
                      "rtol 1e-12)."),
       {}, K::Flag, defaults.continueStalled, -inf, inf, false, false, {}, {}},
      {QStringLiteral("gradient"), QStringLiteral("Gradient"),
       QStringLiteral("Gradient of the quasi-Newton objective: forward sensitivities, the "
                      "standard adjoint, the steady-state adjoint (ssASA) or finite differences. "
                      "The least-squares Jacobian always comes from forward sensitivities."),
       {}, K::Choice, QStringLiteral("forward"), -inf, inf, false, false,
       {QStringLiteral("forward"), QStringLiteral("adjoint"), QStringLiteral("ssasa"),
        QStringLiteral("fd")},
       {QStringLiteral("Forward sensitivities"), QStringLiteral("Standard adjoint"),
        QStringLiteral("Steady-state adjoint (ssASA)"), QStringLiteral("Finite differences")}},
      {QStringLiteral("forward_integrator"), QStringLiteral("Integrator"),
       QStringLiteral("Integrator of the time courses and forward sensitivities: odeSD (its "
                      "direct sensitivities; CVODES computes any evaluation odeSD cannot, and "
                      "the result counts them) or CVODES."),
       {}, K::Choice,
       QString::fromLatin1(integrators::toString(defaults.objective.forwardIntegrator)), -inf,
       inf, false, false, {QStringLiteral("odesd"), QStringLiteral("cvodes")},
       {QStringLiteral("odeSD"), QStringLiteral("CVODES")}},
      {QStringLiteral("max_iterations"), QStringLiteral("Iterations per start"),
       QStringLiteral("Most iterations of one local optimisation."), {}, K::Integer,
       defaults.maxIterations, 1, 1e7, false, false, {}, {}},
      // The unit label beside the field says what 0 means, with this machine's count.
      {QStringLiteral("threads"), QStringLiteral("Threads"),
       QStringLiteral("Starts run in parallel on this many threads; 0: automatic, one per core."),
       QStringLiteral("0 = automatic (%1 cores)").arg(std::thread::hardware_concurrency()),
       K::Integer, defaults.threads, 0, 1024, false, false, {}, {}},
      {QStringLiteral("rtol"), QStringLiteral("Relative tolerance"),
       QStringLiteral("rtol of the time courses."), {}, K::Real,
       defaults.objective.integrator.rtol, 0, 1, true, true, {}, {}},
      {QStringLiteral("atol"), QStringLiteral("Absolute tolerance"),
       QStringLiteral("atol of the time courses."), {}, K::Real,
       defaults.objective.integrator.atol, 0, inf, true, false, {}, {}},
  };
  return specs;
}

Settings parseSettings(const QJsonObject& json) {
  Settings s;
  const SettingsReader in(json, kWhat);
  if (auto name = in.text("optimizer")) {
    auto o = core::optimizerFromString(*name);
    if (!o) in.violated("optimizer", *name, "one of auto, ls, qn");
    s.options.optimizer = *o;
  }
  if (auto name = in.text("gradient")) {
    auto g = petab::gradientMethodFromString(*name);
    if (!g || *g == petab::GradientMethod::None)
      in.violated("gradient", *name, "one of forward, adjoint, ssasa, fd");
    s.options.gradient = *g;
  }
  if (auto name = in.text("forward_integrator")) {
    auto m = integrators::methodFromString(*name);
    if (!m) in.violated("forward_integrator", *name, "one of odesd, cvodes");
    s.options.objective.forwardIntegrator = *m;
  }
  s.options.starts = static_cast<int>(in.whole("starts", s.options.starts, 1, 100000));
  s.options.seed = static_cast<std::uint64_t>(
      in.whole("seed", static_cast<long>(s.options.seed), 0, 1e15));
  s.options.useStartValues =
      json.value(QStringLiteral("use_start_values")).toBool(s.options.useStartValues);
  s.options.screen = static_cast<int>(in.whole("screen", s.options.screen, 0, 10000));
  if (auto name = in.text("global")) {
    auto g = core::globalPhaseFromString(*name);
    if (!g) in.violated("global", *name, "one of screen, ess, none");
    s.options.global = *g;
  }
  s.options.globalEvaluations = in.whole("global_evaluations", s.options.globalEvaluations, 0, 1e12);
  s.options.polish = static_cast<int>(in.whole("polish", s.options.polish, 0, 100000));
  s.options.continueStalled =
      json.value(QStringLiteral("continue_stalled")).toBool(s.options.continueStalled);
  s.options.maxIterations =
      static_cast<int>(in.whole("max_iterations", s.options.maxIterations, 1, 1e7));
  s.options.threads = static_cast<int>(in.whole("threads", s.options.threads, 0, 1024));
  s.options.objective.integrator.rtol = in.positive("rtol", s.options.objective.integrator.rtol);
  s.options.objective.integrator.atol = in.positive("atol", s.options.objective.integrator.atol);
  s.problem = json.value(QStringLiteral("problem")).toString().trimmed();

  const QJsonObject parameters = json.value(QStringLiteral("parameters")).toObject();
  for (auto it = parameters.begin(); it != parameters.end(); ++it) {
    const std::string where = "parameters." + it.key().toStdString();
    if (!it.value().isObject())
      throw InvalidOptions(std::string(kWhat) + " " + where + " is not an object");
    const QJsonObject o = it.value().toObject();
    ParameterChoice c;
    c.id = it.key().toStdString();
    const QJsonValue estimate = o.value(QStringLiteral("estimate"));
    if (estimate.isBool()) c.estimate = estimate.toBool();
    else if (!estimate.isUndefined() && !estimate.isNull())
      throw InvalidOptions(std::string(kWhat) + " " + where + ".estimate is not true or false");
    c.lower = optionalNumber(o, QStringLiteral("lower"), where);
    c.upper = optionalNumber(o, QStringLiteral("upper"), where);
    c.start = optionalNumber(o, QStringLiteral("start"), where);
    s.parameters.push_back(std::move(c));
  }
  const QJsonValue profile = json.value(QStringLiteral("profile"));
  if (!profile.isUndefined() && !profile.isNull()) {
    if (!profile.isArray()) throw InvalidOptions(std::string(kWhat) + " profile is not a list of ids");
    for (const QJsonValue& id : profile.toArray()) {
      if (!id.isString())
        throw InvalidOptions(std::string(kWhat) + " profile holds a value that is not an id");
      s.options.profileParameters.push_back(id.toString().toStdString());
    }
  }
  if (auto why = s.options.validate()) throw InvalidOptions(*why);
  return s;
}

std::vector<core::EstimatedParameter> fittedParameters(const petab::Problem& problem,
                                                       const std::vector<ParameterChoice>& choices) {
  std::vector<core::EstimatedParameter> fitted = core::defaultParameters(problem);
  const std::string file = problem.yamlFile.string();
  for (const ParameterChoice& c : choices) {
    auto it = std::find_if(fitted.begin(), fitted.end(),
                           [&](const core::EstimatedParameter& p) { return p.id == c.id; });
    if (it == fitted.end())
      throw InvalidOptions("parameter '" + c.id + "' is not an estimated parameter of " + file);
    const auto scaled = [&](const char* what, double linear) {
      if (!std::isfinite(linear))
        throw InvalidOptions("parameter '" + c.id + "': " + what + " = " + numberText(linear) +
                             " is not finite");
      if (it->scale != petab::Scale::Lin && !(linear > 0))
        throw InvalidOptions("parameter '" + c.id + "': " + what + " = " + numberText(linear) +
                             " must be > 0 (scale " + petab::toString(it->scale) + ")");
      return petab::toScale(it->scale, linear);
    };
    if (c.estimate) it->estimate = *c.estimate;
    if (c.lower) it->lower = scaled("lower bound", *c.lower);
    if (c.upper) it->upper = scaled("upper bound", *c.upper);
    if (c.start) it->start = scaled("start value", *c.start);
  }
  for (const core::EstimatedParameter& p : fitted) {
    const auto linear = [&](double v) { return numberText(petab::fromScale(p.scale, v)); };
    if (!(p.lower < p.upper))
      throw InvalidOptions("parameter '" + p.id + "': lower bound " + linear(p.lower) +
                           " is not below the upper bound " + linear(p.upper));
    if (!(p.start >= p.lower && p.start <= p.upper))
      throw InvalidOptions("parameter '" + p.id + "': start value " + linear(p.start) +
                           " is outside the bounds [" + linear(p.lower) + ", " + linear(p.upper) +
                           "]");
  }
  return fitted;
}

Result::Result(std::shared_ptr<const core::EstimationResult> result,
               std::shared_ptr<const MeasurementPoints> fit, double wallSeconds,
               QJsonObject provenance)
    : core_(std::move(result)),
      fit_(std::move(fit)),
      wallSeconds_(wallSeconds),
      provenance_(std::move(provenance)) {}

int Result::startsAtBest() const {
  return static_cast<int>(std::count_if(
      core_->starts.begin(), core_->starts.end(), [&](const core::StartResult& s) {
        return std::isfinite(s.objective) &&
               s.objective - core_->bestObjective <= kConvergedTolerance;
      }));
}

QString Result::summary() const {
  return (note_.isEmpty() ? QString() : note_ + QStringLiteral(" — ")) +
         QStringLiteral("Estimation (%1): best objective %2, %3 of %4 starts within %5 of it, "
                        "%6 parameters%7%8")
      .arg(optimizerLabel(core_->optimizer), shortNumber(core_->bestObjective))
      .arg(startsAtBest())
      .arg(core_->starts.size())
      .arg(kConvergedTolerance)
      .arg(core_->parameters.size())
      // Results read from a folder have no wall time of their own.
      .arg(wallSeconds_ > 0 ? QStringLiteral(", %1 s").arg(wallSeconds_, 0, 'g', 3) : QString())
      .arg(fallbackNote(core_->fallbacks));
}

namespace {

QJsonObject provenanceOf(const QString& path, const petab::Problem& problem,
                         const api::ModelSession& session, const QJsonObject& settingsJson,
                         const Settings& settings, const core::EstimationResult& r,
                         double loadSeconds) {
  LoadedModel model;
  model.path = QFileInfo(path).absoluteFilePath();
  model.sha256 = sha256OfFile(path);
  model.loadSeconds = loadSeconds;
  api::ModelSession used = session;
  used.format = QStringLiteral("petab");
  QJsonObject p = baseProvenance(QString::fromLatin1(kTaskId), QString::fromLatin1(kDisplayName),
                                 model, used, settingsJson);
  QJsonObject modelJson = p.value(QStringLiteral("model")).toObject();
  modelJson.insert(QStringLiteral("states"), problem.model->nx());
  modelJson.insert(QStringLiteral("parameters"), problem.model->np());
  p.insert(QStringLiteral("model"), modelJson);
  p.insert(QStringLiteral("petab"),
           QJsonObject{{QStringLiteral("yaml"), model.path},
                       {QStringLiteral("sbml"), q(problem.sbmlFile.string())},
                       {QStringLiteral("sbml_sha256"), sha256OfFile(q(problem.sbmlFile.string()))}});
  p.insert(QStringLiteral("method"),
           QJsonObject{{QStringLiteral("optimizer"), QString::fromLatin1(core::toString(r.optimizer))},
                       {QStringLiteral("optimizer_reason"), q(r.optimizerReason)},
                       {QStringLiteral("gradient"),
                        QString::fromLatin1(petab::toString(settings.options.gradient))},
                       {QStringLiteral("forward_integrator"),
                        QString::fromLatin1(integrators::toString(r.forwardIntegrator))},
                       {QStringLiteral("cvodes_fallback_evaluations"),
                        static_cast<double>(r.cvodesFallbacks)},
                       {QStringLiteral("starts"), settings.options.starts},
                       {QStringLiteral("seed"), static_cast<double>(settings.options.seed)},
                       {QStringLiteral("use_start_values"), settings.options.useStartValues},
                       {QStringLiteral("screen"), settings.options.screen},
                       {QStringLiteral("screened_points"), r.screenedPoints},
                       {QStringLiteral("global"), QString::fromLatin1(core::toString(r.global))},
                       {QStringLiteral("global_evaluations"),
                        static_cast<double>(r.globalEvaluations)},
                       {QStringLiteral("global_seconds"), r.globalSeconds},
                       {QStringLiteral("polish"), settings.options.polish},
                       {QStringLiteral("continue_stalled"), settings.options.continueStalled},
                       {QStringLiteral("max_iterations"), settings.options.maxIterations}});
  p.insert(QStringLiteral("tolerances"),
           QJsonObject{{QStringLiteral("rtol"), settings.options.objective.integrator.rtol},
                       {QStringLiteral("atol"), settings.options.objective.integrator.atol}});
  p.insert(QStringLiteral("derivative_source"),
           QStringLiteral("exact symbolic; residual Jacobian by forward sensitivities, "
                          "objective gradient by %1")
               .arg(QString::fromLatin1(petab::toString(settings.options.gradient))));
  QJsonArray parameters;
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    const core::EstimatedParameter& e = r.parameters[i];
    QJsonObject o{{QStringLiteral("id"), q(e.id)},
                  {QStringLiteral("scale"), QString::fromLatin1(petab::toString(e.scale))},
                  {QStringLiteral("estimated"), e.estimate},
                  {QStringLiteral("lower_scaled"), e.lower},
                  {QStringLiteral("upper_scaled"), e.upper},
                  {QStringLiteral("start_scaled"), e.start}};
    if (i < r.best.size()) o.insert(QStringLiteral("best_scaled"), r.best[i]);
    parameters.append(o);
  }
  p.insert(QStringLiteral("parameters"), parameters);
  QJsonArray fallbacks;
  for (const std::string& f : r.fallbacks) fallbacks.append(q(f));
  p.insert(QStringLiteral("run"),
           QJsonObject{{QStringLiteral("best_objective"), r.bestObjective},
                       {QStringLiteral("nominal_objective"),
                        std::isfinite(r.nominalObjective) ? QJsonValue(r.nominalObjective)
                                                          : QJsonValue()},
                       {QStringLiteral("wall_seconds"), r.wallSeconds},
                       {QStringLiteral("model_load_seconds"), loadSeconds},
                       {QStringLiteral("fallbacks"), fallbacks}});
  return p;
}

}  // namespace

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settingsJson, RunContext& context) {
  Settings settings = parseSettings(settingsJson);
  const QString path = !settings.problem.isEmpty()                ? settings.problem
                       : session.format == QLatin1String("petab") ? session.filePath
                                                                  : QString();
  if (path.isEmpty())
    throw InvalidOptions("estimation: no PEtab problem (the open file " +
                         session.filePath.toStdString() +
                         " is SBML; open a PEtab yaml or choose one in the task)");
  // One phase line for what comes before the first start reports: QFuture passes on at most 25
  // progress texts a second, so a second phase right after the first was never shown, and the
  // screen's points report no progress of their own (the bar counts starts) — a long screen
  // (500 starts × 1000 points) would otherwise sit under "Reading the PEtab problem...".
  const int screened = settings.options.global == core::GlobalPhase::Screen &&
                               settings.options.screen > 0
                           ? settings.options.screen * settings.options.starts
                           : 0;
  context.setPhase(
      settings.options.global == core::GlobalPhase::ScatterSearch
          ? QStringLiteral("Reading the PEtab problem, scatter search, then fitting from %1 "
                           "start(s)...")
                .arg(settings.options.starts)
      : screened > 0
          ? QStringLiteral("Reading the PEtab problem, screening %1 points, then fitting from %2 "
                           "start(s)...")
                .arg(screened)
                .arg(settings.options.starts)
          : QStringLiteral("Reading the PEtab problem, then fitting from %1 start(s)...")
                .arg(settings.options.starts));
  QElapsedTimer loadTimer;
  loadTimer.start();
  const std::filesystem::path yaml = QFile::encodeName(path).toStdString();
  const petab::Problem problem = petab::loadProblem(yaml);
  const double loadSeconds = static_cast<double>(loadTimer.nsecsElapsed()) * 1e-9;
  settings.options.parameters = fittedParameters(problem, settings.parameters);
  if (context.cancelled())
    return std::make_shared<MessageResult>(api::TaskStatus::Cancelled,
                                           QStringLiteral("cancelled while reading the problem"));
  // Before the first start finishes, the global phase's evaluations are what moves.
  const bool scatterSearch = settings.options.global == core::GlobalPhase::ScatterSearch;
  context.setProgressText([screened, scatterSearch](const ProgressInfo& info) {
    if (info.t == 0 && scatterSearch)
      return QStringLiteral("scatter search: %1 objective evaluations, then the starts")
          .arg(info.steps);
    if (info.t == 0 && info.steps > 0 && screened > 0)
      return QStringLiteral("screening %1 points: %2 evaluated, then the starts")
          .arg(screened)
          .arg(info.steps);
    return QStringLiteral("%1 of %2 starts and profile points done, %3 objective evaluations")
        .arg(info.t, 0, 'f', 0)
        .arg(info.tEnd, 0, 'f', 0)
        .arg(info.steps);
  });

  // QFuture drops progress that goes back: anything not on the run's scale (starts + profile
  // points planned, estimation.h) would fill the bar and freeze the text for the whole run, so
  // it shows as 0 of the planned units; cancel is checked all the same.
  const double planned =
      settings.options.starts + 2.0 * settings.options.profileMaxPoints *
                                    static_cast<double>(settings.options.profileParameters.size());
  ProgressMonitor monitor;
  monitor.token = context.monitor().token;
  monitor.callback = [&context, planned](const ProgressInfo& info) {
    return context.monitor().callback(info.tEnd == planned ? info : ProgressInfo{0, planned, 0});
  };
  QElapsedTimer timer;
  timer.start();
  auto result = std::make_shared<core::EstimationResult>(
      core::runEstimation({yaml}, settings.options, monitor));
  const double wall = static_cast<double>(timer.nsecsElapsed()) * 1e-9;
  using Status = core::EstimationResult::Status;
  // A cancel keeps the starts that finished (core drops the cancelled ones) and shows them, with
  // the best fit evaluated once more (the run's token is cancelled, so not under it).
  if (result->status == Status::UserAbort && result->best.empty())
    return std::make_shared<MessageResult>(
        api::TaskStatus::Cancelled,
        QStringLiteral("cancelled after 0 of %1 starts; the previous results stay")
            .arg(settings.options.starts));
  QString note;
  if (result->status == Status::UserAbort) {
    note = QStringLiteral("cancelled after %1 of %2 starts; the %1 finished are kept")
               .arg(result->starts.size())
               .arg(settings.options.starts);
    try {
      core::evaluateBestFit(problem, settings.options, {}, *result);
    } catch (const Error&) {
    }
  }
  if (result->status != Status::Success && result->status != Status::UserAbort)
    return std::make_shared<MessageResult>(api::TaskStatus::Failed, q(result->message),
                                           QJsonObject{}, q(result->details));
  auto fit = std::make_shared<const MeasurementPoints>(
      gradient::measurementPoints(problem, result->bestFit));
  QJsonObject provenance =
      provenanceOf(path, problem, session, settingsJson, settings, *result, loadSeconds);
  auto shown = std::make_shared<Result>(std::move(result), std::move(fit), wall,
                                        std::move(provenance));
  shown->setNote(note);
  // The best fit's observables on a fine grid for the Fit tab; a failure there only costs the
  // curves (the tab then joins the simulated values at the measurement times).
  try {
    shown->setFitCurves(std::make_shared<const SimulatedCurves>(gradient::simulatedCurves(
        problem, shown->core()->bestFit.parameters, settings.options.objective, context.monitor())));
  } catch (const std::exception&) {
    // (A cancel here too: the fit is kept; only its curves are missing.)
  }
  return shown;
}

api::TaskDescription description() {
  api::TaskDescription d;
  d.id = QString::fromLatin1(kTaskId);
  d.displayName = QString::fromLatin1(kDisplayName);
  d.menuPath = QStringLiteral("Tasks");
  d.toolTip = QStringLiteral("Fit the estimated parameters of a PEtab problem from seeded "
                             "multistarts: waterfall, fit, parameters with standard errors and "
                             "confidence intervals, correlations, likelihood profiles");
  d.icon = estimationIcon();
  d.order = 40;
  d.sessionFormats = {QStringLiteral("petab"), QStringLiteral("sbml")};
  d.createSetupWidget = [](QWidget* parent) -> api::TaskSetupWidget* {
    return new SetupWidget(parent);
  };
  d.createRunner = []() -> std::unique_ptr<api::TaskRunner> {
    return std::make_unique<CoreTaskRunner>(&run);
  };
  d.createResultViews = [](QWidget* parent) { return createResultViews(parent); };
  return d;
}

}  // namespace sensode::plugin::estimation
