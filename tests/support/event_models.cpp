// SPDX-License-Identifier: MIT
#include "support/event_models.h"

#include "core/model/sbml_importer.h"

namespace sensode::testing {

const char* const kMathTime =
    R"(<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">time</csymbol>)";

std::string math(const std::string& body) {
  return R"(<math xmlns="http://www.w3.org/1998/Math/MathML">)" + body + "</math>";
}

std::string sbmlDocument(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
  <model id="events">)" +
         body + "</model></sbml>";
}

std::string decayWithEvents(const std::string& extraParameters, const std::string& events) {
  return sbmlDocument(R"(
    <listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
    <listOfSpecies><species id="x" compartment="c" initialAmount="10"
      hasOnlySubstanceUnits="true" boundaryCondition="false" constant="false"/></listOfSpecies>
    <listOfParameters><parameter id="k" value="0.3" constant="true"/>)" +
                      extraParameters + R"(</listOfParameters>
    <listOfReactions><reaction id="R" reversible="false">
      <listOfReactants><speciesReference species="x" stoichiometry="1" constant="true"/>
      </listOfReactants>
      <kineticLaw>)" + math("<apply><times/><ci>k</ci><ci>x</ci></apply>") + R"(</kineticLaw>
    </reaction></listOfReactions>
    <listOfEvents>)" + events + "</listOfEvents>");
}

std::string eventXml(const std::string& id, const std::string& trigger,
                     const std::string& assignments, const std::string& extra,
                     const std::string& triggerAttributes, const std::string& eventAttributes) {
  return R"(<event id=")" + id + "\" " + eventAttributes + "><trigger " + triggerAttributes +
         ">" + math(trigger) + "</trigger>" + extra + "<listOfEventAssignments>" + assignments +
         "</listOfEventAssignments></event>";
}

std::string eventAssignment(const std::string& variable, const std::string& body) {
  return R"(<eventAssignment variable=")" + variable + "\">" + math(body) + "</eventAssignment>";
}

std::shared_ptr<const symbolic::CompiledModel> compileSbml(const std::string& xml) {
  return std::make_shared<const symbolic::CompiledModel>(
      symbolic::buildOdeSystem(model::importSbmlString(xml, "events.xml")));
}

}  // namespace sensode::testing
