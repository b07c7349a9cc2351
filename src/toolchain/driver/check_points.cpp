#include "toolchain/driver/check_points.h"

#include <algorithm>
#include <deque>
#include <future>
#include <thread>

#include "toolchain/ir/limits.h"

namespace oaaxvk::toolchain {

size_t CheckPointWorkers() {
  const size_t hw = std::thread::hardware_concurrency();  // 0 when unknown
  return std::clamp<size_t>(hw, 1, kMaxCheckPointWorkers);
}

Status CompileAndCheckInOrder(size_t count, size_t workers, const ConversionLimits* limits,
                              const std::function<StatusOr<CompileResult>(size_t k)>& compile,
                              const std::function<Status(size_t k, const CompileResult& r)>& check,
                              const std::function<void(size_t done)>& progress) {
  workers = std::max<size_t>(workers, 1);
  auto run = [&compile, limits](size_t k) -> StatusOr<CompileResult> {
    const LimitsScope scope(limits);  // the thread's limits: the conversion's
    return compile(k);
  };
  // A window of at most `workers` compiles: the oldest is checked while the
  // others run, and the next point starts as soon as it is done. A future's
  // destructor waits for its compile, so an early return leaves none running.
  std::deque<std::future<StatusOr<CompileResult>>> window;
  size_t next = 0;
  for (size_t k = 0; k < count; ++k) {
    while (next < count && window.size() < workers) window.push_back(std::async(std::launch::async, run, next++));
    StatusOr<CompileResult> r = window.front().get();
    window.pop_front();
    if (!r.ok()) return r.status();
    OAAXVK_RETURN_IF_ERROR(check(k, *r));
    if (progress) progress(k + 1);
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain
