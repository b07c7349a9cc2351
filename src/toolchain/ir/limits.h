// Size limits of one conversion, so that a hostile or mistaken model is
// refused (naming the node and the limit) instead of exhausting memory or
// time. config.json "limits" sets them (toolchain/input/archive.h);
// docs/toolchain.md lists the keys and defaults.
//
// The active limits are installed per thread with LimitsScope, as the
// SymContext is (dim.h): shape inference, constant folding and the planner
// read them without every pass signature carrying them.
#ifndef OAAXVK_TOOLCHAIN_IR_LIMITS_H_
#define OAAXVK_TOOLCHAIN_IR_LIMITS_H_

#include <cstdint>
#include <string>

#include "oaax_vulkan/status.h"

namespace oaaxvk::toolchain {

struct ConversionLimits {
  // Constant folding: a node whose constant inputs and results together
  // would take more bytes is not folded (the device computes it when it can;
  // an operator only folding can do is refused, naming this limit).
  uint64_t max_folded_bytes = uint64_t{1} << 30;
  // Any tensor of the graph (shape inference): elements, and bytes.
  uint64_t max_tensor_elements = uint64_t{1} << 32;
  uint64_t max_tensor_bytes = uint64_t{16} << 30;
  // The memory plan: the arena (intermediate values) in bytes, and the
  // number of dispatches.
  uint64_t max_arena_bytes = uint64_t{16} << 30;
  uint64_t max_dispatches = uint64_t{1} << 20;
  // Bytes one kernel binding may cover: the smallest maxStorageBufferRange of
  // the devices the bundles target (lavapipe's 2^27). Larger weights are split
  // (passes/split_large.h); any other larger tensor is refused by the plan.
  uint64_t max_binding_bytes = uint64_t{1} << 27;
  // Iterations of a Loop run on the device whose trip count has no planned
  // maximum (ir/loop_nodes.h): its scan outputs are planned at this many
  // slices, and a frame whose loop would run more fails naming the Loop.
  uint64_t max_loop_iterations = 1024;
  // A value a device loop's body reads back from the device to size its
  // tensors (ir/loop_reads.h, a box's coordinates): each element is planned
  // in [-max_loop_read_value, max_loop_read_value], and a frame whose value
  // falls outside fails naming the node.
  uint64_t max_loop_read_value = 1024;
};

namespace limits_internal {
inline thread_local const ConversionLimits* current = nullptr;
}  // namespace limits_internal

// The limits in force on this thread (the defaults when none is installed).
inline const ConversionLimits& CurrentLimits() {
  static const ConversionLimits defaults;
  return limits_internal::current != nullptr ? *limits_internal::current : defaults;
}

// Installs `limits` on this thread for the scope's lifetime.
class LimitsScope {
 public:
  explicit LimitsScope(const ConversionLimits* limits) : prev_(limits_internal::current) {
    limits_internal::current = limits;
  }
  ~LimitsScope() { limits_internal::current = prev_; }
  LimitsScope(const LimitsScope&) = delete;
  LimitsScope& operator=(const LimitsScope&) = delete;

 private:
  const ConversionLimits* prev_;
};

// Product of `dims` with overflow and sign checks: false when a dimension is
// negative or the product exceeds UINT64_MAX.
template <typename Dims>
bool CheckedProduct(const Dims& dims, uint64_t* out) {
  uint64_t n = 1;
  for (const auto& d : dims) {
    const int64_t v = static_cast<int64_t>(d);
    if (v < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(v), &n)) return false;
  }
  *out = n;
  return true;
}

// Checks one tensor shape against max_tensor_elements / max_tensor_bytes:
// `what` names the tensor and where it comes from (e.g. "node 'c'
// (ConstantOfShape) output 'big'"), `shape_text` its dimensions.
template <typename Dims>
Status CheckTensorSize(const Dims& dims, uint64_t element_bytes, const std::string& what,
                       const std::string& shape_text) {
  const ConversionLimits& l = CurrentLimits();
  uint64_t n = 0, bytes = 0;
  if (!CheckedProduct(dims, &n))
    return ResourceExhausted(what + " has shape " + shape_text +
                             ": a dimension is negative or the element count overflows 64 bits");
  if (n > l.max_tensor_elements)
    return ResourceExhausted(what + " has shape " + shape_text + ", " + std::to_string(n) +
                             " elements, over the limit max_tensor_elements = " +
                             std::to_string(l.max_tensor_elements) +
                             " (raise it in config.json \"limits\" if the model really needs it)");
  if (__builtin_mul_overflow(n, element_bytes, &bytes) || bytes > l.max_tensor_bytes)
    return ResourceExhausted(what + " has shape " + shape_text + ", " + std::to_string(n) + " elements of " +
                             std::to_string(element_bytes) + " bytes, over the limit max_tensor_bytes = " +
                             std::to_string(l.max_tensor_bytes) +
                             " (raise it in config.json \"limits\" if the model really needs it)");
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_LIMITS_H_
