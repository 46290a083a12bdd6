// SPDX-License-Identifier: MIT
#include "plugin/estimation/estimation_views.h"

#include <QFile>
#include <QLabel>
#include <QTextStream>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plugin/common/provenance.h"
#include "plugin/estimation/best_fit_view.h"
#include "plugin/estimation/curve_chart_view.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/gradient/measurement_chart_view.h"
#include "plugin/models/number_format.h"
#include "plugin/models/record_table_model.h"
#include "plugin/views/heat_map_widget.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin::estimation {

namespace core = sensode::estimation;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

const Result* resultOf(const std::shared_ptr<const api::TaskResult>& r) {
  return dynamic_cast<const Result*>(r.get());
}

// A number cell, or an empty one for NaN (a value that does not exist, e.g. a profile bound
// that was never crossed).
QVariant cell(double v) { return std::isnan(v) ? QVariant() : QVariant(v); }

double linear(const core::EstimatedParameter& p, double scaled) {
  return std::isfinite(scaled) ? petab::fromScale(p.scale, scaled)
                               : std::numeric_limits<double>::quiet_NaN();
}

// Index of `id` in the statistics' parameters (the fitted ones), or -1.
int statisticsIndex(const core::FitStatistics& s, const std::string& id) {
  const auto it = std::find(s.parameterIds.begin(), s.parameterIds.end(), id);
  return it == s.parameterIds.end() ? -1 : static_cast<int>(it - s.parameterIds.begin());
}

const core::Profile* profileOf(const core::EstimationResult& r, const std::string& id) {
  for (const core::Profile& p : r.profiles)
    if (p.parameterId == id) return &p;
  return nullptr;
}

CurveChartData waterfall(const std::shared_ptr<const api::TaskResult>& result) {
  CurveChartData data;
  const Result* r = resultOf(result);
  if (!r) return data;
  const core::EstimationResult& c = *r->core();
  data.logYAvailable = true;
  data.logYByDefault = true;
  CurvePage page;
  page.name = QStringLiteral("Waterfall");
  page.xTitle = QStringLiteral("start (sorted by objective)");
  page.yTitle = QStringLiteral("objective − best + 1");
  page.integerX = true;
  Curve atBest{QStringLiteral("within %1 of the best").arg(kConvergedTolerance), {},
               QColor(0x2c, 0xa0, 0x2c), false, true};
  Curve others{QStringLiteral("other starts"), {}, QColor(0x1f, 0x77, 0xb4), false, true};
  Curve line{QStringLiteral("sorted objectives"), {}, QColor(0x90, 0x90, 0x90), true, false};
  int failed = 0;
  for (std::size_t i = 0; i < c.starts.size(); ++i) {
    const double f = c.starts[i].objective;
    if (!std::isfinite(f)) {
      ++failed;
      continue;
    }
    const QPointF p(static_cast<double>(i + 1), f - c.bestObjective + 1);
    (f - c.bestObjective <= kConvergedTolerance ? atBest : others).points << p;
    line.points << p;
  }
  page.curves = {line, atBest, others};
  if (std::isfinite(c.nominalObjective))
    page.horizontal = ReferenceLine{QStringLiteral("nominal parameters"),
                                    c.nominalObjective - c.bestObjective + 1,
                                    QColor(0xd6, 0x27, 0x28)};
  page.caption = QStringLiteral("Best objective (−log L) %1; %2 of %3 starts within %4 of it")
                     .arg(exactNumber(c.bestObjective))
                     .arg(r->startsAtBest())
                     .arg(c.starts.size())
                     .arg(kConvergedTolerance);
  if (std::isfinite(c.nominalObjective))
    page.caption += QStringLiteral("; at the nominal parameters %1").arg(exactNumber(c.nominalObjective));
  if (failed > 0) page.caption += QStringLiteral("; %1 start(s) failed (see Starts)").arg(failed);
  page.caption += QLatin1Char('.');
  data.pages << page;
  return data;
}

