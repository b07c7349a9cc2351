#include "toolchain/lower/lower_int.h"

#include <cstring>
#include <limits>
#include <map>

#include "toolchain/ir/shape_infer.h"
#include "toolchain/ir/shape_infer_int.h"

namespace oaaxvk::toolchain {

namespace {

// binary_int OP codes (shaders/binary_int.comp).
enum IntOp : uint32_t {
  kOpAdd = 0, kOpSub = 1, kOpMul = 2, kOpDiv = 3, kOpMax = 4, kOpMin = 5, kOpMod = 6, kOpFmod = 7, kOpEq = 8,
  kOpLt = 9, kOpLe = 10, kOpGt = 11, kOpGe = 12, kOpAnd = 13, kOpOr = 14, kOpXor = 15, kOpShl = 16, kOpShr = 17,
  kOpAbs = 18, kOpNeg = 19, kOpNot = 20, kOpRelu = 21, kOpBitAnd = 22, kOpBitOr = 23, kOpBitXor = 24,
  kOpBitNot = 25,
};

Status Err(const Node& n, const std::string& m) {
  return Unimplemented("node '" + n.name + "' (" + n.op_type + "): " + m);
}

// A specialization value (bundle writer: the low 32 bits of the value).
Dim U(const Dim& v) { return v; }

// 6 right-aligned dims of `out`, then broadcast strides of each input.
void BroadcastSpec(const Shape& out, const std::vector<Shape>& ins, std::vector<Dim>* spec) {
  Shape o6(6 - out.size(), 1);
  o6.insert(o6.end(), out.begin(), out.end());
  for (const Dim& d : o6) spec->push_back(d);
  for (const Shape& s : ins)
    for (const Dim& st : BroadcastStrides(s, o6)) spec->push_back(st);
}

Status CheckDevice(const Graph& g, const Node& n) {
  for (const auto* list : {&n.inputs, &n.outputs})
    for (const std::string& name : *list) {
      if (name.empty()) continue;
      const Tensor* t = g.FindTensor(name);
      if (!t) continue;
      if (!IsDeviceDType(t->dtype))
        return Err(n, "tensor '" + name + "' has data type " + DTypeName(t->dtype) +
                          ", which is not supported on the device (float32/float64, int64/int32/int16/int8, "
                          "uint16/uint8, bool)");
      if (t->shape.size() > 6) return Err(n, "tensor '" + name + "' has rank above 6");
    }
  return Status::Ok();
}

}  // namespace

DType ComputeDType(DType t) { return IsFloatLike(t) ? DType::kFloat : DType::kInt32; }

std::vector<Dim> ConvertSpec(const Dim& n, DType src, DType dst, DType sem, uint32_t mode) {
  return {n, static_cast<uint32_t>(src), static_cast<uint32_t>(dst), static_cast<uint32_t>(sem), mode};
}

Dim ConvertUnits(const Dim& n, DType dst) {
  if (StorageBytes(dst, 2) == Dim(1)) return CeilDiv(n, 8);  // 4-bit: 8 per word
  size_t es = DTypeSize(dst);
  int64_t epw = es == 1 ? 4 : es == 2 ? 2 : 1;
  return CeilDiv(n, epw);
}

std::vector<uint8_t> StorageWords(const Tensor& t) {
  const size_t n = t.data.size();  // one code per byte in the IR
  const bool packed = StorageBytes(t.dtype, 2) == Dim(1);
  std::vector<uint8_t> out(((packed ? (n + 1) / 2 : n) + 3) / 4 * 4, 0);
  for (size_t i = 0; i < n; ++i) {
    if (packed) out[i / 2] = static_cast<uint8_t>(out[i / 2] | ((t.data[i] & 0xfu) << (4 * (i & 1u))));
    else out[i] = t.data[i];
  }
  if (out.empty()) out.assign(4, 0);
  return out;
}

StatusOr<std::vector<uint8_t>> DeviceWords(const Tensor& t) {
  if (!IsDeviceDType(t.dtype))
    return Unimplemented("constant '" + t.name + "' has data type " + DTypeName(t.dtype) +
                         ", which is not supported on the device");
  if (t.dtype == DType::kFloat || t.dtype == DType::kInt32) return t.data;
  std::vector<uint8_t> out(static_cast<size_t>(t.numel()) * 4);
  if (IsFloatLike(t.dtype)) {  // float64 / float16 / bfloat16 constants -> float32
    std::vector<double> v = t.AsDoubles();
    for (size_t i = 0; i < v.size(); ++i) {
      float f = static_cast<float>(v[i]);
      std::memcpy(&out[i * 4], &f, 4);
    }
    return out;
  }
  std::vector<int64_t> v = t.AsInts();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < std::numeric_limits<int32_t>::min() || v[i] > std::numeric_limits<int32_t>::max())
      return Unimplemented(StrFormat("constant '%s': element %zu = %lld does not fit in int32 (device integers are 32-bit)",
                                  t.name.c_str(), i, static_cast<long long>(v[i])));
    int32_t w = static_cast<int32_t>(t.dtype == DType::kBool ? (v[i] != 0) : v[i]);
    std::memcpy(&out[i * 4], &w, 4);
  }
  return out;
}

