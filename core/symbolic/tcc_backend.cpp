// SPDX-License-Identifier: MIT
// The libtcc calls behind TccModule (tcc_jit.h). A library of its own, linked into executables
// only: Debian's libtcc.a is position-dependent code (PC-relative references to glibc's stdout),
// which no shared object — the GUI's plugins — can hold. Executables call installTccBackend().
#include "core/symbolic/tcc_jit.h"

#ifdef SENSODE_HAVE_LIBTCC
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include <libtcc.h>

namespace sensode::symbolic {
namespace {

std::mutex& tccLock() {
  static std::mutex m;
  return m;
}

using Unary = double (*)(double);
using Binary = double (*)(double, double);

// Every libm function Tape::cPrelude() and Tape::emitCScratch() can call, bound by address so
// that tcc's code calls the same libm as the interpreter.
const std::pair<const char*, Unary> kUnary[] = {
    {"exp", ::exp},     {"log", ::log},     {"sin", ::sin},     {"cos", ::cos},
    {"tan", ::tan},     {"sinh", ::sinh},   {"cosh", ::cosh},   {"tanh", ::tanh},
    {"asin", ::asin},   {"acos", ::acos},   {"atan", ::atan},   {"asinh", ::asinh},
    {"acosh", ::acosh}, {"atanh", ::atanh}, {"fabs", ::fabs},   {"floor", ::floor},
    {"ceil", ::ceil},   {"tgamma", ::tgamma}, {"trunc", ::trunc}, {"sqrt", ::sqrt},
};
const std::pair<const char*, Binary> kBinary[] = {{"pow", ::pow}, {"fmod", ::fmod}};

// What replaces `#include <math.h>`: the prototypes above and NAN (only in unreachable default
// branches; a quiet NaN either way).
std::string mathDeclarations() {
  std::string d;
  for (const auto& [name, fn] : kUnary) d += std::string("double ") + name + "(double);\n";
  for (const auto& [name, fn] : kBinary) d += std::string("double ") + name + "(double, double);\n";
  d += "static double sensode_quiet_nan(void) {\n"
       "  union { unsigned long long u; double d; } v = {0x7ff8000000000000ULL};\n"
       "  return v.d;\n"
       "}\n"
       "#define NAN sensode_quiet_nan()\n";
  return d;
}

void* addressOf(Unary f) {
  void* p = nullptr;
  std::memcpy(&p, &f, sizeof p);
  return p;
}
void* addressOf(Binary f) {
  void* p = nullptr;
  std::memcpy(&p, &f, sizeof p);
  return p;
}

}  // namespace

namespace {

// A TCCState with `source` compiled for `outputType`, or null with `error`; the caller holds the
// lock and deletes the state.
TCCState* compiled(const std::string& source, int outputType, std::string& error) {
  static const std::string kInclude = "#include <math.h>\n";
  std::string text = source;
  if (const auto at = text.find(kInclude); at != std::string::npos)
    text.replace(at, kInclude.size(), mathDeclarations());
  TCCState* s = tcc_new();
  if (!s) {
    error = "tcc_new failed";
    return nullptr;
  }
  // Errors arrive through the callback; keep the first.
  error.clear();
  tcc_set_error_func(s, &error, [](void* opaque, const char* msg) {
    auto& e = *static_cast<std::string*>(opaque);
    if (e.empty()) e = msg;
  });
  tcc_set_options(s, "-nostdlib");
  tcc_set_output_type(s, outputType);
  if (tcc_compile_string(s, text.c_str()) < 0) {
    if (error.empty()) error = "tcc could not compile the source";
    tcc_delete(s);
    return nullptr;
  }
  return s;
}

void* compileInMemory(const std::string& source, std::string& error) {
  std::lock_guard lock(tccLock());
  TCCState* s = compiled(source, TCC_OUTPUT_MEMORY, error);
  if (!s) return nullptr;
  for (const auto& [name, fn] : kUnary) tcc_add_symbol(s, name, addressOf(fn));
  for (const auto& [name, fn] : kBinary) tcc_add_symbol(s, name, addressOf(fn));
  if (tcc_relocate(s, TCC_RELOCATE_AUTO) < 0) {
    if (error.empty()) error = "tcc could not link the code";
    tcc_delete(s);
    return nullptr;
  }
  return s;
}

bool writeSharedObject(const std::string& source, const std::string& path, std::string& error) {
  std::lock_guard lock(tccLock());
  TCCState* s = compiled(source, TCC_OUTPUT_DLL, error);
  if (!s) return false;
  const bool written = tcc_output_file(s, path.c_str()) == 0;
  if (!written && error.empty()) error = "tcc could not write " + path;
  tcc_delete(s);
  return written;
}

NativeFunction functionOf(void* state, const char* name) {
  void* sym = tcc_get_symbol(static_cast<TCCState*>(state), name);
  NativeFunction f = nullptr;
  static_assert(sizeof f == sizeof sym);
  std::memcpy(&f, &sym, sizeof f);
  return f;
}

void release(void* state) {
  std::lock_guard lock(tccLock());
  tcc_delete(static_cast<TCCState*>(state));
}

const TccBackend kBackend{&compileInMemory, &functionOf, &release, &writeSharedObject};

}  // namespace

void installTccBackend() { TccModule::setBackend(&kBackend); }

}  // namespace sensode::symbolic

#else  // built without libtcc: the interpreter runs until cc -O2 is done

void sensode::symbolic::installTccBackend() {}

#endif
