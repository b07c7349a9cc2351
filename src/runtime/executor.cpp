#include "runtime/executor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include <unistd.h>

#include "runtime/checked_math.h"
#include "runtime/fault_injection.h"
#include "runtime/log.h"

namespace oaaxvk::runtime {

namespace {

using Clock = std::chrono::steady_clock;

std::string Shape(const size_t* s, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) out += StrFormat("%s%zu", i ? ", " : "", s[i]);
  return out + "]";
}

std::string Shape(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += StrFormat("%s%llu", i ? ", " : "", static_cast<unsigned long long>(s[i]));
  return out + "]";
}

uint64_t RemainingNs(Clock::time_point deadline) {
  auto now = Clock::now();
  if (now >= deadline) return 0;
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count());
}

// The sticky status of a lost device: what failed, and what the host does next.
Status DeviceLost(VkResult r, const char* call) {
  return Unavailable(VkCheck(r, call).message() +
                     "; every later call fails: call runtime_destruction, then runtime_initialization and "
                     "runtime_model_loading");
}

}  // namespace

namespace {
// Every buffer a shader binds: storage buffers, and uniform texel buffers for
// kernels with texel-buffer bindings (feature texel_bindings).
constexpr VkBufferUsageFlags kShaderBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;

// Descriptor type of a binding-type letter (Kernel::binding_types).
VkDescriptorType DescriptorType(char t) {
  return t == 's' ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}
}  // namespace

Executor::Executor(VkContext* ctx, Bundle bundle, const ExecutorOptions& options)
    : ctx_(ctx), dev_(ctx->device()), bundle_(std::move(bundle)), options_(options) {}

StatusOr<std::unique_ptr<Executor>> Executor::Create(VkContext* ctx, Bundle bundle, const ExecutorOptions& options) {
  // Device limits first: nothing is allocated for a bundle the device cannot run.
  const VkPhysicalDeviceLimits& lim = ctx->properties().limits;
  DeviceLimits dl;
  dl.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    dl.max_workgroup_size[i] = lim.maxComputeWorkGroupSize[i];
    dl.max_workgroup_count[i] = lim.maxComputeWorkGroupCount[i];
  }
  dl.max_shared_memory_bytes = lim.maxComputeSharedMemorySize;
  dl.max_storage_buffer_range = lim.maxStorageBufferRange;
  dl.shader_float16 = ctx->shader_float16();
  dl.storage_buffer_16bit = ctx->storage_buffer_16bit();
  dl.max_storage_buffers_per_stage = lim.maxPerStageDescriptorStorageBuffers;
  dl.max_texel_buffer_elements = lim.maxTexelBufferElements;
  dl.min_texel_buffer_offset_alignment = lim.minTexelBufferOffsetAlignment;
  dl.max_sampled_images_per_stage = lim.maxPerStageDescriptorSampledImages;
  dl.max_memory_allocation_size = MaxAllocationBytes(ctx->max_memory_allocation_size());
  dl.max_heap_bytes = 0;
  for (uint32_t h = 0; h < ctx->memory_properties().memoryHeapCount; ++h)
    dl.max_heap_bytes = std::max<uint64_t>(dl.max_heap_bytes, ctx->memory_properties().memoryHeaps[h].size);
  dl.capabilities = ctx->capabilities();
  dl.device_name = ctx->device_name();
  // Features kernel_variants / device_variants: choose the dispatch rows
  // before anything is checked or created for them.
  const VariantSelection sel = SelectKernelVariant(
      &bundle, options.kernel_variant, ctx->properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU, dl,
      options.fp16_weights);
  if (!sel.unknown_capabilities.empty()) {
    std::string known;
    for (const std::string& c : kKnownCapabilities) known += (known.empty() ? "" : ", ") + c;
    for (const std::string& c : sel.unknown_capabilities)
      Log(LogLevel::kWarn, StrFormat("'%s': kernels require capability '%s', which this runtime does not know (it "
                                     "knows %s); their rows keep the default kernel",
                                     bundle.path.c_str(), c.c_str(), known.c_str()));
  }
  if (sel.bundle_has_variants) {
    std::string kept;
    if (sel.kept_default() > 0) {
      std::string reasons;
      if (sel.kept_texel > 0)
        reasons = StrFormat("%zu for a texel-buffer binding beyond maxTexelBufferElements = %u or its alignment",
                            sel.kept_texel, dl.max_texel_buffer_elements);
      if (sel.kept_capability > 0) {
        std::string caps;
        for (const auto& kv : sel.missing_capabilities)
          caps += StrFormat("%s%s (%zu row%s)", caps.empty() ? "" : ", ", kv.first.c_str(), kv.second,
                            kv.second == 1 ? "" : "s");
        reasons += StrFormat("%s%zu for capabilities the device lacks: %s", reasons.empty() ? "" : "; ",
                             sel.kept_capability, caps.c_str());
      }
      if (sel.kept_fp16_off > 0)
        reasons += StrFormat("%s%zu for fp16 weights, which need the runtime argument fp16_weights=1",
                             reasons.empty() ? "" : "; ", sel.kept_fp16_off);
      kept = StrFormat(" (%zu of %zu rows keep the default kernel: %s)", sel.kept_default(), bundle.dispatches.size(),
                       reasons.c_str());
    }
    Log(LogLevel::kInfo, StrFormat("'%s': running the %s kernel variants on '%s'%s", bundle.path.c_str(), sel.table,
                                   dl.device_name.c_str(), kept.c_str()));
  }
  OAAXVK_RETURN_IF_ERROR(CheckDeviceLimits(bundle, dl));

  std::unique_ptr<Executor> e(new Executor(ctx, std::move(bundle), options));
  e->alloc_limit_ = std::min(dl.max_memory_allocation_size, dl.max_heap_bytes);
  OAAXVK_RETURN_IF_ERROR(e->Init());
  return e;
}

Status Executor::Init() {
  dynamic_ = bundle_.shape.dynamic();
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = ctx_->queue_family();
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateCommandPool(dev_, &cpi, nullptr, &cmd_pool_), "vkCreateCommandPool"));
  OAAXVK_RETURN_IF_ERROR(CreateSegmented(kWeights, bundle_.weights, "weights", &weights_));
  // Feature device_variants: the fp16 copies only when a chosen row reads them.
  if (DispatchesBindKind(bundle_, kWeightsF16))
    OAAXVK_RETURN_IF_ERROR(CreateSegmented(kWeightsF16, bundle_.weights_f16, "weights_f16", &weights_f16_));
  OAAXVK_RETURN_IF_ERROR(CreatePipelines());
  if (options_.profile) SetUpProfiling();
  OAAXVK_RETURN_IF_ERROR(CreateSlots());
  queue_ = std::make_unique<FrameQueue>(slots_.size(), options_.timeout_ms,
                                        [this](size_t slot, uint64_t seq, uint64_t timeout_ns) {
                                          return Harvest(slot, seq, timeout_ns);
                                        });
  if (options_.warmup) OAAXVK_RETURN_IF_ERROR(WarmUp());
  Log(LogLevel::kInfo, StrFormat("loaded '%s' (model '%s', producer '%s'): %zu inputs, %zu outputs, %zu kernels, "
                                 "%zu dispatches, %zu pipelines, %zu frame slots%s%s%s",
                                 bundle_.path.c_str(), bundle_.model_name.c_str(), bundle_.producer.c_str(),
                                 bundle_.inputs.size(), bundle_.outputs.size(), bundle_.kernels.size(),
                                 bundle_.dispatches.size(), pipelines_.size(), slots_.size(),
                                 !slots_.empty() && slots_[0].staged ? ", staged I/O" : "",
                                 !weights_f16_.buffers.empty() ? ", fp16 weight copies uploaded" : "",
                                 profiling_ ? ", profiling every dispatch" : ""));
  if (dynamic_) {
    std::string symbols;
    for (const ShapeSymbol& y : bundle_.shape.symbols)
      symbols += StrFormat("%s%s %s", symbols.empty() ? "" : ", ", y.name.c_str(), y.RangeString().c_str());
    const size_t specialized = static_cast<size_t>(std::count(dynamic_spec_.begin(), dynamic_spec_.end(), true));
    Log(LogLevel::kInfo, StrFormat("'%s': dynamic shapes: %s; %zu of %zu dispatches specialized per shape, %u sizes "
                                   "in the parameter buffer; each frame slot keeps the command buffers of %u shapes "
                                   "(shape_cache_size)",
                                   bundle_.path.c_str(), symbols.c_str(), specialized, bundle_.dispatches.size(),
                                   bundle_.shape.params, options_.shape_cache_size));
  }
  return Status::Ok();
}

void Executor::SetUpProfiling() {
  if (!LogEnabled(LogLevel::kInfo)) {
    Log(LogLevel::kWarn, "profile=1 is ignored: the profile is logged at info level and log_level is above 2");
    return;
  }
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx_->physical_device(), &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx_->physical_device(), &n, families.data());
  const uint32_t family = ctx_->queue_family();
  const uint32_t bits = family < n ? families[family].timestampValidBits : 0;
  const float period = ctx_->properties().limits.timestampPeriod;
  if (bits == 0 || !(period > 0.0f)) {
    Log(LogLevel::kWarn, StrFormat("profile=1: profiling is unavailable on '%s': queue family %u has "
                                   "timestampValidBits = %u (timestampPeriod %g ns); running without it",
                                   ctx_->device_name().c_str(), family, bits, static_cast<double>(period)));
    return;
  }
  profiling_ = true;
  timestamp_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  timestamp_period_ns_ = static_cast<double>(period);
}

