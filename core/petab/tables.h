// SPDX-License-Identifier: MIT
// PEtab's tab-separated tables as files in the wild write them: an optional UTF-8 byte-order
// mark, LF or CRLF line ends, fields in double quotes (with "" for a quote inside, and tabs or
// line breaks inside quotes), rows shorter or longer than the header when trailing cells are
// empty, blank lines. Cells are trimmed of surrounding white space. Every error names the file,
// the table, the row (its line in the file) and the column.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sensode::petab {

struct Table {
  std::filesystem::path file;
  std::string name;  // "parameters", "conditions", ...
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as wide as the header (or wider)
  std::vector<int> lines;                       // file line where each row starts

  int column(const std::string& c) const;  // -1 when absent
  // "<file>: <name> table, row <line>, column <col>"
  std::string where(std::size_t row, const std::string& col) const;
  [[noreturn]] void fail(std::size_t row, const std::string& col, const std::string& why) const;
  // Throws PetabError naming the first missing column.
  void require(const std::vector<std::string>& cols) const;
  // The cell, or "" when the column is absent or the row is short.
  std::string cell(std::size_t row, const std::string& col) const;
};

// Reads `file` as the PEtab table `name`. Throws PetabError when the file cannot be opened, is
// empty, has an unterminated quote, a duplicate or empty header name, or a non-empty cell
// beyond the header.
Table readTable(const std::filesystem::path& file, const std::string& name);
// The same from text already in memory (`file` only names it in errors).
Table parseTable(const std::string& text, const std::filesystem::path& file,
                 const std::string& name);

// PEtab numbers: decimal or scientific, inf/-inf/nan in any case. nullopt for anything else.
std::optional<double> parseNumber(const std::string& s);
bool isIdentifier(const std::string& s);
std::string trim(std::string s);
std::vector<std::string> split(const std::string& s, char sep);

}  // namespace sensode::petab
