// The values placed so far by the arena planner, found by lifetime: which of
// them are live at some dispatch of [first, last]. Answered in
// O(log n + answers), so placing n values costs what their overlaps cost
// rather than n^2 comparisons.
#ifndef OAAXVK_TOOLCHAIN_PLAN_LIFETIME_INDEX_H_
#define OAAXVK_TOOLCHAIN_PLAN_LIFETIME_INDEX_H_

#include <cstddef>
#include <map>
#include <vector>

namespace oaaxvk::toolchain {

class LifetimeIndex {
 public:
  // Lifetimes are dispatch intervals within [0, dispatches).
  explicit LifetimeIndex(size_t dispatches) {
    while (size_ < dispatches) size_ *= 2;
    covering_.resize(2 * size_);
  }

  // Adds item `id`, live over dispatches [first, last].
  void Add(int first, int last, size_t id) {
    Cover(1, 0, size_, static_cast<size_t>(first), static_cast<size_t>(last) + 1, id);
    by_first_.emplace(first, id);
  }

  // Appends to *out every added item whose lifetime meets [first, last]
  // (each once, in no particular order): the items live at `first`, and the
  // items whose lifetime starts within (first, last].
  void Overlapping(int first, int last, std::vector<size_t>* out) const {
    size_t n = 1, lo = 0, hi = size_;
    const size_t t = static_cast<size_t>(first);
    while (true) {
      out->insert(out->end(), covering_[n].begin(), covering_[n].end());
      if (hi - lo == 1) break;
      size_t mid = (lo + hi) / 2;
      if (t < mid) { n = 2 * n; hi = mid; } else { n = 2 * n + 1; lo = mid; }
    }
    for (auto it = by_first_.upper_bound(first); it != by_first_.end() && it->first <= last; ++it)
      out->push_back(it->second);
  }

 private:
  // covering_[n]: items whose lifetime covers all of node n's dispatches
  // but not all of its parent's.
  void Cover(size_t n, size_t lo, size_t hi, size_t b, size_t e, size_t id) {
    if (e <= lo || hi <= b) return;
    if (b <= lo && hi <= e) {
      covering_[n].push_back(id);
      return;
    }
    size_t mid = (lo + hi) / 2;
    Cover(2 * n, lo, mid, b, e, id);
    Cover(2 * n + 1, mid, hi, b, e, id);
  }

  size_t size_ = 1;
  std::vector<std::vector<size_t>> covering_;
  std::multimap<int, size_t> by_first_;
};

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PLAN_LIFETIME_INDEX_H_
