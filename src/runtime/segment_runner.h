// Feature segment_program (docs/bundle-format.md "Segment program"): runs a
// frame of a segmented bundle on a frame slot. The control program
// (control_program.h) decides what runs; this file is its device side:
// each segment is a command buffer recorded per frame slot for the group
// counts and specialization values of its rows (so a loop body whose sizes
// do not change with the iteration is recorded once and replayed, its
// parameter slots rewritten before each run), submitted and waited for with
// the slot's segment fence; a read copies one element of the arena or the
// outputs buffer into the slot's small host-visible read-back buffer.
//
// A frame runs synchronously in send_input: every segment is waited for
// before the next one starts (a later segment's parameter values and sizes
// may depend on what an earlier one left), and the frame handed to the
// frame queue is a command buffer with only the output barrier (and the
// staging copy), carrying the shape the frame ended with.
#ifndef OAAXVK_RUNTIME_SEGMENT_RUNNER_H_
#define OAAXVK_RUNTIME_SEGMENT_RUNNER_H_

#include <vulkan/vulkan.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <vector>

#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/control_program.h"
#include "runtime/device_memory.h"
#include "runtime/frame_slot.h"
#include "runtime/recording.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

class SegmentRunner {
 public:
  // Submits `info` (with `fence`, may be VK_NULL_HANDLE) with queue access
  // serialized against every other submission of the executor.
  using Submit = std::function<Status(const VkSubmitInfo& info, VkFence fence)>;
  // `ctx`, `bundle` and `recorder` outlive the runner; `slots` frame slots.
  SegmentRunner(VkContext* ctx, const Bundle* bundle, Recorder* recorder, Submit submit, size_t slots);
  ~SegmentRunner();  // frees what Attach created (no frame may be in flight)
  SegmentRunner(const SegmentRunner&) = delete;
  SegmentRunner& operator=(const SegmentRunner&) = delete;

  // Creates slot `index`'s read-back buffer, segment fence and final
  // command buffer (on the slot's pool); once per slot, at load.
  Status Attach(size_t index, FrameSlot* slot);

  // Runs the control program for one frame whose inputs are in the slot's
  // input buffer, starting from `symbols` (the input-decided symbols as
  // send_input read them; decided ones are set to their min here), each
  // wait bounded by `deadline`. On success the slot's `current` is its
  // final recording, carrying the shape the frame ended with (output
  // shapes and bytes evaluated, and checked, there), ready to be submitted
  // as the frame. The caller owns the slot; its previous frame has completed.
  Status RunFrame(size_t index, FrameSlot* slot, std::vector<int64_t> symbols,
                  std::chrono::steady_clock::time_point deadline);

  // Segment command buffers recorded so far, and replays of recorded ones.
  uint64_t recorded() const { return recorded_; }
  uint64_t replayed() const { return replayed_; }

 private:
  struct SegmentRecording {
    uint32_t segment = 0;
    // The fields of the segment's rows it was recorded for.
    std::vector<std::array<uint32_t, 3>> groups;
    std::vector<std::vector<uint32_t>> spec;
    Recording rec;
  };
  struct SlotState {
    FrameSlot* slot = nullptr;
    Buffer readback;  // host-visible, coherent: what `read` copies into
    VkFence fence = VK_NULL_HANDLE;
    bool fence_pending = false;  // a wait on `fence` timed out: the work it guards may still run
    std::vector<VkCommandBuffer> read_cmds;  // per control.reads row, recorded at Attach
    std::list<SegmentRecording> recordings;  // most recently used first
    Recording final;                         // output barrier (+ staging copy), shape set per frame
  };
  class Host;  // the ControlHost of one frame

  // The slot's recording of `segment` at `shape`, recorded when missing
  // (evicting the least recently used beyond the cache's bound).
  StatusOr<VkCommandBuffer> SegmentCommands(SlotState* st, uint32_t segment, const ShapeInstance& shape);
  Status SubmitAndWait(SlotState* st, VkCommandBuffer cmd, std::chrono::steady_clock::time_point deadline,
                       const char* what);

  VkContext* ctx_;
  VkDevice dev_;
  const Bundle* bundle_;
  Recorder* recorder_;
  Submit submit_;
  std::vector<SlotState> slots_;
  std::atomic<uint64_t> recorded_{0}, replayed_{0};  // over every slot (slots run on different threads)
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_SEGMENT_RUNNER_H_
