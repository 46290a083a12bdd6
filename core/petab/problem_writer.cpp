// SPDX-License-Identifier: MIT
#include "core/petab/problem_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "core/petab/petab_problem.h"
#include "core/petab/tables.h"
#include "core/petab/yaml_file.h"

namespace sensode::petab {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannotWrite(const fs::path& file, const std::string& why) {
  throw Error(file.string() + ": cannot write: " + why);
}

bool sameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// A TSV cell as the reader (tables.h) reads it back: quoted when it holds a tab, a line break or
// a quote, with "" for a quote inside.
std::string tsvCell(const std::string& text) {
  if (text.find_first_of("\t\r\n\"") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A YAML single-quoted scalar (file names may hold spaces, '#' or ':').
std::string yamlScalar(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Names in DIR: each source file once, under its own name unless another file took it.
class FolderNames {
 public:
  explicit FolderNames(fs::path dir) : dir_(std::move(dir)) { taken_.insert("problem.yaml"); }

  std::string nameFor(const fs::path& source) {
    const std::string key = fs::absolute(source).lexically_normal().string();
    if (auto it = bySource_.find(key); it != bySource_.end()) return it->second;
    std::string name = source.filename().string();
    for (int n = 2; taken_.count(name); ++n)
      name = source.stem().string() + "_" + std::to_string(n) + source.extension().string();
    taken_.insert(name);
    bySource_[key] = name;
    return name;
  }

 private:
  fs::path dir_;
  std::set<std::string> taken_;
  std::map<std::string, std::string> bySource_;
};

// The parameter tables as one: the union of the columns in order of first appearance, every
// row with its cells by column name.
void writeParameterTable(const std::vector<fs::path>& files,
                         const std::vector<std::pair<std::string, double>>& nominalValues,
                         const fs::path& target) {
  std::vector<Table> tables;
  std::vector<std::string> header;
  for (const fs::path& file : files) {
    tables.push_back(readTable(file, "parameters"));
    tables.back().require({"parameterId", "nominalValue"});
    for (const std::string& c : tables.back().header)
      if (std::find(header.begin(), header.end(), c) == header.end()) header.push_back(c);
  }
  std::map<std::string, double> values(nominalValues.begin(), nominalValues.end());
  std::set<std::string> written;
  std::string text;
  for (std::size_t c = 0; c < header.size(); ++c) text += (c ? "\t" : "") + tsvCell(header[c]);
  text += "\n";
  for (const Table& t : tables)
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const std::string id = t.cell(r, "parameterId");
      for (std::size_t c = 0; c < header.size(); ++c) {
        std::string cell = t.cell(r, header[c]);
        if (header[c] == "nominalValue" && values.count(id)) {
          cell = exact(values.at(id));
          written.insert(id);
        }
        text += (c ? "\t" : "") + tsvCell(cell);
      }
      text += "\n";
    }
  for (const auto& [id, value] : values)
    if (!written.count(id))
      throw PetabError(files.front().filename().string() + ": parameters table: no row for '" +
                       id + "', whose nominal value is to be written");
  std::ofstream out(target, std::ios::binary);
  if (!out) cannotWrite(target, std::strerror(errno));
  out << text;
  out.close();
  if (!out) cannotWrite(target, std::strerror(errno));
}

void writeList(std::string& yaml, const char* key, const std::vector<fs::path>& files,
               FolderNames& names) {
  if (files.empty()) return;
  yaml += std::string("    ") + key + ":\n";
  for (const fs::path& f : files) yaml += "      - " + yamlScalar(names.nameFor(f)) + "\n";
}

// The files written (problem.yaml, the first parameter file's name) are the problem's own when
// DIR is its folder: never replace them.
void refuseOwnFiles(const YamlFile& y, const fs::path& yamlFile, const fs::path& dir) {
  if (y.parameterFiles.empty()) return;
  std::vector<fs::path> own = y.parameterFiles;
  own.push_back(yamlFile);
  for (const fs::path& mine : {dir / "problem.yaml", dir / y.parameterFiles.front().filename()})
    for (const fs::path& theirs : own)
      if (sameFile(mine, theirs))
        cannotWrite(mine, "it is a file of the problem being written (" + theirs.string() +
                              "); choose another folder");
}

}  // namespace

void checkProblemFolder(const fs::path& yamlFile, const fs::path& dir) {
  refuseOwnFiles(readYamlFile(yamlFile), yamlFile, dir);
}

WrittenProblem writeProblemWithNominalValues(
    const fs::path& yamlFile, const std::vector<std::pair<std::string, double>>& nominalValues,
    const fs::path& dir) {
  const YamlFile y = readYamlFile(yamlFile);
  if (y.problems.size() != 1)
    throw PetabError(yamlFile.filename().string() + ": key 'problems' lists " +
                     std::to_string(y.problems.size()) + " problems; Sensode supports exactly one");
  if (y.parameterFiles.empty())
    throw PetabError(yamlFile.filename().string() + ": key 'parameter_file' names no file");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) cannotWrite(dir, "no such folder and it cannot be created (" + ec.message() + ")");

  refuseOwnFiles(y, yamlFile, dir);
  FolderNames names(dir);
  WrittenProblem written;
  written.yaml = dir / "problem.yaml";
  written.parameterTable = dir / names.nameFor(y.parameterFiles.front());
  for (std::size_t i = 1; i < y.parameterFiles.size(); ++i)
    names.nameFor(y.parameterFiles[i]);  // merged into the first: reserved, not copied

  const YamlProblem& p = y.problems.front();
  std::string yaml =
      "# Written by Sensode: the PEtab problem " + yamlFile.filename().string() +
      " with the nominal values in " + written.parameterTable.filename().string() +
      " replaced\n# (a best fit); the other files are copies of the problem's.\n"
      "format_version: 1\nparameter_file: " +
      yamlScalar(written.parameterTable.filename().string()) + "\nproblems:\n  - sbml_files:\n";
  for (const fs::path& f : p.sbmlFiles) yaml += "      - " + yamlScalar(names.nameFor(f)) + "\n";
  writeList(yaml, "condition_files", p.conditionFiles, names);
  writeList(yaml, "measurement_files", p.measurementFiles, names);
  writeList(yaml, "observable_files", p.observableFiles, names);
  writeList(yaml, "visualization_files", p.visualizationFiles, names);

  for (const auto* list : {&p.sbmlFiles, &p.conditionFiles, &p.measurementFiles,
                           &p.observableFiles, &p.visualizationFiles})
    for (const fs::path& source : *list) {
      const fs::path target = dir / names.nameFor(source);
      if (sameFile(source, target) ||
          std::find(written.copies.begin(), written.copies.end(), target) != written.copies.end())
        continue;
      fs::copy_file(source, target, fs::copy_options::overwrite_existing, ec);
      if (ec) cannotWrite(target, "copying " + source.string() + ": " + ec.message());
      written.copies.push_back(target);
    }

  writeParameterTable(y.parameterFiles, nominalValues, written.parameterTable);
  std::ofstream out(written.yaml, std::ios::binary);
  if (!out) cannotWrite(written.yaml, std::strerror(errno));
  out << yaml;
  out.close();
  if (!out) cannotWrite(written.yaml, std::strerror(errno));
  return written;
}

}  // namespace sensode::petab
