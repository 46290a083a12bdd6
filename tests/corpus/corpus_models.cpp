// SPDX-License-Identifier: MIT
#include "corpus/corpus_models.h"

#include <QtCore/QDir>
#include <QtCore/QDirIterator>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QMap>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sensode::test {

namespace {

constexpr double kBioModelsEnd = 100;  // biomodels/MANIFEST.md: "the corpus tests use t = 0–100"

QStringList filesUnder(const QString& dir, const QString& pattern) {
  QStringList files;
  QDirIterator it(dir, {pattern}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) files << QFileInfo(it.next()).absoluteFilePath();
  files.sort();
  return files;
}

QString resolved(const QString& yamlFile, const QString& relative) {
  return QFileInfo(QFileInfo(yamlFile).absoluteDir().filePath(relative)).absoluteFilePath();
}

// Largest finite measurement time of the problem in `yamlFile`; NaN when there is none.
double problemEnd(const QString& yamlFile) {
  double end = std::numeric_limits<double>::quiet_NaN();
  for (const QString& table : yamlFileList(yamlFile, "measurement_files")) {
    const double t = largestFiniteMeasurementTime(resolved(yamlFile, table));
    if (std::isfinite(t) && !(t <= end)) end = t;
  }
  return end;
}

}  // namespace

QStringList yamlFileList(const QString& yamlFile, const QString& key) {
  QFile f(yamlFile);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
  QStringList files;
  bool inList = false;
  while (!f.atEnd()) {
    QString line = QString::fromUtf8(f.readLine());
    if (line.startsWith(QChar(0xFEFF))) line.remove(0, 1);
    const QString t = line.trimmed();
    if (t.isEmpty() || t.startsWith('#')) continue;
    QString item = t;
    if (item.startsWith("- ")) item = item.mid(2).trimmed();
    if (item.endsWith(':') || item.contains(": ")) {  // a key (possibly "- key:" opening a problem)
      inList = item == key + ":";
      continue;
    }
    if (inList && t.startsWith("- ")) files << item;
  }
  return files;
}

double largestFiniteMeasurementTime(const QString& tsvFile) {
  QFile f(tsvFile);
  double end = std::numeric_limits<double>::quiet_NaN();
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return end;
  qsizetype timeColumn = -1;
  while (!f.atEnd()) {
    QString line = QString::fromUtf8(f.readLine());
    if (line.startsWith(QChar(0xFEFF))) line.remove(0, 1);
    const QStringList cells = line.trimmed().split('\t');
    if (timeColumn < 0) {
      timeColumn = cells.indexOf("time");
      if (timeColumn < 0) return end;
      continue;
    }
    if (timeColumn >= cells.size()) continue;
    bool ok = false;
    const double t = cells[timeColumn].trimmed().toDouble(&ok);
    if (ok && std::isfinite(t) && !(t <= end)) end = t;
  }
  return end;
}

std::vector<CorpusModel> corpusModels(const QString& sharedDir) {
  const QDir shared(sharedDir);
  std::vector<CorpusModel> models;
  for (const QString& file : filesUnder(shared.filePath("biomodels"), "BIOMD*.xml"))
    models.push_back({shared.relativeFilePath(file), file, kBioModelsEnd, "MANIFEST.md"});

  // Every problem's end time, credited to the SBML files it names.
  const QString petabDir = shared.filePath("petab");
  QMap<QString, double> endOfModel;
  QMap<QString, QStringList> yamlsInFolder;
  for (const QString& yaml : filesUnder(petabDir, "*.yaml")) {
    yamlsInFolder[QFileInfo(yaml).absolutePath()] << yaml;
    const double end = problemEnd(yaml);
    if (!std::isfinite(end)) continue;
    for (const QString& sbml : yamlFileList(yaml, "sbml_files")) {
      const QString model = resolved(yaml, sbml);
      if (!endOfModel.contains(model) || endOfModel[model] < end) endOfModel[model] = end;
    }
  }
  for (const QString& file : filesUnder(petabDir, "*.xml")) {
    CorpusModel m{shared.relativeFilePath(file), file, kBioModelsEnd, {}};
    if (endOfModel.contains(file)) {
      m.tEnd = endOfModel[file];
      m.span = "largest finite measurement time";
    } else {
      // Named by no problem (an alternative model file): the problems beside it.
      double end = std::numeric_limits<double>::quiet_NaN();
      for (const QString& yaml : yamlsInFolder.value(QFileInfo(file).absolutePath())) {
        const double e = problemEnd(yaml);
        if (std::isfinite(e) && !(e <= end)) end = e;
      }
      if (std::isfinite(end)) {
        m.tEnd = end;
        m.span = "largest finite measurement time of the problem beside it";
      } else {
        m.span = "no finite measurement time (steady-state data): 0–100 as for BioModels";
      }
    }
    models.push_back(m);
  }
  return models;
}

}  // namespace sensode::test
