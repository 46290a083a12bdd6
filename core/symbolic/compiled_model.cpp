// SPDX-License-Identifier: MIT
#include "core/symbolic/compiled_model.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <ranges>
#include <tuple>

#include "core/common/cancellation.h"
#include "core/common/errors.h"
#include "core/symbolic/delays.h"
#include "core/symbolic/dae_consistency.h"

namespace sensode::symbolic {
namespace {

struct Entry {
  int row, col;
  Expr value;
};

// Sorts entries into CSC order and splits them into a pattern and the value expressions.
std::vector<Expr> toCsc(std::vector<Entry> entries, int rows, int cols, SparsePattern& pattern) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return std::tie(a.col, a.row) < std::tie(b.col, b.row); });
  pattern.rows = rows;
  pattern.cols = cols;
  pattern.colPtr.assign(static_cast<std::size_t>(cols) + 1, 0);
  pattern.rowIdx.clear();
  std::vector<Expr> values;
  for (const Entry& e : entries) {
    pattern.colPtr[static_cast<std::size_t>(e.col) + 1]++;
    pattern.rowIdx.push_back(e.row);
    values.push_back(e.value);
  }
  for (int c = 0; c < cols; ++c)
    pattern.colPtr[static_cast<std::size_t>(c) + 1] += pattern.colPtr[static_cast<std::size_t>(c)];
  return values;
}

// The entry indices of column c of a CSC pattern.
std::ranges::iota_view<std::size_t, std::size_t> entriesOfColumn(const SparsePattern& sp, int c) {
  return {static_cast<std::size_t>(sp.colPtr[static_cast<std::size_t>(c)]),
          static_cast<std::size_t>(sp.colPtr[static_cast<std::size_t>(c) + 1])};
}

// The column of each entry of a CSC pattern.
std::vector<int> columnsOfEntries(const SparsePattern& sp) {
  std::vector<int> col(static_cast<std::size_t>(sp.nnz()));
  for (int c = 0; c < sp.cols; ++c)
    for (const std::size_t k : entriesOfColumn(sp, c)) col[k] = c;
  return col;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Row i of a derivative's rows → (the model element it belongs to, what of it the row is).
using RowElement = std::function<std::pair<std::string, std::string>(int)>;

}  // namespace

