// SPDX-License-Identifier: MIT
#include "fuzz/mutation.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace sensode::test::fuzz {

std::uint64_t Rng::next() {
  // SplitMix64 (Steele, Lea, Flood 2014): fixed arithmetic, the same sequence everywhere.
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::size_t Rng::below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

namespace {

bool isNumber(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return false;
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::string t = text.substr(first, last - first + 1);
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

std::string localName(const std::string& qualified) {
  const auto colon = qualified.find(':');
  return colon == std::string::npos ? qualified : qualified.substr(colon + 1);
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// ---- a tolerant XML scan: where attributes and complete elements are, nothing more ----

struct Attribute {
  std::size_t begin = 0;       // the whitespace before the name
  std::size_t valueBegin = 0;  // after the opening quote
  std::size_t valueEnd = 0;    // at the closing quote
  std::string name, value;
  std::string element;         // the name of the element it belongs to
};

struct Element {
  std::size_t begin = 0, contentBegin = 0, contentEnd = 0, end = 0;  // end: past the closing '>'
  std::string name;
};

struct XmlScan {
  std::vector<Attribute> attributes;
  std::vector<Element> elements;  // complete elements only (a truncated document leaves some open)
};

XmlScan scanXml(const std::string& xml) {
  XmlScan scan;
  std::vector<Element> open;
  std::size_t i = 0;
  const auto skipPast = [&](const char* marker) {
    const auto at = xml.find(marker, i);
    i = at == std::string::npos ? xml.size() : at + std::char_traits<char>::length(marker);
  };
  while ((i = xml.find('<', i)) != std::string::npos) {
    if (xml.compare(i, 4, "<!--") == 0) {
      skipPast("-->");
    } else if (xml.compare(i, 9, "<![CDATA[") == 0) {
      skipPast("]]>");
    } else if (xml.compare(i, 2, "<?") == 0) {
      skipPast("?>");
    } else if (xml.compare(i, 2, "<!") == 0) {
      skipPast(">");
    } else if (xml.compare(i, 2, "</") == 0) {
      const std::size_t tagBegin = i;
      std::size_t j = i + 2;
      while (j < xml.size() && !isSpace(xml[j]) && xml[j] != '>') ++j;
      const std::string name = xml.substr(i + 2, j - i - 2);
      skipPast(">");
      // Pop to the matching start tag (mismatched tags: the inner ones stay incomplete).
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        if (it->name != name) continue;
        Element e = *it;
        e.contentEnd = tagBegin;
        e.end = i;
        scan.elements.push_back(e);
        open.erase(std::next(it).base(), open.end());
        break;
      }
    } else {
      Element e;
      e.begin = i;
      std::size_t j = i + 1;
      while (j < xml.size() && !isSpace(xml[j]) && xml[j] != '>' && xml[j] != '/') ++j;
      e.name = xml.substr(i + 1, j - i - 1);
      // Attributes up to '>' or "/>".
      while (j < xml.size()) {
        const std::size_t ws = j;
        while (j < xml.size() && isSpace(xml[j])) ++j;
        if (j >= xml.size() || xml[j] == '>' || xml[j] == '/') break;
        const std::size_t nameBegin = j;
        while (j < xml.size() && xml[j] != '=' && !isSpace(xml[j]) && xml[j] != '>') ++j;
        const std::string name = xml.substr(nameBegin, j - nameBegin);
        while (j < xml.size() && isSpace(xml[j])) ++j;
        if (j >= xml.size() || xml[j] != '=') break;
        ++j;
        while (j < xml.size() && isSpace(xml[j])) ++j;
        if (j >= xml.size() || (xml[j] != '"' && xml[j] != '\'')) break;
        const char quote = xml[j];
        const std::size_t close = xml.find(quote, j + 1);
        if (close == std::string::npos) {
          j = xml.size();
          break;
        }
        scan.attributes.push_back({ws, j + 1, close, name, xml.substr(j + 1, close - j - 1), e.name});
        j = close + 1;
      }
      const std::size_t gt = xml.find('>', j);
      if (gt == std::string::npos) break;
      i = gt + 1;
      if (xml[gt - 1] == '/') {
        e.contentBegin = e.contentEnd = gt - 1;
        e.end = i;
        scan.elements.push_back(e);
      } else {
        e.contentBegin = i;
        open.push_back(e);
      }
    }
  }
  std::sort(scan.elements.begin(), scan.elements.end(),
            [](const Element& a, const Element& b) { return a.begin < b.begin; });
  return scan;
}

std::string replaced(const std::string& text, std::size_t begin, std::size_t end,
                     const std::string& with) {
  return text.substr(0, begin) + with + text.substr(end);
}

std::string shortened(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

const std::vector<std::string> kSpecialNumbers = {"NaN", "INF", "-INF", "1e308", "-1e308",
                                                  "1e-320", "0", "-1"};

std::optional<Mutant> specialNumber(const std::string& xml, const XmlScan& scan, Rng& rng) {
  // Candidates: numeric attribute values and numeric <cn> contents, as (begin, end) spans.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (const Attribute& a : scan.attributes)
    if (isNumber(a.value) && localName(a.name) != "level" && localName(a.name) != "version")
      spans.emplace_back(a.valueBegin, a.valueEnd);
  for (const Element& e : scan.elements)
    if (localName(e.name) == "cn" && isNumber(xml.substr(e.contentBegin, e.contentEnd - e.contentBegin)))
      spans.emplace_back(e.contentBegin, e.contentEnd);
  if (spans.empty()) return std::nullopt;
  const auto [b, e] = rng.pick(spans);
  const std::string with = rng.pick(kSpecialNumbers);
  return Mutant{replaced(xml, b, e, with),
                "number '" + shortened(xml.substr(b, e - b)) + "' at byte " + std::to_string(b) + " -> " + with};
}

std::optional<Mutant> deleteAttribute(const std::string& xml, const XmlScan& scan, Rng& rng) {
  if (scan.attributes.empty()) return std::nullopt;
  const Attribute& a = rng.pick(scan.attributes);
  return Mutant{replaced(xml, a.begin, a.valueEnd + 1, ""),
                "attribute " + a.name + "=\"" + shortened(a.value) + "\" at byte " +
                    std::to_string(a.begin) + " deleted"};
}

std::optional<Mutant> deleteElement(const std::string& xml, const XmlScan& scan, Rng& rng) {
  if (scan.elements.empty()) return std::nullopt;
  const Element& e = rng.pick(scan.elements);
  return Mutant{replaced(xml, e.begin, e.end, ""),
                "element <" + e.name + "> at byte " + std::to_string(e.begin) + " deleted"};
}

std::vector<Attribute> idAttributes(const XmlScan& scan) {
  std::vector<Attribute> ids;
  for (const Attribute& a : scan.attributes)
    if (a.name == "id") ids.push_back(a);
  return ids;
}

std::optional<Mutant> swapIds(const std::string& xml, const XmlScan& scan, Rng& rng) {
  const auto ids = idAttributes(scan);
  if (ids.size() < 2) return std::nullopt;
  const std::size_t i = rng.below(ids.size());
  std::size_t j = rng.below(ids.size() - 1);
  if (j >= i) ++j;
  const Attribute& first = ids[std::min(i, j)];
  const Attribute& second = ids[std::max(i, j)];
  if (first.value == second.value) return std::nullopt;
  // The later one first, so the earlier offsets stay valid.
  std::string text = replaced(xml, second.valueBegin, second.valueEnd, first.value);
  text = replaced(text, first.valueBegin, first.valueEnd, second.value);
  return Mutant{text, "ids '" + first.value + "' and '" + second.value + "' swapped"};
}

std::optional<Mutant> duplicateId(const std::string& xml, const XmlScan& scan, Rng& rng) {
  const auto ids = idAttributes(scan);
  if (ids.size() < 2) return std::nullopt;
  const Attribute& target = rng.pick(ids);
  const Attribute& source = rng.pick(ids);
  if (target.value == source.value) return std::nullopt;
  return Mutant{replaced(xml, target.valueBegin, target.valueEnd, source.value),
                "id '" + target.value + "' renamed to the existing id '" + source.value + "'"};
}

std::optional<Mutant> truncate(const std::string& text, Rng& rng) {
  if (text.size() < 2) return std::nullopt;
  const std::size_t at = rng.below(text.size());
  return Mutant{text.substr(0, at), "cut after byte " + std::to_string(at) + " of " + std::to_string(text.size())};
}

std::optional<Mutant> undefinedSymbol(const std::string& xml, const XmlScan& scan, Rng& rng) {
  std::vector<Element> cis;
  for (const Element& e : scan.elements)
    if (localName(e.name) == "ci" && e.contentEnd > e.contentBegin) cis.push_back(e);
  if (cis.empty()) return std::nullopt;
  const Element& e = rng.pick(cis);
  return Mutant{replaced(xml, e.contentBegin, e.contentEnd, " undefined_symbol_x "),
                "<ci>" + shortened(xml.substr(e.contentBegin, e.contentEnd - e.contentBegin)) +
                    "</ci> at byte " + std::to_string(e.begin) + " -> undefined_symbol_x"};
}

std::optional<Mutant> danglingReference(const std::string& xml, const XmlScan& scan, Rng& rng) {
  static const std::set<std::string> kReferences = {"species", "compartment", "variable", "symbol",
                                                    "conversionFactor", "outside"};
  std::vector<Attribute> refs;
  for (const Attribute& a : scan.attributes)
    if (kReferences.count(a.name) != 0) refs.push_back(a);
  if (refs.empty()) return std::nullopt;
  const Attribute& a = rng.pick(refs);
  return Mutant{replaced(xml, a.valueBegin, a.valueEnd, "no_such_id"),
                a.name + "=\"" + a.value + "\" at byte " + std::to_string(a.begin) + " -> no_such_id"};
}

// The <cn> spans (content) inside an element named `container` (local name).
std::vector<std::pair<std::size_t, std::size_t>> numbersInside(const std::string& xml,
                                                               const XmlScan& scan,
                                                               const std::string& container) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (const Element& outer : scan.elements) {
    if (localName(outer.name) != container) continue;
    for (const Element& e : scan.elements)
      if (e.begin > outer.begin && e.end <= outer.end && localName(e.name) == "cn" &&
          isNumber(xml.substr(e.contentBegin, e.contentEnd - e.contentBegin)))
        spans.emplace_back(e.contentBegin, e.contentEnd);
  }
  return spans;
}

// Numeric attributes named one of `names` on elements named one of `elements`.
std::vector<std::pair<std::size_t, std::size_t>> numericAttributes(
    const XmlScan& scan, const std::set<std::string>& elements, const std::set<std::string>& names) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (const Attribute& a : scan.attributes)
    if (elements.count(localName(a.element)) != 0 && names.count(localName(a.name)) != 0 &&
        isNumber(a.value))
      spans.emplace_back(a.valueBegin, a.valueEnd);
  return spans;
}

}  // namespace

const char* toString(NumberKind k) {
  switch (k) {
    case NumberKind::Stoichiometry: return "stoichiometry";
    case NumberKind::InitialValue: return "initial-value";
    case NumberKind::ParameterValue: return "parameter-value";
    case NumberKind::CompartmentSize: return "compartment-size";
    case NumberKind::KineticLawNumber: return "kinetic-law-number";
    case NumberKind::RuleNumber: return "rule-number";
    case NumberKind::EventDelay: return "event-delay";
  }
  return "?";
}

const std::vector<std::string>& magnitudes() {
  static const std::vector<std::string> values = {"1e308", "-1e308", "1e-320", "INF", "-INF", "NaN"};
  return values;
}

std::optional<Mutant> setMagnitude(const std::string& xml, NumberKind kind, const std::string& value,
                                   Rng& rng) {
  const XmlScan scan = scanXml(xml);
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  switch (kind) {
    case NumberKind::Stoichiometry:
      spans = numericAttributes(scan, {"speciesReference"}, {"stoichiometry"});
      break;
    case NumberKind::InitialValue:
      spans = numericAttributes(scan, {"species"}, {"initialConcentration", "initialAmount"});
      break;
    case NumberKind::ParameterValue:
      spans = numericAttributes(scan, {"parameter", "localParameter"}, {"value"});
      break;
    case NumberKind::CompartmentSize:
      spans = numericAttributes(scan, {"compartment"}, {"size", "volume"});
      break;
    case NumberKind::KineticLawNumber: spans = numbersInside(xml, scan, "kineticLaw"); break;
    case NumberKind::RuleNumber:
      for (const char* container : {"assignmentRule", "rateRule", "initialAssignment"})
        for (const auto& span : numbersInside(xml, scan, container)) spans.push_back(span);
      break;
    case NumberKind::EventDelay: spans = numbersInside(xml, scan, "delay"); break;
  }
  if (spans.empty()) return std::nullopt;
  const auto [b, e] = rng.pick(spans);
  return Mutant{replaced(xml, b, e, value), std::string(toString(kind)) + " '" +
                                                shortened(xml.substr(b, e - b)) + "' at byte " +
                                                std::to_string(b) + " -> " + value};
}

const char* toString(SbmlMutation m) {
  switch (m) {
    case SbmlMutation::SpecialNumber: return "special-number";
    case SbmlMutation::DeleteAttribute: return "delete-attribute";
    case SbmlMutation::DeleteElement: return "delete-element";
    case SbmlMutation::SwapIds: return "swap-ids";
    case SbmlMutation::DuplicateId: return "duplicate-id";
    case SbmlMutation::Truncate: return "truncate";
    case SbmlMutation::UndefinedSymbol: return "undefined-symbol";
    case SbmlMutation::DanglingReference: return "dangling-reference";
  }
  return "?";
}

std::optional<Mutant> mutateSbml(const std::string& xml, SbmlMutation mutation, Rng& rng) {
  const XmlScan scan = scanXml(xml);
  switch (mutation) {
    case SbmlMutation::SpecialNumber: return specialNumber(xml, scan, rng);
    case SbmlMutation::DeleteAttribute: return deleteAttribute(xml, scan, rng);
    case SbmlMutation::DeleteElement: return deleteElement(xml, scan, rng);
    case SbmlMutation::SwapIds: return swapIds(xml, scan, rng);
    case SbmlMutation::DuplicateId: return duplicateId(xml, scan, rng);
    case SbmlMutation::Truncate: return truncate(xml, rng);
    case SbmlMutation::UndefinedSymbol: return undefinedSymbol(xml, scan, rng);
    case SbmlMutation::DanglingReference: return danglingReference(xml, scan, rng);
  }
  return std::nullopt;
}

// ---- PEtab tables ----

const char* toString(TableMutation m) {
  switch (m) {
    case TableMutation::DeleteColumn: return "delete-column";
    case TableMutation::BadMeasurement: return "bad-measurement";
    case TableMutation::UnknownId: return "unknown-id";
    case TableMutation::BadScale: return "bad-scale";
    case TableMutation::SpecialNumber: return "special-number";
    case TableMutation::RaggedRow: return "ragged-row";
    case TableMutation::DuplicateId: return "duplicate-id";
    case TableMutation::Truncate: return "truncate";
    case TableMutation::ByteOrderMark: return "byte-order-mark";
    case TableMutation::CrLf: return "crlf";
  }
  return "?";
}

bool isHarmless(TableMutation m) { return m == TableMutation::ByteOrderMark || m == TableMutation::CrLf; }

Table parseTable(const std::string& text) {
  Table table;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t to = text.find('\n', from);
    if (to == std::string::npos) to = text.size();
    const std::string line = text.substr(from, to - from);
    std::vector<std::string> cells;
    std::size_t c = 0;
    while (true) {
      const std::size_t tab = line.find('\t', c);
      cells.push_back(line.substr(c, tab == std::string::npos ? std::string::npos : tab - c));
      if (tab == std::string::npos) break;
      c = tab + 1;
    }
    table.push_back(cells);
    from = to + 1;
  }
  return table;
}

