#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>

#include "oaax_vulkan/tensors_util.h"
#include "runtime/fault_injection.h"
#include "runtime/log.h"
#include "runtime/matrix_check.h"

namespace oaaxvk::runtime {

namespace {

using Clock = std::chrono::steady_clock;

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
  // Precision fp16: the cooperative-matrix kernels the rows may reach are
  // checked on the device first (matrix_check.h); a failing one is dropped
  // and its rows run the fp16 form.
  PrecisionChoice precision;
  precision.fp16 = options.precision_fp16;
  const bool device_is_cpu = ctx->properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const bool gpu_table = bundle.features.count("device_variants") != 0 &&
                         (options.kernel_variant == KernelVariant::kGpu ||
                          (options.kernel_variant == KernelVariant::kAuto && !device_is_cpu));
  if (precision.fp16 && gpu_table) CheckMatrixKernels(ctx, &bundle, &dl, &precision.dropped_matrix);
  // Features kernel_variants / device_variants: choose the dispatch rows
  // before anything is checked or created for them.
  const VariantSelection sel = SelectKernelVariant(
      &bundle, options.kernel_variant, device_is_cpu, dl, options.fp16_weights, precision);
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
    if (sel.fp32_forms > 0)
      kept += StrFormat(" (%zu row%s of fp16-weight kernels run their fp32 form: %s)", sel.fp32_forms,
                        sel.fp32_forms == 1 ? "" : "s",
                        options.fp16_weights ? "the device lacks storageBuffer16BitAccess"
                                             : "fp16 weights need the runtime argument fp16_weights=1");
    Log(LogLevel::kInfo, StrFormat("'%s': running the %s kernel variants on '%s'%s", bundle.path.c_str(), sel.table,
                                   dl.device_name.c_str(), kept.c_str()));
  }
  if (precision.fp16) Log(LogLevel::kInfo, PrecisionSummary(bundle.path, sel));
  OAAXVK_RETURN_IF_ERROR(CheckDeviceLimits(bundle, dl));

  std::unique_ptr<Executor> e(new Executor(ctx, std::move(bundle), options));
  e->max_allocation_bytes_ = std::min(dl.max_memory_allocation_size, dl.max_heap_bytes);
  OAAXVK_RETURN_IF_ERROR(e->Init());
  return e;
}

Status Executor::Init() {
  // Where the load's time goes (the "loaded" line): each step's end.
  const auto t0 = Clock::now();
  auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  dynamic_ = bundle_.shape.dynamic();
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = ctx_->queue_family();
  OAAXVK_RETURN_IF_ERROR(VkCheck(vkCreateCommandPool(dev_, &cpi, nullptr, &cmd_pool_), "vkCreateCommandPool"));
  OAAXVK_RETURN_IF_ERROR(CreateBlockedBuffer(ctx_, cmd_pool_, BoundRanges(bundle_, kWeights), bundle_.weights_bytes,
                                               max_allocation_bytes_, bundle_.weights, "weights", &weights_));
  // Feature device_variants: the fp16 copies only when a chosen row reads them.
  if (DispatchesBindKind(bundle_, kWeightsF16))
    OAAXVK_RETURN_IF_ERROR(CreateBlockedBuffer(ctx_, cmd_pool_, BoundRanges(bundle_, kWeightsF16),
                                                 bundle_.weights_f16_bytes, max_allocation_bytes_, bundle_.weights_f16,
                                                 "weights_f16", &weights_f16_));
  const double upload_ms = ms_since(t0);
  const auto t1 = Clock::now();
  pipelines_ = std::make_unique<Pipelines>(ctx_, &bundle_);
  OAAXVK_RETURN_IF_ERROR(pipelines_->Create(options_.pipeline_cache, options_.pipeline_cache_dir));
  recorder_ = std::make_unique<Recorder>(ctx_, &bundle_, pipelines_.get());
  if (options_.profile) profiler_.SetUp(ctx_);
  const double pipelines_ms = ms_since(t1);
  const auto t2 = Clock::now();
  OAAXVK_RETURN_IF_ERROR(CreateSlots());
  const double slots_ms = ms_since(t2);
  const auto t3 = Clock::now();
  queue_ = std::make_unique<FrameQueue>(slots_.size(), options_.timeout_ms,
                                        [this](size_t slot, uint64_t seq, uint64_t timeout_ns) {
                                          return Harvest(slot, seq, timeout_ns);
                                        });
  if (bundle_.features.count("segment_program")) {
    // Mid-frame submissions go through the frame queue, which serializes queue access.
    auto submit = [this](const VkSubmitInfo& si, VkFence fence) {
      return queue_->SubmitWithinFrame([&]() {
        FrameQueue::Result r;
        const VkResult vr = QueueSubmit(ctx_->queue(), 1, &si, fence);
        if (vr != VK_SUCCESS) {
          const bool lost = vr == VK_ERROR_DEVICE_LOST;
          r.outcome = lost ? FrameQueue::Outcome::kDeviceLost : FrameQueue::Outcome::kFailed;
          r.status = lost ? DeviceLost(vr, "vkQueueSubmit") : VkCheck(vr, "vkQueueSubmit");
        }
        return r;
      });
    };
    segments_ = std::make_unique<SegmentRunner>(ctx_, &bundle_, recorder_.get(), submit, slots_.size());
    for (size_t f = 0; f < slots_.size(); ++f)
      OAAXVK_RETURN_IF_ERROR(segments_->Attach(f, &slots_[f]).WithContext(StrFormat("frame slot %zu", f)));
  }
  if (options_.warmup) OAAXVK_RETURN_IF_ERROR(WarmUp());
  const double warmup_ms = ms_since(t3);
  Log(LogLevel::kInfo, StrFormat("loaded '%s' (model '%s', producer '%s'): %zu inputs, %zu outputs, %zu kernels, "
                                 "%zu dispatches, %zu pipelines, %zu frame slots%s%s%s; %.1f ms: weights %.1f, "
                                 "pipelines %.1f, frame slots and recording %.1f, warm-up %.1f",
                                 bundle_.path.c_str(), bundle_.model_name.c_str(), bundle_.producer.c_str(),
                                 bundle_.inputs.size(), bundle_.outputs.size(), bundle_.kernels.size(),
                                 bundle_.dispatches.size(), pipelines_->count(), slots_.size(),
                                 slots_.empty() ? ""
                                 : slots_[0].in_staged && slots_[0].out_staged ? ", staged I/O"
                                 : slots_[0].out_staged                        ? ", staged outputs"
                                 : slots_[0].in_staged                         ? ", staged inputs"
                                                                               : "",
                                 !weights_f16_.buffers.empty() ? ", fp16 weight copies uploaded" : "",
                                 profiler_.enabled() ? ", profiling every dispatch" : "", ms_since(t0), upload_ms,
                                 pipelines_ms, slots_ms, warmup_ms));
  if (dynamic_) {
    std::string symbols;
    for (const ShapeSymbol& y : bundle_.shape.symbols)
      symbols += StrFormat("%s%s %s", symbols.empty() ? "" : ", ", y.name.c_str(), y.RangeString().c_str());
    const std::vector<bool>& per_shape = pipelines_->dynamic_spec();
    const size_t specialized = static_cast<size_t>(std::count(per_shape.begin(), per_shape.end(), true));
    Log(LogLevel::kInfo, StrFormat("'%s': dynamic shapes: %s; %zu of %zu dispatches specialized per shape, %u sizes "
                                   "in the parameter buffer; each frame slot keeps the command buffers of %u shapes "
                                   "(shape_cache_size)",
                                   bundle_.path.c_str(), symbols.c_str(), specialized, bundle_.dispatches.size(),
                                   bundle_.shape.params, options_.shape_cache_size));
  }
  return Status::Ok();
}

