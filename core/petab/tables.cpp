// SPDX-License-Identifier: MIT
#include "core/petab/tables.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/petab/petab_problem.h"

namespace sensode::petab {

namespace fs = std::filesystem;

int Table::column(const std::string& c) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == c) return static_cast<int>(i);
  return -1;
}

std::string Table::where(std::size_t row, const std::string& col) const {
  return file.filename().string() + ": " + name + " table, row " + std::to_string(lines[row]) +
         ", column " + col;
}

void Table::fail(std::size_t row, const std::string& col, const std::string& why) const {
  throw PetabError(where(row, col) + ": " + why);
}

void Table::require(const std::vector<std::string>& cols) const {
  for (const auto& c : cols)
    if (column(c) < 0)
      throw PetabError(file.filename().string() + ": " + name + " table: required column '" + c +
                       "' is missing");
}

std::string Table::cell(std::size_t row, const std::string& col) const {
  const int c = column(col);
  if (c < 0 || static_cast<std::size_t>(c) >= rows[row].size()) return {};
  return rows[row][static_cast<std::size_t>(c)];
}

std::string trim(std::string s) {
  const auto notSpace = [](unsigned char ch) { return !std::isspace(ch); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), notSpace));
  s.erase(std::find_if(s.rbegin(), s.rend(), notSpace).base(), s.end());
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<double> parseNumber(const std::string& s) {
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "inf" || l == "+inf" || l == "infinity" || l == "+infinity") return INFINITY;
  if (l == "-inf" || l == "-infinity") return -INFINITY;
  if (l == "nan") return NAN;
  if (s.empty()) return std::nullopt;
  const char* b = s.c_str();
  char* e = nullptr;
  const double v = std::strtod(b, &e);
  if (e == b || *e != '\0') return std::nullopt;
  return v;
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

namespace {

// One record of the file: its cells (untrimmed) and the line it starts on.
struct Record {
  std::vector<std::string> cells;
  int line = 0;
  bool blank = true;  // only white space outside quotes, no quoted field
};

// Splits the text into records: tabs separate cells, LF / CRLF / lone CR end records, except
// inside a double-quoted field; "" inside quotes is one quote. A quote opens a quoted field only
// at the start of a cell (after white space), as spreadsheet exports write them; elsewhere it is
// an ordinary character.
std::vector<Record> records(const std::string& text, const fs::path& file,
                            const std::string& name) {
  std::vector<Record> out;
  Record rec;
  rec.line = 1;
  std::string cell;
  bool quoted = false, cellHasQuote = false;
  int line = 1, quoteLine = 0;
  const auto endCell = [&] {
    if (!trim(cell).empty() || cellHasQuote) rec.blank = false;
    rec.cells.push_back(cell);
    cell.clear();
    cellHasQuote = false;
  };
  const auto endRecord = [&] {
    endCell();
    out.push_back(std::move(rec));
    rec = Record{};
    rec.line = line;
  };
  std::size_t i = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte-order mark
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"' && trim(cell).empty() && !cellHasQuote) {
      cell.clear();
      quoted = cellHasQuote = true;
      quoteLine = line;
    } else if (c == '\t') {
      endCell();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      endRecord();
    } else {
      cell += c;
    }
  }
  if (quoted)
    throw PetabError(file.filename().string() + ": " + name + " table, row " +
                     std::to_string(quoteLine) + ": a quoted field is not closed");
  if (!cell.empty() || !rec.cells.empty() || cellHasQuote) endRecord();
  return out;
}

}  // namespace

Table parseTable(const std::string& text, const fs::path& file, const std::string& name) {
  Table t;
  t.file = file;
  t.name = name;
  for (Record& r : records(text, file, name)) {
    if (r.blank) continue;
    for (auto& c : r.cells) c = trim(c);
    if (t.header.empty()) {
      // Trailing empty header cells (a row of tabs written by a spreadsheet) are no columns.
      while (!r.cells.empty() && r.cells.back().empty()) r.cells.pop_back();
      for (std::size_t c = 0; c < r.cells.size(); ++c) {
        if (r.cells[c].empty())
          throw PetabError(file.filename().string() + ": " + name + " table, row " +
                           std::to_string(r.line) + ": header column " + std::to_string(c + 1) +
                           " has no name");
        for (std::size_t d = 0; d < c; ++d)
          if (r.cells[d] == r.cells[c])
            throw PetabError(file.filename().string() + ": " + name + " table, row " +
                             std::to_string(r.line) + ", column " + r.cells[c] +
                             ": the column appears twice in the header");
      }
      t.header = std::move(r.cells);
      continue;
    }
    for (std::size_t c = t.header.size(); c < r.cells.size(); ++c)
      if (!r.cells[c].empty())
        throw PetabError(file.filename().string() + ": " + name + " table, row " +
                         std::to_string(r.line) + ", column " + std::to_string(c + 1) +
                         ": value '" + r.cells[c] + "' beyond the " +
                         std::to_string(t.header.size()) + " header columns");
    r.cells.resize(t.header.size());
    t.rows.push_back(std::move(r.cells));
    t.lines.push_back(r.line);
  }
  if (t.header.empty()) throw PetabError(file.string() + ": the " + name + " table is empty");
  return t;
}

Table readTable(const fs::path& file, const std::string& name) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw PetabError(file.string() + ": cannot open the " + name + " table");
  std::ostringstream text;
  text << in.rdbuf();
  return parseTable(text.str(), file, name);
}

}  // namespace sensode::petab
