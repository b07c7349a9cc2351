// Lowering of non-float32 data types and of the integer / logic / indexing
// operators (issue 5). Device values are 32-bit words in one of two compute
// formats: float32 (also carrying float64 values) and int32 (also carrying
// int64, int16/uint16, int8/uint8 and bool as 0/1). Graph inputs/outputs of
// other data types are converted at the boundary by the `convert` kernel;
// int64 values must fit in int32 (the low word is used on input; outputs are
// sign-extended), float64 values are rounded to float32.
#ifndef OAAXVK_TOOLCHAIN_LOWER_LOWER_INT_H_
#define OAAXVK_TOOLCHAIN_LOWER_LOWER_INT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "toolchain/ir/graph.h"

namespace oaaxvk::toolchain {

// A dispatch described by tensor names: `inputs` are bound read-only at
// bindings 0..k-1 and the node's output 0 at binding k (written). `units` is
// the number of invocations of a 1-D 256-wide grid.
struct PlannedDispatch {
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<Dim> spec;
  Dim units = 0;
  std::string detail;
};

struct IntLowering {
  bool handled = false;  // false: not an operator / dtype combination handled here
  bool view = false;     // output aliases input 0 (no dispatch)
  std::string view_detail;
  PlannedDispatch d;
};

// The compute format of a device data type: kFloat or kInt32.
DType ComputeDType(DType t);
// Lowers `n` when it is an integer / logic / indexing node, a Cast, or an
// Add/Sub/Mul/Div/Max/Min/Abs/Neg/Relu on integers; errors name the node.
StatusOr<IntLowering> LowerIntNode(const Graph& g, const Node& n);
// `convert` kernel parameters for n elements read in storage dtype `src`,
// converted to `sem`, written in storage dtype `dst`. `mode` (shaders/
// lowbit.glsl): bit 0 set = saturate (Cast's `saturate`, for float8
// targets), bits 1-2 = FLOAT8E8M0 rounding (0 up, 1 down, 2 nearest). The
// default, 0, keeps every value of a low-bit type (Inf of FLOAT8E5M2
// included) as it is: the graph-boundary and weight conversions, whose
// values already belong to the type.
constexpr uint32_t kConvertSaturate = 1;
std::vector<Dim> ConvertSpec(const Dim& n, DType src, DType dst, DType sem, uint32_t mode = 0);
// Invocations of the convert kernel: one per 32-bit word of an 8-bit (4
// elements), 16-bit (2) or 4-bit (8) `dst`, else one per element.
Dim ConvertUnits(const Dim& n, DType dst);
// A low-bit constant's storage bytes as the device reads them: one byte per
// 8-bit element, two 4-bit elements per byte (element 2i in the low
// nibble), zero-padded to a multiple of 4 bytes.
std::vector<uint8_t> StorageWords(const Tensor& t);
// A constant's data as device words (numel x 4 bytes): float64 rounded to
// float32, integers narrowed to int32 (error naming the tensor when a value
// does not fit), bool as 0/1.
StatusOr<std::vector<uint8_t>> DeviceWords(const Tensor& t);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_LOWER_LOWER_INT_H_
