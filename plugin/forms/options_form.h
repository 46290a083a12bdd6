// SPDX-License-Identifier: MIT
// A settings form built from a table of field descriptors (STYLE.md guideline 3: describe the
// options once — key, label, hint, unit, bounds — and derive the form, the JSON keys and the
// validation from that table). Every task's set-up widget is one of these plus whatever the
// task needs beyond plain fields (parameter pickers for sensitivities, for example).
//
// Numbers are typed as text (scientific notation welcome: "1e-8"), read with the C locale first
// and the user's locale second, and checked against the bounds when the form is validated; an
// invalid field is marked and named in validate()'s message.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <QWidget>

#include <limits>
#include <optional>

class QFormLayout;

namespace sensode::plugin {

struct FieldSpec {
  enum class Kind { Real, Integer, Choice, Flag };
  QString key;    // JSON key, "t_end"
  QString label;  // form label, "End time"
  QString hint;   // tool tip: meaning, default, formula
  QString unit;   // shown after the editor, may be empty
  Kind kind = Kind::Real;
  QVariant defaultValue;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool minExclusive = false;  // value must be > min (else >= min)
  bool maxExclusive = false;  // value must be < max (else <= max)
  QStringList choices;        // Choice: the values stored in JSON
  QStringList choiceLabels;   // Choice: what the combo box shows (defaults to choices)
};

class OptionsForm : public QWidget {
  Q_OBJECT

 public:
  OptionsForm(QList<FieldSpec> fields, QWidget* parent = nullptr);

  // Current values; invalid numbers are left out (validate() names them).
  QJsonObject values() const;
  // Sets the fields present in `values`; other fields keep their current values.
  void setValues(const QJsonObject& values);
  void resetToDefaults();
  // "End time = -1: must be > 0", or empty when every field is valid.
  QString validate() const;
  QWidget* editor(const QString& key) const;
  // Offers or withholds the choice `value` of the Choice field `key`: a withheld choice stays in
  // the list, greyed, with `why` in its tool tip, and while it is withheld `instead` is selected
  // wherever it would be (defaults, restored settings).
  void setChoiceAvailable(const QString& key, const QString& value, bool available,
                          const QString& why = {}, const QString& instead = {});
  const QList<FieldSpec>& fields() const { return fields_; }
  QFormLayout* formLayout() const { return layout_; }

 signals:
  void changed();

 private:
  std::optional<QString> problem(int index) const;
  void markValidity();
  void avoidWithheldChoices();

  QList<FieldSpec> fields_;
  QList<QWidget*> editors_;
  QFormLayout* layout_ = nullptr;
  QMap<QString, QMap<QString, QString>> withheld_;  // key → withheld value → value instead
};

}  // namespace sensode::plugin
