// SPDX-License-Identifier: MIT
#include "plugin/forms/id_picker.h"

#include <QCheckBox>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

#include <exception>

namespace sensode::plugin {

IdPicker::IdPicker(const QString& allText, QString what, const QString& objectName, Loader loader,
                   QWidget* parent)
    : QWidget(parent), what_(std::move(what)), allText_(allText), loader_(std::move(loader)) {
  setObjectName(objectName);
  all_ = new QCheckBox(allText, this);
  all_->setObjectName(objectName + QStringLiteral("All"));
  all_->setChecked(true);
  list_ = new QListWidget(this);
  list_->setObjectName(objectName + QStringLiteral("List"));
  list_->setEnabled(false);
  list_->setMaximumHeight(110);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setEnabled(false);
  connect(all_, &QCheckBox::toggled, list_, [this](bool on) { list_->setEnabled(!on); });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(all_);
  layout->addWidget(list_);
  layout->addWidget(note_);
}

void IdPicker::setModelPath(const QString& path) {
  if (path == path_) return;
  path_ = path;
  const QStringList keep = selected();
  list_->clear();
  note_->clear();
  if (path.isEmpty()) return;
  try {
    for (const Item& entry : loader_(path)) {
      auto* item = new QListWidgetItem(entry.label, list_);
      item->setData(Qt::UserRole, entry.id);
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
      item->setCheckState(Qt::Unchecked);
    }
  } catch (const std::exception& e) {
    note_->setText(QString::fromStdString(e.what()));
  }
  setSelected(pending_.isEmpty() ? keep : pending_);
}

QStringList IdPicker::selected() const {
  if (all_->isChecked()) return {};
  if (list_->count() == 0) return pending_;
  QStringList ids;
  for (int i = 0; i < list_->count(); ++i) {
    if (list_->item(i)->checkState() == Qt::Checked)
      ids << list_->item(i)->data(Qt::UserRole).toString();
  }
  return ids;
}

void IdPicker::setSelected(QStringList ids) {  // (a copy: it may be pending_ itself)
  all_->setChecked(ids.isEmpty());
  if (list_->count() == 0) {
    pending_ = ids;
    return;
  }
  pending_.clear();
  bool any = false;
  for (int i = 0; i < list_->count(); ++i) {
    const bool on = ids.contains(list_->item(i)->data(Qt::UserRole).toString());
    list_->item(i)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    any = any || on;
  }
  // A choice remembered for another model, none of whose ids this one has: all of them.
  if (!any) all_->setChecked(true);
}

void IdPicker::readSettings(const QJsonObject& settings, const QString& key) {
  if (!settings.contains(key)) return;
  QStringList ids;
  for (const QJsonValue& v : settings.value(key).toArray()) ids << v.toString();
  setSelected(ids);
}

void IdPicker::writeSettings(QJsonObject& settings, const QString& key) const {
  settings.insert(key, QJsonArray::fromStringList(selected()));
}

QString IdPicker::validate() const {
  if (!all_->isChecked() && selected().isEmpty())
    return tr("%1: none checked (check some, or %2)").arg(what_, allText_);
  return {};
}

}  // namespace sensode::plugin