std::string formatTable(const Table& table) {
  std::string text;
  for (const auto& row : table) {
    for (std::size_t c = 0; c < row.size(); ++c) text += (c ? "\t" : "") + row[c];
    text += '\n';
  }
  return text;
}

namespace {

struct Cell {
  std::size_t row = 0, column = 0;
};

std::ptrdiff_t columnOf(const Table& t, const std::string& name) {
  if (t.empty()) return -1;
  const auto it = std::find(t[0].begin(), t[0].end(), name);
  return it == t[0].end() ? -1 : it - t[0].begin();
}

// Data cells of the named columns that satisfy `keep`.
template <class Keep>
std::vector<Cell> cellsOf(const Table& t, const std::vector<std::string>& columns, Keep keep) {
  std::vector<Cell> cells;
  for (const std::string& name : columns) {
    const auto c = columnOf(t, name);
    if (c < 0) continue;
    for (std::size_t r = 1; r < t.size(); ++r)
      if (static_cast<std::size_t>(c) < t[r].size() && keep(t[r][static_cast<std::size_t>(c)]))
        cells.push_back({r, static_cast<std::size_t>(c)});
  }
  return cells;
}

std::string where(const Table& t, const Cell& c) {
  return "row " + std::to_string(c.row) + " column '" + t[0][c.column] + "' ('" +
         shortened(t[c.row][c.column]) + "')";
}

std::optional<Mutant> setCell(Table t, const Cell& c, const std::string& value) {
  const std::string change = where(t, c) + " -> '" + value + "'";
  t[c.row][c.column] = value;
  return Mutant{formatTable(t), change};
}

std::vector<std::string> idColumns(const std::string& role) {
  if (role == "measurement")
    return {"observableId", "simulationConditionId", "preequilibrationConditionId",
            "noiseParameters", "observableParameters"};
  if (role == "condition") return {"conditionId"};
  if (role == "observable") return {"observableId", "observableFormula", "noiseFormula"};
  if (role == "parameter") return {"parameterId"};
  return {};
}

bool isDataRowText(const Table& t, std::size_t r) { return r > 0 && !(t[r].size() == 1 && t[r][0].empty()); }

}  // namespace