CurveChartData profiles(const std::shared_ptr<const api::TaskResult>& result) {
  CurveChartData data;
  data.pageLabel = QStringLiteral("Parameter");
  const Result* r = resultOf(result);
  if (!r) return data;
  const core::EstimationResult& c = *r->core();
  for (const core::Profile& p : c.profiles) {
    if (p.parameter < 0 || p.parameter >= static_cast<int>(c.parameters.size())) continue;
    const core::EstimatedParameter& e = c.parameters[static_cast<std::size_t>(p.parameter)];
    CurvePage page;
    page.name = q(p.parameterId);
    page.xTitle = QStringLiteral("%1 (%2 scale)").arg(q(e.id), QString::fromLatin1(petab::toString(e.scale)));
    page.yTitle = QStringLiteral("objective (−log L), others re-optimised");
    Curve curve{QStringLiteral("profile"), {}, QColor(0x1f, 0x77, 0xb4), true, true};
    Curve notConverged{QStringLiteral("not converged"), {}, QColor(0xff, 0x7f, 0x0e), false, true};
    for (const core::ProfilePoint& point : p.points) {
      curve.points << QPointF(point.value, point.objective);
      if (!point.converged) notConverged.points << QPointF(point.value, point.objective);
    }
    page.curves << curve;
    if (!notConverged.points.isEmpty()) page.curves << notConverged;
    page.horizontal = ReferenceLine{
        QStringLiteral("confidence threshold %1 (optimum + χ²₁ quantile / 2)").arg(shortNumber(p.threshold)),
        p.threshold, QColor(0xd6, 0x27, 0x28)};
    const std::size_t k = static_cast<std::size_t>(p.parameter);
    if (k < c.best.size())
      page.vertical = ReferenceLine{QStringLiteral("best fit"), c.best[k], QColor(0x60, 0x60, 0x60)};
    const auto side = [&](double v) {
      return std::isnan(v) ? QStringLiteral("not reached (bound or last point)")
                           : QStringLiteral("%1 (linear %2)").arg(shortNumber(v), shortNumber(linear(e, v)));
    };
    page.caption = QStringLiteral("Profile interval on the %1 scale: lower %2, upper %3. %4")
                       .arg(QString::fromLatin1(petab::toString(e.scale)), side(p.lower),
                            side(p.upper), q(p.message));
    data.pages << page;
  }
  if (data.pages.isEmpty()) {
    CurvePage empty;
    empty.name = QStringLiteral("none");
    empty.xTitle = QStringLiteral("parameter");
    empty.yTitle = QStringLiteral("objective");
    empty.caption = QStringLiteral("No profiles: check Profile for parameters in the set-up table "
                                   "and run again.");
    data.pages << empty;
  }
  return data;
}

// Linear values unless the header says "(scale)": what a modeller reads first, left; a value
// on its bound is flagged right beside it.
QStringList parameterHeaders() {
  return {QStringLiteral("parameter"),       QStringLiteral("value"),
          QStringLiteral("at bound"),
          QStringLiteral("Wald CI lower"),   QStringLiteral("Wald CI upper"),
          QStringLiteral("profile CI lower"), QStringLiteral("profile CI upper"),
          QStringLiteral("standard error (scale)"), QStringLiteral("value (scale)"),
          QStringLiteral("scale"),           QStringLiteral("fit"),
          QStringLiteral("lower bound"),
          QStringLiteral("upper bound"),     QStringLiteral("start value")};
}

// "lower" or "upper" when a fitted value is within 1e-6 of the bound range from that bound.
QString boundReached(const core::EstimatedParameter& e, double best) {
  if (!e.estimate || !std::isfinite(best)) return {};
  const double span = e.upper - e.lower;
  if (best - e.lower <= 1e-6 * span) return QStringLiteral("lower");
  if (e.upper - best <= 1e-6 * span) return QStringLiteral("upper");
  return {};
}

// A Wald interval end as a cell: the number, or why there is none. An infinite standard error
// is the statistics' mark of a parameter along a null direction of the Fisher information (it
// is not identifiable from these data); a finite one that maps to 0 or ∞ on the linear scale is
// wider than the double range.
struct WaldCell {
  QVariant value;
  QString toolTip;
};

WaldCell waldCell(double linearEnd, double se, const core::FitStatistics& s) {
  if (std::isnan(linearEnd) && !std::isinf(se)) return {};
  if (std::isinf(se)) {
    return {QStringLiteral("not identifiable (FIM singular)"),
            QStringLiteral("The Fisher information has rank %1 of %2: this parameter lies along a "
                           "null direction, so its standard error is infinite and the Wald "
                           "interval is unbounded. Its profile likelihood (check Profile in the "
                           "set-up) shows how far the data constrain it.")
                .arg(s.rank)
                .arg(s.parameterIds.size())};
  }
  if (!std::isfinite(linearEnd) || linearEnd == 0) {
    return {QStringLiteral("unbounded (SE %1 on the scale)").arg(shortNumber(se)),
            QStringLiteral("θ ± z·SE with SE %1 reaches %2 on the linear scale: the data hardly "
                           "constrain this parameter (practically not identifiable).")
                .arg(exactNumber(se), exactNumber(linearEnd))};
  }
  return {linearEnd, {}};
}

