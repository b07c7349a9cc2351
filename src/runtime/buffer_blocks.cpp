#include "runtime/buffer_blocks.h"

#include <algorithm>

namespace oaaxvk::runtime {

namespace {
// Bytes a block of `n` bytes allocates (Executor::CreateBuffer rounds up to
// 16, and never allocates 0). Bundle sizes are at most 2^48: no overflow.
uint64_t Allocated(uint64_t n) { return std::max<uint64_t>((n + 15) / 16 * 16, 16); }
}  // namespace

StatusOr<std::vector<BufferBlock>> PlanBufferBlocks(const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                            uint64_t total, uint64_t max_bytes, const std::string& what) {
  if (Allocated(total) <= max_bytes) return std::vector<BufferBlock>{BufferBlock{0, total}};
  // Overlapping bindings must share a block: merge them into components.
  std::vector<std::pair<uint64_t, uint64_t>> sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  std::vector<BufferBlock> components;
  for (const auto& [begin, end] : sorted) {
    if (!components.empty() && begin < components.back().end)
      components.back().end = std::max(components.back().end, end);
    else
      components.push_back(BufferBlock{begin, end});
  }
  std::vector<BufferBlock> blocks;
  for (const BufferBlock& c : components) {
    if (Allocated(c.end - c.begin) > max_bytes)
      return Unimplemented(StrFormat(
          "%s: bytes [%llu, %llu) are bound by one binding or by overlapping bindings and must lie in one buffer, "
          "but %llu bytes are "
          "over the %llu bytes one buffer may take; the model needs a device with a larger maxMemoryAllocationSize "
          "(or a bundle converted with a smaller config.json \"limits\" max_binding_bytes)",
          what.c_str(), static_cast<unsigned long long>(c.begin), static_cast<unsigned long long>(c.end),
          static_cast<unsigned long long>(c.end - c.begin), static_cast<unsigned long long>(max_bytes)));
    if (!blocks.empty() && Allocated(c.end - blocks.back().begin) <= max_bytes)
      blocks.back().end = c.end;
    else
      blocks.push_back(c);
  }
  return blocks;
}

size_t BlockOf(const std::vector<BufferBlock>& blocks, uint64_t offset) {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), offset,
                             [](uint64_t o, const BufferBlock& s) { return o < s.begin; });
  return it == blocks.begin() ? 0 : static_cast<size_t>(it - blocks.begin()) - 1;
}

}  // namespace oaaxvk::runtime
