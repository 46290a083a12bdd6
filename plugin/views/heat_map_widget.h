// SPDX-License-Identifier: MIT
// A matrix of numbers as coloured cells (rows × columns, labelled), on a diverging scale that is
// symmetric about zero: blue for negative, white for 0, red for positive, full colour at the
// largest finite magnitude; NaN cells (undefined values) grey. A colour bar gives the scale, the
// tool tip the exact number under the cursor. Paints itself, so it renders to PNG and SVG as is.
#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

namespace sensode::plugin {

class HeatMapWidget : public QWidget {
  Q_OBJECT

 public:
  explicit HeatMapWidget(QWidget* parent = nullptr);

  // values: rows.size() × columns.size(), row-major.
  void setData(QStringList rows, QStringList columns, std::vector<double> values, QString title);
  const std::vector<double>& values() const { return values_; }
  double scaleMaximum() const { return maxAbs_; }
  // The colour a value is drawn with (public for tests: 0 is white, the extremes saturate).
  QColor colorFor(double v) const;
  // The cell under a point, or (-1, -1).
  std::pair<int, int> cellAt(const QPoint& p) const;

  QSize sizeHint() const override { return {760, 520}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QRectF matrixRect() const;

  QStringList rows_, columns_;
  std::vector<double> values_;
  QString title_;
  double maxAbs_ = 0;
};

}  // namespace sensode::plugin