QList<RecordTableModel::Row> parameterRows(const core::EstimationResult& c) {
  QList<RecordTableModel::Row> rows;
  const core::FitStatistics& s = c.statistics;
  for (std::size_t i = 0; i < c.parameters.size(); ++i) {
    const core::EstimatedParameter& e = c.parameters[i];
    const double best = i < c.best.size() ? c.best[i] : std::numeric_limits<double>::quiet_NaN();
    const int k = s.available ? statisticsIndex(s, e.id) : -1;
    const auto at = [k](const std::vector<double>& v) {
      return k >= 0 && k < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(k)]
                                                      : std::numeric_limits<double>::quiet_NaN();
    };
    const core::Profile* profile = profileOf(c, e.id);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const QString bound = boundReached(e, best);
    const double boundValue = bound == QLatin1String("lower") ? e.lower : e.upper;
    const QString boundNote =
        bound.isEmpty() ? QString()
                        : QStringLiteral("At its %1 bound %2: the optimum may lie beyond it, and "
                                         "the Wald interval (a local quadratic approximation) "
                                         "does not account for the bound.")
                              .arg(bound, shortNumber(linear(e, boundValue)));
    const double se = at(s.standardErrors);
    const WaldCell lower = k >= 0 ? waldCell(at(s.lowerLinear), se, s) : WaldCell{};
    const WaldCell upper = k >= 0 ? waldCell(at(s.upperLinear), se, s) : WaldCell{};
    // The columns of parameterHeaders().
    rows.append({{q(e.id), cell(linear(e, best)),
                  bound.isEmpty() ? QString() : QStringLiteral("⚠ %1 bound").arg(bound),
                  lower.value, upper.value,
                  cell(profile ? linear(e, profile->lower) : nan),
                  cell(profile ? linear(e, profile->upper) : nan), cell(se),
                  cell(best), QString::fromLatin1(petab::toString(e.scale)),
                  e.estimate ? QStringLiteral("fitted") : QStringLiteral("fixed"),
                  linear(e, e.lower), linear(e, e.upper), linear(e, e.start)},
                 {QString(), boundNote, boundNote, lower.toolTip, upper.toolTip}});
  }
  return rows;
}

QStringList startHeaders(const core::EstimationResult& c) {
  QStringList h{QStringLiteral("rank"), QStringLiteral("start"), QStringLiteral("status"),
                QStringLiteral("objective")};
  for (const core::EstimatedParameter& e : c.parameters) h << q(e.id);
  h << QStringLiteral("start objective") << QStringLiteral("iterations")
    << QStringLiteral("objective evaluations") << QStringLiteral("gradient evaluations")
    << QStringLiteral("wall time (s)") << QStringLiteral("message");
  return h;
}

QList<RecordTableModel::Row> startRows(const core::EstimationResult& c) {
  QList<RecordTableModel::Row> rows;
  for (std::size_t i = 0; i < c.starts.size(); ++i) {
    const core::StartResult& s = c.starts[i];
    // The final point in linear values beside its objective, then how the start went.
    QVariantList cells{qlonglong(i + 1), qlonglong(s.index + 1),
                       QString::fromLatin1(core::toString(s.status)), cell(s.objective)};
    for (std::size_t k = 0; k < c.parameters.size(); ++k)
      cells << cell(k < s.parameters.size() ? linear(c.parameters[k], s.parameters[k])
                                            : std::numeric_limits<double>::quiet_NaN());
    cells << cell(s.startObjective) << qlonglong(s.iterations)
          << qlonglong(s.objectiveEvaluations) << qlonglong(s.gradientEvaluations)
          << s.wallSeconds << q(s.message);
    rows.append({cells, {}});
  }
  return rows;
}

