// The toolchain's graph IR: tensors with a dtype, a static shape and optional
// constant data; nodes with typed attributes. Passes rewrite it in place.
//
// Tensors are keyed by their (unique) ONNX name. Graph inputs/outputs keep
// their original ONNX name separately from the tensor they refer to, so a
// pass may re-point an output (e.g. when removing an Identity) without
// losing the name the host sees.
#ifndef OAAXVK_TOOLCHAIN_IR_GRAPH_H_
#define OAAXVK_TOOLCHAIN_IR_GRAPH_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"
#include "toolchain/ir/dim.h"

namespace oaaxvk::toolchain {

// Values are the ONNX TensorProto.DataType codes (also OAAX tensor_data_type).
enum class DType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5,
  kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13,
  kBfloat16 = 16,
  // Low-bit types (oaax_vulkan/lowbit_types.h): the IR holds one element per
  // byte (its code; a 4-bit code in the low nibble), the graph's I/O and the
  // bundle's weights pack 4-bit elements two per byte (StorageBytes).
  kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18, kFloat8E5M2 = 19, kFloat8E5M2FNUZ = 20, kUint4 = 21, kInt4 = 22,
  kFloat4E2M1 = 23, kFloat8E8M0 = 24,
};
size_t DTypeSize(DType t);   // 0 for unsupported/undefined; 1 for the low-bit types (one code per byte)
bool IsLowBitDType(DType t);  // the 8 types from kFloat8E4M3FN to kFloat8E8M0
// Bytes of n elements in host / device storage: n * DTypeSize, except
// ceil(n / 2) for the packed 4-bit types (uint4, int4, float4e2m1).
Dim StorageBytes(DType t, const Dim& n);
// IEEE binary16 / bfloat16 bit patterns <-> float32. float32 -> 16-bit rounds
// to nearest even, overflows to Inf, keeps NaN a (quiet) NaN, makes subnormals.
float HalfToFloat(uint16_t h);
float BfloatToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
uint16_t FloatToBfloat(float f);
const char* DTypeName(DType t);

// Dimensions may be symbolic (dim.h); a static conversion has only plain sizes.
using Shape = std::vector<Dim>;
Dim NumElements(const Shape& s);  // 1 for rank 0
std::string ShapeToString(const Shape& s);

struct Tensor {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  bool has_shape = false;        // false until known (import / shape inference)
  bool is_const = false;         // true: `data` holds numel * DTypeSize bytes
  std::vector<uint8_t> data;     // row-major little-endian
  // Integer constants computed from symbolic sizes (a folded Shape, a
  // decomposition's Reshape target): the values of `data` as Dims with their
  // expressions (dim.h). Empty when no value depends on a symbol.
  std::vector<Dim> sym;
  // Data-dependent extent (feature data_dependent_outputs): the shape is the
  // largest result, and the extent along this axis is known only after the
  // device ran (a Compress, a NonZero, a NonMaxSuppression, or an operator
  // reading such a result, extent.h); -1 for an ordinary tensor. `extent`:
  // the int32 [1] tensor the device writes that extent into.
  int64_t data_dependent_axis = -1;
  std::string extent{};

  Dim numel() const { return NumElements(shape); }
  // Constant data as doubles / int64 (converted from the dtype); only for
  // is_const tensors of numeric dtypes.
  std::vector<double> AsDoubles() const;
  std::vector<int64_t> AsInts() const;
  // AsInts() with the expressions of `sym` when present.
  std::vector<Dim> AsDims() const;
};

// Builds constant tensors.
Tensor MakeConstF32(const std::string& name, const Shape& shape, const std::vector<float>& v);
Tensor MakeConstI64(const std::string& name, const Shape& shape, const std::vector<int64_t>& v);
// An int64 constant of Dims: `data` holds their values, `sym` the Dims when
// any is symbolic.
Tensor MakeConstDims(const std::string& name, const Shape& shape, const std::vector<Dim>& v);
// Converts doubles into a constant of `dtype` (float/double/ints/bool).
Tensor MakeConstFromDoubles(const std::string& name, DType dtype, const Shape& shape,
                            const std::vector<double>& v);

struct Attr {
  enum Kind { kInt, kFloat, kString, kInts, kFloats, kTensor, kStrings } kind = kInt;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;  // kStrings (e.g. RNN activations)
  std::vector<Tensor> t;  // kTensor: exactly one element
};