Status Executor::CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred, bool map, const char* what, Buffer* out) {
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
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBuffer(dev_, &bci, nullptr, &out->buffer), "vkCreateBuffer").WithContext(what));
  out->size = alloc;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev_, out->buffer, &req);
  int type = ctx_->FindMemoryType(req.memoryTypeBits, required, preferred);
  if (type < 0)
    return ResourceExhausted(StrFormat("%s: no memory type with flags 0x%x for a %llu-byte buffer", what, required,
                                       static_cast<unsigned long long>(alloc)));
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkAllocateMemory(dev_, &mai, nullptr, &out->memory), "vkAllocateMemory").WithContext(what));
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkBindBufferMemory(dev_, out->buffer, out->memory, 0), "vkBindBufferMemory").WithContext(what));
  if (map) {
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkMapMemory(dev_, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped), "vkMapMemory").WithContext(what));
  }
  return Status::Ok();
}

void Executor::DestroyBuffer(Buffer* b) {
  if (b->mapped) vkUnmapMemory(dev_, b->memory);
  if (b->buffer) vkDestroyBuffer(dev_, b->buffer, nullptr);
  if (b->memory) vkFreeMemory(dev_, b->memory, nullptr);
  *b = Buffer();
}

Status Executor::CreateIoBuffer(VkDeviceSize size, bool is_input, const char* what, Slot* slot) {
  Buffer* dev_buf = is_input ? &slot->in : &slot->out;
  Buffer* stage = is_input ? &slot->in_stage : &slot->out_stage;
  const VkBufferUsageFlags usage = kShaderBufferUsage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const VkMemoryPropertyFlags direct =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Direct mapping when device-local memory is host-visible (UMA, ReBAR, CPU drivers).
  if (!options_.force_staging) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    if (!CheckedRoundUp(size, 16, &bci.size))
      return ResourceExhausted(StrFormat("%s: %llu bytes cannot be allocated (rounding up to 16 bytes overflows)",
                                         what, static_cast<unsigned long long>(size)));
    bci.size = std::max<VkDeviceSize>(bci.size, 16);
    bci.usage = usage;
    VkBuffer probe;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBuffer(dev_, &bci, nullptr, &probe), "vkCreateBuffer").WithContext(what));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev_, probe, &req);
    vkDestroyBuffer(dev_, probe, nullptr);
    if (ctx_->FindMemoryType(req.memoryTypeBits, direct) >= 0) {
      OAAXVK_RETURN_IF_ERROR(CreateBuffer(size, usage, direct, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, true, what, dev_buf));
      (is_input ? slot->host_in : slot->host_out) = static_cast<uint8_t*>(dev_buf->mapped);
      return Status::Ok();
    }
  }
  slot->staged = true;
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(size, usage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, false, what, dev_buf));
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                      is_input ? 0 : VK_MEMORY_PROPERTY_HOST_CACHED_BIT, true, what, stage));
  (is_input ? slot->host_in : slot->host_out) = static_cast<uint8_t*>(stage->mapped);
  return Status::Ok();
}

Status Executor::CreateSegmented(uint32_t kind, const uint8_t* upload, const char* what, SegmentedBuffer* out) {
  OAAXVK_ASSIGN_OR_RETURN(out->segments, PlanSegments(BoundRanges(bundle_, kind), bundle_.buffer_bytes[kind],
                                                      alloc_limit_, StrFormat("%s buffer", what)));
  out->buffers.resize(out->segments.size());
  const size_t n = out->segments.size();
  if (n > 1)
    Log(LogLevel::kInfo, StrFormat("'%s': %s (%llu bytes) in %zu buffers of at most %llu bytes (the device's "
                                   "allocation limit), cut between bindings", bundle_.path.c_str(), what,
                                   static_cast<unsigned long long>(bundle_.buffer_bytes[kind]), n,
                                   static_cast<unsigned long long>(alloc_limit_)));
  for (size_t i = 0; i < n; ++i) {
    const Segment& g = out->segments[i];
    const std::string name =
        n == 1 ? std::string(what)
               : StrFormat("%s part %zu of %zu (bytes [%llu, %llu))", what, i + 1, n,
                           static_cast<unsigned long long>(g.begin), static_cast<unsigned long long>(g.end));
    if (upload != nullptr) {
      OAAXVK_RETURN_IF_ERROR(UploadBuffer(upload + g.begin, g.end - g.begin, &out->buffers[i], name.c_str()));
    } else {
      const std::string buffer_name = name + " buffer";
      OAAXVK_RETURN_IF_ERROR(CreateBuffer(g.end - g.begin, kShaderBufferUsage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                          false, buffer_name.c_str(), &out->buffers[i]));
    }
  }
  return Status::Ok();
}

void Executor::DestroySegmented(SegmentedBuffer* b) {
  for (Buffer& x : b->buffers) DestroyBuffer(&x);
  *b = SegmentedBuffer();
}

std::pair<VkBuffer, uint64_t> Executor::Locate(const SegmentedBuffer& b, uint64_t offset) {
  if (b.buffers.empty()) return {VK_NULL_HANDLE, offset};
  const size_t i = SegmentOf(b.segments, offset);
  return {b.buffers[i].buffer, offset - b.segments[i].begin};
}

Status Executor::UploadBuffer(const uint8_t* bytes, VkDeviceSize n, Buffer* buffer, const char* what) {
  const std::string buffer_what = StrFormat("%s buffer", what);
  OAAXVK_RETURN_IF_ERROR(CreateBuffer(n, kShaderBufferUsage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
                                      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, false, buffer_what.c_str(), buffer));
  if (n == 0) return Status::Ok();
  const std::string staging_what = StrFormat("%s staging buffer", what);
  Buffer staging;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool maybe_in_use = false;  // submitted, and neither completion nor device loss is known
  Status s = [&]() -> Status {
    OAAXVK_RETURN_IF_ERROR(CreateBuffer(n, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                        true, staging_what.c_str(), &staging));
    memcpy(staging.mapped, bytes, n);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateCommandBuffers(dev_, &cai, &cmd), "vkAllocateCommandBuffers"));
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
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(dev_, &fci, nullptr, &fence), "vkCreateFence"));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    OAAXVK_RETURN_IF_ERROR(VkCheck(QueueSubmit(ctx_->queue(), 1, &si, fence), "vkQueueSubmit"));
    // No bound: once submitted, the command buffer and the staging buffer
    // may be freed only after the copy completed (or the device is lost,
    // which ends every wait), never while the device may still read them.
    VkResult r = VK_TIMEOUT;
    while (r == VK_TIMEOUT) r = WaitForFences(dev_, 1, &fence, VK_TRUE, UINT64_MAX);
    // Another error (out of memory) says nothing about the copy: the load
    // owns the device exclusively, so waiting for it to go idle settles it.
    if (r != VK_SUCCESS && r != VK_ERROR_DEVICE_LOST) {
      const VkResult idle = vkDeviceWaitIdle(dev_);
      maybe_in_use = idle != VK_SUCCESS && idle != VK_ERROR_DEVICE_LOST;
    }
    return VkCheck(r, "vkWaitForFences");
  }();
  if (maybe_in_use) {  // leaked rather than freed while the device may read it
    Log(LogLevel::kError, StrFormat("uploading %s: the copy's completion is unknown; its staging buffer and command "
                                    "buffer are not freed (the device may still read them)", what));
    return s.WithContext(StrFormat("uploading %s", what));
  }
  if (fence) vkDestroyFence(dev_, fence, nullptr);
  if (cmd) vkFreeCommandBuffers(dev_, cmd_pool_, 1, &cmd);
  DestroyBuffer(&staging);
  return s.WithContext(StrFormat("uploading %s", what));
}

