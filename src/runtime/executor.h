// Executes a validated Bundle on a VkContext: device buffers, pipelines,
// descriptor sets, one command buffer per frame slot recorded once at load
// (feature dynamic_shapes: one per shape, kept per slot in an LRU cache), one
// fence per slot, and the FIFO frame queue shared by send/receive.
#ifndef OAAXVK_RUNTIME_EXECUTOR_H_
#define OAAXVK_RUNTIME_EXECUTOR_H_

#include <vulkan/vulkan.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <array>
#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/status.h"
#include "oaax_vulkan/tensors_util.h"
#include "runtime/buffer_segments.h"
#include "runtime/bundle.h"
#include "runtime/frame_queue.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

struct ExecutorOptions {
  uint32_t frames_in_flight = 2;
  uint64_t timeout_ms = 5000;   // bound of every wait for a frame
  std::string pipeline_cache;   // "" = no on-disk cache
  bool force_staging = false;   // test knob: staged I/O even on host-visible devices
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
  size_t pipeline_count() const;
  // Command buffers recorded so far: one per frame slot at load, plus one per
  // shape-cache miss (feature dynamic_shapes).
  uint64_t recordings() const { return recordings_.load(); }
  // Feature dynamic_shapes: send_input calls whose shape had a recording in
  // the chosen slot (hits) or needed one (misses).
  uint64_t shape_cache_hits() const { return cache_hits_.load(); }
  uint64_t shape_cache_misses() const { return cache_misses_.load(); }

  // What ValidateInput found, per tensor of the host's struct.
  struct CheckedInput {
    std::vector<size_t> model_index;  // the model input each tensor is
    std::vector<uint64_t> nbytes;     // its bytes at its actual shape
    std::vector<int64_t> symbols;     // feature dynamic_shapes: the symbol values (empty for static bundles)
  };
  // Validates `in` against the model inputs without touching it.
  Status ValidateInput(const tensors_struct* in, CheckedInput* checked) const;
  // Feature value_symbols: reads the value symbols from the inputs' data into
  // checked->symbols (seen[m]: the host tensor index of model input m) and
  // checks their ranges and the bundle's guards.
  Status ReadValueSymbols(const tensors_struct* in, const std::vector<int>& seen, CheckedInput* checked) const;
  // Validates, copies into a free frame slot (waiting for the oldest frame
  // when all are busy), submits, and on success frees `in`.
  Status Send(tensors_struct* in);
  // The outputs of the oldest frame not yet received (caller frees).
  StatusOr<tensors_struct*> Receive();

