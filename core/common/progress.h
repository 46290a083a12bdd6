// SPDX-License-Identifier: MIT
// Progress reporting and cancellation in plain C++ (the plugin adapts them to QPromise). Long
// computations call ProgressMonitor::check() at least once per integration step.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "core/common/errors.h"

namespace sensode {

// Shared flag a front end sets to stop work; copies refer to the same flag.
class CancelToken {
 public:
  CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

struct ProgressInfo {
  double t = 0;      // current integration time
  double tEnd = 0;   // final time of the current integration
  long steps = 0;    // accepted steps so far
};

enum class Decision { Continue, Abort };
using ProgressCallback = std::function<Decision(const ProgressInfo&)>;

// What an integrator holds: an optional token and an optional callback.
struct ProgressMonitor {
  CancelToken token;
  ProgressCallback callback;

  // Throws Cancelled when the token is set or the callback answers Abort.
  void check(const ProgressInfo& info) const {
    if (token.cancelled()) throw Cancelled(info.t);
    if (callback && callback(info) == Decision::Abort) throw Cancelled(info.t);
  }
};

}  // namespace sensode