Status Executor::CreatePipelines() {
  if (!options_.pipeline_cache.empty()) {
    std::vector<uint8_t> data;
    if (FILE* f = fopen(options_.pipeline_cache.c_str(), "rb")) {
      uint8_t buf[65536];
      size_t got;
      while ((got = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + got);
      fclose(f);
    }
    VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    pci.initialDataSize = data.size();
    pci.pInitialData = data.empty() ? nullptr : data.data();
    VkResult r = vkCreatePipelineCache(dev_, &pci, nullptr, &pipeline_cache_);
    if (r != VK_SUCCESS && !data.empty()) {
      Log(LogLevel::kWarn, StrFormat("pipeline cache '%s' rejected (%s); starting empty",
                                     options_.pipeline_cache.c_str(), VkResultName(r)));
      pci.initialDataSize = 0;
      pci.pInitialData = nullptr;
      r = vkCreatePipelineCache(dev_, &pci, nullptr, &pipeline_cache_);
    }
    OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkCreatePipelineCache"));
  }
  // Shader modules only for the kernels of the chosen rows: the bundle also
  // carries the other tables' kernels, whose SPIR-V may declare capabilities
  // the device lacks or did not enable (StorageBuffer16BitAccess on a device
  // without it), which a module must not be created from.
  std::vector<bool> used(bundle_.kernels.size(), false);
  for (const Dispatch& d : bundle_.dispatches) used[d.kernel] = true;
  if (bundle_.features.count("parameter_buffer")) {  // set 1 of every pipeline layout
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = 0;
    lb.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    lb.descriptorCount = 1;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = 1;
    dli.pBindings = &lb;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorSetLayout(dev_, &dli, nullptr, &params_layout_),
                                   "vkCreateDescriptorSetLayout")
                               .WithContext("parameter buffer"));
  }
  for (size_t j = 0; j < bundle_.kernels.size(); ++j) {
    const Kernel& k = bundle_.kernels[j];
    const std::string what = StrFormat("kernel %zu ('%s')", j, k.name.c_str());
    VkShaderModule sm = VK_NULL_HANDLE;
    if (used[j]) {
      VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
      smi.codeSize = k.spirv_words * 4;
      smi.pCode = k.spirv;
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(vkCreateShaderModule(dev_, &smi, nullptr, &sm), "vkCreateShaderModule").WithContext(what));
    }
    modules_.push_back(sm);
    // Layouts too only for used kernels: an unused one may exceed the
    // device's descriptor limits, which creating its layout would violate.
    if (!used[j]) {
      set_layouts_.push_back(VK_NULL_HANDLE);
      pipeline_layouts_.push_back(VK_NULL_HANDLE);
      continue;
    }
    std::vector<VkDescriptorSetLayoutBinding> lb(k.bindings);
    for (uint32_t b = 0; b < k.bindings; ++b) {
      lb[b] = {};
      lb[b].binding = b;
      lb[b].descriptorType = DescriptorType(k.binding_types[b]);
      lb[b].descriptorCount = 1;
      lb[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = k.bindings;
    dli.pBindings = lb.data();
    VkDescriptorSetLayout dsl;
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateDescriptorSetLayout(dev_, &dli, nullptr, &dsl), "vkCreateDescriptorSetLayout").WithContext(what));
    set_layouts_.push_back(dsl);
    const VkDescriptorSetLayout both[2] = {dsl, params_layout_};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = params_layout_ ? 2 : 1;
    pli.pSetLayouts = both;
    VkPipelineLayout pl;
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreatePipelineLayout(dev_, &pli, nullptr, &pl), "vkCreatePipelineLayout").WithContext(what));
    pipeline_layouts_.push_back(pl);
  }
  // Feature dynamic_shapes: dispatches whose specialization values depend on
  // the shape get their pipelines per recording (AcquirePipeline); every
  // other dispatch has one pipeline for the executor's lifetime.
  const ShapeProgram& sp = bundle_.shape;
  dynamic_spec_.assign(bundle_.dispatches.size(), false);
  for (size_t i = 0; i < bundle_.dispatches.size(); ++i) {
    const Dispatch& d = bundle_.dispatches[i];
    auto it = std::lower_bound(sp.spec_expr.begin(), sp.spec_expr.end(), std::make_pair(d.first_spec, int64_t{-1}));
    dynamic_spec_[i] = it != sp.spec_expr.end() && it->first < d.first_spec + d.n_spec;
  }
  for (size_t i = 0; i < bundle_.dispatches.size(); ++i) {
    const Dispatch& d = bundle_.dispatches[i];
    if (LogEnabled(LogLevel::kDebug)) {
      const char* op = d.op < bundle_.op_names.size() ? bundle_.op_names[d.op].c_str() : "";
      Log(LogLevel::kDebug, StrFormat("dispatch %zu: op '%s' kernel '%s' groups (%u, %u, %u)%s%s", i, op,
                                      bundle_.kernels[d.kernel].name.c_str(), d.groups[0], d.groups[1], d.groups[2],
                                      d.barrier ? " after a barrier" : "",
                                      dynamic_spec_[i] ? ", specialized per shape" : ""));
    }
    if (dynamic_spec_[i]) {
      dispatch_pipeline_.push_back(VK_NULL_HANDLE);
      continue;
    }
    std::vector<uint32_t> values(bundle_.spec.begin() + d.first_spec, bundle_.spec.begin() + d.first_spec + d.n_spec);
    auto key = std::make_pair(d.kernel, values);
    auto it = pipelines_.find(key);
    if (it == pipelines_.end()) {
      OAAXVK_ASSIGN_OR_RETURN(VkPipeline p, CreatePipeline(d.kernel, values,
                                                           StrFormat("dispatch %zu, kernel %u ('%s')", i, d.kernel,
                                                                     bundle_.kernels[d.kernel].name.c_str())));
      PipelineEntry e;
      e.pipeline = p;
      e.permanent = true;
      it = pipelines_.emplace(std::move(key), e).first;
    }
    dispatch_pipeline_.push_back(it->second.pipeline);
  }
  peak_pipelines_ = pipelines_.size();
  return Status::Ok();
}

StatusOr<VkPipeline> Executor::CreatePipeline(uint32_t kernel, const std::vector<uint32_t>& values,
                                              const std::string& what) {
  std::vector<VkSpecializationMapEntry> entries(values.size());
  for (uint32_t s = 0; s < values.size(); ++s) entries[s] = {s, 4 * s, 4};
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = values.size() * 4;
  spec.pData = values.data();
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = modules_[kernel];
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = values.empty() ? nullptr : &spec;
  ci.layout = pipeline_layouts_[kernel];
  VkPipeline p = VK_NULL_HANDLE;
  const auto start = Clock::now();
  OAAXVK_RETURN_IF_ERROR(
      VkCheck(vkCreateComputePipelines(dev_, pipeline_cache_, 1, &ci, nullptr, &p), "vkCreateComputePipelines")
          .WithContext(what));
  Log(LogLevel::kDebug, StrFormat("pipeline of kernel '%s' (#%u) created in %.1f ms (%s)",
                                  bundle_.kernels[kernel].name.c_str(), kernel,
                                  std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
                                  what.c_str()));
  return p;
}

StatusOr<VkPipeline> Executor::AcquirePipeline(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch) {
  std::lock_guard<std::mutex> lk(pipelines_mu_);
  PipelineKey key(kernel, values);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) {
    OAAXVK_ASSIGN_OR_RETURN(VkPipeline p, CreatePipeline(kernel, values,
                                                         StrFormat("dispatch %zu, kernel %u ('%s'), specialized for "
                                                                   "a shape", dispatch, kernel,
                                                                   bundle_.kernels[kernel].name.c_str())));
    PipelineEntry e;
    e.pipeline = p;
    it = pipelines_.emplace(std::move(key), e).first;
    peak_pipelines_ = std::max(peak_pipelines_, pipelines_.size());
  }
  ++it->second.users;
  return it->second.pipeline;
}

void Executor::ReleasePipeline(const PipelineKey& key) {
  std::lock_guard<std::mutex> lk(pipelines_mu_);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) return;
  if (it->second.users > 0) --it->second.users;
  if (it->second.users == 0 && !it->second.permanent) {
    vkDestroyPipeline(dev_, it->second.pipeline, nullptr);
    pipelines_.erase(it);
  }
}

size_t Executor::pipeline_count() const {
  std::lock_guard<std::mutex> lk(pipelines_mu_);
  return pipelines_.size();
}

