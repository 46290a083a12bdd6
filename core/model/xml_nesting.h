// SPDX-License-Identifier: MIT
// A guard in front of libSBML: its reader (and MathML → AST) recurse once per XML element level,
// so a document nested tens of thousands of levels deep overflows the stack inside libSBML —
// a crash no exception can catch. One linear scan of the text measures the element depth first
// and refuses such documents with a message naming the enclosing SBML element.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sensode::model {

// Far beyond any real model (the SBML Test Suite and the PEtab models reach 13 levels at most),
// far below what the recursion needs to overflow an 8 MiB stack (about 20,000 levels measured).
inline constexpr std::size_t kMaxXmlDepth = 1000;

struct XmlNesting {
  std::size_t maxDepth = 0;
  // The id (or `variable`, for rules) of the innermost element with one that encloses the
  // deepest point, empty when none.
  std::string deepestOwner;
};

// Element nesting of an XML text: start tags open a level, end tags close it, empty-element
// tags, comments, CDATA, processing instructions and the DOCTYPE leave it unchanged. The scan is
// tolerant: malformed text is libSBML's to report. It stops early once `limit` is exceeded.
XmlNesting measureXmlNesting(std::string_view xml, std::size_t limit = kMaxXmlDepth);

// Throws SbmlError(source, owner, "XML nested N levels deep ...") when deeper than the limit.
void checkXmlNesting(std::string_view xml, const std::string& source);

}  // namespace sensode::model
