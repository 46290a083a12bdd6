// SPDX-License-Identifier: MIT
// The PEtab v1 problem file (https://petab.readthedocs.io/en/latest/v1/documentation_data_format.html
// "Problem specification file"), read with yaml-cpp: format_version, parameter_file (one name or
// a list) and problems, each listing sbml_files, condition_files, measurement_files,
// observable_files and visualization_files. File names are resolved against the yaml's folder
// and must exist; an error names the yaml file, the key and the missing file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sensode::petab {

struct YamlProblem {
  std::vector<std::filesystem::path> sbmlFiles, conditionFiles, measurementFiles,
      observableFiles, visualizationFiles;
};

struct YamlFile {
  std::filesystem::path file;
  std::string formatVersion;  // as written ("1", "1.0.0")
  std::vector<std::filesystem::path> parameterFiles;
  std::vector<YamlProblem> problems;
};

// Throws PetabError: unreadable or malformed YAML (with yaml-cpp's line and column), a missing
// or mistyped key, an unknown problem key, a file named but not present.
YamlFile readYamlFile(const std::filesystem::path& file);

}  // namespace sensode::petab
