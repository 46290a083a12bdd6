// SPDX-License-Identifier: MIT
// A result tab of the estimation task that plots curves of (x, y) points with Qt Charts: the
// waterfall of the multistart objectives (one page) and the likelihood profiles (one page per
// profiled parameter, chosen in a combo box). A page may carry a horizontal reference line (the
// profile's confidence threshold, the objective at the nominal parameters) and a vertical one
// (the optimum). Optional logarithmic y axis for data that span decades (a waterfall's
// objective − best + 1); non-positive values cannot be drawn there and are left out (the caption
// says how many).
//
// Exports: the shown page as PNG/SVG, and every page's points as CSV in long format
// (page, curve, x, y — the x and y titles as the header's last two names).
#pragma once

#include <QColor>
#include <QList>
#include <QPointF>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

#include "gui/plugin_api/task_plugin.h"

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;

namespace sensode::plugin::estimation {

struct Curve {
  QString name;
  QList<QPointF> points;
  QColor color;          // invalid: the chart's palette
  bool line = true;      // join the points
  bool markers = false;  // draw each point as a circle
};

struct ReferenceLine {
  QString name;  // legend text, "95 % threshold (χ²₁/2 above the optimum)"
  double value = 0;
  QColor color = QColor(0xb2, 0x18, 0x2b);
};

struct CurvePage {
  QString name;  // the combo box entry and the CSV's first column
  QString xTitle, yTitle;
  QList<Curve> curves;
  std::optional<ReferenceLine> horizontal, vertical;
  bool integerX = false;  // x is a count (the waterfall's rank): whole-number ticks
  QString caption;  // line under the chart
};

struct CurveChartData {
  QString pageLabel;  // the combo box's label and the CSV's first header, "parameter"
  QList<CurvePage> pages;
  // Log y: the page's y values as they are (they must be > 0 to be drawn).
  bool logYAvailable = false;
  bool logYByDefault = false;
};

class CurveChartView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract = std::function<CurveChartData(const std::shared_ptr<const api::TaskResult>&)>;
  static constexpr int kExportWidth = 1200, kExportHeight = 750;

  CurveChartView(QString title, Extract extract, QWidget* parent = nullptr);

  QString title() const override { return title_; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path,
                QString* errorString) const override;

  const CurveChartData& data() const { return data_; }
  int currentPage() const;
  void setPage(int index);
  QComboBox* pageBox() const { return page_; }
  QCheckBox* logScaleBox() const { return logY_; }
  QChart* chart() const { return chart_; }
  // Every page's points as CSV (long format).
  QString toCsv() const;

 private:
  // Fills `chart` with the chosen page; returns how many points the log axis could not draw.
  int populate(QChart* chart) const;
  void replot();

  QString title_;
  Extract extract_;
  CurveChartData data_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QComboBox* page_ = nullptr;
  QLabel* pageLabel_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sensode::plugin::estimation
