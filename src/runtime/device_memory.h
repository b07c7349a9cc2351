// Device memory of the executor: buffers with their memory, the frame I/O
// buffers (mapped directly or through staging buffers), and the one-time
// upload of constant data (the weights) into device-local memory.
#ifndef OAAXVK_RUNTIME_DEVICE_MEMORY_H_
#define OAAXVK_RUNTIME_DEVICE_MEMORY_H_

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/buffer_blocks.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

// One VkBuffer bound to its own VkDeviceMemory. Owned by whoever holds it and
// freed with DestroyBuffer; a default Buffer owns nothing.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // the whole allocation, when created with map = true
  VkDeviceSize size = 0;   // bytes allocated (the request rounded up to 16, at least 16)
};

// Every buffer a shader binds: storage buffers, and uniform texel buffers for
// kernels with texel-buffer bindings (feature texel_bindings).
constexpr VkBufferUsageFlags kShaderBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;

// Creates `*out` of at least `size` bytes (rounded up to 16: texel views cover
// whole 16-byte texels, and Vulkan forbids empty buffers) in a memory type
// with all of `required` and as many of `preferred` as available, mapped
// when `map`. `what` names the buffer in errors. On failure `*out` may hold
// some handles: the caller still frees it with DestroyBuffer.
Status CreateBuffer(VkContext* ctx, VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                    VkMemoryPropertyFlags preferred, bool map, const char* what, Buffer* out);

// Unmaps and frees whatever `*b` holds and resets it; safe on a default Buffer.
void DestroyBuffer(VkDevice dev, Buffer* b);

// A frame's input or output buffer of `size` bytes: `*device` (bound by the
// shaders) and the host pointer `*host` the host reads or writes. Direct when
// device-local memory is host-visible (UMA, CPU drivers; for inputs also a
// discrete GPU's resizable BAR), for outputs also host-cached (the host reads
// them: uncached BAR reads run at tens of MB/s), and `force_staging` is off:
// then `*host` maps `*device` and `*stage` stays
// empty. Otherwise `*device` is device-local and `*host` maps the
// host-visible `*stage`, which the recorded commands copy from (inputs) or to
// (outputs). Both buffers are the caller's to free.
Status CreateIoBuffer(VkContext* ctx, VkDeviceSize size, bool is_input, bool force_staging, const char* what,
                      Buffer* device, Buffer* stage, uint8_t** host);

// Creates the device-local `*buffer` of `n` bytes and copies `bytes` into it
// through a staging buffer (one submit on `pool`'s queue, waited for); `what`
// names the buffer in errors ("weights", "weights_f16"). The caller frees
// `*buffer`, also on failure.
Status UploadBuffer(VkContext* ctx, VkCommandPool pool, const uint8_t* bytes, VkDeviceSize n, Buffer* buffer,
                    const char* what);

// One bundle buffer kind (the weights, their fp16 copies, an arena) in one or
// more device-local VkBuffers (buffer_blocks.h): buffers[i] holds bytes
// [blocks[i].begin, blocks[i].end) of the bundle's buffer.
struct BlockedBuffer {
  std::vector<BufferBlock> blocks;
  std::vector<Buffer> buffers;
};

// Creates `*out` for a bundle buffer of `total` bytes whose bindings cover
// `ranges`, in buffers of at most `max_bytes` each (PlanBufferBlocks; one buffer
// when it fits), copying `upload + begin` into each through UploadBuffer when
// `upload` is not null (`pool` as there). `what` ("weights", "arena") names
// the buffers in errors and in the info line logged when it takes several.
// The caller frees `*out` with DestroyBlockedBuffer, also on failure.
Status CreateBlockedBuffer(VkContext* ctx, VkCommandPool pool, const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                             uint64_t total, uint64_t max_bytes, const uint8_t* upload, const std::string& what,
                             BlockedBuffer* out);
void DestroyBlockedBuffer(VkDevice dev, BlockedBuffer* b);
// The buffer holding the binding at bundle offset `offset`, and the binding's
// offset in it; VK_NULL_HANDLE when `b` holds no buffer.
std::pair<VkBuffer, uint64_t> LocateBinding(const BlockedBuffer& b, uint64_t offset);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_DEVICE_MEMORY_H_