// Elementwise unary function: the op of a standalone unary dispatch, or the
// activation fused into a Conv/ConvTranspose/Gemm/MatMul/eltwise node (codes
// match shaders/common.glsl apply_act). alpha/beta: Clip min/max,
// HardSigmoid alpha/beta, LeakyRelu alpha, Swish alpha (x * sigmoid(alpha x)).
enum class Activation : uint32_t {
  kNone = 0, kRelu = 1, kClip = 2, kSigmoid = 3, kHardSigmoid = 4, kHardSwish = 5, kLeakyRelu = 6,
  kSwish = 7, kSqrt = 8, kNeg = 9, kExp = 10, kAbs = 11, kTanh = 12, kReciprocal = 13,
  // Float math functions (issue 5); alpha/beta: Elu/Celu/ThresholdedRelu
  // alpha, Selu alpha/gamma, Shrink lambd/bias.
  kLog = 14, kFloor = 15, kCeil = 16, kRound = 17, kSign = 18, kSin = 19, kCos = 20, kTan = 21,
  kAsin = 22, kAcos = 23, kAtan = 24, kSinh = 25, kCosh = 26, kAsinh = 27, kAcosh = 28, kAtanh = 29,
  kErf = 30, kSoftplus = 31, kSoftsign = 32, kElu = 33, kSelu = 34, kCelu = 35, kMish = 36,
  kThresholdedRelu = 37, kShrink = 38,
  // alpha * x + beta (the former ONNX experimental op Affine; made by
  // FuseElementwiseChains from Mul and Add by scalar constants).
  kAffine = 39,
};
constexpr uint32_t kNumActivations = 40;

struct Node {
  std::string name;     // ONNX node name (may be empty in ONNX; import makes it unique)
  std::string op_type;
  std::string domain;   // "" = ai.onnx
  std::vector<std::string> inputs;   // "" = omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, Attr> attrs;

  bool HasAttr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t GetInt(const std::string& k, int64_t def) const;
  float GetFloat(const std::string& k, float def) const;
  std::string GetString(const std::string& k, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& k, const std::vector<int64_t>& def) const;
  void SetInt(const std::string& k, int64_t v);
  void SetFloat(const std::string& k, float v);
  void SetInts(const std::string& k, std::vector<int64_t> v);
  void SetString(const std::string& k, std::string v);
  // Fused activation (attrs "_act", "_act_alpha", "_act_beta").
  Activation act() const { return static_cast<Activation>(GetInt("_act", 0)); }
};

struct GraphIO {
  std::string name;    // original ONNX name (what the host sees)
  std::string tensor;  // tensor in Graph::tensors currently carrying the value
  // Outputs only (feature data_dependent_outputs): a hidden output, an int32
  // [1] holding the extent of output `count_for` along `count_axis`, which
  // only the device knows (Compress, NonZero); the runtime returns that
  // output at this extent and does not return this one.
  int count_for = -1;
  int64_t count_axis = -1;
  // Inputs only: a range every element must lie in, checked by the runtime at
  // send_input (bundle metadata io.input.<j>.value_range / value_rule), and
  // the rule it enforces (e.g. a NonMaxSuppression iou_threshold in [0, 1]).
  // NaN: no range.
  double value_min = std::numeric_limits<double>::quiet_NaN();
  double value_max = std::numeric_limits<double>::quiet_NaN();
  std::string value_rule{};
};

struct Graph {
  std::string name;
  int64_t opset = 0;
  std::map<std::string, Tensor> tensors;
  std::vector<Node> nodes;  // topological order
  std::vector<GraphIO> inputs, outputs;

  Tensor* FindTensor(const std::string& n);
  const Tensor* FindTensor(const std::string& n) const;
  bool IsConst(const std::string& n) const;
  // Number of nodes whose op_type is `op` (all nodes when op is empty).
  size_t CountOps(const std::string& op = "") const;
  // Consumers: for each tensor name, the indices of nodes reading it.
  std::map<std::string, std::vector<size_t>> Consumers() const;
  // Index of the node producing `tensor`, or -1.
  int Producer(const std::string& tensor) const;
  // Producer() of every produced tensor at once (the first node listing it),
  // for passes that look up many producers.
  std::map<std::string, size_t> Producers() const;
  bool IsGraphOutput(const std::string& tensor) const;
  bool IsGraphInput(const std::string& tensor) const;
  // Replaces every node-input use of `from` by `to` and re-points graph
  // outputs carrying `from`.
  void ReplaceUses(const std::string& from, const std::string& to);
  // A tensor name not yet used, derived from `base`.
  std::string UniqueName(const std::string& base) const;
  // Checks structural invariants (every input defined before use, unique
  // producers, outputs defined). Used by tests and after each pass.
  Status Validate() const;
};

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_GRAPH_H_
