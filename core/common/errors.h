// SPDX-License-Identifier: MIT
// Typed errors thrown inside the core. Every task's run() turns them into a Termination and a
// message; the CLI turns them into the one-line stderr message of the command-line contract.
// Messages say where (file, element id, time) and what happened, like CVODES's do.
#pragma once

#include <stdexcept>
#include <string>

namespace sensode {

// Base of all Sensode errors; what() is the complete one-line message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model file that cannot be imported: malformed XML, SBML consistency errors, undefined
// symbols, unsupported constructs (events, delays, algebraic rules, fast reactions, ...).
class SbmlError : public Error {
 public:
  SbmlError(std::string file, std::string element, std::string reason)
      : Error(compose(file, element, reason)),
        file_(std::move(file)),
        element_(std::move(element)),
        reason_(std::move(reason)) {}
  const std::string& file() const { return file_; }
  const std::string& element() const { return element_; }
  const std::string& reason() const { return reason_; }

 private:
  static std::string compose(const std::string& file, const std::string& element,
                             const std::string& reason) {
    std::string m = file.empty() ? std::string("<model>") : file;
    if (!element.empty()) m += ": element '" + element + "'";
    return m + ": " + reason;
  }
  std::string file_, element_, reason_;
};

// Runs build(); an SbmlError it throws without a file (one raised after the import, while the
// model is compiled: CompiledModel names only the element) leaves with `file` as its file.
template <class Build>
auto namingFileOfErrors(const std::string& file, Build&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const SbmlError& e) {
    if (!e.file().empty()) throw;
    throw SbmlError(file, e.element(), e.reason());
  }
}

// A feature the model uses that Sensode declares unsupported (the test-suite runner skips such
// cases and reports the reason).
class UnsupportedFeature : public SbmlError {
 public:
  UnsupportedFeature(std::string file, std::string element, std::string feature)
      : SbmlError(std::move(file), std::move(element),
                  "unsupported SBML feature: " + feature),
        feature_(std::move(feature)) {}
  const std::string& feature() const { return feature_; }

 private:
  std::string feature_;
};

// Options or command-line arguments that violate a constraint; the message names the field, the
// value and the constraint.
class InvalidOptions : public Error {
 public:
  using Error::Error;
};

// The integrator failed: the message carries time, step size and cause in a modeller's words;
// `details` (optional) the technical detail (evaluator entry, solver flag, attempts).
class IntegrationFailure : public Error {
 public:
  IntegrationFailure(std::string message, double t, double h, std::string details = {})
      : Error(std::move(message)), t_(t), h_(h), details_(std::move(details)) {}
  double t() const { return t_; }
  double stepSize() const { return h_; }
  const std::string& details() const { return details_; }

 private:
  double t_, h_;
  std::string details_;
};

// The user (or a caller's progress callback) asked to stop.
class Cancelled : public Error {
 public:
  explicit Cancelled(double t) : Error("cancelled at t = " + std::to_string(t)), t_(t) {}
  double t() const { return t_; }

 private:
  double t_;
};

}  // namespace sensode
