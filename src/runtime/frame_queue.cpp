#include "runtime/frame_queue.h"

#include <algorithm>

#include "oaax_vulkan/tensors_util.h"

namespace oaaxvk::runtime {

namespace {

uint64_t RemainingNs(FrameQueue::Clock::time_point deadline) {
  const auto now = FrameQueue::Clock::now();
  if (now >= deadline) return 0;
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count());
}

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

FrameQueue::FrameQueue(size_t slots, uint64_t timeout_ms, Harvester harvest)
    : timeout_ms_(timeout_ms), harvest_(std::move(harvest)), states_(slots, SlotState::kFree), seqs_(slots, 0) {
  inflight_.reserve(slots);
}

FrameQueue::~FrameQueue() {
  for (auto& kv : done_)
    if (kv.second.outputs) FreeTensors(kv.second.outputs);
}

void FrameQueue::InsertInFlight(size_t slot) noexcept {
  // Sequence order, not arrival order: two threads whose harvests both timed
  // out put their frames back in whichever order they wake up.
  auto pos = std::upper_bound(inflight_.begin(), inflight_.end(), seqs_[slot],
                              [&](uint64_t seq, size_t s) { return seq < seqs_[s]; });
  inflight_.insert(pos, slot);  // size < capacity: no reallocation, cannot throw
}

FrameQueue::Result FrameQueue::HarvestOldest(std::unique_lock<std::mutex>& lk, Clock::time_point deadline,
                                             size_t* slot) {
  const size_t idx = inflight_.front();
  inflight_.erase(inflight_.begin());
  *slot = idx;
  states_[idx] = SlotState::kHarvesting;
  const uint64_t seq = seqs_[idx];
  lk.unlock();
  Result r = harvest_(idx, seq, RemainingNs(deadline));
  lk.lock();
  if (r.outcome == Outcome::kTimeout) {
    states_[idx] = SlotState::kInFlight;
    InsertInFlight(idx);
  } else if (r.outcome == Outcome::kDeviceLost) {
    lost_ = r.status;  // the slot stays kHarvesting: never reused
  }
  cv_.notify_all();
  return r;
}

StatusOr<size_t> FrameQueue::Acquire(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    if (!lost_.ok()) return lost_;
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i] == SlotState::kFree) {
        states_[i] = SlotState::kFilling;
        return i;
      }
    }
    if (!inflight_.empty()) {
      const uint64_t seq = seqs_[inflight_.front()];
      // Reserve the receiver's entry before anything changes (the only
      // allocation): a harvested frame then always has a place.
      auto entry = done_.emplace(seq, Done()).first;
      size_t idx = 0;
      Result r = HarvestOldest(lk, deadline, &idx);
      switch (r.outcome) {
        case Outcome::kOk:
        case Outcome::kFailed:
          entry->second.ready = true;
          entry->second.outputs = r.outputs;
          entry->second.error = std::move(r.status);
          states_[idx] = SlotState::kFree;
          cv_.notify_all();
          continue;
        case Outcome::kTimeout:
          done_.erase(entry);
          return DeadlineExceeded(StrFormat("every frame slot is busy and the oldest frame (#%llu) did not finish "
                                            "within receive_timeout_ms = %llu",
                                            U(seq), U(timeout_ms_)));
        case Outcome::kDeviceLost:
          done_.erase(entry);
          return lost_;
      }
    }
    // Every slot is being filled or harvested by another thread: wait for one.
    if (cv_.wait_until(lk, deadline) == std::cv_status::timeout &&
        std::none_of(states_.begin(), states_.end(), [](SlotState s) { return s == SlotState::kFree; }) &&
        lost_.ok())
      return DeadlineExceeded(StrFormat("no frame slot became free within receive_timeout_ms = %llu",
                                        U(timeout_ms_)));
  }
}

void FrameQueue::Release(size_t slot) noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  if (states_[slot] == SlotState::kFilling) states_[slot] = SlotState::kFree;
  cv_.notify_all();
}

Status FrameQueue::Submit(size_t slot, const std::function<Result()>& submit, uint64_t* seq) {
  std::lock_guard<std::mutex> lk(mu_);
  Status st = lost_;
  if (st.ok()) {
    Result r;
    try {
      r = submit();
    } catch (...) {  // host memory ran out before anything was submitted
      r.outcome = Outcome::kFailed;
      r.status = ResourceExhausted("out of memory");  // short enough to need no allocation
    }
    if (r.outcome == Outcome::kOk) {
      seqs_[slot] = next_send_seq_++;
      *seq = seqs_[slot];
      states_[slot] = SlotState::kInFlight;
      InsertInFlight(slot);
      cv_.notify_all();
      return Status::Ok();
    }
    if (r.outcome == Outcome::kDeviceLost) lost_ = r.status;
    st = std::move(r.status);
  }
  states_[slot] = SlotState::kFree;
  cv_.notify_all();
  return st;
}

Status FrameQueue::SubmitWithinFrame(const std::function<Result()>& submit) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!lost_.ok()) return lost_;
  Result r;
  try {
    r = submit();
  } catch (...) {
    return ResourceExhausted("out of memory");
  }
  if (r.outcome == Outcome::kDeviceLost) lost_ = r.status;
  return r.outcome == Outcome::kOk ? Status::Ok() : r.status;
}

StatusOr<tensors_struct*> FrameQueue::Receive(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    if (!lost_.ok()) return lost_;
    auto it = done_.find(next_recv_seq_);
    if (it != done_.end() && it->second.ready) {
      Done d = std::move(it->second);
      done_.erase(it);
      ++next_recv_seq_;
      cv_.notify_all();
      if (!d.error.ok()) return d.error;
      return d.outputs;
    }
    if (next_recv_seq_ == next_send_seq_) return FailedPrecondition("no pending input (send_input first)");
    const uint64_t want = next_recv_seq_;
    if (it == done_.end() && !inflight_.empty() && seqs_[inflight_.front()] == want) {
      size_t idx = 0;
      Result r = HarvestOldest(lk, deadline, &idx);
      switch (r.outcome) {
        case Outcome::kOk:
        case Outcome::kFailed:
          states_[idx] = SlotState::kFree;
          ++next_recv_seq_;
          cv_.notify_all();
          if (r.outcome == Outcome::kFailed) return r.status;
          return r.outputs;
        case Outcome::kTimeout:
          return DeadlineExceeded(StrFormat("frame #%llu did not finish within receive_timeout_ms = %llu (it stays "
                                            "queued; call receive_output again)",
                                            U(want), U(timeout_ms_)));
        case Outcome::kDeviceLost:
          return lost_;
      }
    }
    // Another thread is harvesting the oldest frame, or receiving an earlier
    // one: wait for it.
    if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && lost_.ok()) {
      auto again = done_.find(next_recv_seq_);
      if (next_recv_seq_ == want && (again == done_.end() || !again->second.ready))
        return DeadlineExceeded(StrFormat("frame #%llu did not finish within receive_timeout_ms = %llu (it stays "
                                          "queued; call receive_output again)",
                                          U(want), U(timeout_ms_)));
    }
  }
}

FrameQueue::SlotState FrameQueue::state(size_t slot) const {
  std::lock_guard<std::mutex> lk(mu_);
  return states_[slot];
}

std::vector<uint64_t> FrameQueue::InFlightSeqs() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<uint64_t> out;
  for (size_t s : inflight_) out.push_back(seqs_[s]);
  return out;
}

Status FrameQueue::lost() const {
  std::lock_guard<std::mutex> lk(mu_);
  return lost_;
}

}  // namespace oaaxvk::runtime
