// SPDX-License-Identifier: MIT
#include "core/petab/yaml_file.h"

#include <yaml-cpp/yaml.h>

#include "core/petab/petab_problem.h"

namespace sensode::petab {

namespace fs = std::filesystem;

namespace {

std::string mark(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return "";
  return " (line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ")";
}

// A scalar or a sequence of scalars (PEtab allows both for file lists), as file names resolved
// against the yaml's folder; each must exist.
std::vector<fs::path> fileList(const YAML::Node& node, const std::string& key,
                               const fs::path& yaml) {
  const std::string yname = yaml.filename().string();
  std::vector<std::string> names;
  if (!node || node.IsNull()) return {};
  if (node.IsScalar()) {
    names.push_back(node.Scalar());
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) {
      if (!item.IsScalar())
        throw PetabError(yname + ": key '" + key + "'" + mark(item) +
                         ": expected a file name, found a nested list or map");
      names.push_back(item.Scalar());
    }
  } else {
    throw PetabError(yname + ": key '" + key + "'" + mark(node) +
                     ": expected a file name or a list of file names");
  }
  std::vector<fs::path> out;
  for (const std::string& name : names) {
    if (name.empty()) throw PetabError(yname + ": key '" + key + "'" + mark(node) + ": empty file name");
    const fs::path p = yaml.parent_path() / name;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      throw PetabError(yname + ": key '" + key + "' names the file '" + name +
                       "', which does not exist in " + yaml.parent_path().string());
    out.push_back(p);
  }
  return out;
}

}  // namespace

YamlFile readYamlFile(const fs::path& file) {
  const std::string yname = file.filename().string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw PetabError(file.string() + ": cannot open the PEtab problem file");
  } catch (const YAML::Exception& e) {
    throw PetabError(yname + ": not valid YAML: line " + std::to_string(e.mark.line + 1) +
                     ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) throw PetabError(yname + ": expected a map of keys (format_version, ...)");
  YamlFile y;
  y.file = file;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key != "format_version" && key != "parameter_file" && key != "problems")
      throw PetabError(yname + ": key '" + key + "'" + mark(kv.first) +
                       " is not part of PEtab v1 (format_version, parameter_file, problems)");
  }
  const YAML::Node version = root["format_version"];
  if (!version || !version.IsScalar())
    throw PetabError(yname + ": key 'format_version' is missing or not a value");
  y.formatVersion = version.Scalar();
  y.parameterFiles = fileList(root["parameter_file"], "parameter_file", file);
  const YAML::Node problems = root["problems"];
  if (!problems || !problems.IsSequence())
    throw PetabError(yname + ": key 'problems' is missing or not a list");
  for (const YAML::Node& p : problems) {
    if (!p.IsMap())
      throw PetabError(yname + ": key 'problems'" + mark(p) + ": each problem must be a map");
    YamlProblem yp;
    for (const auto& kv : p) {
      const std::string key = kv.first.Scalar();
      const std::string full = "problems/" + key;
      std::vector<fs::path>* target = key == "sbml_files"          ? &yp.sbmlFiles
                                      : key == "condition_files"   ? &yp.conditionFiles
                                      : key == "measurement_files" ? &yp.measurementFiles
                                      : key == "observable_files"  ? &yp.observableFiles
                                      : key == "visualization_files" ? &yp.visualizationFiles
                                                                     : nullptr;
      if (!target)
        throw PetabError(yname + ": key '" + full + "'" + mark(kv.first) +
                         " is not supported (PEtab v1: sbml_files, condition_files, "
                         "measurement_files, observable_files, visualization_files)");
      *target = fileList(kv.second, full, file);
    }
    y.problems.push_back(std::move(yp));
  }
  return y;
}

}  // namespace sensode::petab
