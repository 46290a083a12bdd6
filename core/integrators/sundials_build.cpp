// SPDX-License-Identifier: MIT
#include "core/integrators/sundials_build.h"

#include <cvodes/cvodes.h>
#include <dlfcn.h>
#include <sundials/sundials_version.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace sensode::integrators {

std::string sundialsBuildDescription() {
  char version[64] = {};
  SUNDIALSGetVersion(version, sizeof version - 1);
  std::string text = std::string("SUNDIALS ") + version;

  // The shared object that holds CVodeCreate, as the dynamic linker resolved it.
  Dl_info info{};
  void* (*create)(int, SUNContext) = &CVodeCreate;
  void* address = nullptr;
  std::memcpy(&address, &create, sizeof address);
  if (dladdr(address, &info) == 0 || !info.dli_fname) return text;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path library = fs::weakly_canonical(info.dli_fname, ec);
  text += ", " + library.string();

  // scripts/install-sundials.sh leaves a stamp in its prefix (the library's parent's parent).
  for (const auto& entry : fs::directory_iterator(library.parent_path().parent_path(), ec)) {
    if (entry.path().filename().string().starts_with(".sensode-sundials-")) {
      std::ifstream in(entry.path());
      std::string line;
      std::getline(in, line);
      return text + " (optimised: " + line + ")";
    }
  }
  return text + " (not Sensode's optimised build; Debian's libsundials-dev is unoptimised)";
}

}  // namespace sensode::integrators
