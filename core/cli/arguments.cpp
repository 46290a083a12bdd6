// SPDX-License-Identifier: MIT
#include "core/cli/arguments.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

namespace sensode::cli {

Arguments::Arguments(std::string command, std::vector<OptionSpec> specs,
                     std::span<const std::string> args)
    : command_(std::move(command)), specs_(std::move(specs)) {
  bool optionsEnded = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (optionsEnded || arg.size() < 2 || arg.rfind("-", 0) != 0 ||
        Arguments::parseDouble(arg)) {  // "-1" is a value, not a flag
      positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsEnded = true;
      continue;
    }
    std::string name = arg == "-h" ? std::string("--help") : arg;
    std::optional<std::string> inlineValue;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inlineValue = arg.substr(eq + 1);
    }
    const OptionSpec* spec = find(name);
    if (!spec) fail("unknown option '" + name + "' (see 'sensode " + command_ + " --help')");
    std::vector<std::string>& slot = values_[name];
    if (!slot.empty() && !spec->repeatable) fail("option '" + name + "' given more than once");
    if (spec->valueName.empty()) {
      if (inlineValue) fail("option '" + name + "' takes no value");
      slot.emplace_back();
      continue;
    }
    if (inlineValue) {
      slot.push_back(*inlineValue);
    } else if (i + 1 < args.size() &&
               (args[i + 1].rfind("--", 0) != 0 || args[i + 1].size() == 2)) {
      slot.push_back(args[++i]);
    } else {
      fail("option '" + name + "' needs a value " + spec->valueName);
    }
  }
}

void Arguments::fail(const std::string& message) const {
  throw UsageError(command_ + ": " + message);
}

const OptionSpec* Arguments::find(const std::string& name) const {
  const auto it = std::find_if(specs_.begin(), specs_.end(),
                               [&](const OptionSpec& s) { return s.name == name; });
  return it == specs_.end() ? nullptr : &*it;
}

const std::string& Arguments::onlyPositional(const std::string& what) const {
  if (positional_.empty()) fail("missing " + what);
  if (positional_.size() > 1)
    fail("unexpected argument '" + positional_[1] + "' (only one " + what + " is taken)");
  return positional_.front();
}

bool Arguments::has(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> Arguments::string(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Arguments::strings(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<double> Arguments::parseDouble(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.front() == '+') t.erase(0, 1);
  if (t.empty() || std::isspace(static_cast<unsigned char>(t.front())) ||
      std::isspace(static_cast<unsigned char>(t.back())))
    return std::nullopt;
  double v = 0;
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(t.data(), end, v);
  if (ec != std::errc() || ptr != end || std::isnan(v)) return std::nullopt;
  return v;
}

double Arguments::number(const std::string& name, double fallback) const {
  const auto text = string(name);
  if (!text) return fallback;
  const auto v = parseDouble(*text);
  if (!v) fail("option '" + name + "': '" + *text + "' is not a number");
  return *v;
}

long Arguments::integer(const std::string& name, long fallback, long min, long max) const {
  const auto text = string(name);
  if (!text) return fallback;
  long v = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (text->empty() || ec != std::errc() || ptr != end)
    fail("option '" + name + "': '" + *text + "' is not an integer");
  if (v < min || v > max)
    fail("option '" + name + "' = " + *text + " is out of range [" + std::to_string(min) + ", " +
         std::to_string(max) + "]");
  return v;
}

std::optional<std::vector<double>> Arguments::numberList(const std::string& name) const {
  const auto text = string(name);
  if (!text) return std::nullopt;
  std::vector<double> out;
  std::istringstream in(*text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto v = parseDouble(item);
    if (!v) fail("option '" + name + "': '" + item + "' is not a number");
    out.push_back(*v);
  }
  if (out.empty()) fail("option '" + name + "': empty list");
  return out;
}

std::optional<std::vector<std::string>> Arguments::idList(const std::string& name) const {
  const auto text = string(name);
  if (!text) return std::nullopt;
  std::vector<std::string> ids;
  std::size_t from = 0;
  while (from <= text->size()) {
    const std::size_t comma = std::min(text->find(',', from), text->size());
    const std::string item = text->substr(from, comma - from);
    const auto first = item.find_first_not_of(" \t");
    if (first == std::string::npos) fail("option '" + name + "': empty id in '" + *text + "'");
    ids.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    from = comma + 1;
  }
  return ids;
}

std::string Arguments::helpText(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string left = "  " + s.name + (s.valueName.empty() ? "" : " " + s.valueName);
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "  ";
    out += left + s.help + "\n";
  }
  return out;
}

}  // namespace sensode::cli