Status Executor::CreateSlots() {
  const uint32_t frames = options_.frames_in_flight;
  slots_.resize(frames);
  const size_t nd = bundle_.dispatches.size();
  if (nd > 0) {
    uint64_t storage = 0, texel = 0;
    for (const Dispatch& d : bundle_.dispatches)
      for (char t : bundle_.kernels[d.kernel].binding_types) (t == 's' ? storage : texel) += 1;
    // Every count below is a uint32 (at most 2^20 dispatches of at most 1024
    // bindings, times 16 frames, may not fit).
    if ((storage + texel + 1) * frames > UINT32_MAX || (nd + 1) * frames > UINT32_MAX)
      return ResourceExhausted(StrFormat("'%s': %llu descriptors in %zu dispatches for each of %u frame slots exceed "
                                         "what one descriptor pool can hold (2^32 - 1); use fewer frames_in_flight",
                                         bundle_.path.c_str(), static_cast<unsigned long long>(storage + texel), nd,
                                         frames));
    std::vector<VkDescriptorPoolSize> ps;
    if (storage > 0 || texel == 0)
      ps.push_back({VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(std::max<uint64_t>(storage * frames, 1))});
    if (texel > 0) ps.push_back({VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, static_cast<uint32_t>(texel * frames)});
    if (params_layout_) ps.push_back({VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, frames});
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = static_cast<uint32_t>(nd * frames + (params_layout_ ? frames : 0));
    dpi.poolSizeCount = static_cast<uint32_t>(ps.size());
    dpi.pPoolSizes = ps.data();
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateDescriptorPool(dev_, &dpi, nullptr, &pool_), "vkCreateDescriptorPool"));
  }
  for (uint32_t f = 0; f < frames; ++f) {
    Slot& s = slots_[f];
    const std::string ctx = StrFormat("frame slot %u", f);
    OAAXVK_RETURN_IF_ERROR(CreateSegmented(kArena, nullptr, "arena", &s.arena).WithContext(ctx));
    OAAXVK_RETURN_IF_ERROR(CreateIoBuffer(bundle_.buffer_bytes[kInputs], true, "inputs buffer", &s).WithContext(ctx));
    OAAXVK_RETURN_IF_ERROR(CreateIoBuffer(bundle_.buffer_bytes[kOutputs], false, "outputs buffer", &s).WithContext(ctx));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateFence(dev_, &fci, nullptr, &s.fence), "vkCreateFence").WithContext(ctx));
    if (profiling_ && nd > 0) {
      VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qpi.queryCount = static_cast<uint32_t>(2 * nd);
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(vkCreateQueryPool(dev_, &qpi, nullptr, &s.queries), "vkCreateQueryPool").WithContext(ctx));
    }
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = ctx_->queue_family();
    OAAXVK_RETURN_IF_ERROR(
        VkCheck(vkCreateCommandPool(dev_, &cpi, nullptr, &s.pool), "vkCreateCommandPool").WithContext(ctx));
    if (nd > 0) {
      std::vector<VkDescriptorSetLayout> layouts(nd);
      for (size_t i = 0; i < nd; ++i) layouts[i] = set_layouts_[bundle_.dispatches[i].kernel];
      s.sets.resize(nd);
      VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      dai.descriptorPool = pool_;
      dai.descriptorSetCount = static_cast<uint32_t>(nd);
      dai.pSetLayouts = layouts.data();
      OAAXVK_RETURN_IF_ERROR(VkCheck(vkAllocateDescriptorSets(dev_, &dai, s.sets.data()), "vkAllocateDescriptorSets").WithContext(ctx));
      // weights_f16_ is empty unless a chosen row binds kind 4 (then it exists).
      auto place = [&](const Binding& bd) -> std::pair<VkBuffer, uint64_t> {
        switch (bd.kind) {
          case kWeights: return Locate(weights_, bd.offset);
          case kArena: return Locate(s.arena, bd.offset);
          case kInputs: return {s.in.buffer, bd.offset};
          case kOutputs: return {s.out.buffer, bd.offset};
          default: return Locate(weights_f16_, bd.offset);
        }
      };
      std::vector<VkDescriptorBufferInfo> infos;
      std::vector<VkWriteDescriptorSet> writes;
      infos.reserve(bundle_.bindings.size() + 1);
      for (size_t i = 0; i < nd; ++i) {
        const Dispatch& d = bundle_.dispatches[i];
        for (uint32_t b = 0; b < d.n_bindings; ++b) {
          const Binding& bd = bundle_.bindings[d.first_binding + b];
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
        const Dispatch& d = bundle_.dispatches[i];
        const std::string& types = bundle_.kernels[d.kernel].binding_types;
        for (uint32_t b = 0; b < d.n_bindings; ++b, ++k) {
          VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
          w.dstSet = s.sets[i];
          w.dstBinding = b;
          w.descriptorCount = 1;
          w.descriptorType = DescriptorType(types[b]);
          w.pBufferInfo = &infos[k];
          if (types[b] != 's') {
            const Binding& bd = bundle_.bindings[d.first_binding + b];
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
              OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateBufferView(dev_, &vi, nullptr, &view), "vkCreateBufferView")
                                         .WithContext(StrFormat("%s, dispatch %zu binding %u", ctx.c_str(), i, b)));
              s.views.push_back(view);
              it = view_index.emplace(key, s.views.size() - 1).first;
            }
            w.pBufferInfo = nullptr;
            w.pTexelBufferView = &s.views[it->second];
          }
          writes.push_back(w);
        }
      }
      if (!writes.empty()) vkUpdateDescriptorSets(dev_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    }
    if (nd > 0 && params_layout_) {  // feature parameter_buffer: the frame's parameters (zero for static sizes)
      OAAXVK_RETURN_IF_ERROR(CreateBuffer(4 * kParamSlots, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true, "parameter buffer", &s.params)
                                 .WithContext(ctx));
      memset(s.params.mapped, 0, 4 * kParamSlots);
      VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      dai.descriptorPool = pool_;
      dai.descriptorSetCount = 1;
      dai.pSetLayouts = &params_layout_;
      OAAXVK_RETURN_IF_ERROR(
          VkCheck(vkAllocateDescriptorSets(dev_, &dai, &s.params_set), "vkAllocateDescriptorSets").WithContext(ctx));
      VkDescriptorBufferInfo info{s.params.buffer, 0, 4 * kParamSlots};
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = s.params_set;
      w.dstBinding = 0;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      w.pBufferInfo = &info;
      vkUpdateDescriptorSets(dev_, 1, &w, 0, nullptr);
    }
    // The load-time recording: the stored program, which for a dynamic
    // bundle is its maximum shape (what the warm-up runs).
    if (dynamic_) {
      StatusOr<ShapeInstance> max = Instantiate(bundle_.shape.MaxValues(), !bundle_.shape.has_value_symbols);
      if (!max.ok()) return max.status().WithContext(ctx + ", maximum shape");
      OAAXVK_RETURN_IF_ERROR(Record(&s, std::move(max).value()).WithContext(ctx));
    } else {
      OAAXVK_RETURN_IF_ERROR(Record(&s, StaticInstance()).WithContext(ctx));
    }
    s.current = &s.recordings.front();
    ++recordings_at_load_;
  }
  return Status::Ok();
}

Executor::ShapeInstance Executor::StaticInstance() const {
  ShapeInstance si;
  si.groups.resize(bundle_.dispatches.size());
  si.spec.resize(bundle_.dispatches.size());
  for (size_t i = 0; i < bundle_.dispatches.size(); ++i) {
    const Dispatch& d = bundle_.dispatches[i];
    si.groups[i] = {d.groups[0], d.groups[1], d.groups[2]};
  }
  for (const IoDesc& o : bundle_.outputs) {
    si.output_shapes.push_back(o.shape);
    si.output_nbytes.push_back(o.nbytes);
  }
  return si;
}

StatusOr<Executor::ShapeInstance> Executor::Instantiate(const std::vector<int64_t>& symbols, bool check_outputs) const {
  const ShapeProgram& sp = bundle_.shape;
  std::vector<int64_t> v;
  OAAXVK_RETURN_IF_ERROR(sp.Evaluate(symbols, &v));
  ShapeInstance si;
  si.symbols = symbols;
  const size_t nd = bundle_.dispatches.size();
  si.groups.resize(nd);
  si.spec.resize(nd);
  const uint32_t* max_groups = ctx_->properties().limits.maxComputeWorkGroupCount;
  for (size_t i = 0; i < nd; ++i) {
    const Dispatch& d = bundle_.dispatches[i];
    const auto& table = sp.group_expr[d.table];
    for (int a = 0; a < 3; ++a) {
      const int64_t e = table.empty() ? -1 : table[i][a];
      const int64_t g = e < 0 ? d.groups[a] : v[e];
      if (g < 1 || g > max_groups[a]) {
        const char* op = d.op < bundle_.op_names.size() ? bundle_.op_names[d.op].c_str() : "";
        return InvalidArgument(StrFormat(
            "dispatch %zu (kernel '%s', op '%s'): group count %c evaluates to %lld (shape.program instruction %lld) "
            "at %s; it must be in [1, %u] (maxComputeWorkGroupCount[%d] of '%s')",
            i, bundle_.kernels[d.kernel].name.c_str(), op, "xyz"[a], static_cast<long long>(g),
            static_cast<long long>(e), sp.ValuesString(symbols).c_str(), max_groups[a], a,
            ctx_->device_name().c_str()));
      }
      si.groups[i][a] = static_cast<uint32_t>(g);
    }
    if (!dynamic_spec_[i]) continue;
    std::vector<uint32_t>& values = si.spec[i];
    values.assign(bundle_.spec.begin() + d.first_spec, bundle_.spec.begin() + d.first_spec + d.n_spec);
    for (auto it = std::lower_bound(sp.spec_expr.begin(), sp.spec_expr.end(),
                                    std::make_pair(d.first_spec, int64_t{-1}));
         it != sp.spec_expr.end() && it->first < d.first_spec + d.n_spec; ++it) {
      const int64_t x = v[it->second];
      if (x < INT32_MIN || x > static_cast<int64_t>(UINT32_MAX))
        return InvalidArgument(StrFormat("dispatch %zu (kernel '%s'): specialization value program.spec[%u] evaluates "
                                         "to %lld (shape.program instruction %lld) at %s, which is not a 32-bit value",
                                         i, bundle_.kernels[d.kernel].name.c_str(), it->first,
                                         static_cast<long long>(x), static_cast<long long>(it->second),
                                         sp.ValuesString(symbols).c_str()));
      values[it->first - d.first_spec] = static_cast<uint32_t>(x);
    }
  }
  si.params.resize(sp.params);
  for (uint32_t p = 0; p < sp.params; ++p) {
    const int64_t x = v[sp.param_expr[p]];
    if (x < INT32_MIN || x > static_cast<int64_t>(UINT32_MAX))
      return InvalidArgument(StrFormat("parameter slot %u evaluates to %lld (shape.program instruction %lld) at %s, "
                                       "which is not a 32-bit value",
                                       p, static_cast<long long>(x), static_cast<long long>(sp.param_expr[p]),
                                       sp.ValuesString(symbols).c_str()));
    si.params[p] = static_cast<uint32_t>(x);
  }
  for (size_t o = 0; o < bundle_.outputs.size(); ++o) {
    const IoDesc& d = bundle_.outputs[o];
    std::vector<uint64_t> shape = d.shape;
    uint64_t numel = 1;
    bool overflow = false;
    for (size_t a = 0; a < shape.size(); ++a) {
      const int64_t e = sp.output_expr[o][a];
      if (e >= 0) {
        if (v[e] < 0)
          return InvalidArgument(StrFormat("output '%s': dimension %zu evaluates to %lld (shape.program instruction "
                                           "%lld) at %s",
                                           d.name.c_str(), a, static_cast<long long>(v[e]), static_cast<long long>(e),
                                           sp.ValuesString(symbols).c_str()));
        shape[a] = static_cast<uint64_t>(v[e]);
      }
      overflow = overflow || (shape[a] != 0 && numel > UINT64_MAX / shape[a]);
      numel *= shape[a];
    }
    const size_t es = TensorElementSize(d.dtype);
    if (!check_outputs && (overflow || numel > d.nbytes / es)) {
      // The load-time recording of a bundle with value symbols: the maximum
      // of every value symbol is a placeholder (its output shapes are never
      // returned); the stored bytes stand in.
      shape = d.shape;
      numel = d.nbytes / es;
      overflow = false;
    }
    if (overflow || numel > d.nbytes / es)
      return InvalidArgument(StrFormat("output '%s': shape %s at %s needs more than the %llu bytes the memory plan "
                                       "reserves for it (maximum shape %s)",
                                       d.name.c_str(), Shape(shape).c_str(), sp.ValuesString(symbols).c_str(),
                                       static_cast<unsigned long long>(d.nbytes), Shape(d.shape).c_str()));
    si.output_shapes.push_back(std::move(shape));
    si.output_nbytes.push_back(numel * es);
  }
  return si;
}

