// Executes a validated Bundle on a VkContext. The executor orchestrates the
// parts, each in its own file: device memory (device_memory.h: weights and
// I/O buffers), pipelines (pipelines.h: modules, layouts, pipelines, the
// pipeline cache), frame slots (frame_slot.h: per-frame buffers, descriptor
// sets, fence), shape instances and command recording (recording.h: one
// command buffer per frame slot recorded once at load; feature
// dynamic_shapes: one per shape, kept per slot in an LRU cache), host I/O
// (io.h: input validation, value symbols, output building) and profiling
// (profiling.h). Here: loading (limits, variant choice, warm-up) and the glue
// between send/receive and the FIFO frame queue.
#ifndef OAAXVK_RUNTIME_EXECUTOR_H_
#define OAAXVK_RUNTIME_EXECUTOR_H_

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/device_memory.h"
#include "runtime/frame_queue.h"
#include "runtime/frame_slot.h"
#include "runtime/io.h"
#include "runtime/pipelines.h"
#include "runtime/profiling.h"
#include "runtime/recording.h"
#include "runtime/segment_runner.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

// The force_staging test knob's values.
enum class StagingKnob { kOff, kAll, kOutputs };

struct ExecutorOptions {
  uint32_t frames_in_flight = 2;
  uint64_t timeout_ms = 5000;   // bound of every wait for a frame
  // The persistent pipeline cache (runtime arguments pipeline_cache and
  // pipeline_cache_dir; PipelineCachePath in pipeline_cache.h): "" or "auto"
  // = one file per (bundle, device, driver) under pipeline_cache_dir, whose
  // "" default is the per-user $XDG_CACHE_HOME/oaax-vulkan or
  // ~/.cache/oaax-vulkan; "off" or "0" = none; anything else = that file.
  std::string pipeline_cache;
  std::string pipeline_cache_dir;
  // Test knob force_staging: staged I/O even on host-visible devices
  // (1: inputs and outputs; "outputs": the outputs only, as on a discrete GPU).
  StagingKnob force_staging = StagingKnob::kOff;
  // Run the program once on frame slot 0 (zeroed inputs) at the end of Create,
  // so that drivers which compile pipelines lazily at their first dispatch
  // (Mesa lavapipe/llvmpipe JIT-compiles compute shaders at the first launch)
  // do it during runtime_model_loading, not during the first send_input.
  bool warmup = true;
  // Per-dispatch GPU timing: a timestamp query before and after every
  // dispatch (one VkQueryPool per frame slot), logged at info level when each
  // frame completes. Off: no query pool, nothing extra recorded.
  bool profile = false;
  // Which dispatch table of a bundle with features kernel_variants /
  // device_variants runs (runtime argument kernel_variant=auto|default|gpu|cpu;
  // SelectKernelVariant): auto = the CPU-class table on
  // VK_PHYSICAL_DEVICE_TYPE_CPU devices (lavapipe, SwiftShader) and the
  // GPU-class table elsewhere, each row falling back to program.dispatch when
  // the device lacks what it needs. Bundles without variants ignore it.
  KernelVariant kernel_variant = KernelVariant::kAuto;
  // Runtime argument fp16_weights=1: rows of the chosen table that read
  // binary16 weight copies (weights_f16, feature device_variants) may run;
  // off by default, so results stay fp32 unless the host opts in (those rows
  // then keep their program.dispatch row).
  bool fp16_weights = false;
  // Runtime argument precision=fp16 (default fp32): the GPU table's GEMM and
  // convolution rows run their fp16 precision forms (binary16 operands, fp32
  // sums; docs/kernels.md "fp16 precision") where the device has
  // shaderFloat16 and the row's weights fit binary16, and their
  // cooperative-matrix forms where the device has matrix units and the
  // load-time check (matrix_check.h) keeps them.
  bool precision_fp16 = false;
  // Feature dynamic_shapes (runtime argument shape_cache_size, 1..1024): how
  // many recorded command buffers (one per shape) each frame slot keeps; the
  // least recently used one is freed when a new shape needs room. Static
  // bundles record one command buffer per slot at load and ignore it.
  uint32_t shape_cache_size = 8;
};

