// The constant-folding size limit (ConversionLimits::max_folded_bytes,
// limits.h), shared by every place that folds a node (passes.cpp,
// decompose.cpp): folding evaluates on the host, so a node whose constants
// would not fit is left to the device, or refused when only folding can
// compute it.
#ifndef OAAXVK_TOOLCHAIN_IR_FOLD_LIMIT_H_
#define OAAXVK_TOOLCHAIN_IR_FOLD_LIMIT_H_

#include <algorithm>
#include <cstdint>

#include "toolchain/ir/graph.h"
#include "toolchain/ir/limits.h"
#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {

// Whether folding `n` (outputs already inferred) stays within
// max_folded_bytes: its constant inputs and its results together, as
// stored. Fails, naming the node and the limit, when it does not and the
// operator has no device kernel.
inline StatusOr<bool> FitsFoldingLimit(const Graph& g, const Node& n) {
  const uint64_t limit = CurrentLimits().max_folded_bytes;
  uint64_t total = 0;
  auto add = [&](const Tensor* t) {
    uint64_t e = 0, b = 0;
    if (t == nullptr || !t->has_shape) return;
    if (!CheckedProduct(t->shape, &e) || __builtin_mul_overflow(e, std::max<uint64_t>(DTypeSize(t->dtype), 1), &b) ||
        __builtin_add_overflow(total, b, &total))
      total = UINT64_MAX;
  };
  for (const std::string& in : n.inputs)
    if (!in.empty() && g.IsConst(in)) add(g.FindTensor(in));
  for (const std::string& o : n.outputs)
    if (!o.empty()) add(g.FindTensor(o));
  if (total <= limit) return true;
  bool fold_only = false;
  if (!IsSupportedOp(n.domain, n.op_type, &fold_only) || fold_only)
    return ResourceExhausted(StrFormat("node '%s' (%s): folding it takes %llu bytes of constants, over the limit "
                                       "max_folded_bytes = %llu, and only folding computes this operator (raise "
                                       "\"max_folded_bytes\" in config.json \"limits\" if the model really needs it)",
                                       n.name.c_str(), n.op_type.c_str(), static_cast<unsigned long long>(total),
                                       static_cast<unsigned long long>(limit)));
  return false;
}

// Whether folding `n` would store a broadcast in the bundle: its results
// take more than kFoldGrowthFloorBytes and more than kFoldGrowthFactor times
// its constant inputs (Expand of a scalar to a large shape, Tile, Where or
// an arithmetic node broadcasting a small constant). Such a node keeps its
// device kernel when it has one, so the bundle carries the small inputs
// rather than the large result; shape values are never this large.
inline constexpr uint64_t kFoldGrowthFloorBytes = 1u << 20;
inline constexpr uint64_t kFoldGrowthFactor = 4;
inline bool FoldWouldGrowBundle(const Graph& g, const Node& n) {
  auto bytes = [&](const std::string& name) -> uint64_t {
    const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
    uint64_t e = 0, b = 0;
    if (t == nullptr || !t->has_shape) return 0;
    if (!CheckedProduct(t->shape, &e) || __builtin_mul_overflow(e, std::max<uint64_t>(DTypeSize(t->dtype), 1), &b))
      return UINT64_MAX;
    return b;
  };
  uint64_t in = 0, out = 0;
  for (const std::string& i : n.inputs)
    if (!i.empty() && g.IsConst(i)) in = std::min<uint64_t>(UINT64_MAX / kFoldGrowthFactor, in + bytes(i));
  for (const std::string& o : n.outputs) out = out > UINT64_MAX - bytes(o) ? UINT64_MAX : out + bytes(o);
  if (out <= kFoldGrowthFloorBytes || out <= kFoldGrowthFactor * in) return false;
  bool fold_only = false;
  return IsSupportedOp(n.domain, n.op_type, &fold_only) && !fold_only;
}

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_FOLD_LIMIT_H_
