// SPDX-License-Identifier: MIT
// A choice of ids from the open model for a task's set-up: "All ..." (the default; an empty
// selection) or the checked entries of a list, in the list's order. The list comes from the
// model file (read again only when the path changes); a selection restored from the settings
// before the model is read is applied once it is, and one that names none of the model's ids
// (remembered from another model) means all. The Parameter sensitivities task picks its
// parameters with one, the Time course and Parameter sensitivities tasks their outputs.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>

class QCheckBox;
class QLabel;
class QListWidget;

namespace sensode::plugin {

class IdPicker : public QWidget {
 public:
  struct Item {
    QString id;
    QString label;  // what the list shows: "alpha  (share of A; parameter)"
  };
  // Reads the items of the model at a path; may throw (std::exception: its message is shown).
  using Loader = std::function<QList<Item>(const QString& path)>;

  // `allText`: the check box ("All outputs"); `what`: the validation message's field name
  // ("Outputs"); `objectName`: the picker's, with "<name>All" and "<name>List" for its parts.
  IdPicker(const QString& allText, QString what, const QString& objectName, Loader loader,
           QWidget* parent);

  void setModelPath(const QString& path);
  // Empty when all are wanted.
  QStringList selected() const;
  void setSelected(QStringList ids);
  // The selection in a task's settings JSON under `key`, an array of ids (empty = all):
  // setSelected from it when the key is present; writes it.
  void readSettings(const QJsonObject& settings, const QString& key);
  void writeSettings(QJsonObject& settings, const QString& key) const;
  // "Outputs: none checked (...)", or empty.
  QString validate() const;

 private:
  QCheckBox* all_ = nullptr;
  QListWidget* list_ = nullptr;
  QLabel* note_ = nullptr;
  QString what_;
  QString allText_;
  Loader loader_;
  QString path_;
  QStringList pending_;
};

}  // namespace sensode::plugin
