#include "runtime/device_memory.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/checked_math.h"
#include "runtime/fault_injection.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {

Status CreateBuffer(VkContext* ctx, VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                    VkMemoryPropertyFlags preferred, bool map, const char* what, Buffer* out) {
  const VkDevice dev = ctx->device();
  // Vulkan forbids zero-sized buffers; bindings are checked against the
  // logical size, so a little slack is harmless.
  // 'v' texel-buffer views (feature texel_bindings) cover whole 16-byte
  // texels, so sizes round up to 16.
  VkDeviceSize alloc = 0;
  if (!CheckedRoundUp(size, 16, &alloc))
    return ResourceExhausted(StrFormat("%s: %llu bytes cannot be allocated (rounding up to 16 bytes overflows)", what,
                                       static_cast<unsigned long long>(size)));
  alloc = std::max<VkDeviceSize>(alloc, 16);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = alloc;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBuffer(dev, &bci, nullptr, &out->buffer), "vkCreateBuffer").WithContext(what));
  out->size = alloc;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, out->buffer, &req);
  int type = ctx->FindMemoryType(req.memoryTypeBits, required, preferred);
  if (type < 0)
    return ResourceExhausted(StrFormat("%s: no memory type with flags 0x%x for a %llu-byte buffer", what, required,
                                       static_cast<unsigned long long>(alloc)));
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkAllocateMemory(dev, &mai, nullptr, &out->memory), "vkAllocateMemory").WithContext(what));
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkBindBufferMemory(dev, out->buffer, out->memory, 0), "vkBindBufferMemory").WithContext(what));
  if (map) {
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkMapMemory(dev, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped), "vkMapMemory").WithContext(what));
  }
  return Status::Ok();
}

void DestroyBuffer(VkDevice dev, Buffer* b) {
  if (b->mapped) vkUnmapMemory(dev, b->memory);
  if (b->buffer) vkDestroyBuffer(dev, b->buffer, nullptr);
  if (b->memory) vkFreeMemory(dev, b->memory, nullptr);
  *b = Buffer();
}

Status CreateIoBuffer(VkContext* ctx, VkDeviceSize size, bool is_input, bool force_staging, const char* what,
                      Buffer* device, Buffer* stage, uint8_t** host) {
  const VkDevice dev = ctx->device();
  const VkBufferUsageFlags usage = kShaderBufferUsage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const VkMemoryPropertyFlags direct =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Direct mapping when device-local memory is host-visible (UMA, CPU drivers,
  // and for inputs ReBAR). An output is read by the host, so it is mapped
  // directly only where that memory is also host-cached: a discrete GPU's
  // resizable BAR is write-combined and uncached, and reading a few MB of it
  // over PCIe took hundreds of ms per frame on an H200 (30 MB/s), where a copy
  // into host-cached staging memory takes a fraction of a millisecond.
  const VkMemoryPropertyFlags direct_needed = is_input ? direct : direct | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  if (!force_staging) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    if (!CheckedRoundUp(size, 16, &bci.size))
      return ResourceExhausted(StrFormat("%s: %llu bytes cannot be allocated (rounding up to 16 bytes overflows)",
                                         what, static_cast<unsigned long long>(size)));
    bci.size = std::max<VkDeviceSize>(bci.size, 16);
    bci.usage = usage;
    VkBuffer probe;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBuffer(dev, &bci, nullptr, &probe), "vkCreateBuffer").WithContext(what));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, probe, &req);
    vkDestroyBuffer(dev, probe, nullptr);
    if (ctx->FindMemoryType(req.memoryTypeBits, direct_needed) >= 0) {
      OAAXVK_RETURN_IF_ERROR(
          CreateBuffer(ctx, size, usage, direct_needed, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, true, what, device));
      *host = static_cast<uint8_t*>(device->mapped);
      return Status::Ok();
    }
  }
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, size, usage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, false, what, device));
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                      is_input ? 0 : VK_MEMORY_PROPERTY_HOST_CACHED_BIT, true, what, stage));
  *host = static_cast<uint8_t*>(stage->mapped);
  return Status::Ok();
}

