// SPDX-License-Identifier: MIT
#include "core/common/cancellation.h"

#include <utility>

namespace sensode {
namespace {

thread_local const CancelToken* installedToken = nullptr;

}  // namespace

CancellationScope::CancellationScope(CancelToken token)
    : token_(std::move(token)), previous_(installedToken) {
  installedToken = &token_;
}

CancellationScope::~CancellationScope() { installedToken = previous_; }

void throwIfCancelled() {
  if (installedToken != nullptr && installedToken->cancelled()) throw Cancelled(0);
}

}  // namespace sensode
