// SPDX-License-Identifier: MIT
// Small SBML documents with events for the event tests: an L3V2 skeleton, the first-order decay
// x' = −k·x (x(0) = 10 in a compartment of size 1) with extra parameters and events, and the
// MathML / event / assignment snippets to fill it.
#pragma once

#include <memory>
#include <string>

#include "core/symbolic/compiled_model.h"

namespace sensode::testing {

// <csymbol> for the time, to use inside math().
extern const char* const kMathTime;

std::string math(const std::string& body);
// An L3V2 document whose model holds `body` (listOf... elements).
std::string sbmlDocument(const std::string& body);
// x' = −k x, k = 0.3, x(0) = 10 (amount), plus `extraParameters` and `events` (XML).
std::string decayWithEvents(const std::string& extraParameters, const std::string& events);
std::string eventXml(const std::string& id, const std::string& trigger,
                     const std::string& assignments, const std::string& extra = "",
                     const std::string& triggerAttributes =
                         R"(initialValue="true" persistent="true")",
                     const std::string& eventAttributes = R"(useValuesFromTriggerTime="true")");
std::string eventAssignment(const std::string& variable, const std::string& body);
// Imports and compiles an SBML string (file name "events.xml" in messages).
std::shared_ptr<const symbolic::CompiledModel> compileSbml(const std::string& xml);

}  // namespace sensode::testing
