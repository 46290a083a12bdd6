// SPDX-License-Identifier: MIT
// How the plugin's tables lay out cell text: one line per cell (word wrap broke a number at its
// decimal point, "1. 0000122…"), and a number too wide for its column loses mantissa digits,
// never its exponent ("1.00001…e-05"); other text loses its middle, so an id keeps its end.
// Tool tips have the whole text.
#pragma once

#include <QApplication>
#include <QFontMetrics>
#include <QRegularExpression>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTableWidgetItem>

#include <optional>

#include "plugin/models/number_format.h"

namespace sensode::plugin {

// `text` as it fits into `width` pixels: unchanged when it fits; a number in exponent form
// with its mantissa shortened and "…" before the exponent; anything else elided in the middle.
inline QString fittedCellText(const QString& text, const QFontMetrics& metrics, int width) {
  if (metrics.horizontalAdvance(text) <= width) return text;
  static const QRegularExpression number(
      QStringLiteral("^([-+]?[0-9]+(?:\\.[0-9]*)?)([eE][-+]?[0-9]+)$"));
  const QRegularExpressionMatch m = number.match(text);
  if (!m.hasMatch()) return metrics.elidedText(text, Qt::ElideMiddle, width);
  QString mantissa = m.captured(1);
  const QString tail = QStringLiteral("…") + m.captured(2);
  // At least one digit stays: "1…e-05" is still the right order of magnitude.
  while (mantissa.size() > 1 && metrics.horizontalAdvance(mantissa + tail) > width) mantissa.chop(1);
  return mantissa + tail;
}

// The item delegate of keepCellTextWhole(): paints each cell's text fitted with
// fittedCellText() (size hints stay those of the whole text, so columns sized to their contents
// fit it).
class CellTextDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  // The text paint() draws for `index` in `option.rect`.
  QString shownText(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem o = option;
    initStyleOption(&o, index);
    return fitted(o);
  }

  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    QStyleOptionViewItem o = option;
    initStyleOption(&o, index);
    o.text = fitted(o);
    const QWidget* widget = o.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &o, painter, widget);
  }

 private:
  static QString fitted(const QStyleOptionViewItem& o) {
    // The style's text margin on each side (QCommonStyle: PM_FocusFrameHMargin + 1).
    const QWidget* widget = o.widget;
    const QStyle* style = widget ? widget->style() : QApplication::style();
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    return fittedCellText(o.text, o.fontMetrics, o.rect.width() - 2 * margin);
  }
};

// Editable number cells of set-up tables: the text is shortNumber() of the value and the exact
// value stays behind it (kShownValueRole) until the user types another number.
constexpr int kShownValueRole = Qt::UserRole + 1;

inline void showNumberInCell(QTableWidgetItem* item, double v) {
  item->setText(shortNumber(v));
  item->setData(kShownValueRole, v);
  item->setToolTip(exactNumber(v));
}

// The value a cell filled by showNumberInCell() stands for now; nullopt for a non-number.
inline std::optional<double> numberInCell(const QTableWidgetItem* item) {
  if (!item) return std::nullopt;
  return cellValue(item->text(), item->data(kShownValueRole).toDouble());
}

inline void keepCellTextWhole(QTableView* view) {
  view->setWordWrap(false);
  view->setTextElideMode(Qt::ElideMiddle);
  view->setItemDelegate(new CellTextDelegate(view));
}

}  // namespace sensode::plugin
