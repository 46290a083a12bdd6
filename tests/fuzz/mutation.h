// SPDX-License-Identifier: MIT
// Seeded text mutations for the fuzz tests: SBML documents (numbers → nan/inf/1e308, deleted
// attributes and elements, swapped and duplicated ids, truncations, undefined symbols, dangling
// references; magnitude mutations that set one number of a given kind to an extreme value) and
// PEtab tables (missing columns, NaN measurements, unknown ids, bad scales, BOM,
// CRLF, ragged rows). Everything is plain text surgery — the mutants must not depend on the
// parser under test — and deterministic: the generator is SplitMix64 with explicit arithmetic,
// so a seed gives the same mutants on every platform and standard library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sensode::test::fuzz {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  std::size_t below(std::size_t n);  // uniform enough in [0, n); n > 0
  template <class T>
  const T& pick(const std::vector<T>& items) { return items[below(items.size())]; }

 private:
  std::uint64_t state_;
};

// ---- SBML (XML text) ----

enum class SbmlMutation {
  SpecialNumber,      // a numeric attribute or <cn> → NaN, INF, -INF, 1e308, -1e308, 1e-320, 0, -1
  DeleteAttribute,    // any attribute of any element
  DeleteElement,      // any element with its content
  SwapIds,            // two id attributes exchange their values
  DuplicateId,        // an id attribute takes another element's id
  Truncate,           // the document cut at a random byte
  UndefinedSymbol,    // a <ci> names a symbol nobody defines
  DanglingReference,  // species=, compartment=, variable=, symbol=, ... name an undefined id
};
inline constexpr int kSbmlMutationCount = 8;
const char* toString(SbmlMutation m);

struct Mutant {
  std::string text;
  std::string change;  // what was changed, for the failure report
};

// The mutant, or nothing when the document has no place for this mutation.
std::optional<Mutant> mutateSbml(const std::string& xml, SbmlMutation mutation, Rng& rng);

// ---- SBML magnitude mutations (issue 30: no input hangs) ----

// The kinds of numbers a model holds; a magnitude mutation sets one of them to an extreme value.
enum class NumberKind {
  Stoichiometry,     // speciesReference stoichiometry=
  InitialValue,      // species initialConcentration= / initialAmount=
  ParameterValue,    // parameter or localParameter value=
  CompartmentSize,   // compartment size=
  KineticLawNumber,  // a <cn> inside a <kineticLaw>
  RuleNumber,        // a <cn> inside a rule or an initial assignment
  EventDelay,        // a <cn> inside an event's <delay>
};
inline constexpr int kNumberKindCount = 7;
const char* toString(NumberKind k);
// The extreme values: overflow, its negative, a subnormal, infinities and NaN (SBML's spelling).
const std::vector<std::string>& magnitudes();
// Every (kind, value) pair once: pair p is kind p % kNumberKindCount, value p / kNumberKindCount.
inline constexpr int kMagnitudePairCount = kNumberKindCount * 6;

// One number of `kind` (picked with rng) set to `value`; nothing when the document has none.
std::optional<Mutant> setMagnitude(const std::string& xml, NumberKind kind, const std::string& value,
                                   Rng& rng);

// ---- PEtab (tab-separated tables and the yaml file) ----

enum class TableMutation {
  DeleteColumn,       // a column removed from every row
  BadMeasurement,     // a measurement → nan, NaN, inf, -inf, empty, text, 1e400
  UnknownId,          // an id cell (observable, condition, parameter, noise parameter) → unknown
  BadScale,           // parameterScale → log2, LOG, ln, empty; log scale with nominal ≤ 0; bounds swapped
  SpecialNumber,      // any numeric cell → NaN, INF, -INF, 1e308, -1e308, 1e-320
  RaggedRow,          // a row loses or gains a cell
  DuplicateId,        // a row's id repeats the previous row's
  Truncate,           // the table cut at a random byte
  ByteOrderMark,      // UTF-8 BOM in front: must read exactly as without
  CrLf,               // CRLF line ends: must read exactly as without
};
inline constexpr int kTableMutationCount = 10;
const char* toString(TableMutation m);
// True for the mutations that keep the problem's meaning: the run must succeed and give the
// unmutated problem's result.
bool isHarmless(TableMutation m);

// A table as rows of cells (split at '\n' and '\t'; no quoting in PEtab).
using Table = std::vector<std::vector<std::string>>;
Table parseTable(const std::string& text);
std::string formatTable(const Table& table);

// `role` is the table's PEtab role ("measurement", "condition", "observable", "parameter"): it
// decides which columns hold ids, measurements and scales. Nothing when the table has no place
// for this mutation.
std::optional<Mutant> mutateTable(const std::string& text, const std::string& role,
                                  TableMutation mutation, Rng& rng);

}  // namespace sensode::test::fuzz