Status Executor::Record(Slot* s, ShapeInstance shape) {
  Recording rec;
  std::vector<VkPipeline> pipelines = dispatch_pipeline_;
  auto release = [&]() {
    for (const PipelineKey& k : rec.held) ReleasePipeline(k);
    if (rec.cmd) vkFreeCommandBuffers(dev_, s->pool, 1, &rec.cmd);
  };
  for (size_t i = 0; i < bundle_.dispatches.size(); ++i) {
    if (!dynamic_spec_[i]) continue;
    const uint32_t kernel = bundle_.dispatches[i].kernel;
    StatusOr<VkPipeline> p = AcquirePipeline(kernel, shape.spec[i], i);
    if (!p.ok()) {
      release();
      return p.status();
    }
    pipelines[i] = p.value();
    rec.held.emplace_back(kernel, shape.spec[i]);
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = s->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  Status st = VkCheck(vkAllocateCommandBuffers(dev_, &cai, &rec.cmd), "vkAllocateCommandBuffers");
  if (st.ok()) st = RecordCommands(s, rec.cmd, shape, pipelines);
  if (!st.ok()) {
    release();
    return st;
  }
  rec.shape = std::move(shape);
  s->recordings.push_front(std::move(rec));
  ++recordings_;
  return Status::Ok();
}

void Executor::WriteParams(Slot* s) {
  if (!s->params.mapped || !s->current) return;
  const std::vector<uint32_t>& p = s->current->shape.params;
  if (!p.empty()) memcpy(s->params.mapped, p.data(), 4 * p.size());
}

void Executor::Evict(Slot* s, std::list<Recording>::iterator it) {
  if (s->current == &*it) s->current = nullptr;
  if (it->cmd) vkFreeCommandBuffers(dev_, s->pool, 1, &it->cmd);
  for (const PipelineKey& k : it->held) ReleasePipeline(k);
  s->recordings.erase(it);
}

Status Executor::RecordCommands(Slot* s, VkCommandBuffer cmd, const ShapeInstance& shape,
                                const std::vector<VkPipeline>& pipelines) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
  auto barrier = [&](VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  };
  // Host writes of the inputs → shader reads (through a staging copy when needed).
  if (s->staged) {
    barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region{0, 0, s->in.size};
    vkCmdCopyBuffer(cmd, s->in_stage.buffer, s->in.buffer, 1, &region);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  } else {
    barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT);
  }
  const uint32_t nq = static_cast<uint32_t>(2 * bundle_.dispatches.size());
  if (s->queries) vkCmdResetQueryPool(cmd, s->queries, 0, nq);
  VkPipeline bound = VK_NULL_HANDLE;
  for (size_t i = 0; i < bundle_.dispatches.size(); ++i) {
    const Dispatch& d = bundle_.dispatches[i];
    if (d.barrier) {
      barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    if (pipelines[i] != bound) {
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]);
      bound = pipelines[i];
    }
    const VkDescriptorSet sets[2] = {s->sets[i], s->params_set};
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layouts_[d.kernel], 0,
                            params_layout_ ? 2 : 1, sets, 0, nullptr);
    // profile: both timestamps at the bottom of the pipe, i.e. once every
    // earlier command (the previous dispatch, the barrier) has completed.
    const uint32_t q = static_cast<uint32_t>(2 * i);
    if (s->queries) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries, q);
    const std::array<uint32_t, 3>& g = shape.groups[i];
    vkCmdDispatch(cmd, g[0], g[1], g[2]);
    if (s->queries) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries, q + 1);
  }
  // Shader writes of the outputs → host reads.
  if (s->staged) {
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region{0, 0, s->out.size};
    vkCmdCopyBuffer(cmd, s->out.buffer, s->out_stage.buffer, 1, &region);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
  } else {
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
  }
  return VkCheck(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

Status Executor::WarmUp() {
  if (slots_.empty()) return Status::Ok();
  Slot& s = slots_[0];
  const auto start = Clock::now();
  // Zeroed inputs: kernels must not depend on input values for memory safety
  // (every binding is range-checked at load), so any values are fine here.
  if (bundle_.buffer_bytes[kInputs]) memset(s.host_in, 0, bundle_.buffer_bytes[kInputs]);
  WriteParams(&s);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &s.current->cmd;
  Status st = VkCheck(QueueSubmit(ctx_->queue(), 1, &si, s.fence), "vkQueueSubmit");
  if (st.ok()) {
    // The first dispatch of a lazily compiling driver includes shader
    // compilation, which can take far longer than receive_timeout_ms; the
    // bound here is generous but still a bound (never a hang).
    const uint64_t timeout_ms = std::max<uint64_t>(options_.timeout_ms, 300000);
    VkResult r = WaitForFences(dev_, 1, &s.fence, VK_TRUE, timeout_ms * 1000000ull);
    st = r == VK_TIMEOUT ? DeadlineExceeded(StrFormat("vkWaitForFences: VK_TIMEOUT after %llu ms",
                                                     static_cast<unsigned long long>(timeout_ms)))
                         : VkCheck(r, "vkWaitForFences");
    if (st.ok()) st = VkCheck(vkResetFences(dev_, 1, &s.fence), "vkResetFences");
  }
  if (!st.ok()) return st.WithContext("warm-up inference at load (frame slot 0, zeroed inputs)");
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  Log(LogLevel::kInfo, StrFormat("warm-up inference at load: %.1f ms", ms));
  return Status::Ok();
}

namespace {

// One element of an OAAX tensor as a double (false for a type without a
// numeric value, e.g. strings).
bool ElementAsDouble(uint32_t dtype, const uint8_t* p, double* v) {
  switch (dtype) {
    case DATA_TYPE_FLOAT: { float x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_DOUBLE: { memcpy(v, p, 8); return true; }
    case DATA_TYPE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); *v = oinf::HalfToFloat(h); return true; }
    case DATA_TYPE_BFLOAT16: { uint32_t b = 0; memcpy(reinterpret_cast<uint8_t*>(&b) + 2, p, 2); float x; memcpy(&x, &b, 4); *v = x; return true; }
    case DATA_TYPE_UINT8: case DATA_TYPE_BOOL: *v = *p; return true;
    case DATA_TYPE_INT8: *v = static_cast<int8_t>(*p); return true;
    case DATA_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); *v = x; return true; }
    case DATA_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); *v = x; return true; }
    case DATA_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); *v = x; return true; }
    case DATA_TYPE_INT64: { int64_t x; memcpy(&x, p, 8); *v = static_cast<double>(x); return true; }
    case DATA_TYPE_UINT64: { uint64_t x; memcpy(&x, p, 8); *v = static_cast<double>(x); return true; }
    default: return false;
  }
}

// Value checks of send_input (docs/runtime.md, "Input values"): a bound
// input must carry exactly its conversion-time value; 64-bit and unsigned
// 32-bit integers, computed as int32 on the device, must fit int32.
Status CheckInputValues(const IoDesc& d, const uint8_t* data, uint64_t nbytes) {
  if (nbytes == 0) return Status::Ok();
  const size_t es = TensorElementSize(d.dtype);
  if (d.bound) {
    if (memcmp(d.bound, data, d.nbytes) == 0) return Status::Ok();
    size_t k = 0;
    while (memcmp(d.bound + k * es, data + k * es, es) == 0) ++k;
    return InvalidArgument(StrFormat("input tensor '%s': element %zu differs from the value bound at conversion by "
                                     "config.json input_values (the compiled program assumes that value); send the "
                                     "bound value or reconvert with the new one",
                                     d.name.c_str(), k));
  }
  const uint64_t n = nbytes / es;
  if (d.has_value_range) {  // metadata io.input.<j>.value_min / value_max
    for (uint64_t k = 0; k < n; ++k) {
      double v = 0;
      if (!ElementAsDouble(d.dtype, data + es * k, &v)) break;
      if (!(v >= d.value_min && v <= d.value_max))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu = %g lies outside [%g, %g]%s%s",
                                         d.name.c_str(), static_cast<unsigned long long>(k), v, d.value_min,
                                         d.value_max, d.value_rule.empty() ? "" : ": ", d.value_rule.c_str()));
    }
  }
  if (d.dtype == DATA_TYPE_INT64) {
    for (uint64_t k = 0; k < n; ++k) {
      int64_t v;
      memcpy(&v, data + 8 * k, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        return InvalidArgument(StrFormat("input tensor '%s' (INT64): element %llu = %lld does not fit int32; the device "
                                    "computes 64-bit integers as int32 (range [-2147483648, 2147483647])",
                                    d.name.c_str(), static_cast<unsigned long long>(k), static_cast<long long>(v)));
    }
  } else if (d.dtype == DATA_TYPE_UINT64 || d.dtype == DATA_TYPE_UINT32) {
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t v = 0;
      memcpy(&v, data + es * k, es);
      if (v > INT32_MAX)
        return InvalidArgument(StrFormat("input tensor '%s' (%s): element %llu = %llu does not fit int32; the device "
                                    "computes unsigned 32/64-bit integers as int32 (range [0, 2147483647])",
                                    d.name.c_str(), OaaxDtypeName(d.dtype), static_cast<unsigned long long>(k),
                                    static_cast<unsigned long long>(v)));
    }
  }
  return Status::Ok();
}

// "[1, 3, H, W]": an input's shape with its symbolic dimensions named.
std::string ModelShape(const IoDesc& d, const ShapeProgram& sp, size_t input) {
  if (!sp.dynamic()) return Shape(d.shape);
  std::string out = "[";
  for (size_t a = 0; a < d.shape.size(); ++a) {
    const int s = sp.input_symbol[input][a];
    out += (a ? ", " : "") + (s >= 0 ? sp.symbols[static_cast<size_t>(s)].name
                                     : std::to_string(static_cast<unsigned long long>(d.shape[a])));
  }
  return out + "]";
}

}  // namespace