QList<KeyValueTableModel::Entry> statistics(const std::shared_ptr<const api::TaskResult>& result) {
  using E = KeyValueTableModel::Entry;
  QList<E> rows;
  const Result* r = resultOf(result);
  if (!r) return rows;
  const core::EstimationResult& c = *r->core();
  const core::FitStatistics& s = c.statistics;
  rows << E{QStringLiteral("optimizer"), QStringLiteral("Optimiser"), optimizerLabel(c.optimizer),
            q(c.optimizerReason)};
  rows << E{QStringLiteral("forward_integrator"), QStringLiteral("Integrator"),
            c.forwardIntegrator == integrators::Method::OdeSd ? QStringLiteral("odeSD")
                                                              : QStringLiteral("CVODES"),
            c.cvodesFallbacks > 0
                ? QStringLiteral("CVODES computed %1 evaluations odeSD could not do")
                      .arg(c.cvodesFallbacks)
                : QStringLiteral("time courses and forward sensitivities")};
  // Objectives with 8 digits (the side view's numbers have 4): the best and the nominal one
  // often agree to the third decimal. The tool tip has every digit.
  rows << E{QStringLiteral("best_objective"), QStringLiteral("Best objective (−log L)"),
            shortNumber(c.bestObjective), exactNumber(c.bestObjective)};
  if (std::isfinite(c.nominalObjective))
    rows << E{QStringLiteral("nominal_objective"), QStringLiteral("At nominal parameters"),
              shortNumber(c.nominalObjective),
              QStringLiteral("the objective at the PEtab nominal values: %1")
                  .arg(exactNumber(c.nominalObjective))};
  rows << E{QStringLiteral("starts_at_best"), QStringLiteral("Starts at the best"),
            QStringLiteral("%1 of %2").arg(r->startsAtBest()).arg(c.starts.size()),
            QStringLiteral("final objective within %1 of the best").arg(kConvergedTolerance)};
  long gradients = 0;
  for (const core::StartResult& st : c.starts) gradients += st.gradientEvaluations;
  rows << E{QStringLiteral("gradient_evaluations"), QStringLiteral("Gradient evaluations"),
            qlonglong(gradients), QStringLiteral("all starts")};
  rows << E{QStringLiteral("wall_seconds"), QStringLiteral("Wall time (s)"), c.wallSeconds, {}};
  if (s.available) {
    rows << E{QStringLiteral("chi_square"), QStringLiteral("χ² (Σ r²)"), s.chiSquare,
              QStringLiteral("weighted residuals r = (m − y)/σ")};
    rows << E{QStringLiteral("measurements"), QStringLiteral("Measurements"),
              qlonglong(s.measurements), {}};
    rows << E{QStringLiteral("dof"), QStringLiteral("Degrees of freedom"),
              qlonglong(s.degreesOfFreedom), {}};
    rows << E{QStringLiteral("rank"), QStringLiteral("Rank of the FIM"),
              QStringLiteral("%1 of %2").arg(s.rank).arg(s.parameterIds.size()),
              QStringLiteral("below full rank: some parameters are not identifiable")};
    rows << E{QStringLiteral("condition"), QStringLiteral("Condition of the FIM"),
              s.conditionNumber, {}};
    QStringList eig;
    for (Eigen::Index i = 0; i < s.eigenvalues.size(); ++i) eig << shortNumber(s.eigenvalues[i]);
    rows << E{QStringLiteral("eigenvalues"), QStringLiteral("FIM eigenvalues"), eig.join(QStringLiteral(", ")),
              QStringLiteral("ascending; near-zero ones point at unidentifiable directions")};
    for (const core::ResidualSummary& res : s.residuals)
      rows << E{QStringLiteral("residual_") + q(res.observableId),
                QStringLiteral("Residuals %1").arg(q(res.observableId)),
                QStringLiteral("rms %1, mean %2, max |r| %3 (n = %4)")
                    .arg(shortNumber(res.rms), shortNumber(res.mean), shortNumber(res.maxAbs))
                    .arg(res.count),
                {}};
  }
  if (!s.message.empty())
    rows << E{QStringLiteral("statistics_note"), QStringLiteral("Statistics"), q(s.message),
              q(s.message)};
  rows << fallbackEntries(c.fallbacks);
  return rows;
}

}  // namespace

CorrelationView::CorrelationView(QWidget* parent) : api::TaskResultView(parent) {
  map_ = new HeatMapWidget(this);
  map_->setObjectName(QStringLiteral("correlationMap"));
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(map_, 1);
  layout->addWidget(note_);
}