 private:
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    VkDeviceSize size = 0;
  };
  // One bundle buffer kind in one or more VkBuffers (buffer_segments.h):
  // buffers[i] holds bytes [segments[i].begin, segments[i].end).
  struct SegmentedBuffer {
    std::vector<Segment> segments;
    std::vector<Buffer> buffers;
  };
  using PipelineKey = std::pair<uint32_t, std::vector<uint32_t>>;  // kernel, specialization values
  struct PipelineEntry {
    VkPipeline pipeline = VK_NULL_HANDLE;
    uint32_t users = 0;      // recordings holding it (dynamic specialization)
    bool permanent = false;  // a dispatch whose specialization is static uses it: kept until destruction
  };
  // The values a shape gives the fields of the bundle (feature
  // dynamic_shapes; for static bundles the stored fields).
  struct ShapeInstance {
    std::vector<int64_t> symbols;                 // the shape (empty for static bundles)
    std::vector<std::array<uint32_t, 3>> groups;  // per dispatch (of the chosen rows)
    // Per dispatch whose specialization range holds an expression: its
    // evaluated values (empty for the others).
    std::vector<std::vector<uint32_t>> spec;
    // Feature parameter_buffer: the values of the parameter slots (what the
    // slot's parameter buffer holds while a frame of this shape runs).
    std::vector<uint32_t> params;
    std::vector<std::vector<uint64_t>> output_shapes;
    std::vector<uint64_t> output_nbytes;
  };
  // One recorded command buffer of a slot and what it was recorded for.
  struct Recording {
    ShapeInstance shape;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    std::vector<PipelineKey> held;  // specialized pipelines acquired for it (released when evicted)
  };
  struct Slot {
    SegmentedBuffer arena;
    Buffer in, out, in_stage, out_stage;
    bool staged = false;
    std::vector<VkDescriptorSet> sets;
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

  Executor(VkContext* ctx, Bundle bundle, const ExecutorOptions& options);
  Status Init();
  Status CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                      VkMemoryPropertyFlags preferred, bool map, const char* what, Buffer* out);
  Status CreateIoBuffer(VkDeviceSize size, bool is_input, const char* what, Slot* slot);
  void DestroyBuffer(Buffer* b);
  // Creates the device-local `*buffer` of `n` bytes and copies `bytes` into
  // it through a staging buffer (one submit, waited for); `what` names the
  // buffer in errors ("weights", "weights_f16").
  Status UploadBuffer(const uint8_t* bytes, VkDeviceSize n, Buffer* buffer, const char* what);
  // Buffer kind `kind` (kWeights, kWeightsF16 or kArena) in as many
  // device-local buffers as alloc_limit_ requires, each binding inside one;
  // `upload`: the bundle's bytes of the kind to copy in (nullptr: none).
  Status CreateSegmented(uint32_t kind, const uint8_t* upload, const char* what, SegmentedBuffer* out);
  void DestroySegmented(SegmentedBuffer* b);
  // The buffer and the offset in it of the binding at bundle offset `offset`.
  static std::pair<VkBuffer, uint64_t> Locate(const SegmentedBuffer& b, uint64_t offset);
  Status CreatePipelines();
  // One compute pipeline of `kernel` specialized with `values`; `what`
  // names it in errors.
  StatusOr<VkPipeline> CreatePipeline(uint32_t kernel, const std::vector<uint32_t>& values, const std::string& what);
  // The pipeline of (kernel, values), created when no recording holds it
  // yet; counted until ReleasePipeline.
  StatusOr<VkPipeline> AcquirePipeline(uint32_t kernel, const std::vector<uint32_t>& values, size_t dispatch);
  // Destroys the pipeline when its last holder releases it (never a
  // permanent one). Callers guarantee no frame in flight uses it.
  void ReleasePipeline(const PipelineKey& key);
  Status CreateSlots();
  // The stored fields (static bundles; and the maximum shape of a dynamic one).
  ShapeInstance StaticInstance() const;
  // Feature dynamic_shapes: evaluates the shape program for `symbols` and
  // derives every field; fails (naming the dispatch, output or instruction
  // and the symbol values) on an overflow, a group count outside
  // 1..maxComputeWorkGroupCount, or an output larger than its planned bytes.
  // check_outputs = false (only for the load-time recording of a bundle with
  // value symbols): output shapes that do not fit their bytes are not an error.
  StatusOr<ShapeInstance> Instantiate(const std::vector<int64_t>& symbols, bool check_outputs = true) const;
  // Records `shape` into a new command buffer of `slot` (which the caller
  // owns) and puts it first in the slot's cache.
  Status Record(Slot* slot, ShapeInstance shape);
  // Feature parameter_buffer: copies the parameter values of the slot's
  // current recording into its parameter buffer (the caller owns the slot and
  // its previous frame has completed); nothing for bundles without slots.
  void WriteParams(Slot* slot);
  // Frees a recording of `slot` (not in flight) and releases its pipelines.
  void Evict(Slot* slot, std::list<Recording>::iterator it);
  Status RecordCommands(Slot* slot, VkCommandBuffer cmd, const ShapeInstance& shape,
                        const std::vector<VkPipeline>& pipelines);
  Status WarmUp();
  // profile: decides whether the queue family has timestamps (logs when not).
  void SetUpProfiling();
  // profile: reads `slot`'s timestamps (frame #`seq` has completed) and logs
  // the per-dispatch times, the slowest dispatches and the per-kernel totals.
  void LogProfile(const Slot& slot, uint64_t seq);
  void SavePipelineCache();
  // The frame queue's harvester: waits (bounded) for slot `slot`'s fence and
  // copies frame #`seq`'s outputs into a new tensors_struct. Only
  // VK_ERROR_DEVICE_LOST is a device loss; any other error (a failed wait,
  // host memory running out, a kernel that could not compute an extent)
  // fails this frame alone. Never throws.
  FrameQueue::Result Harvest(size_t slot, uint64_t seq, uint64_t timeout_ns) noexcept;
  // Makes the slot (owned by the caller, from FrameQueue::Acquire) ready for
  // a submit: confirms that a failed wait's frame has completed, then
  // unsignals the fence.
  Status PrepareFence(Slot* slot, uint64_t timeout_ns);
  // The frame's visible outputs at their actual shapes (extent outputs trim
  // the outputs they count). nullptr when host memory ran out, or with
  // *frame_error set when a kernel reported that it could not compute an
  // extent (a count of -1: its loops were cut short).
  tensors_struct* BuildOutputs(const uint8_t* host_out, const ShapeInstance& shape, Status* frame_error) const;

  VkContext* ctx_;
  VkDevice dev_;
  Bundle bundle_;
  ExecutorOptions options_;

  SegmentedBuffer weights_;
  SegmentedBuffer weights_f16_;  // kind 4 (feature device_variants): only when a chosen row binds it
  // The most bytes one VkBuffer may take: min(maxMemoryAllocationSize, the
  // largest heap).
  uint64_t alloc_limit_ = UINT64_MAX;
  // By kernel index; VK_NULL_HANDLE for kernels no chosen row uses.
  std::vector<VkShaderModule> modules_;
  std::vector<VkDescriptorSetLayout> set_layouts_;
  // Feature parameter_buffer: set 1 of every pipeline layout (binding 0, a
  // uniform buffer); VK_NULL_HANDLE for bundles without the feature.
  VkDescriptorSetLayout params_layout_ = VK_NULL_HANDLE;
  std::vector<VkPipelineLayout> pipeline_layouts_;
  // Every pipeline alive, by (kernel, specialization values); guarded by
  // pipelines_mu_ (send_input may create and release them on several threads).
  mutable std::mutex pipelines_mu_;
  std::map<PipelineKey, PipelineEntry> pipelines_;
  size_t peak_pipelines_ = 0;
  // By dispatch: the pipeline of a dispatch with static specialization;
  // VK_NULL_HANDLE where the specialization depends on the shape
  // (dynamic_spec_), whose pipelines each recording acquires.
  std::vector<VkPipeline> dispatch_pipeline_;
  std::vector<bool> dynamic_spec_;
  bool dynamic_ = false;  // feature dynamic_shapes with at least one symbol
  std::atomic<uint64_t> recordings_{0}, recordings_at_load_{0}, cache_hits_{0}, cache_misses_{0};
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  bool profiling_ = false;            // profile requested and timestamps available
  uint64_t timestamp_mask_ = 0;       // timestampValidBits as a mask
  double timestamp_period_ns_ = 1.0;  // VkPhysicalDeviceLimits::timestampPeriod

  // The frame slots (each owned by one thread at a time, as the frame queue
  // says) and the queue that orders them.
  std::vector<Slot> slots_;
  std::unique_ptr<FrameQueue> queue_;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_EXECUTOR_H_