Status Executor::CreateSlots() {
  const uint32_t frames = options_.frames_in_flight;
  slots_.resize(frames);
  OAAXVK_RETURN_IF_ERROR(CreateDescriptorPool(dev_, bundle_, frames, pipelines_->params_layout(), &pool_));
  FrameSlotConfig config;
  config.bundle = &bundle_;
  config.pipelines = pipelines_.get();
  config.descriptor_pool = pool_;
  config.weights = &weights_;
  config.weights_f16 = &weights_f16_;
  config.max_allocation_bytes = max_allocation_bytes_;
  config.force_staging_inputs = options_.force_staging == StagingKnob::kAll;
  config.force_staging_outputs = options_.force_staging != StagingKnob::kOff;
  config.profiling = profiler_.enabled();
  for (uint32_t f = 0; f < frames; ++f) {
    FrameSlot& s = slots_[f];
    const std::string ctx = StrFormat("frame slot %u", f);
    OAAXVK_RETURN_IF_ERROR(CreateFrameSlot(ctx_, config, ctx, &s));
    // The load-time recording: the stored program, which for a dynamic
    // bundle is its maximum shape (what the warm-up runs).
    if (dynamic_) {
      StatusOr<ShapeInstance> max = recorder_->Instantiate(bundle_.shape.MaxValues(), !bundle_.shape.has_value_symbols);
      if (!max.ok()) return max.status().WithContext(ctx + ", maximum shape");
      OAAXVK_RETURN_IF_ERROR(recorder_->Record(&s, std::move(max).value()).WithContext(ctx));
    } else {
      OAAXVK_RETURN_IF_ERROR(recorder_->Record(&s, recorder_->StaticInstance()).WithContext(ctx));
    }
    s.current = &s.recordings.front();
    ++recordings_at_load_;
  }
  return Status::Ok();
}

