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
  std::vector<Pipelines::Key> held;  // specialized pipelines acquired for it (released when evicted)
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
  // Frees a recording of `slot` (not in flight) and releases its pipelines.
  void Evict(FrameSlot* slot, std::list<Recording>::iterator it);
  // Feature parameter_buffer: copies the parameter values of the slot's
  // current recording into its parameter buffer (the caller owns the slot and
  // its previous frame has completed); nothing for bundles without slots.
  static void WriteParams(FrameSlot* slot);
  // Command buffers recorded so far.
  uint64_t recordings() const { return recordings_.load(); }

 private:
  Status RecordCommands(FrameSlot* slot, VkCommandBuffer cmd, const ShapeInstance& shape,
                        const std::vector<VkPipeline>& pipelines);

  VkContext* ctx_;
  VkDevice dev_;
  const Bundle* bundle_;
  Pipelines* pipelines_;
  std::atomic<uint64_t> recordings_{0};
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_RECORDING_H_
