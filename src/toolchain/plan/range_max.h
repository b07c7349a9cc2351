// Byte ranges of the buffers, each byte carrying a number: raise the numbers
// of a range to at least v, ask for the largest number in a range; both in
// O(log n) over the ranges' endpoints given up front. The barrier planner
// (plan.cpp) keeps per byte the latest hazard a later dispatch must wait for,
// so that each dispatch is checked against its own ranges only, never
// against every earlier dispatch.
#ifndef OAAXVK_TOOLCHAIN_PLAN_RANGE_MAX_H_
#define OAAXVK_TOOLCHAIN_PLAN_RANGE_MAX_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace oaaxvk::toolchain {

class RangeMax {
 public:
  // `bounds`: every begin and end of the ranges that will be raised or
  // queried (any order, repeats allowed). All numbers start at 0.
  explicit RangeMax(std::vector<uint64_t> bounds) : cuts_(std::move(bounds)) {
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    size_t cells = cuts_.size() > 1 ? cuts_.size() - 1 : 1;
    size_ = 1;
    while (size_ < cells) size_ *= 2;
    whole_.assign(2 * size_, 0);
    max_.assign(2 * size_, 0);
  }

  // Numbers of bytes [begin, end) become at least v (empty ranges: nothing).
  void Raise(uint64_t begin, uint64_t end, uint32_t v) {
    if (begin >= end) return;
    Raise(1, 0, size_, Cell(begin), Cell(end), v);
  }
  // The largest number of bytes [begin, end) (0 for an empty range).
  uint32_t Max(uint64_t begin, uint64_t end) const {
    if (begin >= end) return 0;
    return Max(1, 0, size_, Cell(begin), Cell(end));
  }

 private:
  // Cell k spans bytes [cuts_[k], cuts_[k + 1]); a bound given up front is
  // always a cut, so a range is a whole run of cells.
  size_t Cell(uint64_t b) const {
    return static_cast<size_t>(std::lower_bound(cuts_.begin(), cuts_.end(), b) - cuts_.begin());
  }
  // whole_[n]: raised over all of node n's cells; max_[n]: the largest
  // number of any cell under n (whole_ of n and its ancestors aside).
  void Raise(size_t n, size_t lo, size_t hi, size_t b, size_t e, uint32_t v) {
    if (e <= lo || hi <= b) return;
    max_[n] = std::max(max_[n], v);
    if (b <= lo && hi <= e) {
      whole_[n] = std::max(whole_[n], v);
      return;
    }
    size_t mid = (lo + hi) / 2;
    Raise(2 * n, lo, mid, b, e, v);
    Raise(2 * n + 1, mid, hi, b, e, v);
  }
  uint32_t Max(size_t n, size_t lo, size_t hi, size_t b, size_t e) const {
    if (e <= lo || hi <= b) return 0;
    if (b <= lo && hi <= e) return max_[n];
    size_t mid = (lo + hi) / 2;
    return std::max({whole_[n], Max(2 * n, lo, mid, b, e), Max(2 * n + 1, mid, hi, b, e)});
  }

  std::vector<uint64_t> cuts_;
  size_t size_ = 1;
  std::vector<uint32_t> whole_, max_;
};

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_PLAN_RANGE_MAX_H_
