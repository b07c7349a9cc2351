// The frame queue's state machine (src/runtime/frame_queue.h) driven with a
// fake device: each slot has a fake fence that the test signals, and a
// harvest waits on it for at most its timeout, or until the test lets a
// blocked harvest time out. Deterministic: every interleaving the tests need
// is forced with gates, never with sleeps.
#include "runtime/frame_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "oaax_vulkan/tensors_util.h"

namespace oaaxvk::runtime {
namespace {

using Clock = FrameQueue::Clock;
using Outcome = FrameQueue::Outcome;

// Outputs that name their frame: one int64 tensor holding the sequence number.
tensors_struct* FrameOutputs(uint64_t seq) {
  tensors_struct* t = AllocTensors(1);
  const size_t shape[1] = {1};
  const int64_t v = static_cast<int64_t>(seq);
  EXPECT_TRUE(SetTensor(t, 0, "seq", DATA_TYPE_INT64, shape, 1, &v, 8));
  return t;
}

int64_t SeqOf(tensors_struct* t) {
  int64_t v = -1;
  memcpy(&v, t->data[0], 8);
  return v;
}

// The fake device. signaled[slot]: the slot's frame completed. hold[slot]:
// a harvest of the slot blocks until the test releases it, then times out.
// What each harvest call should report instead of waiting can be set per slot.
class FakeDevice {
 public:
  explicit FakeDevice(size_t slots) : signaled_(slots, false), hold_(slots, false), entered_(slots, 0), fail_(slots) {}

