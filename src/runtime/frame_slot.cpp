#include "runtime/frame_slot.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

// Descriptor type of a binding-type letter (Kernel::binding_types).
VkDescriptorType DescriptorType(char t) {
  return t == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

}  // namespace

Status CreateDescriptorPool(VkDevice dev, const Bundle& bundle, uint32_t frames,
                            VkDescriptorSetLayout params_layout, VkDescriptorPool* pool) {
  *pool = VK_NULL_HANDLE;
  const size_t nd = bundle.dispatches.size();
  if (nd > 0) {
    uint64_t storage = 0, texel = 0;
    for (const Dispatch& d : bundle.dispatches)
      for (char t : bundle.kernels[d.kernel].binding_types) (t == 's' ? storage : texel) += 1;
    // Every count below is a uint32 (at most 2^20 dispatches of at most 1024
    // bindings, times 16 frames, may not fit).
    if ((storage + texel + 1) * frames > UINT32_MAX || (nd + 1) * frames > UINT32_MAX)
      return ResourceExhausted(StrFormat("'%s': %llu descriptors in %zu dispatches for each of %u frame slots exceed "
                                         "what one descriptor pool can hold (2^32 - 1); use fewer frames_in_flight",
                                         bundle.path.c_str(), static_cast<unsigned long long>(storage + texel), nd,
                                         frames));
    std::vector<VkDescriptorPoolSize> ps;
    if (storage > 0 || texel == 0)
      ps.push_back({VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(std::max<uint64_t>(storage * frames, 1))});
    if (texel > 0) ps.push_back({VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, static_cast<uint32_t>(texel * frames)});
    if (params_layout) ps.push_back({VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, frames});
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = static_cast<uint32_t>(nd * frames + (params_layout ? frames : 0));
    dpi.poolSizeCount = static_cast<uint32_t>(ps.size());
    dpi.pPoolSizes = ps.data();
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorPool(dev, &dpi, nullptr, pool), "vkCreateDescriptorPool"));
  }
  return Status::Ok();
}