CompiledModel::CompiledModel(OdeSystem system, const NativeOptions& native)
    : system_(std::move(system)), delayInputs_(system_) {
  ExprPool& pool = *system_.pool;
  const int n = nx(), m = np();
  const auto start = std::chrono::steady_clock::now();

  // Symbol index → state / parameter index, to read a dependency list in one pass.
  std::vector<int> stateOf(pool.numSymbols(), -1), paramOf(pool.numSymbols(), -1);
  for (int i = 0; i < n; ++i) stateOf[pool.node(system_.states[static_cast<std::size_t>(i)].symbol).symbol] = i;
  for (int k = 0; k < m; ++k) paramOf[pool.node(system_.params[static_cast<std::size_t>(k)].symbol).symbol] = k;

  // Delayed values are inputs whose total derivatives follow the chain rule of delays.h.
  const std::unordered_map<Expr, DelayInputChain> chain = delayChainRule(system_);
  // Runs compute() for row i of a derivative: an Error it throws (a derivative that cannot be
  // formed, factorial of a state say) leaves as an SbmlError naming the row's element (`where`),
  // for the loaders to add the file. Cancellation and errors that name an element pass through.
  auto namingRow = [](const RowElement& where, int i, auto&& compute) {
    try {
      return compute();
    } catch (const SbmlError&) {
      throw;
    } catch (const Cancelled&) {
      throw;
    } catch (const Error& e) {
      auto [element, what] = where ? where(i) : std::pair<std::string, std::string>{};
      throw SbmlError("", element, (what.empty() ? "" : what + ": ") + e.what());
    }
  };
  // Non-zero total derivatives of `rows` w.r.t. states (wrt = stateOf) or parameters (paramOf):
  // ∂row/∂v plus, for every delay input u the row depends on, ∂row/∂u · du/dv.
  auto jacobianOf = [&](const std::vector<Expr>& rows, const std::vector<int>& indexOf,
                        const auto& varSymbol, int cols, SparsePattern& pattern,
                        const RowElement& rowElement = {}) {
    const bool byState = &indexOf == &stateOf;
    std::vector<Entry> entries;
    auto diffRow = [&](int i, Expr e, Expr by) {
      return namingRow(rowElement, i, [&] { return pool.diff(e, by); });
    };
    if (chain.empty()) {  // no delays: the plain partial derivatives (the load-time path)
      for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        throwIfCancelled();
        for (Expr s : pool.dependencies(rows[static_cast<std::size_t>(i)])) {
          const int j = indexOf[pool.node(s).symbol];
          if (j < 0) continue;
          const Expr d = diffRow(i, rows[static_cast<std::size_t>(i)], varSymbol(j));
          if (d != pool.zero()) entries.push_back({i, j, d});
        }
      }
      return toCsc(std::move(entries), static_cast<int>(rows.size()), cols, pattern);
    }
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
      throwIfCancelled();
      const Expr row = rows[static_cast<std::size_t>(i)];
      std::map<int, std::vector<Expr>> terms;  // column → terms of the derivative
      for (Expr s : pool.dependencies(row)) {
        const int j = indexOf[pool.node(s).symbol];
        if (j >= 0) {
          terms[j].push_back(diffRow(i, row, varSymbol(j)));
          continue;
        }
        const auto link = chain.find(s);
        if (link == chain.end()) continue;
        const Expr outer = diffRow(i, row, s);
        for (const auto& [col, inner] : byState ? link->second.byState : link->second.byParam)
          terms[col].push_back(pool.mul(outer, inner));
      }
      for (auto& [j, t] : terms) {
        const Expr d = pool.add(t);
        if (d != pool.zero()) entries.push_back({i, j, d});
      }
    }
    return toCsc(std::move(entries), static_cast<int>(rows.size()), cols, pattern);
  };
  // Rows of f, a and x0 are the states'; rows of y the outputs' (value, amount, concentration).
  auto stateRows = [&](const char* what) -> RowElement {
    return [this, what](int i) {
      return std::pair<std::string, std::string>{system_.states[static_cast<std::size_t>(i)].id, what};
    };
  };
  const RowElement outputRows = [this](int i) {
    const auto& outs = system_.outputs;
    return std::pair<std::string, std::string>{
        outs[static_cast<std::size_t>(i) % outs.size()].id, "its value as an output"};
  };
  // Total ∂e/∂t (delay inputs move with t along the history).
  auto timeDerivativeOf = [&](Expr e) {
    if (chain.empty()) return pool.diff(e, system_.time);
    std::vector<Expr> t{pool.diff(e, system_.time)};
    for (Expr s : pool.dependencies(e)) {
      const auto link = chain.find(s);
      if (link != chain.end()) t.push_back(pool.mul(pool.diff(e, s), link->second.byTime));
    }
    return pool.add(t);
  };
  auto stateSym = [&](int j) { return system_.states[static_cast<std::size_t>(j)].symbol; };
  auto paramSym = [&](int k) { return system_.params[static_cast<std::size_t>(k)].symbol; };

  const std::vector<Expr>& f = system_.rhs;
  const std::vector<Expr> jValues =
      jacobianOf(f, stateOf, stateSym, n, jPattern_, stateRows("its rate of change"));
  const std::vector<Expr> fpValues =
      jacobianOf(f, paramOf, paramSym, m, fpPattern_, stateRows("its rate of change"));

  // ∂f/∂t and a = J·f + ∂f/∂t, built from the J entries already differentiated.
  std::vector<Expr> ft(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    ft[static_cast<std::size_t>(i)] = namingRow(stateRows("its rate of change"), i, [&] {
      return timeDerivativeOf(f[static_cast<std::size_t>(i)]);
    });
    autonomous_ = autonomous_ && ft[static_cast<std::size_t>(i)] == pool.zero();
  }
  std::vector<std::vector<Expr>> aTerms(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    for (int k = jPattern_.colPtr[static_cast<std::size_t>(j)]; k < jPattern_.colPtr[static_cast<std::size_t>(j) + 1]; ++k)
      aTerms[static_cast<std::size_t>(jPattern_.rowIdx[static_cast<std::size_t>(k)])].push_back(
          pool.mul(jValues[static_cast<std::size_t>(k)], f[static_cast<std::size_t>(j)]));
  std::vector<Expr> a(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    aTerms[static_cast<std::size_t>(i)].push_back(ft[static_cast<std::size_t>(i)]);
    a[static_cast<std::size_t>(i)] = pool.add(aTerms[static_cast<std::size_t>(i)]);
  }
  const std::vector<Expr> jjValues = jacobianOf(a, stateOf, stateSym, n, jjPattern_,
                                                 stateRows("its rate of change's time derivative"));
  // a_p = ∂(J·f + f_t)/∂p = J·f_p + A_mix, A_mix = (∂J/∂p)·f + ∂f_t/∂p: only A_mix is taped, and
  // J·f_p is formed from the J and f_p values (secondParamJacobian). Taped whole, J·f_p's
  // products were most of a_p's tape (Alkan: 3024 instructions against A_mix's 1271; Lang 23345
  // against 5700), and the discrete adjoint needs only νᵀ a_p = (Jᵀν)ᵀ f_p + νᵀ A_mix.
  const std::vector<Expr> apMixValues = [&] {
    SparsePattern byEntry, ftp;  // ∂J/∂p with one row per entry of J; ∂f_t/∂p
    const std::vector<Expr> jOfP = jacobianOf(jValues, paramOf, paramSym, m, byEntry);
    const std::vector<Expr> ftOfP = jacobianOf(ft, paramOf, paramSym, m, ftp);
    const std::vector<int> colOfEntry = columnsOfEntries(jPattern_);
    std::map<std::pair<int, int>, std::vector<Expr>> terms;  // (parameter, row) → terms
    for (int c = 0; c < m; ++c) {
      for (const std::size_t k : entriesOfColumn(byEntry, c)) {
        const auto e = static_cast<std::size_t>(byEntry.rowIdx[k]);
        terms[{c, jPattern_.rowIdx[e]}].push_back(
            pool.mul(jOfP[k], f[static_cast<std::size_t>(colOfEntry[e])]));
      }
      for (const std::size_t k : entriesOfColumn(ftp, c))
        terms[{c, ftp.rowIdx[k]}].push_back(ftOfP[k]);
    }
    std::vector<Entry> entries;
    for (auto& [at, t] : terms)
      if (const Expr d = pool.add(t); d != pool.zero()) entries.push_back({at.second, at.first, d});
    return toCsc(std::move(entries), n, m, apMixPattern_);
  }();
  planSecondParamJacobian();
  std::vector<Expr> s0Values = jacobianOf(system_.initial, paramOf, paramSym, m, s0Pattern_,
                                          stateRows("its initial value"));
  dae_ = system_.isDae();
  if (dae_) {
    // The algebraic rows of S0 come from the constraints (dae_consistency.h), not from the
    // initial-value expressions: their pattern is every parameter.
    std::vector<Entry> entries;
    for (int c = 0; c < m; ++c)
      for (int k = s0Pattern_.colPtr[static_cast<std::size_t>(c)];
           k < s0Pattern_.colPtr[static_cast<std::size_t>(c) + 1]; ++k) {
        const int r = s0Pattern_.rowIdx[static_cast<std::size_t>(k)];
        if (!system_.states[static_cast<std::size_t>(r)].algebraic)
          entries.push_back({r, c, s0Values[static_cast<std::size_t>(k)]});
      }
    for (int r = 0; r < n; ++r)
      if (system_.states[static_cast<std::size_t>(r)].algebraic)
        for (int c = 0; c < m; ++c) entries.push_back({r, c, pool.zero()});
    s0Values = toCsc(std::move(entries), n, m, s0Pattern_);
  }

  std::vector<Expr> y;
  for (const auto& o : system_.outputs) y.push_back(o.value);
  for (const auto& o : system_.outputs) y.push_back(o.amount);
  for (const auto& o : system_.outputs) y.push_back(o.concentration);
  const std::vector<Expr> yxValues = jacobianOf(y, stateOf, stateSym, n, yxPattern_, outputRows);
  const std::vector<Expr> ypValues = jacobianOf(y, paramOf, paramSym, m, ypPattern_, outputRows);
  timings_.derivativeSeconds = secondsSince(start);

  const auto tapeStart = std::chrono::steady_clock::now();
  TapeInputs in;
  in.time = system_.time;
  for (const auto& s : system_.states) in.x.push_back(s.symbol);
  for (const auto& p : system_.params) in.p.push_back(p.symbol);
  // Delay inputs follow the parameters: evaluators read them from parameters() (see below).
  in.p.insert(in.p.end(), system_.delayInputs.begin(), system_.delayInputs.end());
  auto concat = [](std::vector<Expr> u, const std::vector<Expr>& v) {
    u.insert(u.end(), v.begin(), v.end());
    return u;
  };
  // Each tape is a pass over its expressions (CSE and register allocation): a cancel point.
  const auto tape = [&](const std::vector<Expr>& outputs) {
    throwIfCancelled();
    return Tape(pool, in, outputs);
  };
  fTape_ = tape(f);
  jTape_ = tape(jValues);
  fpTape_ = tape(fpValues);
  aTape_ = tape(a);
  faTape_ = tape(concat(f, a));
  jjTape_ = tape(jjValues);
  jPairTape_ = tape(concat(jValues, jjValues));
  apMixTape_ = tape(apMixValues);
  ftTape_ = tape(ft);
  x0Tape_ = tape(system_.initial);
  s0Tape_ = tape(s0Values);
  yTape_ = tape(y);
  yxTape_ = tape(yxValues);
  ypTape_ = tape(ypValues);
  timings_.tapeSeconds = secondsSince(tapeStart);
  for (const auto& t : tapes()) timings_.tapeInstructions += t.tape->numInstructions();
  // (secondParamJacobian keeps J, f_p and A_mix there one after another)
  const auto apInputs =
      static_cast<std::size_t>(jPattern_.nnz() + fpPattern_.nnz() + apMixPattern_.nnz());
  scratch_.resize(std::max({faTape_.numOutputs(), jPairTape_.numOutputs(), apInputs}));

  if (!NativeCompiler::enabledByEnvironment()) {
    nativeOff_ = "native: disabled by SENSODE_NATIVE (tape interpreter in use)";
  } else if (timings_.tapeInstructions > NativeCompiler::maxInstructions()) {
    nativeOff_ = "native: not compiled, " + std::to_string(timings_.tapeInstructions) +
                 " tape instructions exceed " + std::to_string(NativeCompiler::maxInstructions()) +
                 " (tape interpreter in use)";
  } else {
    std::vector<NativeCompiler::Unit> units;
    for (const NamedTape& named : tapes()) {
      auto* t = const_cast<Tape*>(named.tape);  // this model's own member tapes
      auto binding = std::make_shared<NativeBinding>();
      t->bindNative(binding);
      // What the run's method evaluates first: tcc compiles it ahead of the rest.
      const bool early = std::find(native.earlyTapes.begin(), native.earlyTapes.end(),
                                   named.name) != native.earlyTapes.end();
      units.push_back({t, std::move(binding), early});
    }
    native_ = std::make_shared<NativeCompiler>(std::move(units), native.useCache);
  }
  if (system_.fastSurrogate) {
    auto equilibrium = std::make_shared<CompiledModel>(*this);  // (this model, no surrogate)
    surrogate_ = std::make_shared<CompiledModel>(OdeSystem(*system_.fastSurrogate), native);
    surrogate_->startFromEquilibriumOf(std::move(equilibrium));
  }
}

