// SPDX-License-Identifier: MIT
// The model corpus of the corpus test: every curated BioModel in ../shared/biomodels and every
// SBML file in ../shared/petab, each with its natural time span — t = 0–100 for the BioModels
// (biomodels/MANIFEST.md), and for a PEtab model 0 to the largest finite measurement time of the
// problems (yaml files) that name it.
#pragma once

#include <QtCore/QString>

#include <vector>

namespace sensode::test {

struct CorpusModel {
  QString name;   // path relative to the shared folder: "biomodels/BIOMD0000000005.xml"
  QString file;   // absolute path
  double tEnd = 100;
  QString span;   // where tEnd comes from, for the report
};

// Sorted by name: the BioModels, then the PEtab models.
std::vector<CorpusModel> corpusModels(const QString& sharedDir);

// The file names listed under `key:` ("sbml_files", "measurement_files") anywhere in a PEtab
// yaml file, as written (relative to the yaml's folder). A line-based reading of the block lists
// PEtab format version 1 uses; enough to find files, not a yaml parser.
QStringList yamlFileList(const QString& yamlFile, const QString& key);

// The largest finite value of the `time` column of a PEtab measurement table; NaN when the table
// has none (all times inf, steady-state data) or cannot be read.
double largestFiniteMeasurementTime(const QString& tsvFile);

}  // namespace sensode::test
