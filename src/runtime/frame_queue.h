// The FIFO frame queue shared by send_input and receive_output: which frame
// slot is free, being filled, in flight or being harvested; the order of the
// frames in flight; the outputs send_input harvested on the receiver's
// behalf; and the sticky device-loss status. No Vulkan here: harvesting a
// frame (waiting for its fence, copying its outputs) and submitting one are
// callbacks, so the state machine is testable with a fake device.
//
// Threads: any number of producers (send_input) and consumers
// (receive_output) may call concurrently. A frame is harvested by exactly one
// thread, with the queue's lock released; every frame's outputs reach the
// receivers exactly once, in submission order.
#ifndef OAAXVK_RUNTIME_FRAME_QUEUE_H_
#define OAAXVK_RUNTIME_FRAME_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::runtime {

class FrameQueue {
 public:
  using Clock = std::chrono::steady_clock;
  enum class SlotState { kFree, kFilling, kInFlight, kHarvesting };
  // How a submit or a harvest ended. kFailed: that frame failed (the device
  // is fine; the slot is free again); kDeviceLost: every later call fails.
  enum class Outcome { kOk, kTimeout, kFailed, kDeviceLost };
  struct Result {
    Outcome outcome = Outcome::kOk;
    Status status;                      // why, unless kOk
    tensors_struct* outputs = nullptr;  // a harvest's outputs (kOk only; the queue owns them until received)
  };
  // Waits at most `timeout_ns` for frame #`seq` in `slot` and returns its
  // outputs. Called with the queue's lock released, by the one thread that
  // harvests this frame; must not throw.
  using Harvester = std::function<Result(size_t slot, uint64_t seq, uint64_t timeout_ns)>;

  // `timeout_ms` is only quoted in messages (receive_timeout_ms).
  FrameQueue(size_t slots, uint64_t timeout_ms, Harvester harvest);
  ~FrameQueue();  // frees the outputs harvested but never received
  FrameQueue(const FrameQueue&) = delete;
  FrameQueue& operator=(const FrameQueue&) = delete;

  // A free slot, now kFilling and owned by the caller until Submit or
  // Release. When every slot is busy, harvests the oldest frame in flight
  // (its outputs wait for the receiver) or waits for a slot, until
  // `deadline`.
  StatusOr<size_t> Acquire(Clock::time_point deadline);
  // Gives back a slot from Acquire that is not submitted.
  void Release(size_t slot) noexcept;
  // Calls `submit` with the queue's lock held (it serializes queue access);
  // when it succeeds the slot is in flight as the newest frame and *seq is
  // its number. Nothing allocates after `submit` succeeds, so a submitted
  // frame is never reported as failed. On failure (an exception from
  // `submit` included, which must then come before anything is submitted)
  // the slot is free again. Either way the caller no longer owns the slot.
  Status Submit(size_t slot, const std::function<Result()>& submit, uint64_t* seq);
  // Calls `submit` with the queue's lock held, for work a slot's owner
  // submits before its frame (the segments of feature segment_program); the
  // slot stays the caller's. A device loss it reports is sticky, as in
  // Submit; after one, `submit` is not called and the loss is returned.
  Status SubmitWithinFrame(const std::function<Result()>& submit);
  // The outputs of the oldest frame not yet received (the caller owns them),
  // harvesting it when needed, until `deadline`.
  StatusOr<tensors_struct*> Receive(Clock::time_point deadline);

  // For tests and logs.
  SlotState state(size_t slot) const;
  std::vector<uint64_t> InFlightSeqs() const;  // oldest first
  Status lost() const;

 private:
  struct Done {
    bool ready = false;  // false: the entry is reserved while its frame is being harvested
    tensors_struct* outputs = nullptr;
    Status error;  // the frame failed (outputs is nullptr)
  };
  // Harvests the oldest frame in flight with the lock released (`lk` holds
  // mu_ on entry and on return). On kTimeout the frame goes back into the
  // in-flight list at its place in sequence order; on kDeviceLost lost_ is
  // set; otherwise the caller frees the slot.
  Result HarvestOldest(std::unique_lock<std::mutex>& lk, Clock::time_point deadline, size_t* slot);
  void InsertInFlight(size_t slot) noexcept;

  const uint64_t timeout_ms_;
  const Harvester harvest_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SlotState> states_;
  std::vector<uint64_t> seqs_;   // by slot: the sequence number of its frame
  // Slots in flight, ascending sequence number. Capacity = slot count,
  // reserved up front: inserting never allocates.
  std::vector<size_t> inflight_;
  std::map<uint64_t, Done> done_;  // by sequence number
  uint64_t next_send_seq_ = 0;
  uint64_t next_recv_seq_ = 0;
  Status lost_;
};

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_FRAME_QUEUE_H_