// The surrogate's species are the rapid-equilibrium model's species (by id); its pools are
// not states here. S0 gains the entries the equilibrium couples (every parameter, for the
// species the DAE determines algebraically); the tape's own S0 keeps its pattern for starts the
// DAE cannot make.
void CompiledModel::startFromEquilibriumOf(std::shared_ptr<CompiledModel> dae) {
  const int n = nx(), m = np();
  startIndex_.assign(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    const std::string& id = system_.states[static_cast<std::size_t>(i)].id;
    startIndex_[static_cast<std::size_t>(i)] = dae->system().findState(id);
    if (startIndex_[static_cast<std::size_t>(i)] < 0)
      throw Error(system_.modelFile + ": internal error: the fast-reaction surrogate's state '" +
                  id + "' is not a state of the rapid-equilibrium model");
  }
  for (int k = 0; k < m; ++k)
    if (dae->system().params[static_cast<std::size_t>(k)].id !=
        system_.params[static_cast<std::size_t>(k)].id)
      throw Error(system_.modelFile + ": internal error: the fast-reaction surrogate's "
                  "parameters differ from the rapid-equilibrium model's");
  std::vector<char> used(static_cast<std::size_t>(n) * static_cast<std::size_t>(m), 0);
  auto mark = [&](const SparsePattern& sp, auto rowOf) {
    for (int c = 0; c < sp.cols; ++c)
      for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
        if (const int r = rowOf(sp.rowIdx[static_cast<std::size_t>(k)]); r >= 0)
          used[static_cast<std::size_t>(c) * static_cast<std::size_t>(n) + static_cast<std::size_t>(r)] = 1;
  };
  mark(s0Pattern_, [](int r) { return r; });
  mark(dae->s0Pattern_, [&](int r) {
    const auto it = std::find(startIndex_.begin(), startIndex_.end(), r);
    return it == startIndex_.end() ? -1 : static_cast<int>(it - startIndex_.begin());
  });
  s0TapePattern_ = s0Pattern_;
  s0Pattern_.colPtr.assign(static_cast<std::size_t>(m) + 1, 0);
  s0Pattern_.rowIdx.clear();
  for (int c = 0; c < m; ++c) {
    for (int r = 0; r < n; ++r)
      if (used[static_cast<std::size_t>(c) * static_cast<std::size_t>(n) + static_cast<std::size_t>(r)])
        s0Pattern_.rowIdx.push_back(r);
    s0Pattern_.colPtr[static_cast<std::size_t>(c) + 1] = static_cast<int>(s0Pattern_.rowIdx.size());
  }
  equilibriumStart_ = std::move(dae);
}

