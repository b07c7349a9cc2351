// The per-invocation loop iteration budget every kernel is planned within.
//
// Software Vulkan drivers may bound how long a shader invocation loops:
// llvmpipe (Mesa lavapipe) ends an invocation's loops after 65,535
// iterations in total and carries on with whatever was computed (docs/
// runtime.md, driver quirks). A bundle must be correct on every driver, so
// each lowering whose loops grow with the input splits the work (one
// workgroup per row, several dispatches, a second pass for the carries) so
// that no invocation iterates more than kLoopBudget times, counting all of
// its loops together (nested loops multiply); an input too large for even
// the split is refused at conversion with the node and this limit named.
// The budget sits well below llvmpipe's bound so that the few iterations a
// kernel spends outside its main loops (shared-memory scans, carries) never
// matter.
#ifndef OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_
#define OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_

#include <cstdint>

namespace oaaxvk::toolchain {

inline constexpr int64_t kLoopBudget = 16384;

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_LOOP_BUDGET_H_