void CorrelationView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  const Result* r = resultOf(result);
  if (!r) return;
  const core::FitStatistics& s = r->core()->statistics;
  ids_.clear();
  if (!s.available) {
    map_->setData({}, {}, {}, tr("No correlations"));
    note_->setText(tr("No statistics at the optimum: %1").arg(q(s.message)));
    return;
  }
  for (const std::string& id : s.parameterIds) ids_ << q(id);
  const Eigen::Index n = s.correlation.rows();
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(n * n));
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < s.correlation.cols(); ++j) values.push_back(s.correlation(i, j));
  map_->setData(ids_, ids_, std::move(values),
                tr("Correlations of the estimates (from the Fisher information)"));
  note_->setText(tr("Red: the estimates rise together; blue: one rises as the other falls; "
                    "|ρ| near 1 means the data cannot tell them apart. Rank of the FIM %1 of %2. "
                    "Hover a cell for its value.")
                     .arg(s.rank)
                     .arg(n));
}

QString CorrelationView::toCsv() const {
  QString out;
  QTextStream s(&out);
  s << "parameter";
  for (const QString& id : ids_) s << ',' << csvField(id);
  s << '\n';
  const std::vector<double>& v = map_->values();
  const qsizetype n = ids_.size();
  for (qsizetype i = 0; i < n; ++i) {
    s << csvField(ids_[i]);
    for (qsizetype j = 0; j < n; ++j) s << ',' << exactNumber(v[static_cast<std::size_t>(i * n + j)]);
    s << '\n';
  }
  return out;
}

QList<api::ExportFormat> CorrelationView::exportFormats() const {
  QList<api::ExportFormat> formats = imageExportFormats(title());
  formats << api::ExportFormat{QStringLiteral("csv"), tr("Correlation matrix as CSV..."),
                               tr("CSV files (*.csv)"), QStringLiteral("csv")};
  return formats;
}

bool CorrelationView::exportTo(const QString& formatId, const QString& path,
                               QString* errorString) const {
  if (ids_.isEmpty()) {
    if (errorString) *errorString = tr("no correlation matrix shown");
    return false;
  }
  if (formatId == QLatin1String("csv")) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
      if (errorString) *errorString = f.errorString();
      return false;
    }
    f.write(toCsv().toUtf8());
    return true;
  }
  if (map_->isVisible() && map_->width() > 200)
    return exportWidgetImage(*map_, title(), formatId, path, errorString);
  HeatMapWidget copy;  // not on screen: a copy laid out at a default size
  copy.setData(ids_, ids_, map_->values(), tr("Correlations of the estimates (from the Fisher information)"));
  copy.resize(900, 700);
  return exportWidgetImage(copy, title(), formatId, path, errorString);
}

QList<api::TaskResultView*> createResultViews(QWidget* parent) {
  auto* waterfallView = new CurveChartView(QStringLiteral("Waterfall"), &waterfall, parent);
  auto* fit = new MeasurementChartView(
      QStringLiteral("Fit"),
      [](const std::shared_ptr<const api::TaskResult>& result) {
        const Result* r = resultOf(result);
        return r ? r->fit() : nullptr;
      },
      parent);
  fit->setCurveSource([](const std::shared_ptr<const api::TaskResult>& result) {
    const Result* r = resultOf(result);
    return r ? r->fitCurves() : nullptr;
  });
  auto* parameterModel = new RecordTableModel(parameterHeaders());
  auto* parameters = new TableResultView(
      QStringLiteral("Parameters"), parameterModel,
      [parameterModel](const std::shared_ptr<const api::TaskResult>& result) {
        const Result* r = resultOf(result);
        parameterModel->setRows(r ? parameterRows(*r->core()) : QList<RecordTableModel::Row>{});
      },
      parent);
  auto* startModel = new RecordTableModel({QStringLiteral("rank")});
  auto* starts = new TableResultView(
      QStringLiteral("Starts"), startModel,
      [startModel](const std::shared_ptr<const api::TaskResult>& result) {
        const Result* r = resultOf(result);
        if (r) startModel->setTable(startHeaders(*r->core()), startRows(*r->core()));
        else startModel->setTable({QStringLiteral("rank")}, {});
      },
      parent);
  auto* correlations = new CorrelationView(parent);
  auto* profileView = new CurveChartView(QStringLiteral("Profiles"), &profiles, parent);
  auto* stats = new KeyValueView(QStringLiteral("Statistics"), &statistics, parent);
  // Best fit before Statistics: its buttons right under Run, where the run's end is seen.
  return {waterfallView, fit,         parameters,
          starts,        correlations, profileView,
          new BestFitView(parent),     stats};
}

}  // namespace sensode::plugin::estimation