std::shared_ptr<CompiledModel> CompiledModel::clone() const {
  auto copy = std::make_shared<CompiledModel>(*this);
  if (surrogate_) copy->surrogate_ = surrogate_->clone();
  if (equilibriumStart_) copy->equilibriumStart_ = equilibriumStart_->clone();
  return copy;
}

NativeStatus CompiledModel::nativeStatus() const {
  if (native_) return native_->status();
  NativeStatus s;
  s.message = nativeOff_;
  return s;
}

bool CompiledModel::waitForNative(double timeoutSeconds) const {
  return native_ && native_->waitUntilDone(timeoutSeconds);
}

bool CompiledModel::nativeFromFirstEvaluation() const {
  return native_ && native_->nativeFromFirstEvaluation();
}

std::vector<double> CompiledModel::nominalParameters() const {
  std::vector<double> p;
  for (const auto& v : system_.params) p.push_back(v.nominal);
  return p;
}

const double* CompiledModel::withDelays(double t, const double* x, const double* p) const {
  return delayInputs_.extend(t, x, p);
}

const double* CompiledModel::withoutDelays(const double* p) const {
  return delayInputs_.extendWithoutHistory(p);  // the initial values hold no delay input
}

void CompiledModel::rhs(double t, const double* x, const double* p, double* out) const {
  fTape_.evaluate(t, x, withDelays(t, x, p), out);
}
void CompiledModel::jacobian(double t, const double* x, const double* p, double* values) const {
  jTape_.evaluate(t, x, withDelays(t, x, p), values);
}
void CompiledModel::paramJacobian(double t, const double* x, const double* p, double* values) const {
  fpTape_.evaluate(t, x, withDelays(t, x, p), values);
}
void CompiledModel::secondDerivative(double t, const double* x, const double* p, double* out) const {
  aTape_.evaluate(t, x, withDelays(t, x, p), out);
}
void CompiledModel::rhsAndSecond(double t, const double* x, const double* p, double* f,
                                 double* a) const {
  faTape_.evaluate(t, x, withDelays(t, x, p), scratch_.data());
  std::copy_n(scratch_.data(), nx(), f);
  std::copy_n(scratch_.data() + nx(), nx(), a);
}
void CompiledModel::jacobianOfSecond(double t, const double* x, const double* p,
                                     double* values) const {
  jjTape_.evaluate(t, x, withDelays(t, x, p), values);
}
void CompiledModel::jacobianPair(double t, const double* x, const double* p, double* jValues,
                                 double* jjValues) const {
  jPairTape_.evaluate(t, x, withDelays(t, x, p), scratch_.data());
  std::copy_n(scratch_.data(), jPattern_.nnz(), jValues);
  std::copy_n(scratch_.data() + jPattern_.nnz(), jjPattern_.nnz(), jjValues);
}
void CompiledModel::secondParamJacobian(double t, const double* x, const double* p,
                                        double* values) const {
  const double* in = withDelays(t, x, p);
  double* jValues = scratch_.data();
  double* fpValues = jValues + jPattern_.nnz();
  jTape_.evaluate(t, x, in, jValues);
  fpTape_.evaluate(t, x, in, fpValues);
  secondParamJacobian(t, x, p, jValues, fpValues, values);
}
void CompiledModel::secondParamJacobian(double t, const double* x, const double* p,
                                        const double* jValues, const double* fpValues,
                                        double* values) const {
  double* mix = scratch_.data() + jPattern_.nnz() + fpPattern_.nnz();
  apMixTape_.evaluate(t, x, withDelays(t, x, p), mix);
  std::fill_n(values, apPattern_.nnz(), 0.0);
  for (std::size_t k = 0; k < apOfMix_.size(); ++k) values[apOfMix_[k]] = mix[k];
  for (const ProductTerm& term : apProduct_)
    values[term.out] += jValues[term.j] * fpValues[term.fp];
}
void CompiledModel::secondParamMixedTerm(double t, const double* x, const double* p,
                                         double* values) const {
  apMixTape_.evaluate(t, x, withDelays(t, x, p), values);
}