Status CreateFrameSlot(VkContext* ctx, const FrameSlotConfig& config, const std::string& where, FrameSlot* slot) {
  FrameSlot& s = *slot;
  const VkDevice dev = ctx->device();
  const Bundle& bundle = *config.bundle;
  const size_t nd = bundle.dispatches.size();
  OAAXVK_RETURN_IF_ERROR(CreateBlockedBuffer(ctx, VK_NULL_HANDLE, BoundRanges(bundle, kArena),
                                               bundle.buffer_bytes[kArena], config.max_allocation_bytes, nullptr,
                                               "arena", &s.arena)
                             .WithContext(where));
  OAAXVK_RETURN_IF_ERROR(CreateIoBuffer(ctx, bundle.buffer_bytes[kInputs], true, config.force_staging_inputs,
                                        "inputs buffer", &s.in, &s.in_stage, &s.host_in)
                             .WithContext(where));
  OAAXVK_RETURN_IF_ERROR(CreateIoBuffer(ctx, bundle.buffer_bytes[kOutputs], false, config.force_staging_outputs,
                                        "outputs buffer", &s.out, &s.out_stage, &s.host_out)
                             .WithContext(where));
  s.in_staged = s.in_stage.buffer != VK_NULL_HANDLE;
  s.out_staged = s.out_stage.buffer != VK_NULL_HANDLE;
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(dev, &fci, nullptr, &s.fence), "vkCreateFence").WithContext(where));
  if (config.profiling && nd > 0) {
    VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = static_cast<uint32_t>(2 * nd);
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateQueryPool(dev, &qpi, nullptr, &s.queries), "vkCreateQueryPool").WithContext(where));
  }
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = ctx->queue_family();
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkCreateCommandPool(dev, &cpi, nullptr, &s.pool), "vkCreateCommandPool").WithContext(where));
  if (nd > 0) {
    std::vector<VkDescriptorSetLayout> layouts(nd);
    for (size_t i = 0; i < nd; ++i) layouts[i] = config.pipelines->set_layout(bundle.dispatches[i].kernel);
    s.sets.resize(nd);
    VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = config.descriptor_pool;
    dai.descriptorSetCount = static_cast<uint32_t>(nd);
    dai.pSetLayouts = layouts.data();
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateDescriptorSets(dev, &dai, s.sets.data()), "vkAllocateDescriptorSets")
                               .WithContext(where));
    // weights_f16 holds no buffer unless a chosen row binds kind 4 (then it does).
    auto place = [&](const Binding& bd) -> std::pair<VkBuffer, uint64_t> {
      switch (bd.kind) {
        case kWeights: return LocateBinding(*config.weights, bd.offset);
        case kArena: return LocateBinding(s.arena, bd.offset);
        case kInputs: return {s.in.buffer, bd.offset};
        case kOutputs: return {s.out.buffer, bd.offset};
        default: return LocateBinding(*config.weights_f16, bd.offset);
      }
    };
    std::vector<VkDescriptorBufferInfo> infos;
    std::vector<VkWriteDescriptorSet> writes;
    infos.reserve(bundle.bindings.size() + 1);
    for (size_t i = 0; i < nd; ++i) {
      const Dispatch& d = bundle.dispatches[i];
      for (uint32_t b = 0; b < d.n_bindings; ++b) {
        const Binding& bd = bundle.bindings[d.first_binding + b];
        const auto [buffer, offset] = place(bd);
        infos.push_back({buffer, offset, bd.size});
      }
    }
    // Feature texel_bindings: one buffer view per distinct (buffer, offset,
    // format, range) of the slot, so a binding row read with two formats
    // has two views; s.views (a deque) keeps pTexelBufferView stable.
    std::map<std::tuple<uint32_t, uint64_t, char, uint64_t>, size_t> view_index;
    size_t k = 0;
    for (size_t i = 0; i < nd; ++i) {
      const Dispatch& d = bundle.dispatches[i];
      const std::string& types = bundle.kernels[d.kernel].binding_types;
      for (uint32_t b = 0; b < d.n_bindings; ++b, ++k) {
        VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = s.sets[i];
        w.dstBinding = b;
        w.descriptorCount = 1;
        w.descriptorType = DescriptorType(types[b]);
        w.pBufferInfo = &infos[k];
        if (types[b] != 's') {
          const Binding& bd = bundle.bindings[d.first_binding + b];
          const uint64_t range = TexelViewBytes(types[b], bd.size);
          auto key = std::make_tuple(bd.kind, bd.offset, types[b], range);
          auto it = view_index.find(key);
          if (it == view_index.end()) {
            VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
            const auto [buffer, offset] = place(bd);
            vi.buffer = buffer;
            vi.format = types[b] == 'v'   ? VK_FORMAT_R32G32B32A32_SFLOAT
                        : types[b] == 'u' ? VK_FORMAT_R32_UINT
                                          : VK_FORMAT_R32_SFLOAT;
            vi.offset = offset;
            vi.range = range;
            VkBufferView view;
            OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBufferView(dev, &vi, nullptr, &view), "vkCreateBufferView")
                                       .WithContext(StrFormat("%s, dispatch %zu binding %u", where.c_str(), i, b)));
            s.views.push_back(view);
            it = view_index.emplace(key, s.views.size() - 1).first;
          }
          w.pBufferInfo = nullptr;
          w.pTexelBufferView = &s.views[it->second];
        }
        writes.push_back(w);
      }
    }
    if (!writes.empty()) vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  // Feature parameter_buffer: the frame's parameters (zero for static sizes).
  if (nd > 0 && config.pipelines->params_layout()) {
    OAAXVK_RETURN_IF_ERROR(CreateBuffer(ctx, 4 * kParamSlots, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true, "parameter buffer", &s.params)
                               .WithContext(where));
    memset(s.params.mapped, 0, 4 * kParamSlots);
    VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = config.descriptor_pool;
    dai.descriptorSetCount = 1;
    const VkDescriptorSetLayout params_layout = config.pipelines->params_layout();
    dai.pSetLayouts = &params_layout;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkAllocateDescriptorSets(dev, &dai, &s.params_set), "vkAllocateDescriptorSets").WithContext(where));
    VkDescriptorBufferInfo info{s.params.buffer, 0, 4 * kParamSlots};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = s.params_set;
    w.dstBinding = 0;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    w.pBufferInfo = &info;
    vkUpdateDescriptorSets(dev, 1, &w, 0, nullptr);
  }
  return Status::Ok();
}

void DestroyFrameSlot(VkDevice dev, FrameSlot* s) {
  s->recordings.clear();  // their command buffers go with the pool, their pipelines with their owner
  s->current = nullptr;
  if (s->pool) vkDestroyCommandPool(dev, s->pool, nullptr);
  s->pool = VK_NULL_HANDLE;
  DestroyBlockedBuffer(dev, &s->arena);
  DestroyBuffer(dev, &s->in);
  DestroyBuffer(dev, &s->out);
  DestroyBuffer(dev, &s->in_stage);
  DestroyBuffer(dev, &s->out_stage);
  DestroyBuffer(dev, &s->params);
  if (s->fence) vkDestroyFence(dev, s->fence, nullptr);
  s->fence = VK_NULL_HANDLE;
  if (s->queries) vkDestroyQueryPool(dev, s->queries, nullptr);
  s->queries = VK_NULL_HANDLE;
  for (VkBufferView v : s->views) vkDestroyBufferView(dev, v, nullptr);
  s->views.clear();
}

}  // namespace oaaxvk::runtime
