// The loop-iteration budget of one shader invocation, and the plan that
// splits a long reduction into stages that each stay within it.
//
// Mesa's llvmpipe (lavapipe) ends a shader invocation's loops after 65535
// iterations in total and carries on with what it has computed so far, so a
// kernel whose loops run as long as its input is silently wrong there on
// long axes (docs/toolchain.md "Loop iteration budget"). Every kernel the
// toolchain emits keeps each invocation's loop iterations, all its loops
// together (nested loops multiply), at or below kLoopIterationBudget — well
// below that limit, so a bundle is correct on every driver — or splits the
// work over more invocations and dispatches.
#ifndef OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_
#define OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "toolchain/ir/dim.h"

namespace oaaxvk::toolchain {

// The most loop iterations one invocation of any kernel may run.
inline constexpr int64_t kLoopIterationBudget = 16384;

// Elements one invocation reads in a stage of a split reduction: small
// enough for many invocations per output (both CPU cores of a software
// driver, a GPU's lanes), large enough that two stages cover 16 million
// elements.
inline constexpr int64_t kSplitChunk = 4096;

// True when `iterations` (an upper bound of one invocation's loop count,
// possibly symbolic) fits the budget at every shape of the range.
inline bool FitsLoopBudget(const Dim& iterations) {
  const int64_t ub = UpperBound(iterations);
  return ub >= 0 && ub <= kLoopIterationBudget;
}

// One stage of a split reduction: every output's `len` inputs (elements, or
// the partial results of the stage before) are reduced by `parts`
// invocations, invocation j taking inputs j, j + parts, j + 2·parts, … (at
// most kSplitChunk of them), each writing one partial result; the last
// stage has parts = 1 and writes the output.
struct SplitStage {
  Dim len;
  Dim parts;
};

// The stages of a reduction over `len` inputs per output. `max_len` bounds
// len over the whole range of a dynamic shape (planned there: the number of
// stages is fixed, their sizes are expressions of len). A length within
// kSplitChunk takes one stage.
inline std::vector<SplitStage> PlanSplit(const Dim& len, int64_t max_len) {
  std::vector<SplitStage> stages;
  Dim cur = len;
  int64_t cur_max = std::max<int64_t>(max_len, 1);
  while (cur_max > kSplitChunk) {
    const Dim parts = CeilDiv(cur, Dim(kSplitChunk));
    stages.push_back({cur, parts});
    cur = parts;
    cur_max = (cur_max + kSplitChunk - 1) / kSplitChunk;
  }
  stages.push_back({cur, Dim(1)});
  return stages;
}

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_
