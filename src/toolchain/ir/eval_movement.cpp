// Constant evaluation of data-movement operators: Shape, Size, the views
// (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Dropout), Gather,
// GatherElements, Slice, Concat, Transpose, Expand and ConstantOfShape.
// Elements are copied as bytes, so every dtype moves unchanged.
#include <algorithm>
#include <cstring>

#include "toolchain/ir/eval_values.h"
#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain::eval {

namespace {

StatusOr<std::vector<Tensor>> ShapeOp(const Node& n, const Tensor& x, const Tensor& out) {
  std::vector<int64_t> v(x.shape.begin(), x.shape.end());
  const int64_t rank = static_cast<int64_t>(v.size());
  int64_t start = n.GetInt("start", 0), end = n.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::max<int64_t>(0, std::min(start, rank));
  end = std::max<int64_t>(start, std::min(end, rank));
  return std::vector<Tensor>{MakeConstI64(out.name, out.shape, {v.begin() + start, v.begin() + end})};
}

StatusOr<std::vector<Tensor>> GatherOp(const Node& n, const Tensor& x, const Tensor& indices, Tensor out) {
  const size_t es = DTypeSize(x.dtype);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  const int64_t len = x.shape[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= x.shape[i];
  const std::vector<int64_t> idx = IntsOf(indices);
  const size_t chunk = static_cast<size_t>(inner) * es;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < idx.size(); ++k) {
      const int64_t j = idx[k] < 0 ? idx[k] + len : idx[k];
      if (j < 0 || j >= len) return NodeError(n, "index " + std::to_string(idx[k]) + " out of range");
      if (chunk != 0)
        std::memcpy(out.data.data() + (o * idx.size() + k) * chunk, x.data.data() + (o * len + j) * chunk, chunk);
    }
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> GatherElementsOp(const Node& n, const Tensor& x, const Tensor& indices, Tensor out) {
  const size_t es = DTypeSize(x.dtype);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  const std::vector<int64_t> idx = IntsOf(indices);
  const std::vector<int64_t> xs = DimValues(DenseStrides(x.shape));
  const int64_t len = x.shape[axis];
  Status err;
  ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& at) {
    int64_t j = idx[i] < 0 ? idx[i] + len : idx[i];
    if (j < 0 || j >= len) {
      err = NodeError(n, "index " + std::to_string(idx[i]) + " out of range for axis extent " + std::to_string(len));
      return;
    }
    int64_t src = 0;
    for (size_t d = 0; d < at.size(); ++d) src += (static_cast<int64_t>(d) == axis ? j : at[d]) * xs[d];
    std::memcpy(out.data.data() + i * es, x.data.data() + src * es, es);
  });
  OAAXVK_RETURN_IF_ERROR(err);
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> SliceOp(const Node& n, const Tensor& x, Tensor out) {
  const size_t es = DTypeSize(x.dtype);
  const std::vector<int64_t> st = n.GetInts("_starts", {}), sp = n.GetInts("_steps", {});
  if (st.size() != x.shape.size() || sp.size() != x.shape.size())
    return NodeError(n, "internal: shape inference did not resolve the slice bounds");
  const std::vector<int64_t> xs = DimValues(DenseStrides(x.shape));
  ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += (st[d] + idx[d] * sp[d]) * xs[d];
    std::memcpy(out.data.data() + i * es, x.data.data() + src * es, es);
  });
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> ConcatOp(const Node& n, const std::vector<const Tensor*>& in, Tensor out) {
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(out.shape.size());
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out.shape[i];
  size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : in) {
      if (t == nullptr) continue;
      const size_t chunk = t->data.size() / static_cast<size_t>(outer);
      if (chunk == 0) continue;  // empty input: nothing to copy (and data() may be null)
      std::memcpy(out.data.data() + pos, t->data.data() + o * chunk, chunk);
      pos += chunk;
    }
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> TransposeOp(const Node& n, const Tensor& x, Tensor out) {
  const size_t es = DTypeSize(x.dtype);
  std::vector<int64_t> perm = n.GetInts("perm", {});
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(x.shape.size()) - 1; d >= 0; --d) perm.push_back(d);
  const std::vector<int64_t> xs = DimValues(DenseStrides(x.shape));
  ForEachIndex(out.shape, [&](int64_t i, const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * xs[perm[d]];
    std::memcpy(out.data.data() + i * es, x.data.data() + src * es, es);
  });
  return std::vector<Tensor>{out};
}

// Expand: the input broadcast to the inferred output shape.
StatusOr<std::vector<Tensor>> ExpandOp(const Tensor& x, Tensor out) {
  const size_t es = DTypeSize(x.dtype);
  ForEachBroadcast(out.shape, {x.shape}, [&](int64_t i, const std::vector<int64_t>& o) {
    std::memcpy(out.data.data() + i * es, x.data.data() + o[0] * es, es);
  });
  return std::vector<Tensor>{out};
}

StatusOr<std::vector<Tensor>> ConstantOfShapeOp(const Node& n, Tensor out) {
  // The value attribute is a one-element tensor of the output's dtype
  // (float32 0 when absent, which is all-zero bytes).
  auto it = n.attrs.find("value");
  if (it == n.attrs.end() || it->second.t.empty()) return std::vector<Tensor>{out};
  const Tensor& v = it->second.t[0];
  const size_t es = DTypeSize(out.dtype);
  if (v.numel() != 1) return NodeError(n, "value must hold one element");
  if (v.dtype != out.dtype || v.data.size() != es)
    return std::vector<Tensor>{MakeConstFromDoubles(out.name, out.dtype, out.shape,
                                                    std::vector<double>(out.numel(), v.AsDoubles().at(0)))};
  for (size_t i = 0; i + es <= out.data.size(); i += es) std::memcpy(out.data.data() + i, v.data.data(), es);
  return std::vector<Tensor>{out};
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateMovement(const Graph& g, const Node& n, bool* handled) {
  const std::string& op = n.op_type;
  std::vector<const Tensor*> in;
  for (const std::string& s : n.inputs) in.push_back(s.empty() ? nullptr : g.FindTensor(s));
  *handled = true;
  if (op == "ConstantOfShape") return ConstantOfShapeOp(n, OutLike(g, n, 0));
  if (in.empty() || in[0] == nullptr) return NodeError(n, "missing input 0");
  const Tensor& x = *in[0];
  Tensor out = OutLike(g, n, 0);
  if (op == "Shape") return ShapeOp(n, x, out);
  if (op == "Size") return std::vector<Tensor>{MakeConstI64(out.name, {}, {x.numel()})};
  if (op == "Identity" || op == "Dropout" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze") {
    out.data = x.data;
    std::vector<Tensor> r{out};
    if (op == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty()) {
      Tensor m = OutLike(g, n, 1);
      std::fill(m.data.begin(), m.data.end(), 1);
      r.push_back(m);
    }
    return r;
  }
  if (op == "Concat") return ConcatOp(n, in, out);
  if (op == "Slice") return SliceOp(n, x, out);
  if (op == "Transpose") return TransposeOp(n, x, out);
  if (op == "Expand") return ExpandOp(x, out);
  if ((op == "Gather" || op == "GatherElements") && (in.size() < 2 || in[1] == nullptr))
    return NodeError(n, "missing input 1 (indices)");
  if (op == "Gather") return GatherOp(n, x, *in[1], out);
  if (op == "GatherElements") return GatherElementsOp(n, x, *in[1], out);
  *handled = false;
  return std::vector<Tensor>{};
}

}  // namespace oaaxvk::toolchain::eval