  FrameQueue::Result Harvest(size_t slot, uint64_t seq, uint64_t timeout_ns) {
    std::unique_lock<std::mutex> lk(mu_);
    ++entered_[slot];
    cv_.notify_all();
    FrameQueue::Result r;
    if (fail_[slot].outcome != Outcome::kOk) return fail_[slot];
    if (hold_[slot]) {
      cv_.wait(lk, [&] { return !hold_[slot]; });
      r.outcome = Outcome::kTimeout;
      return r;
    }
    if (!cv_.wait_for(lk, std::chrono::nanoseconds(timeout_ns), [&] { return bool(signaled_[slot]); })) {
      r.outcome = Outcome::kTimeout;
      return r;
    }
    signaled_[slot] = false;  // the next frame in this slot starts unsignaled
    r.outputs = FrameOutputs(seq);
    return r;
  }
  void Signal(size_t slot) {
    std::lock_guard<std::mutex> lk(mu_);
    signaled_[slot] = true;
    cv_.notify_all();
  }
  void Hold(size_t slot, bool hold) {
    std::lock_guard<std::mutex> lk(mu_);
    hold_[slot] = hold;
    cv_.notify_all();
  }
  void Fail(size_t slot, Outcome outcome, Status status) {
    std::lock_guard<std::mutex> lk(mu_);
    fail_[slot].outcome = outcome;
    fail_[slot].status = std::move(status);
  }
  // Waits until slot's harvest has been entered `n` times in total.
  void AwaitEntered(size_t slot, int n) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return entered_[slot] >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char> signaled_, hold_;
  std::vector<int> entered_;
  std::vector<FrameQueue::Result> fail_;
};

struct Harness {
  explicit Harness(size_t slots, uint64_t timeout_ms = 50)
      : device(slots), queue(slots, timeout_ms, [this](size_t s, uint64_t seq, uint64_t ns) {
          return device.Harvest(s, seq, ns);
        }) {}
  Clock::time_point Deadline(int ms = 50) { return Clock::now() + std::chrono::milliseconds(ms); }
  // Acquires and submits a frame; returns its slot.
  size_t SendOne() {
    StatusOr<size_t> slot = queue.Acquire(Deadline());
    EXPECT_TRUE(slot.ok()) << slot.status().ToString();
    uint64_t seq = 0;
    Status st = queue.Submit(slot.value(), [] { return FrameQueue::Result(); }, &seq);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return slot.value();
  }
  // Receives one frame and returns its sequence number (-1 on failure).
  int64_t ReceiveOne(int ms = 1000) {
    StatusOr<tensors_struct*> r = queue.Receive(Deadline(ms));
    if (!r.ok()) return -1;
    const int64_t seq = SeqOf(r.value());
    FreeTensors(r.value());
    return seq;
  }
  FakeDevice device;
  FrameQueue queue;
};

// Submissions within a frame (segments, feature segment_program) keep the
// slot with its owner, queue nothing, and make a device loss sticky.
TEST(FrameQueue, SubmitWithinFrameKeepsTheSlotAndMakesALossSticky) {
  Harness h(2);
  StatusOr<size_t> slot = h.queue.Acquire(h.Deadline());
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  int calls = 0;
  Status st = h.queue.SubmitWithinFrame([&] {
    ++calls;
    return FrameQueue::Result();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(h.queue.state(slot.value()), FrameQueue::SlotState::kFilling);
  EXPECT_TRUE(h.queue.InFlightSeqs().empty());
  st = h.queue.SubmitWithinFrame([] { return FrameQueue::Result{Outcome::kFailed, Internal("submit failed"), nullptr}; });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_TRUE(h.queue.lost().ok());  // an ordinary failure is not sticky
  st = h.queue.SubmitWithinFrame(
      [] { return FrameQueue::Result{Outcome::kDeviceLost, Unavailable("device lost"), nullptr}; });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  st = h.queue.SubmitWithinFrame([&] {
    ++calls;
    return FrameQueue::Result();
  });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);  // not called after the loss
  EXPECT_EQ(calls, 1);
  h.queue.Release(slot.value());
}

TEST(FrameQueue, FramesAreReceivedInSubmissionOrder) {
  Harness h(3);
  std::vector<size_t> slots;
  for (int i = 0; i < 3; ++i) slots.push_back(h.SendOne());
  EXPECT_EQ(h.queue.InFlightSeqs(), (std::vector<uint64_t>{0, 1, 2}));
  for (int i = 2; i >= 0; --i) h.device.Signal(slots[i]);  // completion order does not matter
  for (int64_t want = 0; want < 3; ++want) EXPECT_EQ(h.ReceiveOne(), want);
  StatusOr<tensors_struct*> none = h.queue.Receive(h.Deadline());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("no pending input"), std::string::npos);
}

TEST(FrameQueue, SendHarvestsTheOldestFrameForTheReceiverWhenEverySlotIsBusy) {
  Harness h(2);
  const size_t a = h.SendOne(), b = h.SendOne();
  h.device.Signal(a);
  const size_t c = h.SendOne();  // harvests frame 0 into the receiver's queue, reuses its slot
  EXPECT_EQ(c, a);
  h.device.Signal(b);
  h.device.Signal(c);
  EXPECT_EQ(h.ReceiveOne(), 0);
  EXPECT_EQ(h.ReceiveOne(), 1);
  EXPECT_EQ(h.ReceiveOne(), 2);
}

TEST(FrameQueue, TimedOutFrameStaysQueuedAndIsReceivedLater) {
  Harness h(1);
  const size_t a = h.SendOne();
  StatusOr<tensors_struct*> r = h.queue.Receive(h.Deadline(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("frame #0 did not finish within receive_timeout_ms = 50"), std::string::npos)
      << r.status().message();
  StatusOr<size_t> busy = h.queue.Acquire(h.Deadline(5));
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.status().message().find("every frame slot is busy and the oldest frame (#0)"), std::string::npos)
      << busy.status().message();
  EXPECT_EQ(h.queue.InFlightSeqs(), (std::vector<uint64_t>{0}));
  h.device.Signal(a);
  EXPECT_EQ(h.ReceiveOne(), 0);
}

// A receive_output and a send_input that found every slot busy harvest
// frames 0 and 1 at once; both time out, frame 0 first. Putting each back at
// the front of the in-flight list would leave [1, 0]: frame 1 first, so
// receive_output (which harvests only the frame it waits for, at the front)
// would fail with "did not finish" forever, even once the device is idle.
TEST(FrameQueue, TwoHarvestsThatTimeOutPutTheirFramesBackInSequenceOrder) {
  Harness h(2);
  const size_t a = h.SendOne(), b = h.SendOne();
  h.device.Hold(a, true);
  h.device.Hold(b, true);
  std::thread receiver([&] {
    StatusOr<tensors_struct*> r = h.queue.Receive(h.Deadline(10000));
    EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  });
  h.device.AwaitEntered(a, 1);  // the receiver holds frame 0
  std::thread sender([&] {
    StatusOr<size_t> r = h.queue.Acquire(h.Deadline(10000));
    EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  });
  h.device.AwaitEntered(b, 1);  // the sender holds frame 1
  EXPECT_TRUE(h.queue.InFlightSeqs().empty());
  h.device.Hold(a, false);  // frame 0's harvest times out first...
  receiver.join();
  h.device.Hold(b, false);  // ...then frame 1's
  sender.join();
  EXPECT_EQ(h.queue.InFlightSeqs(), (std::vector<uint64_t>{0, 1}));
  // The device finishes: both frames arrive, in order.
  h.device.Signal(a);
  h.device.Signal(b);
  EXPECT_EQ(h.ReceiveOne(), 0);
  EXPECT_EQ(h.ReceiveOne(), 1);
}

TEST(FrameQueue, AFailedFrameFailsAloneAndItsSlotIsReused) {
  Harness h(2);
  const size_t a = h.SendOne();
  const size_t b = h.SendOne();
  h.device.Fail(a, Outcome::kFailed, ResourceExhausted("out of host memory while copying the outputs"));
  h.device.Signal(b);
  StatusOr<tensors_struct*> r = h.queue.Receive(h.Deadline());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(h.queue.lost().ok());
  EXPECT_EQ(h.queue.state(a), FrameQueue::SlotState::kFree);
  EXPECT_EQ(h.ReceiveOne(), 1);
  h.device.Fail(a, Outcome::kOk, Status::Ok());
  const size_t c = h.SendOne();
  h.device.Signal(c);
  EXPECT_EQ(h.ReceiveOne(), 2);
}

TEST(FrameQueue, DeviceLossIsStickyAndFailsEveryLaterCall) {
  Harness h(2);
  const size_t a = h.SendOne();
  h.SendOne();
  h.device.Fail(a, Outcome::kDeviceLost, Unavailable("vkWaitForFences failed: VK_ERROR_DEVICE_LOST"));
  StatusOr<tensors_struct*> r = h.queue.Receive(h.Deadline());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.queue.Receive(h.Deadline()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.queue.Acquire(h.Deadline()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.queue.state(a), FrameQueue::SlotState::kHarvesting);  // never reused
}

TEST(FrameQueue, AFailedSubmitFreesTheSlotAndOnlyDeviceLossIsSticky) {
  Harness h(1);
  uint64_t seq = 99;
  StatusOr<size_t> slot = h.queue.Acquire(h.Deadline());
  ASSERT_TRUE(slot.ok());
  Status st = h.queue.Submit(
      slot.value(), [] { return FrameQueue::Result{Outcome::kFailed, ResourceExhausted("vkQueueSubmit failed"), nullptr}; },
      &seq);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(seq, 99u);
  EXPECT_EQ(h.queue.state(slot.value()), FrameQueue::SlotState::kFree);
  EXPECT_EQ(h.queue.Receive(h.Deadline()).status().code(), StatusCode::kFailedPrecondition);  // nothing was queued
  slot = h.queue.Acquire(h.Deadline());
  ASSERT_TRUE(slot.ok());
  st = h.queue.Submit(
      slot.value(), [] { return FrameQueue::Result{Outcome::kDeviceLost, Unavailable("device lost"), nullptr}; }, &seq);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.queue.Acquire(h.Deadline()).status().code(), StatusCode::kUnavailable);
}

TEST(FrameQueue, ASubmitThatThrowsFreesTheSlot) {
  Harness h(1);
  uint64_t seq = 99;
  StatusOr<size_t> slot = h.queue.Acquire(h.Deadline());
  ASSERT_TRUE(slot.ok());
  Status st = h.queue.Submit(
      slot.value(), []() -> FrameQueue::Result { throw std::bad_alloc(); }, &seq);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(h.queue.state(slot.value()), FrameQueue::SlotState::kFree);
  EXPECT_TRUE(h.queue.lost().ok());
  h.device.Signal(h.SendOne());
  EXPECT_EQ(h.ReceiveOne(), 0);
}

TEST(FrameQueue, ReleasedSlotIsFreeAgain) {
  Harness h(1);
  StatusOr<size_t> slot = h.queue.Acquire(h.Deadline());
  ASSERT_TRUE(slot.ok());
  EXPECT_EQ(h.queue.state(slot.value()), FrameQueue::SlotState::kFilling);
  EXPECT_EQ(h.queue.Acquire(h.Deadline(5)).status().code(), StatusCode::kDeadlineExceeded);
  h.queue.Release(slot.value());
  EXPECT_EQ(h.queue.state(slot.value()), FrameQueue::SlotState::kFree);
  EXPECT_TRUE(h.queue.Acquire(h.Deadline()).ok());
}

// Several producers and consumers at once, with frames completing at random:
// every frame is received exactly once and each consumer sees increasing
// sequence numbers.
TEST(FrameQueue, ManyProducersAndConsumersReceiveEveryFrameOnceInOrder) {
  constexpr int kFrames = 2000, kProducers = 3, kConsumers = 3;
  Harness h(4, 1000);
  std::atomic<bool> stop{false};
  std::thread completer([&] {  // the "GPU": completes whatever is in flight
    while (!stop) {
      for (size_t s = 0; s < 4; ++s) h.device.Signal(s);
      std::this_thread::yield();
    }
  });
  std::atomic<int> sent{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&] {
      while (sent.fetch_add(1) < kFrames) {
        StatusOr<size_t> slot = h.queue.Acquire(h.Deadline(10000));
        ASSERT_TRUE(slot.ok()) << slot.status().ToString();
        uint64_t seq = 0;
        ASSERT_TRUE(h.queue.Submit(slot.value(), [] { return FrameQueue::Result(); }, &seq).ok());
      }
    });
  std::mutex mu;
  std::vector<int> count(kFrames, 0);
  std::atomic<int> received{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&] {
      int64_t last = -1;
      const auto give_up = Clock::now() + std::chrono::seconds(60);
      while (received < kFrames && Clock::now() < give_up) {
        StatusOr<tensors_struct*> r = h.queue.Receive(h.Deadline(1000));
        if (!r.ok()) {
          ASSERT_TRUE(r.status().code() == StatusCode::kFailedPrecondition ||
                      r.status().code() == StatusCode::kDeadlineExceeded)
              << r.status().ToString();
          std::this_thread::yield();
          continue;
        }
        const int64_t seq = SeqOf(r.value());
        FreeTensors(r.value());
        EXPECT_GT(seq, last);
        last = seq;
        std::lock_guard<std::mutex> lk(mu);
        ASSERT_LT(seq, kFrames);
        ++count[static_cast<size_t>(seq)];
        ++received;
      }
    });
  for (std::thread& t : producers) t.join();
  for (std::thread& t : consumers) t.join();
  stop = true;
  completer.join();
  EXPECT_EQ(received.load(), kFrames);
  for (int f = 0; f < kFrames; ++f) ASSERT_EQ(count[static_cast<size_t>(f)], 1) << "frame " << f;
}

}  // namespace
}  // namespace oaaxvk::runtime
