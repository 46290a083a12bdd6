// SPDX-License-Identifier: MIT
// Writing a PEtab v1 problem with new nominal values (a best fit) into a folder of its own, so
// that `sensode gradient DIR/problem.yaml` and a fit started from it begin at those values:
//
//   DIR/problem.yaml        format_version 1, the problem's file lists with DIR's names
//   DIR/<parameter table>   the problem's parameter table(s) as one table: every column and cell
//                           as read (names, scales, bounds, estimate, priors), nominalValue
//                           replaced for the given ids (linear scale, as PEtab requires;
//                           %.17g, so the numbers read back exactly)
//   DIR/<every other file>  copies of the SBML model and the condition, observable,
//                           measurement and visualization tables, byte for byte
//
// Copies rather than relative paths to the originals: DIR stays valid when it is moved, sent or
// when the originals change. Files keep their names; a name used twice (two tables of the same
// name in different folders) gets a _2, _3, ... suffix. The problem's own files are never
// overwritten: a DIR whose problem.yaml or parameter table would replace one of them is refused.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sensode::petab {

struct WrittenProblem {
  std::filesystem::path yaml;            // DIR/problem.yaml
  std::filesystem::path parameterTable;  // DIR/<name of the first parameter file>
  std::vector<std::filesystem::path> copies;
};

// `nominalValues`: parameter id → linear value; every id must be in the parameter table.
// Creates DIR when missing. Throws PetabError for a problem that cannot be read or an unknown id,
// Error("<path>: cannot write: <reason>") when a file cannot be written.
WrittenProblem writeProblemWithNominalValues(
    const std::filesystem::path& yamlFile,
    const std::vector<std::pair<std::string, double>>& nominalValues,
    const std::filesystem::path& dir);

// The check writeProblemWithNominalValues makes first, for callers that want it before a long
// run: throws Error("<DIR/file>: cannot write: it is a file of the problem ...") when writing
// into `dir` would replace the problem's yaml or parameter table.
void checkProblemFolder(const std::filesystem::path& yamlFile, const std::filesystem::path& dir);

}  // namespace sensode::petab