// a_p's pattern (J·f_p's and A_mix's together) and the products that fill it: for each entry
// (r, c) of J·f_p, the terms J(r, j)·f_p(j, c).
void CompiledModel::planSecondParamJacobian() {
  const int n = nx(), m = np();
  apPattern_ = {};
  apPattern_.rows = n;
  apPattern_.cols = m;
  apPattern_.colPtr.assign(static_cast<std::size_t>(m) + 1, 0);
  apOfMix_.assign(static_cast<std::size_t>(apMixPattern_.nnz()), 0);
  apProduct_.clear();
  struct Term {
    int row;
    ProductTerm product;  // product.j < 0: A_mix's entry product.fp
  };
  std::vector<Term> column;
  for (int c = 0; c < m; ++c) {
    column.clear();
    for (const std::size_t k : entriesOfColumn(fpPattern_, c))
      for (const std::size_t e : entriesOfColumn(jPattern_, fpPattern_.rowIdx[k]))
        column.push_back({jPattern_.rowIdx[e], {0, static_cast<int>(e), static_cast<int>(k)}});
    for (const std::size_t k : entriesOfColumn(apMixPattern_, c))
      column.push_back({apMixPattern_.rowIdx[k], {0, -1, static_cast<int>(k)}});
    std::stable_sort(column.begin(), column.end(),
                     [](const Term& a, const Term& b) { return a.row < b.row; });
    for (std::size_t i = 0; i < column.size(); ++i) {
      if (i == 0 || column[i].row != column[i - 1].row) apPattern_.rowIdx.push_back(column[i].row);
      ProductTerm t = column[i].product;
      t.out = static_cast<int>(apPattern_.rowIdx.size()) - 1;
      if (t.j < 0) apOfMix_[static_cast<std::size_t>(t.fp)] = t.out;
      else apProduct_.push_back(t);
    }
    apPattern_.colPtr[static_cast<std::size_t>(c) + 1] = static_cast<int>(apPattern_.rowIdx.size());
  }
}
void CompiledModel::timeDerivative(double t, const double* x, const double* p, double* out) const {
  ftTape_.evaluate(t, x, withDelays(t, x, p), out);
}
void CompiledModel::initialState(double t0, const double* p, double* x0) const {
  if (equilibriumStart_) {  // fast-reaction surrogate: start where rapid equilibrium starts
    try {
      std::vector<double> xd(static_cast<std::size_t>(equilibriumStart_->nx()));
      equilibriumStart_->initialState(t0, p, xd.data());
      for (int i = 0; i < nx(); ++i) x0[i] = xd[static_cast<std::size_t>(startIndex_[static_cast<std::size_t>(i)])];
      return;
    } catch (const Error&) {
      // Degenerate at t0 (a fast rate k·A while k = 0): the fast reactions do not move there,
      // and the file's values are the start.
    }
  }
  x0Tape_.evaluate(t0, nullptr, withoutDelays(p), x0);
  if (dae_) solveAlgebraicStates(*this, t0, x0, p);
}
void CompiledModel::makeConsistent(double t, double* x, const double* p) const {
  if (!dae_) return;
  for (const auto& pool : system_.fastPools) {
    double w = 0;
    for (const auto& [i, l] : pool.coefficients) w += l * x[i];
    x[pool.state] = w;
  }
  solveAlgebraicStates(*this, t, x, p);
}
void CompiledModel::initialSensitivity(double t0, const double* p, double* values) const {
  if (equilibriumStart_) {
    surrogateInitialSensitivity(t0, p, values);
    return;
  }
  s0Tape_.evaluate(t0, nullptr, withoutDelays(p), values);
  if (!dae_) return;
  std::vector<double> x0(static_cast<std::size_t>(nx()));
  initialState(t0, p, x0.data());
  const auto rows = static_cast<std::size_t>(nx());
  std::vector<double> dense(rows * static_cast<std::size_t>(np()), 0.0);
  const SparsePattern& sp = s0Pattern_;
  for (int c = 0; c < sp.cols; ++c)
    for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      dense[static_cast<std::size_t>(c) * rows + static_cast<std::size_t>(sp.rowIdx[static_cast<std::size_t>(k)])] =
          values[static_cast<std::size_t>(k)];
  solveAlgebraicSensitivities(*this, t0, x0.data(), p, dense);
  for (int c = 0; c < sp.cols; ++c)
    for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      values[static_cast<std::size_t>(k)] =
          dense[static_cast<std::size_t>(c) * rows + static_cast<std::size_t>(sp.rowIdx[static_cast<std::size_t>(k)])];
}
void CompiledModel::outputs(double t, const double* x, const double* p, double* y) const {
  yTape_.evaluate(t, x, withDelays(t, x, p), y);
}

