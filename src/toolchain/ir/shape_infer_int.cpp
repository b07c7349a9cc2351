#include "toolchain/ir/shape_infer_int.h"

#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {

namespace {

Status IntNodeError(const Node& n, const std::string& msg) {
  return InvalidArgument("node '" + n.name + "' (" + n.op_type + "): " + msg);
}

Status SetOutput(Graph& g, const Node& n, DType dt, Shape s) {
  if (n.outputs.empty() || n.outputs[0].empty()) return Status::Ok();
  for (int64_t d : s)
    if (d < 0) return IntNodeError(n, "inferred a negative dimension in " + ShapeToString(s));
  Tensor& t = g.tensors[n.outputs[0]];
  t.name = n.outputs[0];
  t.dtype = dt;
  t.shape = std::move(s);
  t.has_shape = true;
  return Status::Ok();
}

}  // namespace

const std::set<std::string>& IntDeviceOps() {
  static const std::set<std::string> k = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or",
                                          "Xor", "Not", "Where", "Mod", "BitShift", "Expand", "CastLike", "ArgMax",
                                          "ArgMin"};
  return k;
}

bool IsDeviceDType(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kDouble: case DType::kInt32: case DType::kInt64: case DType::kInt16:
    case DType::kUint16: case DType::kInt8: case DType::kUint8: case DType::kBool:
    case DType::kFloat16: case DType::kBfloat16: case DType::kUint32: case DType::kUint64:  // I/O contract (issue 5)
      return true;
    default:
      return false;
  }
}

bool IsFloatLike(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBfloat16;
}

Status InferIntNodeShapes(Graph& g, Node& n, bool* handled) {
  *handled = false;
  const std::string& op = n.op_type;
  if (!IntDeviceOps().count(op)) return Status::Ok();
  *handled = true;
  std::vector<const Tensor*> in;
  for (const std::string& name : n.inputs) {
    const Tensor* t = name.empty() ? nullptr : g.FindTensor(name);
    if (!name.empty() && (!t || !t->has_shape)) return IntNodeError(n, "input '" + name + "' has no static shape");
    in.push_back(t);
  }
  auto need = [&](size_t k) -> Status {
    if (in.size() <= k || !in[k]) return IntNodeError(n, "missing input " + std::to_string(k));
    return Status::Ok();
  };
  OAAXVK_RETURN_IF_ERROR(need(0));
  const Shape& x = in[0]->shape;
  if (op == "Not") return SetOutput(g, n, DType::kBool, x);
  if (op == "CastLike") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    return SetOutput(g, n, in[1]->dtype, x);
  }
  if (op == "ArgMax" || op == "ArgMin") {
    int64_t rank = static_cast<int64_t>(x.size());
    int64_t axis = n.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return IntNodeError(n, "axis " + std::to_string(n.GetInt("axis", 0)) + " out of range");
    n.SetInt("axis", axis);
    Shape s;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != axis) s.push_back(x[i]);
      else if (n.GetInt("keepdims", 1) != 0) s.push_back(1);
    }
    return SetOutput(g, n, DType::kInt64, s);
  }
  if (op == "Expand") {
    OAAXVK_RETURN_IF_ERROR(need(1));
    if (!in[1]->is_const)
      return IntNodeError(n, "shape input '" + n.inputs[1] + "' is not a compile-time constant (dynamic shapes are not supported)");
    StatusOr<Shape> s = BroadcastShapes(x, in[1]->AsDims());
    if (!s.ok()) return IntNodeError(n, s.status().message());
    return SetOutput(g, n, in[0]->dtype, *s);
  }
  OAAXVK_RETURN_IF_ERROR(need(1));
  if (op == "Where") {
    OAAXVK_RETURN_IF_ERROR(need(2));
    StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
    if (s.ok()) s = BroadcastShapes(*s, in[2]->shape);
    if (!s.ok()) return IntNodeError(n, s.status().message());
    return SetOutput(g, n, in[1]->dtype, *s);
  }
  StatusOr<Shape> s = BroadcastShapes(x, in[1]->shape);
  if (!s.ok()) return IntNodeError(n, s.status().message());
  bool logic = op != "Mod" && op != "BitShift";
  return SetOutput(g, n, logic ? DType::kBool : in[0]->dtype, *s);
}

}  // namespace oaaxvk::toolchain