std::optional<Mutant> mutateTable(const std::string& text, const std::string& role,
                                  TableMutation mutation, Rng& rng) {
  Table t = parseTable(text);
  if (!t.empty() && t.back().size() == 1 && t.back()[0].empty()) t.pop_back();  // the final newline
  if (t.size() < 2) return std::nullopt;
  const auto nonEmpty = [](const std::string& s) { return !s.empty(); };
  switch (mutation) {
    case TableMutation::DeleteColumn: {
      const std::size_t c = rng.below(t[0].size());
      const std::string change = "column '" + t[0][c] + "' deleted";
      for (auto& row : t)
        if (c < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
      return Mutant{formatTable(t), change};
    }
    case TableMutation::BadMeasurement: {
      const auto cells = cellsOf(t, {"measurement"}, nonEmpty);
      if (cells.empty()) return std::nullopt;
      static const std::vector<std::string> kBad = {"nan", "NaN", "inf", "-inf", "", "high", "1e400"};
      return setCell(t, rng.pick(cells), rng.pick(kBad));
    }
    case TableMutation::UnknownId: {
      auto cells = cellsOf(t, idColumns(role), [](const std::string& s) { return !s.empty() && !isNumber(s); });
      if (role == "condition")  // the columns after conditionId/conditionName name model entities
        for (std::size_t c = 0; c < t[0].size(); ++c)
          if (t[0][c] != "conditionId" && t[0][c] != "conditionName") cells.push_back({0, c});
      if (cells.empty()) return std::nullopt;
      const Cell c = rng.pick(cells);
      if (c.row == 0) {
        const std::string change = "column header '" + t[0][c.column] + "' -> 'no_such_id'";
        t[0][c.column] = "no_such_id";
        return Mutant{formatTable(t), change};
      }
      return setCell(t, c, "no_such_id");
    }
    case TableMutation::BadScale: {
      if (role != "parameter") return std::nullopt;
      const auto scale = columnOf(t, "parameterScale");
      const auto lower = columnOf(t, "lowerBound");
      const auto upper = columnOf(t, "upperBound");
      const auto nominal = columnOf(t, "nominalValue");
      if (scale < 0) return std::nullopt;
      const std::size_t r = 1 + rng.below(t.size() - 1);
      const auto s = static_cast<std::size_t>(scale);
      switch (rng.below(3)) {
        case 0: {
          static const std::vector<std::string> kScales = {"log2", "LOG", "ln", "", "exp"};
          return setCell(t, {r, s}, rng.pick(kScales));
        }
        case 1: {
          if (nominal < 0) return std::nullopt;
          t[r][s] = rng.below(2) ? "log10" : "log";
          return setCell(t, {r, static_cast<std::size_t>(nominal)}, rng.below(2) ? "0" : "-1");
        }
        default: {
          if (lower < 0 || upper < 0) return std::nullopt;
          const auto lo = static_cast<std::size_t>(lower), up = static_cast<std::size_t>(upper);
          if (t[r][lo] == t[r][up]) return std::nullopt;
          std::swap(t[r][lo], t[r][up]);
          return Mutant{formatTable(t), "row " + std::to_string(r) + ": lowerBound and upperBound swapped"};
        }
      }
    }
    case TableMutation::SpecialNumber: {
      std::vector<Cell> cells;
      for (std::size_t r = 1; r < t.size(); ++r)
        for (std::size_t c = 0; c < t[r].size() && c < t[0].size(); ++c)
          if (isNumber(t[r][c])) cells.push_back({r, c});
      if (cells.empty()) return std::nullopt;
      static const std::vector<std::string> kNumbers = {"NaN", "INF", "-INF", "1e308", "-1e308", "1e-320"};
      return setCell(t, rng.pick(cells), rng.pick(kNumbers));
    }
    case TableMutation::RaggedRow: {
      const std::size_t r = 1 + rng.below(t.size() - 1);
      if (!isDataRowText(t, r)) return std::nullopt;
      if (rng.below(2) && t[r].size() > 1) {
        t[r].pop_back();
        return Mutant{formatTable(t), "row " + std::to_string(r) + " lost its last cell"};
      }
      t[r].push_back("1");
      return Mutant{formatTable(t), "row " + std::to_string(r) + " gained a cell"};
    }
    case TableMutation::DuplicateId: {
      if (role == "measurement" || t.size() < 3) return std::nullopt;  // measurement rows repeat ids legitimately
      const std::size_t r = 2 + rng.below(t.size() - 2);
      if (t[r].empty() || t[r - 1].empty()) return std::nullopt;
      return setCell(t, {r, 0}, t[r - 1][0]);
    }
    case TableMutation::Truncate: return truncate(text, rng);
    case TableMutation::ByteOrderMark: return Mutant{"\xEF\xBB\xBF" + text, "UTF-8 byte-order mark added"};
    case TableMutation::CrLf: {
      std::string crlf;
      for (char c : text) {
        if (c == '\n') crlf += '\r';
        crlf += c;
      }
      return Mutant{crlf, "line ends CRLF"};
    }
  }
  return std::nullopt;
}

}  // namespace sensode::test::fuzz