Status Executor::WarmUp() {
  if (slots_.empty() || bundle_.dispatches.empty()) return Status::Ok();
  FrameSlot& s = slots_[0];
  const auto start = Clock::now();
  // Zeroed inputs: kernels must not depend on input values for memory safety
  // (every binding is range-checked at load), so any values are fine here.
  if (bundle_.buffer_bytes[kInputs]) memset(s.host_in, 0, bundle_.buffer_bytes[kInputs]);
  Recorder::WriteParams(&s);
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  Status st = recorder_->RecordWarmUp(&s, &cmd);
  if (st.ok()) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    st = VkCheck(QueueSubmit(ctx_->queue(), 1, &si, s.fence), "vkQueueSubmit");
  }
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
  // A failed warm-up fails the load: its command buffer goes with the slot's
  // pool once the device is idle (the destructor), never while it may run.
  if (!st.ok()) return st.WithContext("warm-up at load (frame slot 0, zeroed inputs)");
  vkFreeCommandBuffers(dev_, s.pool, 1, &cmd);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  Log(LogLevel::kInfo, StrFormat("warm-up at load (each of %zu pipelines dispatched once, one workgroup): %.1f ms",
                                 pipelines_->count(), ms));
  return Status::Ok();
}

Status Executor::Send(tensors_struct* in) {
  CheckedInput checked;
  OAAXVK_RETURN_IF_ERROR(runtime::ValidateInput(bundle_, in, &checked));
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
  FrameSlot& s = slots_[slot];
  MaybeThrowInjected("send");  // test build only: host memory running out here

  // ---- feature dynamic_shapes: the slot's recording of this shape ----
  bool miss = false;
  double record_ms = 0;
  if (dynamic_ && !segments_) {
    auto it = std::find_if(s.recordings.begin(), s.recordings.end(),
                           [&](const Recording& r) { return r.shape.symbols == checked.symbols; });
    if (it != s.recordings.end()) {
      s.recordings.splice(s.recordings.begin(), s.recordings, it);  // most recently used first
    } else {
      miss = true;
      const auto t0 = Clock::now();
      StatusOr<ShapeInstance> shape = recorder_->Instantiate(checked.symbols);
      Status st = shape.status();
      if (st.ok()) {
        // Make room: the slot's frame has completed, so none of its
        // recordings is in flight (other slots hold their own pipelines).
        while (s.recordings.size() >= options_.shape_cache_size)
          recorder_->Evict(&s, std::prev(s.recordings.end()));
        st = recorder_->Record(&s, std::move(shape).value());
      }
      if (!st.ok()) return st.WithContext(StrFormat("shape (%s)", bundle_.shape.ValuesString(checked.symbols).c_str()));
      record_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    s.current = &s.recordings.front();
  }

  // ---- the slot's previous frame has completed and its fence is unsignaled ----
  OAAXVK_RETURN_IF_ERROR(PrepareFence(&s, RemainingNs(deadline)));

  // ---- the frame's parameters (feature parameter_buffer) ----
  Recorder::WriteParams(&s);

  // ---- copy; dense at the actual shape ----
  for (size_t i = 0; i < in->num_tensors; ++i) {
    const IoDesc& d = bundle_.inputs[checked.model_index[i]];
    if (checked.nbytes[i]) memcpy(s.host_in + d.offset, in->data[i], checked.nbytes[i]);
  }

  // ---- feature segment_program: the frame's segments run now; what is
  // submitted below is the final barrier, carrying the frame's shape ----
  if (segments_) OAAXVK_RETURN_IF_ERROR(segments_->RunFrame(slot, &s, checked.symbols, deadline));

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

Status Executor::PrepareFence(FrameSlot* s, uint64_t timeout_ns) {
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
  FrameSlot& s = slots_[slot];
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
    if (s.queries) profiler_.LogFrame(dev_, bundle_, s.queries, s.current->shape.groups, seq);
    Status frame_error;
    res.outputs = BuildOutputs(bundle_, s.host_out, s.current->shape.output_shapes, s.current->shape.output_nbytes,
                               &frame_error);
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

Executor::~Executor() {
  VkResult r = vkDeviceWaitIdle(dev_);
  if (r != VK_SUCCESS) Log(LogLevel::kError, VkCheck(r, "vkDeviceWaitIdle").message());
  if (pipelines_) pipelines_->SaveCache();
  if (dynamic_ && pipelines_ && recorder_)
    Log(LogLevel::kInfo, StrFormat("shape cache: %llu hits, %llu misses; %llu command buffers recorded (%llu at load); "
                                   "%zu pipelines alive, at most %zu",
                                   static_cast<unsigned long long>(cache_hits_.load()),
                                   static_cast<unsigned long long>(cache_misses_.load()),
                                   static_cast<unsigned long long>(recorder_->recordings()),
                                   static_cast<unsigned long long>(recordings_at_load_.load()), pipelines_->count(),
                                   pipelines_->peak()));
  queue_.reset();  // frees the outputs harvested but never received
  segments_.reset();  // its command buffers come from the slots' pools
  for (FrameSlot& s : slots_) DestroyFrameSlot(dev_, &s);
  if (cmd_pool_) vkDestroyCommandPool(dev_, cmd_pool_, nullptr);
  if (pool_) vkDestroyDescriptorPool(dev_, pool_, nullptr);  // frees the sets
  recorder_.reset();
  pipelines_.reset();  // every pipeline, the cache, the layouts and modules
  DestroyBlockedBuffer(dev_, &weights_);
  DestroyBlockedBuffer(dev_, &weights_f16_);
}

}  // namespace oaaxvk::runtime
