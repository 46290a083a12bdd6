// SPDX-License-Identifier: MIT
#include "core/petab/petab_problem.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/model/sbml_importer.h"
#include "core/symbolic/ode_system.h"

namespace sensode::petab {

namespace fs = std::filesystem;
using symbolic::Expr;
using symbolic::ExprPool;
using symbolic::Op;

const char* toString(Scale s) {
  switch (s) {
    case Scale::Lin: return "lin";
    case Scale::Log: return "log";
    case Scale::Log10: return "log10";
  }
  return "unknown";
}

double toScale(Scale s, double v) {
  switch (s) {
    case Scale::Lin: return v;
    case Scale::Log: return std::log(v);
    case Scale::Log10: return std::log10(v);
  }
  return v;
}

double fromScale(Scale s, double v) {
  switch (s) {
    case Scale::Lin: return v;
    case Scale::Log: return std::exp(v);
    case Scale::Log10: return std::pow(10.0, v);
  }
  return v;
}

const char* toString(Transformation t) {
  switch (t) {
    case Transformation::Lin: return "lin";
    case Transformation::Log: return "log";
    case Transformation::Log10: return "log10";
  }
  return "unknown";
}

int Problem::findParameter(const std::string& id) const {
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].id == id) return static_cast<int>(i);
  return -1;
}
int Problem::findCondition(const std::string& id) const {
  for (std::size_t i = 0; i < conditions.size(); ++i)
    if (conditions[i].id == id) return static_cast<int>(i);
  return -1;
}
int Problem::findObservable(const std::string& id) const {
  for (std::size_t i = 0; i < observables.size(); ++i)
    if (observables[i].id == id) return static_cast<int>(i);
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Formula parser

namespace {

class FormulaParser {
 public:
  FormulaParser(const std::string& text, ExprPool& pool,
                const std::function<Expr(const std::string&)>& resolve, const std::string& where)
      : s_(text), pool_(pool), resolve_(resolve), where_(where) {}

  Expr parse() {
    const Expr e = expression();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw PetabError(where_ + ": cannot parse formula '" + s_ + "' at position " +
                     std::to_string(pos_ + 1) + ": " + why);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(const char* token) {
    skip();
    const std::size_t n = std::char_traits<char>::length(token);
    if (s_.compare(pos_, n, token) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }
  Expr expression() {
    Expr e = term();
    for (;;) {
      if (accept("+")) e = pool_.add(e, term());
      else if (accept("-")) e = pool_.sub(e, term());
      else return e;
    }
  }
  Expr term() {
    Expr e = unary();
    for (;;) {
      skip();
      if (s_.compare(pos_, 2, "**") == 0) return e;  // handled in power()
      if (accept("*")) e = pool_.mul(e, unary());
      else if (accept("/")) e = pool_.div(e, unary());
      else return e;
    }
  }
  Expr unary() {
    if (accept("-")) return pool_.neg(unary());
    if (accept("+")) return unary();
    return power();
  }
  Expr power() {
    const Expr base = primary();
    if (accept("^") || accept("**")) return pool_.pow(base, unary());  // right-associative
    return base;
  }
  Expr primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end");
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      const Expr e = expression();
      if (!accept(")")) fail("missing ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
        ++end;
      const std::string id = s_.substr(pos_, end - pos_);
      pos_ = end;
      if (accept("(")) return call(id);
      if (id == "inf" || id == "INF") return pool_.constant(INFINITY);
      return resolve_(id);
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
  Expr number() {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) fail("bad number");
    pos_ += static_cast<std::size_t>(end - begin);
    return pool_.constant(v);
  }
  Expr call(const std::string& name) {
    std::vector<Expr> args;
    if (!accept(")")) {
      do args.push_back(expression());
      while (accept(","));
      if (!accept(")")) fail("missing ')' after the arguments of " + name);
    }
    const auto want = [&](std::size_t n) {
      if (args.size() != n)
        fail(name + " takes " + std::to_string(n) + " argument(s), got " +
             std::to_string(args.size()));
    };
    static const std::map<std::string, Op> unaryOps = {
        {"exp", Op::Exp},   {"ln", Op::Log},     {"abs", Op::Abs},   {"sin", Op::Sin},
        {"cos", Op::Cos},   {"tan", Op::Tan},    {"sinh", Op::Sinh}, {"cosh", Op::Cosh},
        {"tanh", Op::Tanh}, {"floor", Op::Floor}, {"ceil", Op::Ceil}};
    if (auto it = unaryOps.find(name); it != unaryOps.end()) {
      want(1);
      return pool_.unary(it->second, args[0]);
    }
    if (name == "log") {
      if (args.size() == 1) return pool_.unary(Op::Log, args[0]);
      want(2);
      return pool_.logBase(args[1], args[0]);
    }
    if (name == "log10") {
      want(1);
      return pool_.log10(args[0]);
    }
    if (name == "log2") {
      want(1);
      return pool_.logBase(pool_.constant(2), args[0]);
    }
    if (name == "sqrt") {
      want(1);
      return pool_.sqrt(args[0]);
    }
    if (name == "pow") {
      want(2);
      return pool_.pow(args[0], args[1]);
    }
    fail("unsupported function '" + name + "'");
  }

  const std::string& s_;
  ExprPool& pool_;
  const std::function<Expr(const std::string&)>& resolve_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// TSV tables

struct Table {
  fs::path file;
  std::string name;  // "parameters"
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;  // file line of each row

  int column(const std::string& c) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == c) return static_cast<int>(i);
    return -1;
  }
  std::string where(std::size_t row, const std::string& col) const {
    return file.filename().string() + ": " + name + " table, row " +
           std::to_string(lines[row]) + ", column " + col;
  }
  [[noreturn]] void fail(std::size_t row, const std::string& col, const std::string& why) const {
    throw PetabError(where(row, col) + ": " + why);
  }
  void require(const std::vector<std::string>& cols) const {
    for (const auto& c : cols)
      if (column(c) < 0)
        throw PetabError(file.filename().string() + ": " + name + " table: required column '" +
                         c + "' is missing");
  }
  std::string cell(std::size_t row, const std::string& col) const {
    const int c = column(col);
    if (c < 0 || static_cast<std::size_t>(c) >= rows[row].size()) return {};
    return rows[row][static_cast<std::size_t>(c)];
  }
};

std::string trim(std::string s) {
  const auto notSpace = [](unsigned char ch) { return !std::isspace(ch); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), notSpace));
  s.erase(std::find_if(s.rbegin(), s.rend(), notSpace).base(), s.end());
  return s;
}

// Spreadsheet programs save tables with a UTF-8 byte-order mark (the benchmark collection's
// Giordano condition table has one); it is not part of the first column's name.
void stripByteOrderMark(std::string& firstLine) {
  if (firstLine.rfind("\xEF\xBB\xBF", 0) == 0) firstLine.erase(0, 3);
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

Table readTable(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  if (!in) throw PetabError(file.string() + ": cannot open the " + name + " table");
  Table t;
  t.file = file;
  t.name = name;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (lineNo == 1) stripByteOrderMark(line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = split(line, '\t');
    for (auto& c : cells) c = trim(c);
    if (t.header.empty()) {
      t.header = cells;
      continue;
    }
    cells.resize(std::max(cells.size(), t.header.size()));
    t.rows.push_back(cells);
    t.lines.push_back(lineNo);
  }
  if (t.header.empty()) throw PetabError(file.string() + ": the " + name + " table is empty");
  return t;
}

std::optional<double> number(const std::string& s) {
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "inf" || l == "+inf" || l == "infinity") return INFINITY;
  if (l == "-inf") return -INFINITY;
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
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// ---------------------------------------------------------------------------------------------
// The yaml subset

struct Yaml {
  std::string formatVersion;
  std::vector<std::string> parameterFiles;
  struct ProblemFiles {
    std::map<std::string, std::vector<std::string>> lists;
  };
  std::vector<ProblemFiles> problems;
};

std::string unquote(std::string s) {
  s = trim(s);
  if (s.size() >= 2 && ((s.front() == '"' && s.back() == '"') || (s.front() == '\'' && s.back() == '\'')))
    return s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string> inlineList(const std::string& v) {
  std::vector<std::string> out;
  const std::string s = trim(v);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
    for (auto& item : split(s.substr(1, s.size() - 2), ','))
      if (!trim(item).empty()) out.push_back(unquote(item));
  } else if (!s.empty()) {
    out.push_back(unquote(s));
  }
  return out;
}

Yaml readYaml(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw PetabError(file.string() + ": cannot open");
  Yaml y;
  std::string line, topKey, problemKey;
  int lineNo = 0;
  const auto fail = [&](const std::string& why) {
    throw PetabError(file.filename().string() + ": line " + std::to_string(lineNo) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++lineNo;
    if (lineNo == 1) stripByteOrderMark(line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (trim(line).empty()) continue;
    const std::size_t indent = line.find_first_not_of(' ');
    std::string content = line.substr(indent);
    if (indent == 0 && content.rfind("- ", 0) != 0) {
      const auto colon = content.find(':');
      if (colon == std::string::npos) fail("expected 'key: value'");
      topKey = trim(content.substr(0, colon));
      const std::string value = trim(content.substr(colon + 1));
      if (topKey == "format_version") {
        y.formatVersion = unquote(value);
      } else if (topKey == "parameter_file") {
        y.parameterFiles = inlineList(value);
      } else if (topKey == "problems") {
        if (!value.empty()) fail("'problems' must be a list of problems");
      } else if (topKey == "description" || topKey == "extensions") {
        // ignored
      } else {
        fail("unknown key '" + topKey + "'");
      }
      continue;
    }
    if (topKey == "parameter_file") {
      if (content.rfind("- ", 0) != 0) fail("expected '- FILE' under parameter_file");
      y.parameterFiles.push_back(unquote(content.substr(2)));
      continue;
    }
    if (topKey != "problems") continue;  // nested content of ignored keys
    if (content.rfind("- ", 0) == 0 && indent == 0) {
      y.problems.emplace_back();
      content = trim(content.substr(2));
      problemKey.clear();
      if (content.empty()) continue;
    } else if (y.problems.empty()) {
      fail("expected '- ' starting a problem");
    }
    if (content.rfind("- ", 0) == 0) {
      if (problemKey.empty()) fail("list item outside a key");
      y.problems.back().lists[problemKey].push_back(unquote(content.substr(2)));
      continue;
    }
    const auto colon = content.find(':');
    if (colon == std::string::npos) fail("expected 'key:' inside a problem");
    problemKey = trim(content.substr(0, colon));
    for (const auto& v : inlineList(content.substr(colon + 1)))
      y.problems.back().lists[problemKey].push_back(v);
    y.problems.back().lists[problemKey];  // present even when empty
  }
  return y;
}

// The single file of `key` in the problem, resolved against the yaml's folder.
std::vector<fs::path> problemFiles(const Yaml::ProblemFiles& p, const std::string& key,
                                   const fs::path& yamlFile, bool required) {
  std::vector<fs::path> out;
  const auto it = p.lists.find(key);
  if (it == p.lists.end() || it->second.empty()) {
    if (required)
      throw PetabError(yamlFile.filename().string() + ": the problem lists no " + key);
    return out;
  }
  for (const auto& f : it->second) out.push_back(yamlFile.parent_path() / f);
  return out;
}

Value parseValue(const Table& t, std::size_t row, const std::string& col, const std::string& text) {
  Value v;
  if (const auto n = number(text)) {
    v.number = *n;
  } else if (isIdentifier(text)) {
    v.parameterId = text;
  } else {
    t.fail(row, col, "'" + text + "' is neither a number nor a parameter id");
  }
  return v;
}

std::vector<Value> parseValueList(const Table& t, std::size_t row, const std::string& col) {
  std::vector<Value> out;
  const std::string text = t.cell(row, col);
  if (text.empty()) return out;
  for (const auto& part : split(text, ';')) out.push_back(parseValue(t, row, col, trim(part)));
  return out;
}

}  // namespace

Expr parseFormula(const std::string& text, ExprPool& pool,
                  const std::function<Expr(const std::string&)>& resolve,
                  const std::string& where) {
  FormulaParser parser(text, pool, resolve, where);
  return parser.parse();
}

// ---------------------------------------------------------------------------------------------
// Loading

Problem loadProblem(const fs::path& yamlFile) {
  Problem pr;
  pr.yamlFile = yamlFile;
  const std::string yname = yamlFile.filename().string();
  const Yaml y = readYaml(yamlFile);
  if (y.formatVersion != "1" && y.formatVersion != "1.0.0")
    throw PetabError(yname + ": format_version '" + y.formatVersion +
                     "' is not supported (PEtab v1 only)");
  if (y.parameterFiles.size() != 1)
    throw PetabError(yname + ": expected exactly one parameter_file, found " +
                     std::to_string(y.parameterFiles.size()));
  if (y.problems.size() != 1)
    throw PetabError(yname + ": expected exactly one problem, found " +
                     std::to_string(y.problems.size()));
  const auto& files = y.problems[0];
  for (const auto& [key, list] : files.lists) {
    if (key != "sbml_files" && key != "condition_files" && key != "measurement_files" &&
        key != "observable_files" && key != "visualization_files")
      throw PetabError(yname + ": problem key '" + key + "' is not supported");
  }
  const auto sbml = problemFiles(files, "sbml_files", yamlFile, true);
  if (sbml.size() != 1)
    throw PetabError(yname + ": sbml_files lists " + std::to_string(sbml.size()) +
                     " models; Sensode supports exactly one");
  pr.sbmlFile = sbml[0];

  // Model.
  const model::Model m = model::importSbmlFile(fs::absolute(pr.sbmlFile));
  auto compiled = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  const symbolic::OdeSystem& sys = compiled->system();
  ExprPool& pool = *sys.pool;

  // Parameters.
  {
    const Table t = readTable(yamlFile.parent_path() / y.parameterFiles[0], "parameters");
    t.require({"parameterId", "parameterScale", "nominalValue", "estimate"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Parameter p;
      p.id = t.cell(r, "parameterId");
      if (!isIdentifier(p.id)) t.fail(r, "parameterId", "'" + p.id + "' is not a valid id");
      if (pr.findParameter(p.id) >= 0) t.fail(r, "parameterId", "duplicate id '" + p.id + "'");
      p.name = t.cell(r, "parameterName");
      const std::string scale = t.cell(r, "parameterScale");
      if (scale == "lin") p.scale = Scale::Lin;
      else if (scale == "log") p.scale = Scale::Log;
      else if (scale == "log10") p.scale = Scale::Log10;
      else t.fail(r, "parameterScale", "'" + scale + "' is not one of lin, log, log10");
      const std::string est = t.cell(r, "estimate");
      if (est == "1") p.estimate = true;
      else if (est == "0") p.estimate = false;
      else t.fail(r, "estimate", "'" + est + "' is not 0 or 1");
      const auto nominal = number(t.cell(r, "nominalValue"));
      if (!nominal || !std::isfinite(*nominal))
        t.fail(r, "nominalValue", "'" + t.cell(r, "nominalValue") + "' is not a finite number");
      p.nominalValue = *nominal;
      if (p.estimate) {
        t.require({"lowerBound", "upperBound"});
        const auto lo = number(t.cell(r, "lowerBound")), hi = number(t.cell(r, "upperBound"));
        if (!lo) t.fail(r, "lowerBound", "'" + t.cell(r, "lowerBound") + "' is not a number");
        if (!hi) t.fail(r, "upperBound", "'" + t.cell(r, "upperBound") + "' is not a number");
        if (!(*lo <= *hi)) t.fail(r, "lowerBound", "lowerBound > upperBound");
        if (p.scale != Scale::Lin && !(*lo > 0))
          t.fail(r, "lowerBound", "a bound <= 0 on " + std::string(toString(p.scale)) + " scale");
        p.lowerBound = *lo;
        p.upperBound = *hi;
      }
      if (p.scale != Scale::Lin && !(p.nominalValue > 0))
        t.fail(r, "nominalValue", "nominal value <= 0 on " + std::string(toString(p.scale)) +
                                      " scale");
      for (const char* prior : {"objectivePriorType", "objectivePriorParameters"}) {
        if (!t.cell(r, prior).empty())
          t.fail(r, prior, "objective priors are not supported (value '" + t.cell(r, prior) + "')");
      }
      pr.parameters.push_back(p);
    }
  }

  // Conditions.
  for (const fs::path& file : problemFiles(files, "condition_files", yamlFile, true)) {
    const Table t = readTable(file, "conditions");
    t.require({"conditionId"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Condition c;
      c.id = t.cell(r, "conditionId");
      if (!isIdentifier(c.id)) t.fail(r, "conditionId", "'" + c.id + "' is not a valid id");
      c.name = t.cell(r, "conditionName");
      for (const std::string& col : t.header) {
        if (col == "conditionId" || col == "conditionName") continue;
        const std::string text = t.cell(r, col);
        const int k = sys.findParam(col);
        if (k < 0)
          t.fail(r, col, "target '" + col +
                             "' is not a constant model parameter, species initial value or "
                             "compartment size (assignment targets and unknown ids are not "
                             "supported)");
        if (text.empty()) continue;
        const Value v = parseValue(t, r, col, text);
        if (!v.isParameter() && std::isnan(v.number)) continue;  // keep
        if (v.isParameter() && pr.findParameter(v.parameterId) < 0 &&
            sys.findParam(v.parameterId) < 0)
          t.fail(r, col, "unknown parameter id '" + v.parameterId + "'");
        c.overrides.emplace_back(k, v);
      }
      pr.conditions.push_back(std::move(c));
    }
  }

  // Observables.
  std::map<std::string, Expr> extra;  // "@petab:<id>" symbols by id
  const auto extraSymbol = [&](const std::string& id) {
    auto it = extra.find(id);
    if (it != extra.end()) return it->second;
    const Expr e = pool.symbol("@petab:" + id);
    extra[id] = e;
    pr.extraSymbols.emplace_back(id, e);
    return e;
  };
  for (const fs::path& file : problemFiles(files, "observable_files", yamlFile, true)) {
    const Table t = readTable(file, "observables");
    t.require({"observableId", "observableFormula", "noiseFormula"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Observable o;
      o.id = t.cell(r, "observableId");
      if (!isIdentifier(o.id)) t.fail(r, "observableId", "'" + o.id + "' is not a valid id");
      o.name = t.cell(r, "observableName");
      const std::string tr = t.cell(r, "observableTransformation");
      if (tr.empty() || tr == "lin") o.transformation = Transformation::Lin;
      else if (tr == "log") o.transformation = Transformation::Log;
      else if (tr == "log10") o.transformation = Transformation::Log10;
      else t.fail(r, "observableTransformation", "'" + tr + "' is not one of lin, log, log10");
      const std::string nd = t.cell(r, "noiseDistribution");
      if (!nd.empty() && nd != "normal")
        t.fail(r, "noiseDistribution",
               "'" + nd + "' noise is not supported (only normal, with the transformation "
                          "giving log-normal)");
      const auto resolver = [&](const std::string& column) {
        return [&, column](const std::string& id) -> Expr {
          for (const char* kind : {"observableParameter", "noiseParameter"}) {
            const std::string prefix = kind;
            const std::string suffix = "_" + o.id;
            if (id.rfind(prefix, 0) == 0 && id.size() > prefix.size() + suffix.size() &&
                id.compare(id.size() - suffix.size(), suffix.size(), suffix) == 0) {
              const std::string digits =
                  id.substr(prefix.size(), id.size() - prefix.size() - suffix.size());
              if (!digits.empty() &&
                  std::all_of(digits.begin(), digits.end(),
                              [](unsigned char ch) { return std::isdigit(ch); })) {
                const int n = std::stoi(digits);
                if (prefix == "observableParameter") {
                  o.numObservableParameters = std::max(o.numObservableParameters, n);
                } else {
                  if (column == "observableFormula")
                    t.fail(r, column, "noise placeholder '" + id + "' in the observable formula");
                  o.numNoiseParameters = std::max(o.numNoiseParameters, n);
                }
                return extraSymbol(id);
              }
            }
          }
          if (id == "time" || id == "t") return sys.time;
          if (const int k = sys.findOutput(id); k >= 0)
            return sys.outputs[static_cast<std::size_t>(k)].value;
          if (const int k = sys.findParam(id); k >= 0)
            return sys.params[static_cast<std::size_t>(k)].symbol;
          if (pr.findParameter(id) >= 0) return extraSymbol(id);
          t.fail(r, column, "unknown identifier '" + id + "'");
        };
      };
      o.formulaText = t.cell(r, "observableFormula");
      o.noiseText = t.cell(r, "noiseFormula");
      if (o.formulaText.empty()) t.fail(r, "observableFormula", "empty formula");
      if (o.noiseText.empty()) t.fail(r, "noiseFormula", "empty formula");
      o.formula = parseFormula(o.formulaText, pool, resolver("observableFormula"),
                               t.where(r, "observableFormula"));
      o.noise = parseFormula(o.noiseText, pool, resolver("noiseFormula"),
                             t.where(r, "noiseFormula"));
      if (pr.findObservable(o.id) >= 0) t.fail(r, "observableId", "duplicate id '" + o.id + "'");
      pr.observables.push_back(std::move(o));
    }
  }

  // Measurements.
  for (const fs::path& file : problemFiles(files, "measurement_files", yamlFile, true)) {
    const Table t = readTable(file, "measurements");
    t.require({"observableId", "simulationConditionId", "measurement", "time"});
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      Measurement ms;
      ms.row = t.lines[r];
      const std::string oid = t.cell(r, "observableId");
      ms.observable = pr.findObservable(oid);
      if (ms.observable < 0) t.fail(r, "observableId", "unknown observable '" + oid + "'");
      const std::string sc = t.cell(r, "simulationConditionId");
      ms.simulationCondition = pr.findCondition(sc);
      if (ms.simulationCondition < 0)
        t.fail(r, "simulationConditionId", "unknown condition '" + sc + "'");
      const std::string pc = t.cell(r, "preequilibrationConditionId");
      if (!pc.empty()) {
        ms.preequilibrationCondition = pr.findCondition(pc);
        if (ms.preequilibrationCondition < 0)
          t.fail(r, "preequilibrationConditionId", "unknown condition '" + pc + "'");
      }
      const auto v = number(t.cell(r, "measurement"));
      if (!v || !std::isfinite(*v))
        t.fail(r, "measurement", "'" + t.cell(r, "measurement") + "' is not a finite number");
      ms.value = *v;
      const auto time = number(t.cell(r, "time"));
      if (!time || std::isnan(*time) || *time < 0)
        t.fail(r, "time", "'" + t.cell(r, "time") + "' is not a time >= 0 or inf");
      ms.time = *time;
      ms.observableParameters = parseValueList(t, r, "observableParameters");
      ms.noiseParameters = parseValueList(t, r, "noiseParameters");
      const Observable& o = pr.observables[static_cast<std::size_t>(ms.observable)];
      if (static_cast<int>(ms.observableParameters.size()) != o.numObservableParameters)
        t.fail(r, "observableParameters",
               std::to_string(ms.observableParameters.size()) + " value(s) for observable '" +
                   o.id + "', which has " + std::to_string(o.numObservableParameters) +
                   " placeholder(s)");
      if (static_cast<int>(ms.noiseParameters.size()) != o.numNoiseParameters)
        t.fail(r, "noiseParameters",
               std::to_string(ms.noiseParameters.size()) + " value(s) for observable '" + o.id +
                   "', which has " + std::to_string(o.numNoiseParameters) + " placeholder(s)");
      for (const auto* list : {&ms.observableParameters, &ms.noiseParameters})
        for (const Value& val : *list)
          if (val.isParameter() && pr.findParameter(val.parameterId) < 0)
            t.fail(r, list == &ms.noiseParameters ? "noiseParameters" : "observableParameters",
                   "unknown parameter id '" + val.parameterId + "'");
      if (o.transformation != Transformation::Lin && !(ms.value > 0))
        t.fail(r, "measurement", "value " + t.cell(r, "measurement") + " <= 0 for the " +
                                     toString(o.transformation) + "-transformed observable '" +
                                     o.id + "'");
      pr.measurements.push_back(std::move(ms));
    }
  }
  if (pr.measurements.empty()) throw PetabError(yname + ": no measurements");
  pr.model = std::move(compiled);
  return pr;
}

}  // namespace sensode::petab