Status Executor::ValidateInput(const tensors_struct* in, CheckedInput* checked) const {
  const std::vector<IoDesc>& want = bundle_.inputs;
  const ShapeProgram& sp = bundle_.shape;
  if (!in) return InvalidArgument("input_tensors is NULL");
  if (in->num_tensors != want.size())
    return InvalidArgument(StrFormat("expected %zu input tensor(s), got num_tensors = %zu", want.size(), in->num_tensors));
  checked->model_index.assign(in->num_tensors, 0);
  checked->nbytes.assign(in->num_tensors, 0);
  checked->symbols.assign(dynamic_ ? sp.symbols.size() : 0, -1);
  if (want.empty()) return Status::Ok();
  if (!in->names) return InvalidArgument("input_tensors->names is NULL");
  if (!in->data_types) return InvalidArgument("input_tensors->data_types is NULL");
  if (!in->ranks) return InvalidArgument("input_tensors->ranks is NULL");
  if (!in->shapes) return InvalidArgument("input_tensors->shapes is NULL");
  if (!in->data) return InvalidArgument("input_tensors->data is NULL");
  std::vector<int> seen(want.size(), -1);
  // Feature dynamic_shapes: where each symbol's value was first read
  // (tensor index in the host's struct, dimension).
  std::vector<std::pair<size_t, size_t>> first(checked->symbols.size());
  for (size_t i = 0; i < in->num_tensors; ++i) {
    if (!in->names[i]) return InvalidArgument(StrFormat("input tensor #%zu has a NULL name", i));
    const char* name = in->names[i];
    size_t m = want.size();
    for (size_t j = 0; j < want.size(); ++j)
      if (want[j].name == name) { m = j; break; }
    if (m == want.size()) {
      std::string names;
      for (size_t j = 0; j < want.size(); ++j) names += StrFormat("%s'%s'", j ? ", " : "", want[j].name.c_str());
      return InvalidArgument(StrFormat("unknown input tensor '%s' (#%zu); the model's inputs are %s", name, i, names.c_str()));
    }
    if (seen[m] >= 0)
      return InvalidArgument(StrFormat("input tensor '%s' is given twice (#%d and #%zu)", name, seen[m], i));
    seen[m] = static_cast<int>(i);
    const IoDesc& d = want[m];
    const uint32_t dt = static_cast<uint32_t>(in->data_types[i]);
    if (dt != d.dtype)
      return InvalidArgument(StrFormat("input tensor '%s': data type %s (%u), the model expects %s (%u)", name,
                                       OaaxDtypeName(dt), dt, OaaxDtypeName(d.dtype), d.dtype));
    if (in->ranks[i] != d.shape.size())
      return InvalidArgument(StrFormat("input tensor '%s': rank %zu, the model expects rank %zu (shape %s)", name,
                                       in->ranks[i], d.shape.size(), ModelShape(d, sp, m).c_str()));
    if (in->ranks[i] > 0 && !in->shapes[i])
      return InvalidArgument(StrFormat("input tensor '%s': shapes[%zu] is NULL", name, i));
    uint64_t numel = 1;
    for (size_t a = 0; a < d.shape.size(); ++a) {
      const uint64_t got = in->shapes[i][a];
      const int sym = dynamic_ ? sp.input_symbol[m][a] : -1;
      if (sym < 0) {
        if (got != d.shape[a])
          return InvalidArgument(StrFormat("input tensor '%s': shape %s, the model expects %s%s", name,
                                           Shape(in->shapes[i], in->ranks[i]).c_str(), ModelShape(d, sp, m).c_str(),
                                           dynamic_ ? StrFormat(" (dimension %zu must be %llu)", a,
                                                                static_cast<unsigned long long>(d.shape[a])).c_str()
                                                    : ""));
      } else {
        // A symbolic dimension: within its symbol's range, on its
        // multiple_of, and equal wherever the symbol occurs.
        const ShapeSymbol& y = sp.symbols[static_cast<size_t>(sym)];
        const char* sn = y.name.c_str();
        if (got < static_cast<uint64_t>(y.min) || got > static_cast<uint64_t>(y.max))
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, outside %s's range %s", name,
                                           a, sn, static_cast<unsigned long long>(got), sn, y.RangeString().c_str()));
        if (got % static_cast<uint64_t>(y.multiple_of) != 0)
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, not a multiple of %lld "
                                           "(%s's range %s)",
                                           name, a, sn, static_cast<unsigned long long>(got),
                                           static_cast<long long>(y.multiple_of), sn, y.RangeString().c_str()));
        int64_t& value = checked->symbols[static_cast<size_t>(sym)];
        if (value < 0) {
          value = static_cast<int64_t>(got);
          first[static_cast<size_t>(sym)] = {i, a};
        } else if (value != static_cast<int64_t>(got)) {
          const auto& [fi, fa] = first[static_cast<size_t>(sym)];
          return InvalidArgument(StrFormat("input tensor '%s': dimension %zu (%s) is %llu, but input tensor '%s' "
                                           "dimension %zu gives %s = %lld; every occurrence of %s must be equal",
                                           name, a, sn, static_cast<unsigned long long>(got), in->names[fi], fa, sn,
                                           static_cast<long long>(value), sn));
        }
      }
      numel *= got;  // every dimension is at most the stored one: no overflow
    }
    const uint64_t nbytes = numel * TensorElementSize(d.dtype);
    if (!in->data[i] && nbytes > 0) return InvalidArgument(StrFormat("input tensor '%s': data[%zu] is NULL", name, i));
    // An input read only as run-time values (feature value_symbols) is read
    // by the host in 64 bits (INT64_MAX "to the end" is a valid Slice bound);
    // its own checks are the symbols' ranges and the guards.
    if (!dynamic_ || !sp.has_value_symbols || !sp.value_source[m])
      OAAXVK_RETURN_IF_ERROR(CheckInputValues(d, static_cast<const uint8_t*>(in->data[i]), nbytes));
    checked->model_index[i] = m;
    checked->nbytes[i] = nbytes;
  }
  if (dynamic_ && sp.has_value_symbols) OAAXVK_RETURN_IF_ERROR(ReadValueSymbols(in, seen, checked));
  return Status::Ok();
}

// Feature value_symbols (docs/runtime.md "Run-time shape values"): each value
// symbol is an element of an int32/int64 input's data; within its range, and
// the bundle's guards hold (a Reshape target that holds the input's elements,
// distinct axes, ...). Every input is present and validated here.
Status Executor::ReadValueSymbols(const tensors_struct* in, const std::vector<int>& seen, CheckedInput* checked) const {
  const ShapeProgram& sp = bundle_.shape;
  std::string values;  // "shape[0] = 4, shape[1] = -1" for messages
  for (size_t s = 0; s < sp.symbols.size(); ++s) {
    const ShapeSymbol& y = sp.symbols[s];
    if (!y.is_value()) continue;
    const IoDesc& d = bundle_.inputs[static_cast<size_t>(y.input)];
    const size_t host_index = static_cast<size_t>(seen[static_cast<size_t>(y.input)]);
    const uint8_t* data = static_cast<const uint8_t*>(in->data[host_index]);
    // The element must exist in the tensor as sent: an input with a symbolic
    // dimension may be shorter than its maximum shape, which the bundle
    // checked the element index against.
    const uint64_t elements = checked->nbytes[host_index] / TensorElementSize(d.dtype);
    if (y.element >= elements)
      return InvalidArgument(StrFormat("input tensor '%s': value symbol %s is its element %llu, but the tensor as sent "
                                       "has %llu element(s); send a tensor that holds element %llu",
                                       d.name.c_str(), y.name.c_str(), static_cast<unsigned long long>(y.element),
                                       static_cast<unsigned long long>(elements),
                                       static_cast<unsigned long long>(y.element)));
    int64_t v = 0;
    if (y.scale != 0) {  // feature float_value_symbols: floor(e * scale), in double as the ONNX reference
      double e = 0;
      if (d.dtype == 11) {
        memcpy(&e, data + 8 * y.element, 8);
      } else if (d.dtype == 10) {
        uint16_t h = 0;
        memcpy(&h, data + 2 * y.element, 2);
        e = oinf::HalfToFloat(h);
      } else {
        float e32 = 0;
        memcpy(&e32, data + 4 * y.element, 4);
        e = e32;
      }
      const double p = std::floor(e * static_cast<double>(y.scale));
      if (y.exact && p != e * static_cast<double>(y.scale) && std::isfinite(e))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %g, which is not a multiple of "
                                         "2^-%d, the resolution the bundle reads these Range bounds at (converted "
                                         "for values up to %g in magnitude); use a value on that grid or reconvert "
                                         "with a narrower range",
                                         d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(), e,
                                         63 - __builtin_clzll(y.scale),
                                         std::ldexp(1.0, 50) / static_cast<double>(y.scale)));
      // In double first (NaN and values beyond int64 fail here: converting
      // them to int64 would be undefined), then exactly in int64: a bound
      // such as INT64_MAX is not representable in double.
      const bool in_int64 = p >= -9223372036854775808.0 && p < 9223372036854775808.0;  // [-2^63, 2^63)
      if (!in_int64 || !(static_cast<int64_t>(p) >= y.min && static_cast<int64_t>(p) <= y.max))
        return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %g, which gives floor(%g x %llu) = "
                                         "%g, outside %s's range %s",
                                         d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(), e,
                                         e, static_cast<unsigned long long>(y.scale), p, y.name.c_str(),
                                         y.RangeString().c_str()));
      v = static_cast<int64_t>(p);
    } else if (d.dtype == 7) {
      memcpy(&v, data + 8 * y.element, 8);
    } else if (d.dtype == 9) {  // bool: 0 or 1 (any nonzero byte is true)
      v = data[y.element] != 0 ? 1 : 0;
    } else {
      int32_t v32 = 0;
      memcpy(&v32, data + 4 * y.element, 4);
      v = v32;
    }
    if (!y.Valid(v))
      return InvalidArgument(StrFormat("input tensor '%s': element %llu (%s) is %lld, outside %s's range %s",
                                       d.name.c_str(), static_cast<unsigned long long>(y.element), y.name.c_str(),
                                       static_cast<long long>(v), y.name.c_str(), y.RangeString().c_str()));
    checked->symbols[s] = v;
    values += StrFormat("%s%s = %lld", values.empty() ? "" : ", ", y.name.c_str(), static_cast<long long>(v));
  }
  std::vector<int64_t> v;
  OAAXVK_RETURN_IF_ERROR(sp.Evaluate(checked->symbols, &v));
  for (size_t g = 0; g < sp.guard_expr.size(); ++g)
    if (v[static_cast<size_t>(sp.guard_expr[g])] == 0)
      return InvalidArgument(StrFormat("input values %s: %s", values.c_str(), sp.guard_text[g].c_str()));
  return Status::Ok();
}

