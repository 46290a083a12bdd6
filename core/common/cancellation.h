// SPDX-License-Identifier: MIT
// Cancellation for the phases with no time axis — import, conservation analysis, the symbolic
// build and compilation — whose functions take no ProgressMonitor: a front end installs its
// token on the worker thread for the length of a call (CancellationScope), and their long loops
// call throwIfCancelled(), which throws Cancelled once the installed token is set. Scopes nest;
// without one, throwIfCancelled() does nothing. The check is one thread-local pointer and a
// relaxed atomic load, cheap enough for every differentiated entry.
#pragma once

#include "core/common/progress.h"

namespace sensode {

class CancellationScope {
 public:
  explicit CancellationScope(CancelToken token);
  ~CancellationScope();
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

 private:
  CancelToken token_;
  const CancelToken* previous_;
};

// Throws Cancelled (at t = 0: no integration has started) when the token of the innermost
// CancellationScope on this thread is set.
void throwIfCancelled();

}  // namespace sensode
