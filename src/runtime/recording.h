// Shape instances and command recording: the values a shape gives the
// fields of a bundle (group counts, specialization values, parameter-buffer
// words, output shapes), and the command buffers of a frame slot recorded for
// them, with the pipelines each recording holds.
#ifndef OAAXVK_RUNTIME_RECORDING_H_
#define OAAXVK_RUNTIME_RECORDING_H_

#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/pipelines.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

struct FrameSlot;  // runtime/frame_slot.h

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
  std::vector<VkPipeline> pipelines;  // by dispatch: the pipeline it binds
  std::vector<Pipelines::Key> held;   // specialized pipelines acquired for it (released when evicted)
};

// Derives shape instances and records frame slots' command buffers. `ctx`,
// `bundle` and `pipelines` (already created) outlive it.
class Recorder {
 public:
  Recorder(VkContext* ctx, const Bundle* bundle, Pipelines* pipelines)
      : ctx_(ctx), dev_(ctx->device()), bundle_(bundle), pipelines_(pipelines) {}

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
  Status Record(FrameSlot* slot, ShapeInstance shape);
  // The load-time warm-up of `slot` (which the caller owns; its current
  // recording set): a new command buffer of the slot's pool that dispatches
  // each distinct pipeline of the current recording once, with one
  // workgroup, the descriptor sets of the first dispatch that uses it and a
  // barrier between dispatches. Every invocation of a dispatch is
  // range-checked, so a subset of them is as memory-safe as the whole; what
  // it writes is never read as a result. Drivers that compile at the first
  // dispatch compile every pipeline, at a fraction of an inference's cost.
  // The caller submits it and frees it from the slot's pool.
  Status RecordWarmUp(FrameSlot* slot, VkCommandBuffer* cmd);
  // Feature segment_program: records dispatch rows [begin, end) of `shape`
  // into a new command buffer of `slot` (which the caller owns), between the
  // input barrier (and staging copy) and the output barrier (and staging
  // copy), acquiring the pipelines the rows need; *rec (cmd and held
  // pipelines; its shape is left alone) is the caller's to Free. A range
  // that starts after row 0 begins with a shader-write barrier, so it sees
  // what the previous submission wrote; rows with a group count of 0 are
  // not dispatched; no timestamps are written.
  Status RecordRows(FrameSlot* slot, const ShapeInstance& shape, uint32_t begin, uint32_t end, Recording* rec);
  // Frees rec's command buffer (from `slot`'s pool; not in flight) and
  // releases its pipelines.
  void Free(FrameSlot* slot, Recording* rec);
  // Frees a recording of `slot` (not in flight) and releases its pipelines.
  void Evict(FrameSlot* slot, std::list<Recording>::iterator it);
  // Feature parameter_buffer: copies the parameter values of the slot's
  // current recording into its parameter buffer (the caller owns the slot and
  // its previous frame has completed); nothing for bundles without slots.
  static void WriteParams(FrameSlot* slot);
  // Command buffers recorded so far.
  uint64_t recordings() const { return recordings_.load(); }

 private:
  // Rows [begin, end); timestamps only for the whole program (begin = 0, end = every row).
  Status RecordCommands(FrameSlot* slot, VkCommandBuffer cmd, const ShapeInstance& shape,
                        const std::vector<VkPipeline>& pipelines, size_t begin, size_t end);
  Status RecordInto(FrameSlot* slot, const ShapeInstance& shape, size_t begin, size_t end, Recording* rec);

  VkContext* ctx_;
  VkDevice dev_;
  const Bundle* bundle_;
  Pipelines* pipelines_;
  std::atomic<uint64_t> recordings_{0};
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_RECORDING_H_
