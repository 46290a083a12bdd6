// SPDX-License-Identifier: MIT
#include "core/model/xml_nesting.h"

#include <vector>

#include "core/common/errors.h"

namespace sensode::model {

namespace {

// The value of attribute `name` inside a start tag's text, or empty.
std::string_view attribute(std::string_view tag, std::string_view name) {
  std::size_t pos = 0;
  while ((pos = tag.find(name, pos)) != std::string_view::npos) {
    const bool boundary = pos > 0 && (tag[pos - 1] == ' ' || tag[pos - 1] == '\t' ||
                                      tag[pos - 1] == '\n' || tag[pos - 1] == '\r');
    std::size_t i = pos + name.size();
    while (i < tag.size() && (tag[i] == ' ' || tag[i] == '\t')) ++i;
    if (boundary && i < tag.size() && tag[i] == '=') {
      ++i;
      while (i < tag.size() && (tag[i] == ' ' || tag[i] == '\t')) ++i;
      if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
        const char quote = tag[i];
        const std::size_t end = tag.find(quote, i + 1);
        if (end != std::string_view::npos) return tag.substr(i + 1, end - i - 1);
      }
    }
    pos += name.size();
  }
  return {};
}

}  // namespace

XmlNesting measureXmlNesting(std::string_view xml, std::size_t limit) {
  XmlNesting result;
  // Depth at which each enclosing owner (element with an id) was opened, and its id.
  std::vector<std::pair<std::size_t, std::string_view>> owners;
  std::size_t depth = 0;
  std::size_t i = 0;
  const auto skipPast = [&](std::string_view terminator) {
    const std::size_t end = xml.find(terminator, i);
    i = end == std::string_view::npos ? xml.size() : end + terminator.size();
  };
  while ((i = xml.find('<', i)) != std::string_view::npos) {
    const std::string_view rest = xml.substr(i);
    if (rest.starts_with("<!--")) {
      skipPast("-->");
    } else if (rest.starts_with("<![CDATA[")) {
      skipPast("]]>");
    } else if (rest.starts_with("<?")) {
      skipPast("?>");
    } else if (rest.starts_with("<!")) {
      skipPast(">");
    } else if (rest.starts_with("</")) {
      if (depth > 0) --depth;
      while (!owners.empty() && owners.back().first > depth) owners.pop_back();
      skipPast(">");
    } else {
      // A start tag; quoted attribute values may contain '>'.
      std::size_t j = i + 1;
      char quote = 0;
      while (j < xml.size() && (quote || xml[j] != '>')) {
        if (quote && xml[j] == quote) quote = 0;
        else if (!quote && (xml[j] == '"' || xml[j] == '\'')) quote = xml[j];
        ++j;
      }
      const std::string_view tag = xml.substr(i, j - i);
      const bool empty = !tag.empty() && tag.back() == '/';
      i = j < xml.size() ? j + 1 : xml.size();
      if (empty) continue;
      ++depth;
      std::string_view id = attribute(tag, "id");
      if (id.empty()) id = attribute(tag, "variable");
      if (!id.empty()) owners.emplace_back(depth, id);
      if (depth > result.maxDepth) {
        result.maxDepth = depth;
        result.deepestOwner = owners.empty() ? std::string() : std::string(owners.back().second);
        if (depth > limit) return result;
      }
    }
  }
  return result;
}

void checkXmlNesting(std::string_view xml, const std::string& source) {
  const XmlNesting n = measureXmlNesting(xml);
  if (n.maxDepth > kMaxXmlDepth)
    throw SbmlError(source, n.deepestOwner,
                    "XML nested more than " + std::to_string(kMaxXmlDepth) +
                        " levels deep (e.g. MathML with that many nested operations): refused "
                        "before parsing, because the parser would overflow the stack");
}

}  // namespace sensode::model