void CompiledModel::outputStateJacobian(double t, const double* x, const double* p,
                                        double* values) const {
  yxTape_.evaluate(t, x, withDelays(t, x, p), values);
}
void CompiledModel::outputParamJacobian(double t, const double* x, const double* p,
                                        double* values) const {
  ypTape_.evaluate(t, x, withDelays(t, x, p), values);
}

std::vector<CompiledModel::NamedTape> CompiledModel::tapes() const {
  return {{"f", &fTape_},   {"J", &jTape_},   {"fp", &fpTape_}, {"a", &aTape_},
          {"fa", &faTape_}, {"JJ", &jjTape_}, {"J_JJ", &jPairTape_}, {"ap_mix", &apMixTape_},
          {"ft", &ftTape_}, {"x0", &x0Tape_}, {"S0", &s0Tape_}, {"y", &yTape_},
          {"yx", &yxTape_}, {"yp", &ypTape_}};
}

// S0 of the fast-reaction surrogate in its extended pattern: the rapid-equilibrium model's S0
// where that model can start, else the tape's (the same start as initialState takes).
void CompiledModel::surrogateInitialSensitivity(double t0, const double* p, double* values) const {
  const auto n = static_cast<std::size_t>(nx());
  std::vector<double> dense(n * static_cast<std::size_t>(np()), 0.0);
  try {
    const CompiledModel& dae = *equilibriumStart_;
    std::vector<double> daeValues(static_cast<std::size_t>(dae.s0Pattern_.nnz()));
    dae.initialSensitivity(t0, p, daeValues.data());
    std::vector<int> rowOf(static_cast<std::size_t>(dae.nx()), -1);
    for (std::size_t i = 0; i < n; ++i) rowOf[static_cast<std::size_t>(startIndex_[i])] = static_cast<int>(i);
    const SparsePattern& sp = dae.s0Pattern_;
    for (int c = 0; c < sp.cols; ++c)
      for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
        if (const int r = rowOf[static_cast<std::size_t>(sp.rowIdx[static_cast<std::size_t>(k)])]; r >= 0)
          dense[static_cast<std::size_t>(c) * n + static_cast<std::size_t>(r)] = daeValues[static_cast<std::size_t>(k)];
  } catch (const Error&) {
    std::vector<double> own(static_cast<std::size_t>(s0TapePattern_.nnz()));
    s0Tape_.evaluate(t0, nullptr, withoutDelays(p), own.data());
    const SparsePattern& sp = s0TapePattern_;
    for (int c = 0; c < sp.cols; ++c)
      for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
        dense[static_cast<std::size_t>(c) * n + static_cast<std::size_t>(sp.rowIdx[static_cast<std::size_t>(k)])] = own[static_cast<std::size_t>(k)];
  }
  const SparsePattern& sp = s0Pattern_;
  for (int c = 0; c < sp.cols; ++c)
    for (int k = sp.colPtr[static_cast<std::size_t>(c)]; k < sp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      values[k] = dense[static_cast<std::size_t>(c) * n + static_cast<std::size_t>(sp.rowIdx[static_cast<std::size_t>(k)])];
}

}  // namespace sensode::symbolic
