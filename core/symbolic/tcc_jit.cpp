// SPDX-License-Identifier: MIT
#include "core/symbolic/tcc_jit.h"

#include <atomic>
#include <cstdlib>

namespace sensode::symbolic {

namespace {
std::atomic<const TccBackend*> gBackend{nullptr};
}  // namespace

void TccModule::setBackend(const TccBackend* backend) { gBackend.store(backend); }

bool TccModule::available() {
  if (!gBackend.load()) return false;
  const char* v = std::getenv("SENSODE_TCC");
  if (!v) return true;
  const std::string s = v;
  return !(s == "0" || s == "off" || s == "false" || s == "OFF" || s == "FALSE");
}

std::shared_ptr<TccModule> TccModule::compile(const std::string& source, std::string& error) {
  const TccBackend* backend = gBackend.load();
  if (!backend) {
    error = "this program was built without libtcc";
    return nullptr;
  }
  void* state = backend->compile(source, error);
  if (!state) return nullptr;
  return std::shared_ptr<TccModule>(new TccModule(state, backend));
}

bool TccModule::writeSharedObject(const std::string& source, const std::string& path,
                                  std::string& error) {
  const TccBackend* backend = gBackend.load();
  if (!backend) {
    error = "this program was built without libtcc";
    return false;
  }
  return backend->writeSharedObject(source, path, error);
}

NativeFunction TccModule::function(const std::string& name) const {
  return backend_->function(state_, name.c_str());
}

TccModule::~TccModule() { backend_->release(state_); }

}  // namespace sensode::symbolic