StatusOr<IntLowering> LowerIntNode(const Graph& g, const Node& n) {
  IntLowering r;
  const std::string& op = n.op_type;
  if (n.inputs.empty() || n.outputs.empty() || n.inputs[0].empty()) return r;
  const Tensor* x = g.FindTensor(n.inputs[0]);
  const Tensor* y = g.FindTensor(n.outputs[0]);
  if (!x || !y) return r;
  static const std::map<std::string, uint32_t> kArith = {{"Add", kOpAdd}, {"Sub", kOpSub}, {"Mul", kOpMul},
                                                         {"Div", kOpDiv}, {"Max", kOpMax}, {"Min", kOpMin},
                                                         {"Abs", kOpAbs}, {"Neg", kOpNeg}, {"Relu", kOpRelu}};
  bool int_arith = kArith.count(op) && IsDeviceDType(x->dtype) && !IsFloatLike(x->dtype);
  if (!int_arith && !IntDeviceOps().count(op) && op != "Gather" && op != "Cast") return r;
  r.handled = true;
  OAAXVK_RETURN_IF_ERROR(CheckDevice(g, n));
  const Shape& ys = y->shape;
  const Dim N = y->numel();
  PlannedDispatch& d = r.d;
  d.units = N;

  if (op == "Cast" || op == "CastLike") {
    DType s = x->dtype, t = y->dtype;
    bool same_format = ComputeDType(s) == ComputeDType(t);
    // Float compute is float32: a cast between float types is a view unless it
    // narrows to float16/bfloat16 or a low-bit float, which must round (the
    // convert kernel). Low-bit values are exact in their compute format, so
    // a cast from them needs no rounding of its own.
    bool narrow16 = (t == DType::kFloat16 || t == DType::kBfloat16 || IsLowBitDType(t)) && s != t;
    bool exact = s == t || (IsFloatLike(s) && IsFloatLike(t) && !narrow16) ||
                 (same_format && (t == DType::kInt32 || t == DType::kInt64) ) ||
                 (s == DType::kBool && same_format);
    if (exact) {
      r.view = true;
      r.view_detail = std::string("view (") + DTypeName(s) + " -> " + DTypeName(t) + ")";
      return r;
    }
    d.kernel = "convert";
    d.inputs = {n.inputs[0]};
    // Cast-19 `saturate` (float8 targets; FLOAT4E2M1 always saturates) and
    // Cast-24 `round_mode` (FLOAT8E8M0).
    const bool saturate = n.GetInt("saturate", 1) != 0;
    const std::string round_mode = n.GetString("round_mode", "up");
    uint32_t e8m0 = 0;
    if (round_mode == "down") e8m0 = 1;
    else if (round_mode == "nearest") e8m0 = 2;
    else if (round_mode != "up") return Err(n, "round_mode must be 'up', 'down' or 'nearest', got '" + round_mode + "'");
    d.spec = ConvertSpec(N, ComputeDType(s), ComputeDType(t), t, (saturate ? kConvertSaturate : 0u) | (e8m0 << 1));
    d.units = ConvertUnits(N, ComputeDType(t));
    d.detail = std::string(DTypeName(s)) + " -> " + DTypeName(t) + (saturate ? "" : " (saturate=0)");
    return r;
  }
  if (op == "Gather") {
    const Tensor* ind = g.FindTensor(n.inputs.at(1));
    if (IsFloatLike(ind->dtype)) return Err(n, "indices must be an integer tensor");
    const Shape& xs = x->shape;
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(xs.size());
    Dim inner = 1;
    for (size_t i = static_cast<size_t>(axis) + 1; i < xs.size(); ++i) inner = inner * xs[i];
    d.kernel = "gather";
    d.inputs = {n.inputs[0], n.inputs[1]};
    d.spec = {U(N), U(xs[axis]), U(inner), U(ind->numel())};
    d.detail = StrFormat("axis=%lld", static_cast<long long>(axis));
    return r;
  }
  if (op == "Expand") {
    // strided_copy: N, IN_BASE, OUT_BASE, D[6], SI[6], SO[6].
    d.kernel = "strided_copy";
    d.inputs = {n.inputs[0]};
    d.spec = {U(N), 0, 0};
    Shape o6(6 - ys.size(), 1);
    o6.insert(o6.end(), ys.begin(), ys.end());
    for (const Dim& v : o6) d.spec.push_back(U(v));
    for (const Dim& v : BroadcastStrides(x->shape, o6)) d.spec.push_back(U(v));
    for (const Dim& v : DenseStrides(o6)) d.spec.push_back(U(v));
    d.detail = "expand";
    return r;
  }
  if (op == "Where") {
    d.kernel = "where";
    d.inputs = {n.inputs[0], n.inputs.at(1), n.inputs.at(2)};
    d.spec = {U(N)};
    BroadcastSpec(ys, {x->shape, g.FindTensor(n.inputs[1])->shape, g.FindTensor(n.inputs[2])->shape}, &d.spec);
    return r;
  }
  // binary_int: N, OP, IN_FLOAT, OUT_DT, D[6], SA[6], SB[6].
  uint32_t code;
  bool unary = op == "Not" || op == "Abs" || op == "Neg" || op == "Relu" || op == "BitwiseNot";
  bool in_float = IsFloatLike(x->dtype);
  if (kArith.count(op)) {
    code = kArith.at(op);
  } else if (op == "Mod") {
    bool fmod = n.GetInt("fmod", 0) != 0;
    if (in_float && !fmod) return Err(n, "fmod=0 on floating-point inputs is invalid (ONNX requires fmod=1)");
    code = fmod ? kOpFmod : kOpMod;
  } else if (op.rfind("Bitwise", 0) == 0) {
    static const std::map<std::string, uint32_t> kBitwise = {
        {"BitwiseAnd", kOpBitAnd}, {"BitwiseOr", kOpBitOr}, {"BitwiseXor", kOpBitXor}, {"BitwiseNot", kOpBitNot}};
    if (!kBitwise.count(op)) return Err(n, "unknown bitwise operator");
    if (in_float) return Err(n, "bitwise operators need integer inputs");
    code = kBitwise.at(op);
  } else if (op == "BitShift") {
    std::string dir = n.GetString("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") return Err(n, "direction must be LEFT or RIGHT, got '" + dir + "'");
    if (in_float) return Err(n, "BitShift needs integer inputs");
    code = dir == "LEFT" ? kOpShl : kOpShr;
  } else {
    static const std::map<std::string, uint32_t> kLogic = {
        {"Equal", kOpEq}, {"Less", kOpLt}, {"LessOrEqual", kOpLe}, {"Greater", kOpGt}, {"GreaterOrEqual", kOpGe},
        {"And", kOpAnd}, {"Or", kOpOr}, {"Xor", kOpXor}, {"Not", kOpNot}};
    code = kLogic.at(op);
    if (code >= kOpAnd && in_float) return Err(n, "logical operators need bool inputs");
  }
  if (in_float && code != kOpFmod && !(code >= kOpEq && code <= kOpGe))
    return Err(n, "internal: float inputs reached the integer kernel");
  const Shape& bshape = unary ? x->shape : g.FindTensor(n.inputs.at(1))->shape;
  if (!unary && IsFloatLike(g.FindTensor(n.inputs[1])->dtype) != in_float)
    return Err(n, "operands have different data types");
  d.kernel = "binary_int";
  d.inputs = {n.inputs[0], unary ? n.inputs[0] : n.inputs[1]};
  d.spec = {U(N), code, in_float ? 1u : 0u, static_cast<uint32_t>(y->dtype)};
  BroadcastSpec(ys, {x->shape, bshape}, &d.spec);
  d.detail = op + (in_float ? " float32" : " int32");
  return r;
}

}  // namespace oaaxvk::toolchain
