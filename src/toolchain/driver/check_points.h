// The check points of a dynamic-shape conversion (driver/dynamic.h) compiled
// side by side: each point is an independent import and compile of the whole
// model (a detector has a hundred or more), so they run on several threads
// while the results are checked one at a time, in the order of the points,
// so that a failure names the same (first) point whatever the timing.
#ifndef OAAXVK_TOOLCHAIN_DRIVER_CHECK_POINTS_H_
#define OAAXVK_TOOLCHAIN_DRIVER_CHECK_POINTS_H_

#include <cstddef>
#include <functional>

#include "toolchain/driver/driver.h"
#include "toolchain/ir/limits.h"

namespace oaaxvk::toolchain {

// The most compiles in flight at once: each holds a copy of the model's
// weights (import, passes and lowering), so memory, not the core count,
// bounds it on a large model.
inline constexpr size_t kMaxCheckPointWorkers = 4;

// Threads for the check points of one conversion: the hardware threads,
// at least 1 and at most kMaxCheckPointWorkers.
size_t CheckPointWorkers();

// Calls compile(k) for k = 0 .. count - 1 on up to `workers` threads (each
// call must be safe to run beside the others: its own SymContext, graph and
// program; each thread runs under `limits`, ir/limits.h, nullptr: the
// defaults), and check(k, result) on the calling thread in order of
// k, each result freed once checked. Returns the first failure in order of k
// (a failed compile(k) or check(k, ...)); points after it are not checked
// (compiles already started are waited for). progress(done) follows each
// check. Exceptions of compile (std::bad_alloc) reach the caller.
Status CompileAndCheckInOrder(size_t count, size_t workers, const ConversionLimits* limits,
                              const std::function<StatusOr<CompileResult>(size_t k)>& compile,
                              const std::function<Status(size_t k, const CompileResult& r)>& check,
                              const std::function<void(size_t done)>& progress = nullptr);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_DRIVER_CHECK_POINTS_H_