Status Executor::Send(tensors_struct* in) {
  CheckedInput checked;
  OAAXVK_RETURN_IF_ERROR(ValidateInput(in, &checked));
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);

  // ---- a free slot, ours until submitted; given back on every error path (exceptions included) ----
  OAAXVK_ASSIGN_OR_RETURN(const size_t slot, queue_->Acquire(deadline));
  struct SlotGuard {
    FrameQueue* queue;
    size_t slot;
    bool handed_over = false;  // to FrameQueue::Submit, which frees the slot itself on failure
    ~SlotGuard() {
      if (!handed_over) queue->Release(slot);
    }
  } guard{queue_.get(), slot};
  Slot& s = slots_[slot];
  MaybeThrowInjected("send");  // test build only: host memory running out here

  // ---- feature dynamic_shapes: the slot's recording of this shape ----
  bool miss = false;
  double record_ms = 0;
  if (dynamic_) {
    auto it = std::find_if(s.recordings.begin(), s.recordings.end(),
                           [&](const Recording& r) { return r.shape.symbols == checked.symbols; });
    if (it != s.recordings.end()) {
      s.recordings.splice(s.recordings.begin(), s.recordings, it);  // most recently used first
    } else {
      miss = true;
      const auto t0 = Clock::now();
      StatusOr<ShapeInstance> shape = Instantiate(checked.symbols);
      Status st = shape.status();
      if (st.ok()) {
        // Make room: the slot's frame has completed, so none of its
        // recordings is in flight (other slots hold their own pipelines).
        while (s.recordings.size() >= options_.shape_cache_size) Evict(&s, std::prev(s.recordings.end()));
        st = Record(&s, std::move(shape).value());
      }
      if (!st.ok()) return st.WithContext(StrFormat("shape (%s)", bundle_.shape.ValuesString(checked.symbols).c_str()));
      record_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    s.current = &s.recordings.front();
  }

  // ---- the slot's previous frame has completed and its fence is unsignaled ----
  OAAXVK_RETURN_IF_ERROR(PrepareFence(&s, RemainingNs(deadline)));

  // ---- the frame's parameters (feature parameter_buffer) ----
  WriteParams(&s);

  // ---- copy; dense at the actual shape ----
  for (size_t i = 0; i < in->num_tensors; ++i) {
    const IoDesc& d = bundle_.inputs[checked.model_index[i]];
    if (checked.nbytes[i]) memcpy(s.host_in + d.offset, in->data[i], checked.nbytes[i]);
  }

  // ---- submit (the queue serializes queue access); nothing below may fail ----
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &s.current->cmd;
  uint64_t seq = 0;
  guard.handed_over = true;
  OAAXVK_RETURN_IF_ERROR(queue_->Submit(
      slot,
      [&]() {
        FrameQueue::Result r;
        const VkResult vr = QueueSubmit(ctx_->queue(), 1, &si, s.fence);
        if (vr != VK_SUCCESS) {
          const bool lost = vr == VK_ERROR_DEVICE_LOST;
          r.outcome = lost ? FrameQueue::Outcome::kDeviceLost : FrameQueue::Outcome::kFailed;
          r.status = lost ? DeviceLost(vr, "vkQueueSubmit") : VkCheck(vr, "vkQueueSubmit");
        }
        return r;
      },
      &seq));
  FreeTensors(in);  // ownership taken only now that the frame is queued

  if (dynamic_) {
    (miss ? cache_misses_ : cache_hits_)++;
    // profile=1: every frame's hit or miss (info); otherwise each miss at
    // debug level. Logging may allocate: a failure here must not turn the
    // queued frame into a reported failure.
    try {
      const bool profile_line = options_.profile && LogEnabled(LogLevel::kInfo);
      if (profile_line || (miss && LogEnabled(LogLevel::kDebug))) {
        const std::string what =
            miss ? StrFormat("shape cache miss, recorded in %.3f ms", record_ms) : "shape cache hit";
        Log(profile_line ? LogLevel::kInfo : LogLevel::kDebug,
            StrFormat("%sframe #%llu: shape (%s), frame slot %zu: %s", profile_line ? "profile " : "",
                      static_cast<unsigned long long>(seq), bundle_.shape.ValuesString(checked.symbols).c_str(),
                      slot, what.c_str()));
      }
    } catch (...) {
    }
  }
  return Status::Ok();
}

Status Executor::PrepareFence(Slot* s, uint64_t timeout_ns) {
  if (s->fence_unconfirmed) {
    const VkResult r = WaitForFences(dev_, 1, &s->fence, VK_TRUE, timeout_ns);
    if (r == VK_TIMEOUT)
      return DeadlineExceeded(StrFormat("a frame slot's earlier frame, whose wait failed, has not completed within "
                                        "receive_timeout_ms = %llu; call send_input again",
                                        static_cast<unsigned long long>(options_.timeout_ms)));
    OAAXVK_RETURN_IF_ERROR(VkCheck(r, "vkWaitForFences").WithContext("confirming a failed frame's completion"));
    s->fence_unconfirmed = false;
  }
  // Unsignaled here, by the slot's owner, rather than after the harvest: a
  // failure then leaves the frame's outputs with the receiver and this slot
  // simply free.
  return VkCheck(vkResetFences(dev_, 1, &s->fence), "vkResetFences");
}

StatusOr<tensors_struct*> Executor::Receive() {
  return queue_->Receive(Clock::now() + std::chrono::milliseconds(options_.timeout_ms));
}

FrameQueue::Result Executor::Harvest(size_t slot, uint64_t seq, uint64_t timeout_ns) noexcept {
  Slot& s = slots_[slot];
  FrameQueue::Result res;
  const VkResult r = WaitForFences(dev_, 1, &s.fence, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT) {
    res.outcome = FrameQueue::Outcome::kTimeout;
    return res;
  }
  try {
    if (r == VK_ERROR_DEVICE_LOST) {
      res.outcome = FrameQueue::Outcome::kDeviceLost;
      res.status = DeviceLost(r, "vkWaitForFences");
      return res;
    }
    if (r != VK_SUCCESS) {
      s.fence_unconfirmed = true;
      res.outcome = FrameQueue::Outcome::kFailed;
      res.status = VkCheck(r, "vkWaitForFences").WithContext(StrFormat("frame #%llu", static_cast<unsigned long long>(seq)));
      return res;
    }
    if (s.queries) LogProfile(s, seq);
    Status frame_error;
    res.outputs = BuildOutputs(s.host_out, s.current->shape, &frame_error);
    if (!frame_error.ok()) {
      res.outcome = FrameQueue::Outcome::kFailed;
      res.status = std::move(frame_error);
    } else if (!res.outputs) {
      res.outcome = FrameQueue::Outcome::kFailed;
      res.status = ResourceExhausted("out of host memory while copying the outputs of this frame");
    }
  } catch (...) {  // host memory ran out while building messages or outputs
    if (res.outputs) FreeTensors(res.outputs);
    res.outputs = nullptr;
    res.outcome = FrameQueue::Outcome::kFailed;
    res.status = ResourceExhausted("out of memory");  // short enough to need no allocation
  }
  return res;
}

