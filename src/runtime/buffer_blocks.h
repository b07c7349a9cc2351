// Placement of one bundle buffer (the weights, their fp16 copies, the arena)
// in several VkBuffers when it is larger than one allocation may be.
//
// A bundle addresses each buffer kind as one byte range [0, N)
// (docs/bundle-format.md, "Buffers"), but a device allocates at most
// maxMemoryAllocationSize bytes at once (1 GiB on SwiftShader) and no more
// than its largest heap. A binding only needs its own bytes to be contiguous
// in one VkBuffer, so the buffer is cut into blocks between bindings:
// every binding lies in exactly one block, and a binding that overlaps
// another (the arena reuses bytes across lifetimes) lies in the same block
// as it. Bytes no binding covers need no device memory.
#ifndef OAAXVK_RUNTIME_BUFFER_BLOCKS_H_
#define OAAXVK_RUNTIME_BUFFER_BLOCKS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

// Bytes [begin, end) of the bundle buffer held by one VkBuffer; a binding at
// bundle offset o is at o - begin in it. `begin` is a binding offset (a
// multiple of 256, so alignments carry over) or 0.
struct BufferBlock {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Cuts a buffer of `total` bytes whose bindings cover `ranges` ([offset,
// offset + size) each, inside [0, total)) into blocks of at most
// `max_bytes` bytes each (after rounding up to 16 bytes, as buffers are
// allocated). The result is ordered by `begin`, disjoint, and covers every
// range; it is the single block [0, total) when that fits. Fails, naming
// `what`, the bytes and the limit, when overlapping bindings alone span more
// than `max_bytes` (no cut fits them).
StatusOr<std::vector<BufferBlock>> PlanBufferBlocks(const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                            uint64_t total, uint64_t max_bytes, const std::string& what);

// Index of the block holding bundle offset `offset` (a binding's start).
size_t BlockOf(const std::vector<BufferBlock>& blocks, uint64_t offset);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_BUFFER_BLOCKS_H_
