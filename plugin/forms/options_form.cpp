// SPDX-License-Identifier: MIT
#include "plugin/forms/options_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonValue>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QStandardItemModel>

#include <cmath>
#include <optional>

namespace sensode::plugin {

namespace {

std::optional<double> parseNumber(const QString& text) {
  bool ok = false;
  const QString t = text.trimmed();
  double v = QLocale::c().toDouble(t, &ok);
  if (!ok) v = QLocale().toDouble(t, &ok);
  if (!ok) return std::nullopt;
  return v;
}

QString numberText(double v) { return QString::number(v, 'g', QLocale::FloatingPointShortest); }

QString boundText(const FieldSpec& f) {
  QStringList parts;
  if (std::isfinite(f.min)) parts << (f.minExclusive ? QStringLiteral("> ") : QStringLiteral(">= ")) + numberText(f.min);
  if (std::isfinite(f.max)) parts << (f.maxExclusive ? QStringLiteral("< ") : QStringLiteral("<= ")) + numberText(f.max);
  return parts.join(QStringLiteral(" and "));
}

}  // namespace

OptionsForm::OptionsForm(QList<FieldSpec> fields, QWidget* parent)
    : QWidget(parent), fields_(std::move(fields)) {
  layout_ = new QFormLayout(this);
  layout_->setContentsMargins(0, 0, 0, 0);
  layout_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  layout_->setRowWrapPolicy(QFormLayout::DontWrapRows);
  for (const FieldSpec& f : fields_) {
    QWidget* editor = nullptr;
    switch (f.kind) {
      case FieldSpec::Kind::Real:
      case FieldSpec::Kind::Integer: {
        auto* line = new QLineEdit(this);
        line->setText(f.kind == FieldSpec::Kind::Integer
                          ? QString::number(f.defaultValue.toLongLong())
                          : numberText(f.defaultValue.toDouble()));
        line->setAlignment(Qt::AlignRight);
        connect(line, &QLineEdit::textChanged, this, [this] {
          markValidity();
          emit changed();
        });
        editor = line;
        break;
      }
      case FieldSpec::Kind::Choice: {
        auto* combo = new QComboBox(this);
        for (int i = 0; i < f.choices.size(); ++i) {
          combo->addItem(i < f.choiceLabels.size() ? f.choiceLabels[i] : f.choices[i], f.choices[i]);
        }
        combo->setCurrentIndex(std::max(0, combo->findData(f.defaultValue.toString())));
        // As wide as the column allows, not as its longest choice (which set the whole settings
        // column's width); the open list shows every choice in full.
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(12);
        connect(combo, &QComboBox::currentIndexChanged, this, &OptionsForm::changed);
        editor = combo;
        break;
      }
      case FieldSpec::Kind::Flag: {
        auto* box = new QCheckBox(this);
        box->setChecked(f.defaultValue.toBool());
        connect(box, &QCheckBox::toggled, this, &OptionsForm::changed);
        editor = box;
        break;
      }
    }
    editor->setObjectName(f.key);
    QString tip = f.hint;
    const QString bounds = boundText(f);
    if (!bounds.isEmpty()) tip += QStringLiteral("\nAllowed: %1.").arg(bounds);
    tip += QStringLiteral("\nDefault: %1.").arg(f.defaultValue.toString());
    editor->setToolTip(tip.trimmed());
    editors_ << editor;

    auto* label = new QLabel(f.label, this);
    label->setToolTip(editor->toolTip());
    label->setBuddy(editor);
    if (f.unit.isEmpty()) {
      layout_->addRow(label, editor);
    } else {
      auto* row = new QHBoxLayout;
      row->setContentsMargins(0, 0, 0, 0);
      row->addWidget(editor, 1);
      auto* unit = new QLabel(f.unit, this);
      unit->setEnabled(false);
      row->addWidget(unit);
      layout_->addRow(label, row);
    }
  }
}

QWidget* OptionsForm::editor(const QString& key) const {
  for (int i = 0; i < fields_.size(); ++i) {
    if (fields_[i].key == key) return editors_[i];
  }
  return nullptr;
}

QJsonObject OptionsForm::values() const {
  QJsonObject o;
  for (int i = 0; i < fields_.size(); ++i) {
    const FieldSpec& f = fields_[i];
    switch (f.kind) {
      case FieldSpec::Kind::Real: {
        if (const auto v = parseNumber(static_cast<QLineEdit*>(editors_[i])->text())) o.insert(f.key, *v);
        break;
      }
      case FieldSpec::Kind::Integer: {
        const auto v = parseNumber(static_cast<QLineEdit*>(editors_[i])->text());
        if (v && std::isfinite(*v) && *v == std::floor(*v)) o.insert(f.key, static_cast<qint64>(*v));
        break;
      }
      case FieldSpec::Kind::Choice:
        o.insert(f.key, static_cast<QComboBox*>(editors_[i])->currentData().toString());
        break;
      case FieldSpec::Kind::Flag:
        o.insert(f.key, static_cast<QCheckBox*>(editors_[i])->isChecked());
        break;
    }
  }
  return o;
}

void OptionsForm::setValues(const QJsonObject& values) {
  for (int i = 0; i < fields_.size(); ++i) {
    const FieldSpec& f = fields_[i];
    const QJsonValue v = values.value(f.key);
    if (v.isUndefined() || v.isNull()) continue;
    switch (f.kind) {
      case FieldSpec::Kind::Real:
        if (v.isDouble()) static_cast<QLineEdit*>(editors_[i])->setText(numberText(v.toDouble()));
        break;
      case FieldSpec::Kind::Integer:
        if (v.isDouble()) {
          static_cast<QLineEdit*>(editors_[i])->setText(QString::number(v.toInteger()));
        }
        break;
      case FieldSpec::Kind::Choice: {
        auto* combo = static_cast<QComboBox*>(editors_[i]);
        const int index = combo->findData(v.toString());
        if (index >= 0) combo->setCurrentIndex(index);
        break;
      }
      case FieldSpec::Kind::Flag:
        if (v.isBool()) static_cast<QCheckBox*>(editors_[i])->setChecked(v.toBool());
        break;
    }
  }
  avoidWithheldChoices();
  markValidity();
}

void OptionsForm::setChoiceAvailable(const QString& key, const QString& value, bool available,
                                     const QString& why, const QString& instead) {
  auto* combo = qobject_cast<QComboBox*>(editor(key));
  auto* items = combo ? qobject_cast<QStandardItemModel*>(combo->model()) : nullptr;
  const int index = combo ? combo->findData(value) : -1;
  if (!items || index < 0) return;
  QStandardItem* item = items->item(index);
  item->setEnabled(available);
  item->setToolTip(available ? QString() : why);
  if (available) {
    withheld_[key].remove(value);
  } else {
    withheld_[key].insert(value, instead);
  }
  avoidWithheldChoices();
}

void OptionsForm::avoidWithheldChoices() {
  for (auto it = withheld_.cbegin(); it != withheld_.cend(); ++it) {
    auto* combo = qobject_cast<QComboBox*>(editor(it.key()));
    const QString current = combo ? combo->currentData().toString() : QString();
    if (!combo || !it.value().contains(current)) continue;
    const int instead = combo->findData(it.value().value(current));
    if (instead >= 0) combo->setCurrentIndex(instead);
  }
}

void OptionsForm::resetToDefaults() {
  QJsonObject defaults;
  for (const FieldSpec& f : fields_) defaults.insert(f.key, QJsonValue::fromVariant(f.defaultValue));
  setValues(defaults);
}

std::optional<QString> OptionsForm::problem(int index) const {
  const FieldSpec& f = fields_[index];
  if (f.kind != FieldSpec::Kind::Real && f.kind != FieldSpec::Kind::Integer) return std::nullopt;
  const QString text = static_cast<QLineEdit*>(editors_[index])->text().trimmed();
  const auto v = parseNumber(text);
  if (!v || std::isnan(*v)) {
    return QStringLiteral("%1 = '%2': not a number").arg(f.label, text);
  }
  if (f.kind == FieldSpec::Kind::Integer && (!std::isfinite(*v) || *v != std::floor(*v))) {
    return QStringLiteral("%1 = %2: must be a whole number").arg(f.label, text);
  }
  const bool belowMin = f.minExclusive ? !(*v > f.min) : !(*v >= f.min);
  const bool aboveMax = f.maxExclusive ? !(*v < f.max) : !(*v <= f.max);
  if (belowMin || aboveMax || (f.kind == FieldSpec::Kind::Real && !std::isfinite(*v))) {
    return QStringLiteral("%1 = %2: must be %3").arg(f.label, text, boundText(f).isEmpty() ? QStringLiteral("finite") : boundText(f));
  }
  return std::nullopt;
}

QString OptionsForm::validate() const {
  for (int i = 0; i < fields_.size(); ++i) {
    if (const auto p = problem(i)) return *p;
  }
  return {};
}

void OptionsForm::markValidity() {
  for (int i = 0; i < fields_.size(); ++i) {
    if (fields_[i].kind != FieldSpec::Kind::Real && fields_[i].kind != FieldSpec::Kind::Integer)
      continue;
    auto* line = static_cast<QLineEdit*>(editors_[i]);
    const auto p = problem(i);
    line->setStyleSheet(p ? QStringLiteral("QLineEdit { background: #ffe4e4; }") : QString());
    line->setProperty("invalidReason", p ? *p : QString());
  }
}

}  // namespace sensode::plugin
