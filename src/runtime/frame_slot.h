// A frame slot: the per-frame resources of an executor (arena, input and
// output buffers, descriptor sets, parameter buffer, command pool and the
// command buffers recorded for it, fence, timestamp queries). Each slot is
// owned by one thread at a time, as the frame queue says.
#ifndef OAAXVK_RUNTIME_FRAME_SLOT_H_
#define OAAXVK_RUNTIME_FRAME_SLOT_H_

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/device_memory.h"
#include "runtime/pipelines.h"
#include "runtime/recording.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

struct FrameSlot {
  BlockedBuffer arena;  // several VkBuffers when over the allocation limit
  Buffer in, out, in_stage, out_stage;
  // Each direction is staged on its own: on a discrete GPU with a resizable
  // BAR the inputs are mapped directly and the outputs staged.
  bool in_staged = false;   // inputs go through in_stage (copied to `in` at the frame's start)
  bool out_staged = false;  // outputs go through out_stage (copied from `out` at the frame's end)
  std::vector<VkDescriptorSet> sets;  // by dispatch (set 0)
  // Feature parameter_buffer: the frame's parameter buffer (host-visible
  // uniform buffer of kParamSlots words, written before each submit) and the
  // descriptor set (set 1) that binds it.
  Buffer params;
  VkDescriptorSet params_set = VK_NULL_HANDLE;
  // Texel-buffer bindings (feature texel_bindings): a deque, because the
  // descriptor writes point at its elements while more views are added.
  std::deque<VkBufferView> views;
  // The slot's own command pool: only the thread that owns the slot
  // (filling it) allocates, records or frees its command buffers.
  VkCommandPool pool = VK_NULL_HANDLE;
  // Most recently used first; static bundles: exactly one, recorded at load.
  std::list<Recording> recordings;
  Recording* current = nullptr;  // what the slot's frame runs (valid until the slot is filled again)
  VkFence fence = VK_NULL_HANDLE;
  // Waiting for the fence failed (not a timeout, not a device loss): the
  // frame was reported failed, but the slot's buffers are reused only once
  // the fence is seen signaled.
  bool fence_unconfirmed = false;
  VkQueryPool queries = VK_NULL_HANDLE;  // profile: 2 timestamps per dispatch
  uint8_t* host_in = nullptr;   // where the host writes inputs
  uint8_t* host_out = nullptr;  // where the host reads outputs
};

// The descriptor pool every slot's sets come from: `frames` slots of the
// bundle's dispatches (plus one parameter-buffer set per slot when
// `params_layout` exists). VK_NULL_HANDLE (and OK) for a bundle without
// dispatches. Fails when the counts exceed what one pool can hold.
Status CreateDescriptorPool(VkDevice dev, const Bundle& bundle, uint32_t frames,
                            VkDescriptorSetLayout params_layout, VkDescriptorPool* pool);

// What every slot of one executor shares.
struct FrameSlotConfig {
  const Bundle* bundle = nullptr;
  const Pipelines* pipelines = nullptr;  // layouts of the sets
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  const BlockedBuffer* weights = nullptr;
  const BlockedBuffer* weights_f16 = nullptr;  // holds no buffer unless a chosen row binds kind 4
  // The most bytes one VkBuffer may take (the arena is cut between its
  // bindings beyond it): min(maxMemoryAllocationSize, the largest heap).
  uint64_t max_allocation_bytes = UINT64_MAX;
  bool force_staging_inputs = false;   // test knob (force_staging): staged even where direct mapping works
  bool force_staging_outputs = false;
  bool profiling = false;  // a timestamp query pool per slot
};

// Creates the resources of `*s` (nothing recorded yet); `where` ("frame slot
// 0") prefixes errors. On failure `*s` may hold some resources: the caller
// frees it with DestroyFrameSlot.
Status CreateFrameSlot(VkContext* ctx, const FrameSlotConfig& config, const std::string& where, FrameSlot* s);

// Frees everything `*s` holds (no frame of it may be in flight); its
// recordings' pipelines are not released (their owner destroys them all).
void DestroyFrameSlot(VkDevice dev, FrameSlot* s);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_FRAME_SLOT_H_
