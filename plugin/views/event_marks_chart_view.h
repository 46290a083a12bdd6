// SPDX-License-Identifier: MIT
// A QChartView that marks event times on a time axis: a dashed vertical line across the plot
// area per time at which events changed the state, the event ids as a label at the top (when
// there are few enough marks to read them) and as the tooltip of the line. The marks are drawn
// in the foreground, so they are not series: they do not enter the legend, the y range or the
// thinning of long series, and they follow zoom.
#pragma once

#include <QChartView>
#include <QList>
#include <QString>

namespace sensode::plugin {

struct EventMark {
  double time;
  QString label;  // the ids of the events executed at `time`
};

class EventMarksChartView : public QChartView {
  Q_OBJECT

 public:
  // Labels are drawn above the lines up to this many marks (beyond, only the tooltips).
  static constexpr int kMaxLabelledMarks = 12;
  // A tooltip shows the marks within this many pixels of the mouse.
  static constexpr int kHoverPixels = 4;

  explicit EventMarksChartView(QChart* chart, QWidget* parent = nullptr);

  void setEventMarks(QList<EventMark> marks);
  const QList<EventMark>& eventMarks() const { return marks_; }
  // Where mark i's line is drawn, in viewport pixels (NaN outside the plot area).
  double markPixel(int i) const;
  // The tooltip at viewport x (empty when no mark is near): "t = 5: dose".
  QString toolTipAt(double viewportX) const;

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  bool viewportEvent(QEvent* event) override;

 private:
  QList<EventMark> marks_;
};

}  // namespace sensode::plugin
