// SPDX-License-Identifier: MIT
#include "core/integrators/block_triangular.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace sensode::integrators::detail {

BlockTriangularForm blockTriangularForm(const symbolic::SparsePattern& pattern) {
  // Tarjan's algorithm, iterative (n is up to a few hundred states, but a chain of reactions is a
  // path as long as the model). The graph has an edge j → i where a_ij ≠ 0 (column j's rows):
  // x_j enters equation i. Tarjan closes a component after every component reachable from it,
  // i.e. after the equations it feeds; in reverse closing order each block depends only on the
  // blocks before it.
  const int n = pattern.rows;
  const auto un = static_cast<std::size_t>(n);
  std::vector<int> index(un, -1), low(un, 0), stack;
  std::vector<char> onStack(un, 0);
  std::vector<std::pair<int, int>> calls;  // (node, next entry of its column)
  std::vector<std::vector<int>> components;
  int counter = 0;
  const auto visit = [&](int v) {
    index[static_cast<std::size_t>(v)] = low[static_cast<std::size_t>(v)] = counter++;
    stack.push_back(v);
    onStack[static_cast<std::size_t>(v)] = 1;
    calls.emplace_back(v, pattern.colPtr[static_cast<std::size_t>(v)]);
  };
  for (int root = 0; root < n; ++root) {
    if (index[static_cast<std::size_t>(root)] >= 0) continue;
    visit(root);
    while (!calls.empty()) {
      const int v = calls.back().first;
      const auto uv = static_cast<std::size_t>(v);
      if (calls.back().second < pattern.colPtr[uv + 1]) {
        const int w = pattern.rowIdx[static_cast<std::size_t>(calls.back().second++)];
        const auto uw = static_cast<std::size_t>(w);
        if (index[uw] < 0) {
          visit(w);
        } else if (onStack[uw] != 0) {
          low[uv] = std::min(low[uv], index[uw]);
        }
        continue;
      }
      calls.pop_back();
      if (!calls.empty()) {
        const auto parent = static_cast<std::size_t>(calls.back().first);
        low[parent] = std::min(low[parent], low[uv]);
      }
      if (low[uv] != index[uv]) continue;
      std::vector<int>& component = components.emplace_back();
      int w = -1;
      do {
        w = stack.back();
        stack.pop_back();
        onStack[static_cast<std::size_t>(w)] = 0;
        component.push_back(w);
      } while (w != v);
      std::sort(component.begin(), component.end());
    }
  }
  BlockTriangularForm form;
  form.order.reserve(un);
  form.blockStart.reserve(components.size() + 1);
  for (auto c = components.rbegin(); c != components.rend(); ++c) {
    form.blockStart.push_back(static_cast<int>(form.order.size()));
    form.order.insert(form.order.end(), c->begin(), c->end());
  }
  form.blockStart.push_back(n);
  return form;
}

}  // namespace sensode::integrators::detail