void Executor::LogProfile(const Slot& s, uint64_t seq) {
  const size_t nd = bundle_.dispatches.size();
  std::vector<uint64_t> ts(2 * nd);
  // The frame's fence has signaled, so every query is available; WAIT is a
  // formality that turns a driver bug into a wait instead of garbage.
  VkResult r = vkGetQueryPoolResults(dev_, s.queries, 0, static_cast<uint32_t>(2 * nd), ts.size() * sizeof(uint64_t),
                                     ts.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) {
    Log(LogLevel::kWarn, StrFormat("profile frame #%llu: %s", static_cast<unsigned long long>(seq),
                                   VkCheck(r, "vkGetQueryPoolResults").message().c_str()));
    return;
  }
  const unsigned long long frame = static_cast<unsigned long long>(seq);
  auto us = [&](uint64_t from, uint64_t to) {
    return static_cast<double>((to - from) & timestamp_mask_) * timestamp_period_ns_ / 1000.0;
  };
  const std::vector<std::array<uint32_t, 3>>& groups = s.current->shape.groups;  // the frame's (evaluated) counts
  auto describe = [&](size_t i) {
    const Dispatch& d = bundle_.dispatches[i];
    const char* op = d.op < bundle_.op_names.size() ? bundle_.op_names[d.op].c_str() : "";
    return StrFormat("kernel '%s' (#%u) groups (%u, %u, %u) op '%s'", bundle_.kernels[d.kernel].name.c_str(),
                     d.kernel, groups[i][0], groups[i][1], groups[i][2], op);
  };
  std::vector<double> t(nd);
  double sum = 0;
  for (size_t i = 0; i < nd; ++i) {
    t[i] = us(ts[2 * i], ts[2 * i + 1]);
    sum += t[i];
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu dispatch %zu: %.1f us %s", frame, i, t[i], describe(i).c_str()));
  }
  const double span = nd ? us(ts[0], ts[2 * nd - 1]) : 0.0;
  Log(LogLevel::kInfo, StrFormat("profile frame #%llu: %zu dispatches, %.1f us in dispatches, %.1f us from the first "
                                 "dispatch's start to the last one's end",
                                 frame, nd, sum, span));
  std::vector<size_t> order(nd);
  for (size_t i = 0; i < nd; ++i) order[i] = i;
  const size_t top = std::min<size_t>(15, nd);
  std::partial_sort(order.begin(), order.begin() + top, order.end(),
                    [&](size_t a, size_t b) { return t[a] > t[b] || (t[a] == t[b] && a < b); });
  for (size_t k = 0; k < top; ++k) {
    const size_t i = order[k];
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu top %zu: dispatch %zu %.1f us (%.1f%%) %s", frame, k + 1, i,
                                   t[i], sum > 0 ? 100.0 * t[i] / sum : 0.0, describe(i).c_str()));
  }
  struct Total { double us = 0; size_t count = 0; };
  std::vector<Total> per_kernel(bundle_.kernels.size());
  for (size_t i = 0; i < nd; ++i) {
    per_kernel[bundle_.dispatches[i].kernel].us += t[i];
    per_kernel[bundle_.dispatches[i].kernel].count++;
  }
  std::vector<size_t> korder;
  for (size_t j = 0; j < per_kernel.size(); ++j)
    if (per_kernel[j].count) korder.push_back(j);
  std::stable_sort(korder.begin(), korder.end(), [&](size_t a, size_t b) { return per_kernel[a].us > per_kernel[b].us; });
  for (size_t j : korder) {
    Log(LogLevel::kInfo, StrFormat("profile frame #%llu kernel '%s' (#%zu): %.1f us (%.1f%%) in %zu dispatch(es)",
                                   frame, bundle_.kernels[j].name.c_str(), j, per_kernel[j].us,
                                   sum > 0 ? 100.0 * per_kernel[j].us / sum : 0.0, per_kernel[j].count));
  }
}

tensors_struct* Executor::BuildOutputs(const uint8_t* host_out, const ShapeInstance& shape,
                                      Status* frame_error) const {
  const size_t n = bundle_.outputs.size();
  // Feature data_dependent_outputs: extent outputs are not returned; each
  // trims the output it counts (its stored extent along the axis is the
  // largest; the device wrote the first `count` slices of every outer block).
  std::vector<int64_t> count_of(n, -1), count_axis(n, -1);
  size_t visible = 0;
  for (size_t i = 0; i < n; ++i) {
    const IoDesc& d = bundle_.outputs[i];
    if (d.count_for < 0) {
      ++visible;
      continue;
    }
    int32_t c = 0;
    memcpy(&c, host_out + d.offset, 4);
    if (c < 0) {
      *frame_error = ResourceExhausted(StrFormat(
          "output '%s': the device could not compute its extent: a kernel stopped before finishing (lavapipe ends "
          "a shader invocation's loops after 65535 iterations in total); the input is larger than this driver "
          "can process in that kernel",
          bundle_.outputs[static_cast<size_t>(d.count_for)].name.c_str()));
      return nullptr;
    }
    count_of[static_cast<size_t>(d.count_for)] = c;
    count_axis[static_cast<size_t>(d.count_for)] = d.count_axis;
  }
  tensors_struct* t = AllocTensors(visible);
  if (!t) return nullptr;
  size_t k = 0;
  std::vector<uint8_t> gathered;
  for (size_t i = 0; i < n; ++i) {
    const IoDesc& d = bundle_.outputs[i];
    if (d.count_for >= 0) continue;
    std::vector<uint64_t> dims = shape.output_shapes[i];  // the frame's actual shape
    const uint8_t* data = host_out + d.offset;
    uint64_t nbytes = shape.output_nbytes[i];
    if (count_of[i] >= 0) {
      const size_t a = static_cast<size_t>(count_axis[i]);
      const uint64_t planned = dims[a];
      const uint64_t c = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(count_of[i], 0)), planned);
      uint64_t outer = 1, inner = TensorElementSize(d.dtype);
      for (size_t j = 0; j < a; ++j) outer *= dims[j];
      for (size_t j = a + 1; j < dims.size(); ++j) inner *= dims[j];
      dims[a] = c;
      nbytes = outer * c * inner;
      if (outer > 1 && c > 0 && c < planned) {  // gather the first c slices of every outer block
        gathered.resize(nbytes);
        for (uint64_t o = 0; o < outer; ++o)
          memcpy(gathered.data() + o * c * inner, data + o * planned * inner, c * inner);
        data = gathered.data();
      }
    }
    if (!SetTensor(t, k++, d.name.c_str(), static_cast<tensor_data_type>(d.dtype), dims.data(), dims.size(), data,
                   nbytes)) {
      FreeTensors(t);
      return nullptr;
    }
  }
  return t;
}

void Executor::SavePipelineCache() {
  if (!pipeline_cache_ || options_.pipeline_cache.empty()) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(dev_, pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<uint8_t> data(size);
  VkResult r = vkGetPipelineCacheData(dev_, pipeline_cache_, &size, data.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    Log(LogLevel::kWarn, StrFormat("vkGetPipelineCacheData failed: %s", VkResultName(r)));
    return;
  }
  // A temporary name of this process's own (pid and random bits), renamed
  // over the cache at the end: processes saving the same cache at once never
  // write into one file, and a reader sees an old or a new cache, whole.
  const std::string& path = options_.pipeline_cache;
  const std::string tmp = StrFormat("%s.%ld.%08lx.tmp", path.c_str(), static_cast<long>(getpid()),
                                    static_cast<unsigned long>(std::random_device()()));
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': cannot create '%s': %s (the cache is not saved)", path.c_str(),
                                   tmp.c_str(), strerror(errno)));
    return;
  }
  std::string error;
  if (fwrite(data.data(), 1, size, f) != size) error = StrFormat("writing '%s': %s", tmp.c_str(), strerror(errno));
  if (fclose(f) != 0 && error.empty()) error = StrFormat("closing '%s': %s", tmp.c_str(), strerror(errno));
  if (error.empty() && rename(tmp.c_str(), path.c_str()) != 0)
    error = StrFormat("renaming '%s' to it: %s", tmp.c_str(), strerror(errno));
  if (!error.empty()) {
    Log(LogLevel::kWarn, StrFormat("pipeline cache '%s': %s (the cache is not saved)", path.c_str(), error.c_str()));
    remove(tmp.c_str());
  }
}

Executor::~Executor() {
  VkResult r = vkDeviceWaitIdle(dev_);
  if (r != VK_SUCCESS) Log(LogLevel::kError, VkCheck(r, "vkDeviceWaitIdle").message());
  SavePipelineCache();
  if (dynamic_)
    Log(LogLevel::kInfo, StrFormat("shape cache: %llu hits, %llu misses; %llu command buffers recorded (%llu at load); "
                                   "%zu pipelines alive, at most %zu",
                                   static_cast<unsigned long long>(cache_hits_.load()),
                                   static_cast<unsigned long long>(cache_misses_.load()),
                                   static_cast<unsigned long long>(recordings_.load()),
                                   static_cast<unsigned long long>(recordings_at_load_.load()), pipelines_.size(),
                                   peak_pipelines_));
  queue_.reset();  // frees the outputs harvested but never received
  for (Slot& s : slots_) {
    s.recordings.clear();  // their command buffers go with the pool, their pipelines below
    if (s.pool) vkDestroyCommandPool(dev_, s.pool, nullptr);
    DestroySegmented(&s.arena);
    DestroyBuffer(&s.in);
    DestroyBuffer(&s.out);
    DestroyBuffer(&s.in_stage);
    DestroyBuffer(&s.out_stage);
    DestroyBuffer(&s.params);
    if (s.fence) vkDestroyFence(dev_, s.fence, nullptr);
    if (s.queries) vkDestroyQueryPool(dev_, s.queries, nullptr);
    for (VkBufferView v : s.views) vkDestroyBufferView(dev_, v, nullptr);
  }
  if (cmd_pool_) vkDestroyCommandPool(dev_, cmd_pool_, nullptr);
  if (pool_) vkDestroyDescriptorPool(dev_, pool_, nullptr);      // frees the sets
  for (auto& kv : pipelines_) vkDestroyPipeline(dev_, kv.second.pipeline, nullptr);
  if (pipeline_cache_) vkDestroyPipelineCache(dev_, pipeline_cache_, nullptr);
  for (VkPipelineLayout pl : pipeline_layouts_) vkDestroyPipelineLayout(dev_, pl, nullptr);
  for (VkDescriptorSetLayout l : set_layouts_) vkDestroyDescriptorSetLayout(dev_, l, nullptr);
  if (params_layout_) vkDestroyDescriptorSetLayout(dev_, params_layout_, nullptr);
  for (VkShaderModule m : modules_) vkDestroyShaderModule(dev_, m, nullptr);
  DestroySegmented(&weights_);
  DestroySegmented(&weights_f16_);
}

}  // namespace oaaxvk::runtime