Status UploadBuffer(VkContext* ctx, VkCommandPool pool, const uint8_t* bytes, VkDeviceSize n, Buffer* buffer,
                    const char* what) {
  const VkDevice dev = ctx->device();
  const std::string buffer_what = StrFormat("%s buffer", what);
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, n, kShaderBufferUsage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
                                      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, false, buffer_what.c_str(), buffer));
  if (n == 0) return Status::Ok();
  const std::string staging_what = StrFormat("%s staging buffer", what);
  Buffer staging;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool maybe_in_use = false;  // submitted, and neither completion nor device loss is known
  Status s = [&]() -> Status {
    OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, n, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                        true, staging_what.c_str(), &staging));
    memcpy(staging.mapped, bytes, n);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(dev, &cai, &cmd), "vkAllocateCommandBuffers"));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
    VkBufferCopy region{0, 0, n};
    vkCmdCopyBuffer(cmd, staging.buffer, buffer->buffer, 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkEndCommandBuffer(cmd), "vkEndCommandBuffer"));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence"));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    OAAXVK_RETURN_IF_ERROR(VkCheck(QueueSubmit(ctx->queue(), 1, &si, fence), "vkQueueSubmit"));
    // No bound: once submitted, the command buffer and the staging buffer
    // may be freed only after the copy completed (or the device is lost,
    // which ends every wait), never while the device may still read them.
    VkResult r = VK_TIMEOUT;
    while (r == VK_TIMEOUT) r = WaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX);
    // Another error (out of memory) says nothing about the copy: the load
    // owns the device exclusively, so waiting for it to go idle settles it.
    if (r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST) {
      const VkResult idle = vkDeviceWaitIdle(dev);
      maybe_in_use = idle != VK_SUCCESS && idle != VK_ERROR_DEVICE_LOST;
    }
    return VkCheck(r, "vkWaitForFences");
  }();
  if (maybe_in_use) {  // leaked rather than freed while the device may read it
    Log(LogLevel::kError, StrFormat("uploading %s: the copy's completion is unknown; its staging buffer and command "
                                    "buffer are not freed (the device may still read them)", what));
    return s.WithContext(StrFormat("uploading %s", what));
  }
  if (fence) vkDestroyFence(dev, fence, nullptr);
  if (cmd) vkFreeCommandBuffers(dev, pool, 1, &cmd);
  DestroyBuffer(dev, &staging);
  return s.WithContext(StrFormat("uploading %s", what));
}

Status CreateBlockedBuffer(VkContext* ctx, VkCommandPool pool, const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                             uint64_t total, uint64_t max_bytes, const uint8_t* upload, const std::string& what,
                             BlockedBuffer* out) {
  OAAXVK_ASSIGN_OR_RETURN(out->blocks, PlanBufferBlocks(ranges, total, max_bytes, what + " buffer"));
  const size_t n = out->blocks.size();
  out->buffers.resize(n);
  if (n > 1)
    Log(LogLevel::kInfo, StrFormat("%s (%llu bytes) in %zu buffers of at most %llu bytes (the device's allocation "
                                   "limit), cut between bindings", what.c_str(), static_cast<unsigned long long>(total),
                                   n, static_cast<unsigned long long>(max_bytes)));
  for (size_t i = 0; i < n; ++i) {
    const BufferBlock& g = out->blocks[i];
    const std::string name =
        n == 1 ? what
               : StrFormat("%s part %zu of %zu (bytes [%llu, %llu))", what.c_str(), i + 1, n,
                           static_cast<unsigned long long>(g.begin), static_cast<unsigned long long>(g.end));
    if (upload != nullptr) {
      OAAXVK_RETURN_IF_ERROR(UploadBuffer(ctx, pool, upload + g.begin, g.end - g.begin, &out->buffers[i], name.c_str()));
    } else {
      const std::string buffer_name = name + " buffer";
      // Transfer source too: a segment program's reads copy arena elements to the host.
      OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, g.end - g.begin, kShaderBufferUsage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, false, buffer_name.c_str(),
                                          &out->buffers[i]));
    }
  }
  return Status::Ok();
}

void DestroyBlockedBuffer(VkDevice dev, BlockedBuffer* b) {
  for (Buffer& x : b->buffers) DestroyBuffer(dev, &x);
  *b = BlockedBuffer();
}

std::pair<VkBuffer, uint64_t> LocateBinding(const BlockedBuffer& b, uint64_t offset) {
  if (b.buffers.empty()) return {VK_NULL_HANDLE, offset};
  const size_t i = BlockOf(b.blocks, offset);
  return {b.buffers[i].buffer, offset - b.blocks[i].begin};
}

}  // namespace oaaxvk::runtime
