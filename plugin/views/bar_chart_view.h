// SPDX-License-Identifier: MIT
// A result tab with one horizontal bar per labelled value (the objective gradient per estimated
// parameter; method discrepancies), drawn with Qt Charts, exported as PNG and SVG. Bars keep the
// order they come in (the parameter table's), top to bottom. A symmetric-log option
// (sign(v)·log10(1 + |v|/floor)) keeps entries that differ by decades readable; the tool tip and
// the table always have the exact numbers.
#pragma once

#include <functional>
#include <memory>

#include "gui/plugin_api/task_plugin.h"

class QChart;
class QChartView;
class QCheckBox;
class QLabel;

namespace sensode::plugin {

struct BarData {
  QStringList labels;
  QList<double> values;
  QString valueTitle;  // axis title, "d objective / d parameter (on its scale)"
  QString caption;     // line under the chart (objective value, method)
};

class BarChartView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract = std::function<BarData(const std::shared_ptr<const api::TaskResult>&)>;
  BarChartView(QString title, Extract extract, QWidget* parent = nullptr);

  QString title() const override { return title_; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path,
                QString* errorString) const override;

  const BarData& data() const { return data_; }
  QChart* chart() const { return chart_; }
  QCheckBox* symlogBox() const { return symlog_; }
  void setSymlog(bool on);

 private:
  void populate(QChart* chart) const;
  void replot();

  QString title_;
  Extract extract_;
  BarData data_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QCheckBox* symlog_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sensode::plugin