class Executor {
 public:
  // Chooses the dispatch rows (options.kernel_variant, the device type and
  // capabilities; logged at info level when the bundle has variants, with a
  // warning per unknown capability), checks the device limits for them, then
  // allocates and records everything.
  static StatusOr<std::unique_ptr<Executor>> Create(VkContext* ctx, Bundle bundle, const ExecutorOptions& options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Bundle& bundle() const { return bundle_; }
  // Not OK once the device was lost (then every call fails with it).
  Status device_status() const { return queue_->lost(); }
  // VkPipelines alive now (static ones plus those the cached recordings of a
  // dynamic bundle hold).
  size_t pipeline_count() const { return pipelines_->count(); }
  // Command buffers recorded so far: one per frame slot at load, plus one per
  // shape-cache miss (feature dynamic_shapes).
  uint64_t recordings() const { return recorder_->recordings(); }
  // Feature dynamic_shapes: send_input calls whose shape had a recording in
  // the chosen slot (hits) or needed one (misses).
  uint64_t shape_cache_hits() const { return cache_hits_.load(); }
  uint64_t shape_cache_misses() const { return cache_misses_.load(); }

  // Validates `in` against the model inputs without touching it (io.h).
  Status ValidateInput(const tensors_struct* in, CheckedInput* checked) const {
    return runtime::ValidateInput(bundle_, in, checked);
  }
  // Validates, copies into a free frame slot (waiting for the oldest frame
  // when all are busy), submits, and on success frees `in`.
  Status Send(tensors_struct* in);
  // The outputs of the oldest frame not yet received (caller frees).
  StatusOr<tensors_struct*> Receive();

 private:
  Executor(VkContext* ctx, Bundle bundle, const ExecutorOptions& options);
  Status Init();
  // The frame slots, each with its load-time recording.
  Status CreateSlots();
  Status WarmUp();
  // The frame queue's harvester: waits (bounded) for slot `slot`'s fence and
  // copies frame #`seq`'s outputs into a new tensors_struct. Only
  // VK_ERROR_DEVICE_LOST is a device loss; any other error (a failed wait,
  // host memory running out, a kernel that could not compute an extent)
  // fails this frame alone. Never throws.
  FrameQueue::Result Harvest(size_t slot, uint64_t seq, uint64_t timeout_ns) noexcept;
  // Makes the slot (owned by the caller, from FrameQueue::Acquire) ready for
  // a submit: confirms that a failed wait's frame has completed, then
  // unsignals the fence.
  Status PrepareFence(FrameSlot* slot, uint64_t timeout_ns);

  VkContext* ctx_;
  VkDevice dev_;
  Bundle bundle_;
  ExecutorOptions options_;

  BlockedBuffer weights_;
  BlockedBuffer weights_f16_;  // kind 4 (feature device_variants): only when a chosen row binds it
  // The most bytes one VkBuffer may take: min(maxMemoryAllocationSize, the
  // largest heap); larger weights and arenas take several (buffer_blocks.h).
  uint64_t max_allocation_bytes_ = UINT64_MAX;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Recorder> recorder_;
  // Feature segment_program: runs each frame's segments in send_input (null otherwise).
  std::unique_ptr<SegmentRunner> segments_;
  DispatchProfiler profiler_;
  bool dynamic_ = false;  // feature dynamic_shapes with at least one symbol
  std::atomic<uint64_t> recordings_at_load_{0}, cache_hits_{0}, cache_misses_{0};
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;  // the weight uploads

  // The frame slots (each owned by one thread at a time, as the frame queue
  // says) and the queue that orders them.
  std::vector<FrameSlot> slots_;
  std::unique_ptr<FrameQueue> queue_;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_EXECUTOR_H_
