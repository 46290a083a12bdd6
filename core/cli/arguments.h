// SPDX-License-Identifier: MIT
// A small typed command-line parser for the sensode subcommands. Each subcommand declares its
// options once (name, value or switch, repeatable, help); parsing checks unknown flags and
// missing values, and the typed getters check numbers, so every mistake becomes a UsageError
// with a one-line message naming the option and the offending text.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/common/errors.h"

namespace sensode::cli {

// A mistake on the command line (exit status 2).
class UsageError : public InvalidOptions {
 public:
  using InvalidOptions::InvalidOptions;
};

struct OptionSpec {
  std::string name;         // "--rtol"
  std::string valueName;    // "R"; empty for a switch without a value
  std::string help;         // one line
  bool repeatable = false;  // may be given several times (values kept in order)
};

class Arguments {
 public:
  // Parses `args` (everything after the subcommand) for `command` ("simulate"). Accepts
  // "--name value" and "--name=value"; "--" ends the options. Throws UsageError.
  Arguments(std::string command, std::vector<OptionSpec> specs, std::span<const std::string> args);

  const std::vector<std::string>& positional() const { return positional_; }
  // The single positional argument `what` ("MODEL.xml"); throws UsageError when absent or when
  // more were given.
  const std::string& onlyPositional(const std::string& what) const;

  bool has(const std::string& name) const;
  std::optional<std::string> string(const std::string& name) const;
  std::vector<std::string> strings(const std::string& name) const;  // every occurrence
  // Typed values; `fallback` when the option is absent. Throw UsageError on a bad number or a
  // value outside [min, max].
  double number(const std::string& name, double fallback) const;
  long integer(const std::string& name, long fallback, long min, long max) const;
  // A comma-separated list of numbers ("0,0.5,1").
  std::optional<std::vector<double>> numberList(const std::string& name) const;
  // A comma-separated list of ids ("A, B,C"), each trimmed of blanks; an empty id is a
  // UsageError naming the option.
  std::optional<std::vector<std::string>> idList(const std::string& name) const;

  // "  --rtol R        relative tolerance" lines for the help text.
  static std::string helpText(const std::vector<OptionSpec>& specs);

  // Strict number parsing shared with other parsers: the whole text must be a finite or
  // infinite decimal number.
  static std::optional<double> parseDouble(const std::string& text);

 private:
  [[noreturn]] void fail(const std::string& message) const;
  const OptionSpec* find(const std::string& name) const;

  std::string command_;
  std::vector<OptionSpec> specs_;
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace sensode::cli
