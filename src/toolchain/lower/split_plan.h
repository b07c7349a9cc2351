// The plan that splits a long reduction (Reduce*, ArgMax / ArgMin, the
// softmax family's row statistics) into stages that each stay within the
// per-invocation loop budget (loop_budget.h; docs/toolchain.md "Loop
// budget", "Reductions within the loop budget").
#ifndef OAAXVK_TOOLCHAIN_LOWER_SPLIT_PLAN_H_
#define OAAXVK_TOOLCHAIN_LOWER_SPLIT_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "toolchain/ir/dim.h"
#include "toolchain/lower/loop_budget.h"

namespace oaaxvk::toolchain {

// Elements one invocation reads in a stage of a split reduction: small
// enough for many invocations per output (both CPU cores of a software
// driver, a GPU's lanes), large enough that two stages cover 16 million
// elements.
inline constexpr int64_t kSplitChunk = 4096;
static_assert(kSplitChunk <= kLoopBudget, "a stage's loop must fit the budget");

// True when `iterations` (an upper bound of one invocation's loop count,
// possibly symbolic) fits the budget at every shape of the range.
inline bool FitsLoopBudget(const Dim& iterations) {
  const int64_t ub = UpperBound(iterations);
  return ub >= 0 && ub <= kLoopBudget;
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

#endif  // OAAXVK_TOOLCHAIN_LOWER_SPLIT_PLAN_H_
