// Neural-network and quantization operators expressed with operators the
// toolchain already lowers (issue 5); see docs/toolchain.md, "Decomposed
// neural-network and quantization operators".
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "toolchain/ir/limits.h"
#include "toolchain/ir/not_constant.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); }

// The wording the conformance runner's input binding recognizes
// (shape_infer.cpp ConstInts).
Status NotConstant(const Graph& g, const Node& n, const std::string& what, const std::string& input) {
  return NodeInvalid(n, NotConstantMessage(g, what, input));
}

// Adds a copy of `n` (same name, attributes and outputs) to `b`.
void Keep(const Node& n, Builder& b) {
  Node& c = b.Add(n.op_type, n.inputs, "kept", n.outputs.empty() ? "" : n.outputs[0]);
  c.name = n.name;
  c.domain = n.domain;
  c.outputs = n.outputs;
  c.attrs = n.attrs;
}

std::string Reshape(Builder& b, const std::string& x, const std::vector<Dim>& shape, const std::string& suffix,
                    const std::string& out = "") {
  return b.Out(b.Add("Reshape", {x, b.ConstI64(suffix + "_shape", shape)}, suffix, out));
}

std::string Reduce(Builder& b, const std::string& op, const std::string& x, const std::vector<int64_t>& axes,
                   bool keepdims, const std::string& suffix, const std::string& out = "") {
  Node& r = b.Add(op, {x}, suffix, out);
  r.SetInts("axes", axes);
  r.SetInt("keepdims", keepdims ? 1 : 0);
  return b.Out(r);
}

std::string CastTo(Builder& b, const std::string& x, DType to, const std::string& suffix, const std::string& out = "") {
  Node& c = b.Add("Cast", {x}, suffix, out);
  c.SetInt("to", static_cast<int64_t>(to));
  return b.Out(c);
}

std::string ScalarF(Builder& b, float v, const std::string& suffix) {
  return b.AddConst(MakeConstF32("", {}, {v}), suffix);
}

// ---------------------------------------------------------------------------
// 1-D Conv / ConvTranspose / MaxPool / AveragePool: run the 2-D operator on
// [N, C, 1, L] (H = 1) and reshape back. Other ranks pass through unchanged
// (2-D is lowered directly; other ranks are rejected by shape inference with
// a message naming the node).

// `x_shape`/`w_shape` (optional) give the input shapes when the inputs are
// produced by nodes of the same decomposition (not yet shape-inferred).
Status EmitWindow(Graph& g, const Node& n, Builder& b, const Shape* x_shape = nullptr,
                  const Shape* w_shape = nullptr) {
  const Tensor* xt = InputWithShape(g, n, 0);
  const bool has_w = n.op_type == "Conv" || n.op_type == "ConvTranspose";
  const Tensor* wt = has_w ? InputWithShape(g, n, 1) : nullptr;
  if (!x_shape && xt) x_shape = &xt->shape;
  if (!w_shape && wt) w_shape = &wt->shape;
  if (!x_shape || x_shape->size() != 3 || (has_w && (!w_shape || w_shape->size() != 3))) {
    Keep(n, b);
    return Status::Ok();
  }
  // MaxPool's Indices: the flat index ((n * C + c) * 1 + 0) * L + l of the
  // [N, C, 1, L] view is the 1-D index (either storage order).
  const bool indices = n.op_type == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty();
  const Shape& xs = *x_shape;
  Node m;
  m.op_type = n.op_type;
  m.attrs = n.attrs;
  auto extend = [&](const char* key, int64_t h_value) {
    if (!n.HasAttr(key)) return;
    std::vector<int64_t> v = n.GetInts(key, {});
    v.insert(v.begin(), h_value);
    m.SetInts(key, v);
  };
  extend("kernel_shape", 1);
  extend("strides", 1);
  extend("dilations", 1);
  extend("output_padding", 0);
  extend("output_shape", 1);
  if (n.HasAttr("pads")) {
    std::vector<int64_t> p = n.GetInts("pads", {});
    if (p.size() != 2) return NodeInvalid(n, "pads must have 2 entries for a 1-D window, got " + Str(p.size()));
    m.SetInts("pads", {0, p[0], 0, p[1]});
  }
  std::vector<std::string> ins = n.inputs;
  ins[0] = Reshape(b, n.inputs[0], {xs[0], xs[1], 1, xs[2]}, "x_2d");
  if (has_w) ins[1] = Reshape(b, n.inputs[1], {(*w_shape)[0], (*w_shape)[1], 1, (*w_shape)[2]}, "w_2d");
  Node& k = b.Add(n.op_type, ins, "2d");
  k.attrs = m.attrs;
  std::string i2 = indices ? b.NewTensor("indices_2d") : "";
  if (indices) k.outputs.push_back(i2);
  std::string y2 = b.Out(k);
  Reshape(b, y2, {0, 0, -1}, "y_1d", n.outputs[0]);
  if (indices) Reshape(b, i2, {0, 0, -1}, "indices_1d", n.outputs[1]);
  return Status::Ok();
}

// 3-D Conv / ConvTranspose emit nodes per kernel depth; a hostile weight
// shape must not turn into millions of nodes (real kernels are a few deep).
constexpr int64_t kMaxKernelDepth = 1024;

// 3-D MaxPool / AveragePool: the window is a box, so the pool separates
// into a 2-D pool over (H, W) on [N, C*D, H, W] followed by a (kd, 1) pool
// over D on [N, C, D, OH*OW] (max of maxes; for averages the element count
// of a box, with or without padding, is the product of the per-axis counts).
//
// MaxPool's Indices (row-major flat indices into X): the H/W pool's indices
// are already flat indices into X ([N, C*D, H, W] is X's layout), and the
// depth pool's indices are flat indices into the H/W pool's output, so
// gathering the former at the latter gives X's index of each maximum. Both
// pools take the first maximum in scan order, so ties resolve to the first
// (d, h, w) in row-major order, as a direct 3-D scan does.
Status Pool3d(const Node& n, Builder& b, const Shape& xs) {
  const bool indices = n.op_type == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty();
  if (indices && n.GetInt("storage_order", 0) != 0)
    return NodeUnimplemented(n, "the Indices output of a 3-D MaxPool with storage_order 1 (column-major) is not "
                                "supported; use storage_order 0");
  const std::string ap = n.GetString("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return NodeInvalid(n, "unknown auto_pad '" + ap + "' (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  std::vector<int64_t> k = n.GetInts("kernel_shape", {});
  std::vector<int64_t> st = n.GetInts("strides", {1, 1, 1}), dl = n.GetInts("dilations", {1, 1, 1});
  std::vector<int64_t> pd = ap == "NOTSET" ? n.GetInts("pads", std::vector<int64_t>(6, 0)) : std::vector<int64_t>(6, 0);
  if (k.size() != 3 || st.size() != 3 || dl.size() != 3 || pd.size() != 6)
    return NodeInvalid(n, "kernel_shape/strides/dilations must have 3 entries and pads 6 for 3-D pooling");
  for (size_t i = 0; i < 3; ++i)
    if (k[i] < 1 || st[i] < 1 || dl[i] < 1 || pd[i] < 0 || pd[i + 3] < 0)
      return NodeInvalid(n, "kernel_shape, strides and dilations must be >= 1 and pads >= 0");
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    // The ONNX SAME rule: output ceil(in / stride), the total pad split with
    // the odd element at the end (UPPER) or the beginning (LOWER); the pads
    // then act as explicit ones (count_include_pad counts them).
    for (size_t i = 0; i < 3; ++i) {
      if (xs[2 + i].is_symbolic())
        return NodeUnimplemented(n, "auto_pad " + ap + " needs static spatial sizes, got " + ShapeToString(xs) +
                                        "; give the input fixed sizes or explicit pads");
      const int64_t in = xs[2 + i], out = (in + st[i] - 1) / st[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * st[i] + (k[i] - 1) * dl[i] + 1 - in);
      pd[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      pd[i + 3] = total - pd[i];
    }
  }
  auto pool = [&](const std::string& in, std::vector<int64_t> kk, std::vector<int64_t> ss, std::vector<int64_t> dd,
                  std::vector<int64_t> pp, const std::string& suffix, std::string* idx = nullptr) {
    Node& m = b.Add(n.op_type, {in}, suffix);
    if (idx) {
      *idx = b.NewTensor(suffix + "_indices");
      m.outputs.push_back(*idx);
    }
    for (const char* key : {"ceil_mode", "count_include_pad"})
      if (n.HasAttr(key)) m.SetInt(key, n.GetInt(key, 0));
    m.SetInts("kernel_shape", kk);
    m.SetInts("strides", ss);
    m.SetInts("pads", pp);
    if (n.HasAttr("dilations")) m.SetInts("dilations", dd);
    return b.Out(m);
  };
  // Dims keep symbolic sizes (a dynamic N, D, H or W) in the Reshape targets.
  const Dim N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4];
  std::string hw_in = Reshape(b, n.inputs[0], {N, C * D, H, W}, "x_hw");
  std::string hw_idx, d_idx;
  std::string hw = pool(hw_in, {k[1], k[2]}, {st[1], st[2]}, {dl[1], dl[2]}, {pd[1], pd[2], pd[4], pd[5]}, "pool_hw",
                        indices ? &hw_idx : nullptr);
  // OH, OW as shape inference computes them (shape_infer.cpp PoolOut: the
  // ONNX output size rule; with ceil_mode the last window must start inside
  // the input or the start pad).
  const bool ceil_mode = n.GetInt("ceil_mode", 0) != 0;
  auto out_size = [&](const Dim& in, int i) {
    const Dim num = in + (pd[i] + pd[i + 3] - ((k[i] - 1) * dl[i] + 1));
    Dim o = (ceil_mode ? CeilDiv(num, Dim(st[i])) : FloorDiv(num, Dim(st[i]))) + 1;
    if (ceil_mode) o = o - Min(Dim(1), Max(Dim(0), (o - 1) * st[i] - (in + pd[i]) + 1));
    return o;
  };
  const Dim OH = out_size(H, 1), OW = out_size(W, 2);
  if (OH.value() < 1 || OW.value() < 1)  // at the stored (largest) sizes, as shape inference checks
    return NodeInvalid(n, "the window does not fit the input " + ShapeToString(xs));
  // [N, C*D, OH, OW] -> [N, C, D, OH*OW]
  std::string d_in = Reshape(b, hw, {N, C, D, OH * OW}, "x_d");
  std::string dpool = pool(d_in, {k[0], 1}, {st[0], 1}, {dl[0], 1}, {pd[0], 0, pd[3], 0}, "pool_d",
                           indices ? &d_idx : nullptr);
  const Dim OD = out_size(D, 0);
  if (OD.value() < 1) return NodeInvalid(n, "the window does not fit the input " + ShapeToString(xs));
  Reshape(b, dpool, {N, C, OD, OH, OW}, "y_3d", n.outputs[0]);
  if (indices) {
    const std::string flat = Reshape(b, hw_idx, {-1}, "hw_indices_flat");
    const std::string x_idx = b.Op("Gather", {flat, d_idx}, "indices_in_x");
    Reshape(b, x_idx, {N, C, OD, OH, OW}, "indices_3d", n.outputs[1]);
  }
  return Status::Ok();
}

// 3-D ConvTranspose as one 2-D ConvTranspose per kernel depth slice kd on
// [N*D, C, H, W]; each result is placed along depth at id*stride + kd*dilation
// (Concat with zero blocks, interleaved for strides > 1), the slices are
// summed, the depth pads are cut away and the bias added.
Status ConvTranspose3d(Graph& g, const Node& n, Builder& b, const Shape& xs, const Shape& ws) {
  const std::string ap = n.GetString("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return NodeInvalid(n, "unknown auto_pad '" + ap + "' (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  std::vector<int64_t> st = n.GetInts("strides", {1, 1, 1}), dl = n.GetInts("dilations", {1, 1, 1});
  std::vector<int64_t> pd = ap == "NOTSET" ? n.GetInts("pads", std::vector<int64_t>(6, 0)) : std::vector<int64_t>(6, 0);
  std::vector<int64_t> op = n.GetInts("output_padding", {0, 0, 0});
  if (st.size() != 3 || dl.size() != 3 || pd.size() != 6 || op.size() != 3)
    return NodeInvalid(n, "strides/dilations/output_padding must have 3 entries and pads 6");
  if (n.HasAttr("output_shape") || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    // Pads from the requested output size, by the rule of the 2-D
    // ConvTranspose (shape_infer.cpp): total = stride * (in - 1) +
    // output_padding + (k - 1) * dilation + 1 - out (out = in * stride for
    // SAME), floor(total / 2) at the start for SAME_UPPER, the larger half
    // for NOTSET and SAME_LOWER; a negative end pad becomes extra
    // output_padding.
    std::vector<int64_t> os = n.GetInts("output_shape", {});
    if (os.size() == 5) os = {os[2], os[3], os[4]};
    if (!os.empty() && os.size() != 3) return NodeInvalid(n, "output_shape must have 3 (spatial) entries");
    if (os.empty()) os = {xs[2] * st[0], xs[3] * st[1], xs[4] * st[2]};
    for (size_t i = 0; i < 3; ++i) {
      const int64_t total = st[i] * (xs[2 + i] - 1) + op[i] + (ws[2 + i] - 1) * dl[i] + 1 - os[i], half = total / 2;
      pd[i] = ap == "SAME_UPPER" || total < 0 ? half : total - half;
      pd[i + 3] = total - pd[i];
      if (pd[i + 3] < 0) {
        op[i] -= pd[i + 3];
        pd[i + 3] = 0;
      }
      if (pd[i] < 0)
        return NodeInvalid(n, "output_shape " + Str(os[i]) + " needs a negative start pad on spatial axis " + Str(i) +
                                  "; request an output of at most " + Str(os[i] + 2 * pd[i]));
    }
  }
  for (size_t i = 0; i < 3; ++i)
    if (st[i] < 1 || dl[i] < 1 || pd[i] < 0 || pd[i + 3] < 0 || op[i] < 0)
      return NodeInvalid(n, "strides and dilations must be >= 1, pads and output_padding >= 0");
  const int64_t group = n.GetInt("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] != xs[1])
    return NodeInvalid(n, "input channels " + Str(xs[1]) + " do not match weight " + ShapeToString(ws));
  const Tensor* xt = g.FindTensor(n.inputs[0]);
  if (xt->dtype != DType::kFloat) return NodeUnimplemented(n, "3-D ConvTranspose is supported on float32 only");
  if (g.opset < 10) return NodeUnimplemented(n, "3-D ConvTranspose needs opset >= 10 (Slice with inputs)");
  // The zero blocks that place the depth slices are constants of one size.
  for (const Dim& d : xs)
    if (d.is_symbolic())
      return NodeUnimplemented(n, "3-D ConvTranspose needs static input sizes, got " + ShapeToString(xs) +
                                      "; give the input fixed sizes (\"input_shapes\" in the conversion config)");
  const int64_t N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4], M = ws[1] * group, KD = ws[2];
  if (KD > kMaxKernelDepth)
    return NodeUnimplemented(n, "kernel depth " + Str(KD) + " is above " + Str(kMaxKernelDepth) +
                                    " (the 3-D ConvTranspose takes one 2-D ConvTranspose per kernel depth)");
  int64_t o[3];
  for (int i = 0; i < 3; ++i)
    o[i] = st[i] * (xs[2 + i] - 1) + op[i] + (ws[2 + i] - 1) * dl[i] + 1 - pd[i] - pd[i + 3];
  if (o[0] < 1 || o[1] < 1 || o[2] < 1) return NodeInvalid(n, "the output would be empty");
  const int64_t F = M * o[1] * o[2];
  const int64_t full = st[0] * (D - 1) + op[0] + (KD - 1) * dl[0] + 1;  // depth before cutting pads
  int64_t len = full;
  for (int64_t kd = 0; kd < KD; ++kd) len = std::max(len, kd * dl[0] + D * st[0]);
  Node& tx = b.Add("Transpose", {n.inputs[0]}, "x_ndchw");
  tx.SetInts("perm", {0, 2, 1, 3, 4});
  const std::string xt_out = b.Out(tx);
  std::string x2 = Reshape(b, xt_out, {N * D, C, H, W}, "x_2d");
  auto zeros = [&](int64_t rows, const std::string& suffix) {
    return b.AddConst(MakeConstFromDoubles("", DType::kFloat, {N, rows, F}, std::vector<double>(static_cast<size_t>(N * rows * F), 0.0)),
                      suffix);
  };
  std::string acc;
  for (int64_t kd = 0; kd < KD; ++kd) {
    const std::string t = "kd" + Str(kd);
    std::string wk = b.Out(b.Add("Slice", {n.inputs[1], b.ConstI64(t + "_start", {kd}), b.ConstI64(t + "_end", {kd + 1}),
                                           b.ConstI64(t + "_axis", {2})}, t + "_w"));
    wk = Reshape(b, wk, {ws[0], ws[1], ws[3], ws[4]}, t + "_w2d");
    Node& ct = b.Add("ConvTranspose", {x2, wk}, t + "_convt");
    ct.SetInts("strides", {st[1], st[2]});
    ct.SetInts("dilations", {dl[1], dl[2]});
    ct.SetInts("pads", {pd[1], pd[2], pd[4], pd[5]});
    ct.SetInts("output_padding", {op[1], op[2]});
    ct.SetInt("group", group);
    std::string z = Reshape(b, b.Out(ct), {N, D, F}, t + "_rows");
    if (st[0] > 1) {  // rows at id * stride
      Node& cat = b.Add("Concat", {z, zeros(D * (st[0] - 1), t + "_gap")}, t + "_strided");
      cat.SetInt("axis", 2);
      z = Reshape(b, b.Out(cat), {N, D * st[0], F}, t + "_interleaved");
    }
    std::vector<std::string> parts;
    const int64_t before = kd * dl[0], after = len - before - D * st[0];
    if (before > 0) parts.push_back(zeros(before, t + "_before"));
    parts.push_back(z);
    if (after > 0) parts.push_back(zeros(after, t + "_after"));
    if (parts.size() > 1) {
      Node& cat = b.Add("Concat", parts, t + "_placed");
      cat.SetInt("axis", 1);
      z = b.Out(cat);
    }
    acc = acc.empty() ? z : b.Out(b.Add("Add", {acc, z}, t + "_sum"));
  }
  std::string cut = b.Out(b.Add("Slice", {acc, b.ConstI64("depth_start", {pd[0]}), b.ConstI64("depth_end", {pd[0] + o[0]}),
                                          b.ConstI64("depth_axis", {1})}, "depth_cut"));
  std::string y5 = Reshape(b, cut, {N, o[0], M, o[1], o[2]}, "y_ndchw");
  Node& ty = b.Add("Transpose", {y5}, "y_ncdhw", HasInput(n, 2) ? "" : n.outputs[0]);
  ty.SetInts("perm", {0, 2, 1, 3, 4});
  const std::string yt = b.Out(ty);  // `ty` dangles once more nodes are added
  if (HasInput(n, 2)) {
    std::string bias = Reshape(b, n.inputs[2], {M, 1, 1, 1}, "bias_c111");
    b.Add("Add", {yt, bias}, "biased", n.outputs[0]);
  }
  return Status::Ok();
}

// 3-D Conv as one 2-D Conv over [N*OD, KD*C, H, W]: im2col along depth.
// Output depth od reads input depths od*sD - pD + kd*dD for kd < KD; after
// zero-padding D, the KD strided depth slices of [N, D, C, H, W] are
// stacked on the channel axis (group-major, so each group's channels stay
// contiguous: [g][kd][C/g]) and the weight [M, C/g, KD, KH, KW] is reordered
// to [M, KD*C/g, KH, KW] to match. The 2-D Conv then sums over kd, C/g, KH
// and KW in one reduction, with its own kernels, long-K splitting and bias;
// H and W keep their pads, strides, dilations and auto_pad. N, H and W may
// be symbolic; D must be static when auto_pad is SAME_* or the opset is below
// 10 (Slice without steps: the depths are gathered).
Status Conv3d(Graph& g, const Node& n, Builder& b, const Shape& xs, const Shape& ws) {
  const std::string ap = n.GetString("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return NodeInvalid(n, "unknown auto_pad '" + ap + "' (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  const bool same = ap == "SAME_UPPER" || ap == "SAME_LOWER";
  std::vector<int64_t> st = n.GetInts("strides", {1, 1, 1}), dl = n.GetInts("dilations", {1, 1, 1});
  std::vector<int64_t> pd = ap == "NOTSET" ? n.GetInts("pads", std::vector<int64_t>(6, 0)) : std::vector<int64_t>(6, 0);
  if (st.size() != 3 || dl.size() != 3 || pd.size() != 6)
    return NodeInvalid(n, "strides/dilations must have 3 entries and pads 6 for a 3-D convolution");
  for (size_t i = 0; i < 3; ++i)
    if (st[i] < 1 || dl[i] < 1 || pd[i] < 0 || pd[i + 3] < 0)
      return NodeInvalid(n, "strides and dilations must be >= 1 and pads >= 0");
  if (n.HasAttr("kernel_shape") && n.GetInts("kernel_shape", {}) != std::vector<int64_t>{ws[2], ws[3], ws[4]})
    return NodeInvalid(n, "kernel_shape does not match the weight " + ShapeToString(ws));
  const int64_t group = n.GetInt("group", 1);
  if (group < 1 || xs[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != xs[1])
    return NodeInvalid(n, "channels " + Str(xs[1]) + " / weight " + ShapeToString(ws) + " do not match group " +
                              Str(group));
  const Dim N = xs[0], D = xs[2], H = xs[3], W = xs[4];
  const int64_t C = xs[1], M = ws[0], Cg = ws[1], KD = ws[2], KH = ws[3], KW = ws[4];
  if (KD > kMaxKernelDepth)
    return NodeUnimplemented(n, "kernel depth " + Str(KD) + " is above " + Str(kMaxKernelDepth) +
                                    " (the 3-D Conv takes one depth slice per kernel depth)");
  const int64_t eff_d = (KD - 1) * dl[0] + 1;
  if (same) {  // the ONNX SAME rule on depth; H and W go to the 2-D Conv as auto_pad
    if (D.is_symbolic())
      return NodeUnimplemented(n, "auto_pad " + ap + " needs a static depth (dimension 2 of " + ShapeToString(xs) +
                                      "); give the input a fixed depth or explicit pads");
    const int64_t out = (static_cast<int64_t>(D) + st[0] - 1) / st[0];
    const int64_t total = std::max<int64_t>(0, (out - 1) * st[0] + eff_d - D);
    pd[0] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    pd[3] = total - pd[0];
  }
  const Dim Dp = D + (pd[0] + pd[3]);
  if (static_cast<int64_t>(Dp) < eff_d)
    return NodeInvalid(n, "the kernel depth " + Str(KD) + " (dilated " + Str(eff_d) + ") exceeds the padded depth of " +
                              ShapeToString(xs));
  const Dim OD = FloorDiv(Dp - eff_d, Dim(st[0])) + 1;
  // [N, C, D, H, W] -> [N, D, C, H, W], zero-padded on D.
  std::string xd = b.Transpose(n.inputs[0], {0, 2, 1, 3, 4}, "x_ndchw");
  if (pd[0] > 0 || pd[3] > 0) {
    const std::vector<int64_t> pads = {0, pd[0], 0, 0, 0, 0, pd[3], 0, 0, 0};
    if (g.opset >= 11) {
      xd = b.Op("Pad", {xd, b.ConstI64("depth_pads", ToDims(pads))}, "x_depth_padded");
    } else {
      Node& p = b.Add("Pad", {xd}, "x_depth_padded");
      p.SetInts("pads", pads);
      xd = b.Out(p);
    }
  }
  // [M, C/g, KD, KH, KW] -> [M, KD * C/g, KH, KW] (folded for a constant weight).
  const std::string w2 = KD == 1 ? b.Reshape(n.inputs[1], {M, Cg, KH, KW}, "w_2d")
                                 : b.Reshape(b.Transpose(n.inputs[1], {0, 2, 1, 3, 4}, "w_kd_major"),
                                             {M, KD * Cg, KH, KW}, "w_2d");
  auto out_size = [&](const Dim& in, int i) {
    if (same) return CeilDiv(in, Dim(st[i]));
    return FloorDiv(in + (pd[i] + pd[i + 3] - ((i == 1 ? KH : KW) - 1) * dl[i] - 1), Dim(st[i])) + 1;
  };
  const Dim OH = out_size(H, 1), OW = out_size(W, 2);
  // Output depths [od0, od0 + OD_c) as [N, OD_c, M, OH, OW]: the KD depth
  // slices stacked on the channel axis, then the 2-D Conv. `tag` names the
  // chunk's tensors ("" for the whole depth).
  auto depth_chunk = [&](const Dim& od0, const Dim& odc, const std::string& tag) -> StatusOr<std::string> {
    std::vector<std::string> cols;
    const bool whole = tag.empty();
    for (int64_t kd = 0; kd < KD; ++kd) {
      const std::string t = tag + "kd" + Str(kd);
      std::string s = xd;
      const Dim start = od0 * st[0] + kd * dl[0], end = start + (odc - 1) * st[0] + 1;
      if (g.opset < 10 && (kd * dl[0] != 0 || st[0] != 1 || !SameDim(odc, Dp))) {
        // Slice before opset 10 has no steps (nor inputs): a Gather of the depths.
        if (odc.is_symbolic())
          return NodeUnimplemented(n, "a symbolic depth needs opset >= 10 (Slice with steps); got input " +
                                          ShapeToString(xs));
        std::vector<int64_t> depths;
        for (int64_t od = 0; od < odc.value(); ++od) depths.push_back(kd * dl[0] + od * st[0]);
        Node& gather = b.Add("Gather", {xd, b.AddConst(MakeConstI64("", {odc.value()}, depths), t + "_indices")},
                             t + "_depths");
        gather.SetInt("axis", 1);
        s = b.Out(gather);
      } else if (!whole || kd * dl[0] != 0 || st[0] != 1 || !SameDim(end, Dp)) {
        s = b.Op("Slice", {xd, b.ConstI64(t + "_start", {start}), b.ConstI64(t + "_end", {end}),
                           b.ConstI64(t + "_axis", {1}), b.ConstI64(t + "_step", {st[0]})},
                 t + "_depths");
      }
      cols.push_back(KD > 1 && group > 1 ? b.Reshape(s, {N * odc, group, C / group, H, W}, t + "_groups") : s);
    }
    std::string x2;
    if (KD == 1) {
      x2 = b.Reshape(cols[0], {N * odc, C, H, W}, tag + "x_2d");
    } else {
      Node& cat = b.Add("Concat", cols, tag + "x_im2col_depth");
      cat.SetInt("axis", 2);  // C of [N, OD, C, H, W], or C/g of [N*OD, g, C/g, H, W]
      x2 = b.Reshape(b.Out(cat), {N * odc, KD * C, H, W}, tag + "x_2d");
    }
    std::vector<std::string> ins = {x2, w2};
    if (HasInput(n, 2)) ins.push_back(n.inputs[2]);
    Node& conv = b.Add("Conv", ins, tag + "conv_2d");
    conv.SetInts("kernel_shape", {KH, KW});
    conv.SetInts("strides", {st[1], st[2]});
    conv.SetInts("dilations", {dl[1], dl[2]});
    conv.SetInt("group", group);
    if (ap == "NOTSET") {
      conv.SetInts("pads", {pd[1], pd[2], pd[4], pd[5]});
    } else {
      conv.SetString("auto_pad", ap);
    }
    // [N*OD_c, M, OH, OW] -> [N, OD_c, M, OH, OW]
    return b.Reshape(b.Out(conv), {N, odc, M, OH, OW}, tag + "y_ndchw");
  };
  // The stacked slices are KD times the input's bytes: over one binding
  // (limits.max_binding_bytes), the output depths are taken in chunks whose
  // stacks each fit, and the chunks' outputs concatenated (static sizes,
  // opset >= 10; otherwise the memory plan names the tensor and the limit).
  const uint64_t limit = CurrentLimits().max_binding_bytes;
  int64_t chunks = 1;
  if (KD > 1 && g.opset >= 10 && !N.is_symbolic() && !OD.is_symbolic() && !H.is_symbolic() && !W.is_symbolic()) {
    const double bytes = 4.0 * static_cast<double>(N.value()) * static_cast<double>(OD.value()) *
                         static_cast<double>(KD * C) * static_cast<double>(H.value()) * static_cast<double>(W.value());
    if (bytes > static_cast<double>(limit)) {
      chunks = std::min<int64_t>(OD.value(), static_cast<int64_t>(std::ceil(bytes / static_cast<double>(limit))));
    }
  }
  std::string y5;
  if (chunks <= 1) {
    OAAXVK_ASSIGN_OR_RETURN(y5, depth_chunk(Dim(0), OD, ""));
  } else {
    const int64_t per = (OD.value() + chunks - 1) / chunks;
    std::vector<std::string> parts;
    for (int64_t od0 = 0; od0 < OD.value(); od0 += per) {
      const int64_t odc = std::min(per, OD.value() - od0);
      OAAXVK_ASSIGN_OR_RETURN(std::string part, depth_chunk(Dim(od0), Dim(odc), "od" + Str(od0) + "_"));
      parts.push_back(part);
    }
    Node& cat = b.Add("Concat", parts, "y_depth_chunks");
    cat.SetInt("axis", 1);
    y5 = b.Out(cat);
  }
  // [N, OD, M, OH, OW] -> [N, M, OD, OH, OW]
  Node& ty = b.Add("Transpose", {y5}, "y_ncdhw", n.outputs[0]);
  ty.SetInts("perm", {0, 2, 1, 3, 4});
  return Status::Ok();
}

Status Window(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const bool pool = n.op_type == "MaxPool" || n.op_type == "AveragePool";
  // MaxPool on 8/16-bit integers: every value is exact in float32 and the
  // maximum selects one of them, so it runs in float32 between two Casts.
  const bool small_int = x && (x->dtype == DType::kUint8 || x->dtype == DType::kInt8 || x->dtype == DType::kUint16 ||
                               x->dtype == DType::kInt16);
  if (n.op_type == "MaxPool" && small_int) {
    if (n.outputs.size() > 1 && !n.outputs[1].empty())
      return NodeUnimplemented(n, std::string("the Indices output of MaxPool on ") + DTypeName(x->dtype) +
                                      " values is not supported");
    Node m = n;
    m.name = n.name + "/float";
    m.inputs[0] = CastTo(b, n.inputs[0], DType::kFloat, "x_f");
    m.outputs = {b.NewTensor("y_f")};
    if (x->shape.size() == 5) {
      OAAXVK_RETURN_IF_ERROR(Pool3d(m, b, x->shape));
    } else {
      OAAXVK_RETURN_IF_ERROR(EmitWindow(g, m, b, &x->shape));
    }
    CastTo(b, m.outputs[0], x->dtype, "y_cast", n.outputs[0]);
    return Status::Ok();
  }
  if (pool && x && x->shape.size() == 5) return Pool3d(n, b, x->shape);
  const Tensor* w = n.op_type == "ConvTranspose" ? InputWithShape(g, n, 1) : nullptr;
  if (x && w && x->shape.size() == 5 && w->shape.size() == 5) return ConvTranspose3d(g, n, b, x->shape, w->shape);
  const Tensor* cw = n.op_type == "Conv" ? InputWithShape(g, n, 1) : nullptr;
  if (x && cw && x->shape.size() == 5 && cw->shape.size() == 5) return Conv3d(g, n, b, x->shape, cw->shape);
  return EmitWindow(g, n, b);
}

// ---------------------------------------------------------------------------
// Normalizations.

// [C] -> [C, 1, ..., 1] so that it broadcasts against [N, C, d1..dk].
std::string PerChannel(Builder& b, const std::string& t, int64_t C, size_t rank, const std::string& suffix) {
  std::vector<int64_t> s(rank > 1 ? rank - 1 : 1, 1);
  s[0] = C;
  return Reshape(b, t, ToDims(s), suffix);
}

Status CheckFloat(const Node& n, const Tensor* x, size_t k) {
  if (x->dtype != DType::kFloat && x->dtype != DType::kDouble && x->dtype != DType::kFloat16)
    return NodeUnimplemented(n, "input '" + n.inputs[k] + "' has data type " + DTypeName(x->dtype) + "; " +
                                    n.op_type + " is supported on floating-point values only");
  return Status::Ok();
}

// |x|^p for LpPool / GlobalLpPool (x*x for p = 2, where Abs is not needed).
std::string LpPowered(Builder& b, const std::string& x, int64_t p) {
  if (p == 2) return b.Op("Mul", {x, x}, "squared");
  std::string a = b.Op("Abs", {x}, "magnitude");
  if (p == 1) return a;
  return b.Op("Pow", {a, ScalarF(b, static_cast<float>(p), "p")}, "powered");
}

// s^(1/p) into `out`.
void LpRoot(Builder& b, const std::string& s, int64_t p, const std::string& out) {
  if (p == 1) {
    b.Add("Identity", {s}, "root", out);
  } else if (p == 2) {
    b.Add("Sqrt", {s}, "root", out);
  } else {
    b.Add("Pow", {s, ScalarF(b, static_cast<float>(1.0 / static_cast<double>(p)), "inv_p")}, "root", out);
  }
}

// LpPool: (sum of |x|^p over the window)^(1/p), the padding counting as
// zeros: an AveragePool of |x|^p with count_include_pad, times the window
// size. The pool goes through the same 1-D / 2-D / 3-D paths as AveragePool.
Status LpPool(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5)
    return NodeUnimplemented(n, "input " + ShapeToString(x->shape) + ": 1, 2 or 3 spatial dimensions are supported");
  const int64_t p = n.GetInt("p", 2);
  if (p < 1) return NodeInvalid(n, "p must be >= 1, got " + Str(p));
  std::vector<int64_t> k = n.GetInts("kernel_shape", {});
  if (k.size() != rank - 2)
    return NodeInvalid(n, "kernel_shape must have " + Str(static_cast<int64_t>(rank - 2)) + " entries");
  int64_t window = 1;
  for (int64_t v : k) {
    if (v < 1) return NodeInvalid(n, "kernel_shape entries must be >= 1");
    window *= v;
  }
  std::string powered = LpPowered(b, n.inputs[0], p);
  Node m;
  m.op_type = "AveragePool";
  m.name = n.name + "/sum";
  m.attrs = n.attrs;
  m.attrs.erase("p");
  m.SetInt("count_include_pad", 1);
  m.inputs = {powered};
  m.outputs = {b.NewTensor("window_mean")};
  if (rank == 5) {
    OAAXVK_RETURN_IF_ERROR(Pool3d(m, b, x->shape));
  } else if (rank == 3) {
    OAAXVK_RETURN_IF_ERROR(EmitWindow(g, m, b, &x->shape));
  } else {
    Keep(m, b);
  }
  std::string sum = b.Op("Mul", {m.outputs[0], ScalarF(b, static_cast<float>(window), "window_size")}, "window_sum");
  LpRoot(b, sum, p, n.outputs[0]);
  return Status::Ok();
}

// GlobalLpPool: LpPool with a window of the whole spatial extent.
Status GlobalLpPool(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  if (x->shape.size() < 3) return NodeInvalid(n, "input must have rank >= 3, got " + ShapeToString(x->shape));
  const int64_t p = n.GetInt("p", 2);
  if (p < 1) return NodeInvalid(n, "p must be >= 1, got " + Str(p));
  int64_t count = 1;
  for (size_t i = 2; i < x->shape.size(); ++i) {
    if (x->shape[i].is_symbolic())
      return NodeUnimplemented(n, "spatial dimension " + Str(static_cast<int64_t>(i)) + " of " +
                                      ShapeToString(x->shape) + " is symbolic; GlobalLpPool needs static spatial sizes");
    count *= x->shape[i];
  }
  std::string mean = b.Op("GlobalAveragePool", {LpPowered(b, n.inputs[0], p)}, "mean");
  std::string sum = b.Op("Mul", {mean, ScalarF(b, static_cast<float>(count), "count")}, "sum");
  LpRoot(b, sum, p, n.outputs[0]);
  return Status::Ok();
}

Status InstanceNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x || !HasInput(n, 1) || !HasInput(n, 2)) return NodeInvalid(n, "needs inputs input, scale and B with static shapes");
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  const size_t rank = x->shape.size();
  if (rank < 3) return NodeInvalid(n, "input must have rank >= 3, got " + ShapeToString(x->shape));
  std::vector<int64_t> axes;
  for (size_t a = 2; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  const int64_t C = x->shape[1];
  std::string mean = Reduce(b, "ReduceMean", n.inputs[0], axes, true, "mean");
  std::string d = b.Out(b.Add("Sub", {n.inputs[0], mean}, "centered"));
  std::string var = Reduce(b, "ReduceMean", b.Out(b.Add("Mul", {d, d}, "squared")), axes, true, "variance");
  std::string ve = b.Out(b.Add("Add", {var, ScalarF(b, n.GetFloat("epsilon", 1e-5f), "epsilon")}, "variance_eps"));
  std::string sd = b.Out(b.Add("Sqrt", {ve}, "stddev"));
  std::string normalized = b.Out(b.Add("Div", {d, sd}, "normalized"));
  std::string scale = PerChannel(b, n.inputs[1], C, rank, "scale_c11");
  std::string bias = PerChannel(b, n.inputs[2], C, rank, "bias_c11");
  std::string scaled = b.Out(b.Add("Mul", {normalized, scale}, "scaled"));
  b.Add("Add", {scaled, bias}, "biased", n.outputs[0]);
  return Status::Ok();
}

// Y = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), the ONNX function body.
Status MeanVarianceNorm(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> axes = n.GetInts("axes", {0, 2, 3});
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank)
      return NodeInvalid(n, "axis " + Str(a) + " is out of range for input " + ShapeToString(x->shape));
    if (a < 0) a += rank;
  }
  std::string mean = Reduce(b, "ReduceMean", n.inputs[0], axes, true, "mean");
  std::string mean_sq = b.Out(b.Add("Mul", {mean, mean}, "mean_squared"));
  std::string sq = b.Out(b.Add("Mul", {n.inputs[0], n.inputs[0]}, "squared"));
  std::string sq_mean = Reduce(b, "ReduceMean", sq, axes, true, "squared_mean");
  std::string var = b.Out(b.Add("Sub", {sq_mean, mean_sq}, "variance"));
  std::string sd = b.Out(b.Add("Sqrt", {var}, "stddev"));
  std::string sde = b.Out(b.Add("Add", {sd, ScalarF(b, 1e-9f, "epsilon")}, "stddev_eps"));
  std::string d = b.Out(b.Add("Sub", {n.inputs[0], mean}, "centered"));
  b.Add("Div", {d, sde}, "normalized", n.outputs[0]);
  return Status::Ok();
}

// y = x / (bias + alpha / size * square_sum) ^ beta, square_sum over the
// channel window [c - floor((size-1)/2), c + ceil((size-1)/2)]: an
// AveragePool over [N, 1, C, prod(spatial)] with a (size, 1) window, zero
// channel padding and count_include_pad gives square_sum / size.
Status Lrn(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  const Shape& xs = x->shape;
  if (xs.size() < 2) return NodeInvalid(n, "input must have rank >= 2, got " + ShapeToString(xs));
  const int64_t size = n.GetInt("size", 0);
  if (size < 1) return NodeInvalid(n, "attribute size must be >= 1, got " + Str(size));
  int64_t spatial = 1;
  for (size_t i = 2; i < xs.size(); ++i) spatial *= xs[i];
  std::string sq = b.Out(b.Add("Mul", {n.inputs[0], n.inputs[0]}, "squared"));
  std::string sq4 = Reshape(b, sq, {xs[0], 1, xs[1], spatial}, "squared_4d");
  Node& pool = b.Add("AveragePool", {sq4}, "window_mean");
  pool.SetInts("kernel_shape", {size, 1});
  pool.SetInts("pads", {(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0});
  pool.SetInt("count_include_pad", 1);
  std::string mean4 = b.Out(pool);
  std::string mean = Reshape(b, mean4, xs, "window_mean_nd");
  std::string scaled = b.Out(b.Add("Mul", {mean, ScalarF(b, n.GetFloat("alpha", 1e-4f), "alpha")}, "scaled"));
  std::string base = b.Out(b.Add("Add", {scaled, ScalarF(b, n.GetFloat("bias", 1.0f), "bias")}, "base"));
  std::string den = b.Out(b.Add("Pow", {base, ScalarF(b, n.GetFloat("beta", 0.75f), "beta")}, "denominator"));
  b.Add("Div", {n.inputs[0], den}, "normalized", n.outputs[0]);
  return Status::Ok();
}

// Training-mode BatchNormalization (opset >= 14, training_mode = 1): the
// batch's own statistics over every axis but 1, as the ONNX reference:
//   mean_b = E[x], var_b = E[(x - mean_b)^2] (population variance)
//   Y = (x - mean_b) / sqrt(var_b + epsilon) * scale + B
//   running_mean = input_mean * momentum + mean_b * (1 - momentum)
//   running_var  = input_var * momentum + var_b * (1 - momentum)
Status BatchNormTraining(Graph& g, const Node& n, Builder& b, const Tensor& x) {
  if (x.dtype != DType::kFloat)
    return NodeUnimplemented(n, "training mode is supported on float32 inputs only, input '" + n.inputs[0] +
                                    "' is " + DTypeName(x.dtype));
  const size_t rank = x.shape.size();
  if (rank < 2) return NodeInvalid(n, "input must have rank >= 2, got " + ShapeToString(x.shape));
  if (n.inputs.size() < 5) return NodeInvalid(n, "needs the inputs X, scale, B, input_mean and input_var");
  const int64_t C = x.shape[1];
  for (size_t k = 1; k < 5; ++k) {
    const Tensor* p = InputWithShape(g, n, k);
    if (!p || p->shape != Shape{C})
      return NodeInvalid(n, "input '" + n.inputs[k] + "' must have shape [" + Str(C) + "]");
    if (p->dtype != DType::kFloat)
      return NodeUnimplemented(n, "training mode needs float32 parameters, input '" + n.inputs[k] + "' is " +
                                      DTypeName(p->dtype));
  }
  std::vector<int64_t> axes = {0};
  for (size_t a = 2; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  const std::string mean_b = Reduce(b, "ReduceMean", n.inputs[0], axes, false, "batch_mean");
  const std::string d = b.Out(b.Add("Sub", {n.inputs[0], PerChannel(b, mean_b, C, rank, "batch_mean_c11")}, "centered"));
  const std::string var_b = Reduce(b, "ReduceMean", b.Out(b.Add("Mul", {d, d}, "squared")), axes, false, "batch_var");
  const std::string ve =
      b.Out(b.Add("Add", {var_b, ScalarF(b, n.GetFloat("epsilon", 1e-5f), "epsilon")}, "batch_var_eps"));
  const std::string k = b.Out(b.Add("Div", {n.inputs[1], b.Out(b.Add("Sqrt", {ve}, "stddev"))}, "multiplier"));
  const std::string s = b.Out(b.Add("Mul", {d, PerChannel(b, k, C, rank, "multiplier_c11")}, "scaled"));
  b.Add("Add", {s, PerChannel(b, n.inputs[2], C, rank, "bias_c11")}, "biased", n.outputs[0]);
  const float momentum = n.GetFloat("momentum", 0.9f);
  const std::string m = ScalarF(b, momentum, "momentum"), m1 = ScalarF(b, 1.0f - momentum, "one_minus_momentum");
  auto running = [&](size_t out, size_t input, const std::string& batch, const std::string& what) {
    if (OutputOrEmpty(n, out).empty()) return;
    const std::string old_part = b.Out(b.Add("Mul", {n.inputs[input], m}, what + "_kept"));
    const std::string new_part = b.Out(b.Add("Mul", {batch, m1}, what + "_batch"));
    b.Add("Add", {old_part, new_part}, what, n.outputs[out]);
  };
  running(1, 3, mean_b, "running_mean");
  running(2, 4, var_b, "running_var");
  return Status::Ok();
}

// Inference BatchNormalization whose scale/B/mean/var are computed at run
// time: y = (x - mean) * (scale / sqrt(var + epsilon)) + B. Constant
// parameters keep the node (folded into Conv or Mul/Add by the
// BatchNormalization pass, which refuses the training outputs of opsets
// before 14); training mode (opset >= 14) uses the batch's statistics.
Status BatchNorm(Graph& g, const Node& n, Builder& b) {
  if (g.opset >= 14 && n.GetInt("training_mode", 0) != 0) {
    const Tensor* x = InputWithShape(g, n, 0);
    if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
    return BatchNormTraining(g, n, b, *x);
  }
  bool all_const = true, outputs_used = false;
  for (size_t k = 1; k < 5; ++k) all_const = all_const && HasInput(n, k) && g.IsConst(n.inputs[k]);
  for (size_t k = 1; k < n.outputs.size(); ++k) outputs_used = outputs_used || !n.outputs[k].empty();
  const Tensor* x = InputWithShape(g, n, 0);
  if (all_const || outputs_used || n.GetInt("training_mode", 0) != 0 || !x || n.inputs.size() < 5) {
    Keep(n, b);
    return Status::Ok();
  }
  OAAXVK_RETURN_IF_ERROR(CheckFloat(n, x, 0));
  const size_t rank = x->shape.size();
  if (rank < 2) return NodeInvalid(n, "input must have rank >= 2, got " + ShapeToString(x->shape));
  const int64_t C = x->shape[1];
  for (size_t k = 1; k < 5; ++k) {
    const Tensor* p = InputWithShape(g, n, k);
    if (!p || p->shape != Shape{C})
      return NodeInvalid(n, "input '" + n.inputs[k] + "' must have shape [" + Str(C) + "]");
  }
  std::string ve = b.Out(b.Add("Add", {n.inputs[4], ScalarF(b, n.GetFloat("epsilon", 1e-5f), "epsilon")}, "var_eps"));
  std::string sd = b.Out(b.Add("Sqrt", {ve}, "stddev"));
  std::string k = b.Out(b.Add("Div", {n.inputs[1], sd}, "multiplier"));
  std::string kc = PerChannel(b, k, C, rank, "multiplier_c11");
  std::string mc = PerChannel(b, n.inputs[3], C, rank, "mean_c11");
  std::string bc = PerChannel(b, n.inputs[2], C, rank, "bias_c11");
  std::string d = b.Out(b.Add("Sub", {n.inputs[0], mc}, "centered"));
  std::string s = b.Out(b.Add("Mul", {d, kc}, "scaled"));
  b.Add("Add", {s, bc}, "biased", n.outputs[0]);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Quantization. Integers are carried as float32 values: exact for |v| <= 2^24.

bool IsQuantType(DType t) { return t == DType::kUint8 || t == DType::kInt8; }

// Largest |v - zp| for v of tensor `v` and its zero point `zp` ("" absent):
// from the constant data when both are constant, else from the dtype range.
double MaxAbsCentered(const Graph& g, const std::string& v, const std::string& zp) {
  const Tensor* t = g.FindTensor(v);
  const Tensor* z = zp.empty() ? nullptr : g.FindTensor(zp);
  if (t && t->is_const && (zp.empty() || (z && z->is_const))) {
    std::vector<double> d = t->AsDoubles();
    std::vector<double> zs = z ? z->AsDoubles() : std::vector<double>{0.0};
    double m = 0;
    for (double a : d)
      for (double c : zs) m = std::max(m, std::fabs(a - c));
    return m;
  }
  return 255.0;  // uint8 and int8 values and zero points differ by at most 255
}

// Per-tensor (scalar or [1]), per-axis ([C] at `axis` of rank `rank`) or
// blocked (`block_size` > 0: the shape of x with ceil(x[axis] / block_size)
// at `axis`, one value per block of block_size consecutive elements along
// it) parameter k, as float32 when `to_float`, broadcasting against x.
StatusOr<std::string> QuantParam(Graph& g, const Node& n, Builder& b, size_t k, const Shape& xs, int64_t axis,
                                 const std::string& suffix, bool to_float) {
  const Tensor* p = InputWithShape(g, n, k);
  if (!p) return NodeInvalid(n, "input " + Str(k) + " has no static shape");
  std::string v = n.inputs[k];
  if (to_float && p->dtype != DType::kFloat) v = CastTo(b, v, DType::kFloat, suffix + "_f");
  const int64_t block = n.GetInt("block_size", 0);
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (block < 0) return NodeInvalid(n, "block_size " + Str(block) + " is negative; it must be 0 or positive");
  if (block == 0 && p->numel() == 1 && p->shape.size() <= 1) return p->shape.empty() ? v : Reshape(b, v, {}, suffix);
  if (axis < -rank || axis >= rank) return NodeInvalid(n, "axis " + Str(axis) + " is out of range for rank " + Str(rank));
  if (axis < 0) axis += rank;
  if (block > 0) {
    // Blocked: element i along `axis` reads the parameter of block i / block_size.
    bool ok = p->shape.size() == xs.size();
    for (int64_t a = 0; ok && a < rank; ++a)
      ok = a == axis ? p->shape[a] == CeilDiv(xs[a], block) : p->shape[a] == xs[a];
    if (!ok || xs[axis].is_symbolic())
      return NodeInvalid(n, "input '" + n.inputs[k] + "' has shape " + ShapeToString(p->shape) +
                                "; blocked quantization (block_size " + Str(block) + ", axis " + Str(axis) +
                                ") needs the shape of x " + ShapeToString(xs) + " with ceil(" +
                                (xs[axis].is_symbolic() ? std::string("a symbolic size") : Str(xs[axis].value())) + " / " + Str(block) + ") at axis " + Str(axis));
    std::vector<Dim> idx;
    for (int64_t i = 0; i < xs[axis].value(); ++i) idx.push_back(i / block);
    Node& gn = b.Add("Gather", {v, b.ConstI64(suffix + "_blocks", idx)}, suffix + "_expanded");
    gn.SetInt("axis", axis);
    gn.SetInt("_no_fold", 1);  // the scales stay blocked in the bundle (eval.cpp CanEvaluate)
    return b.Out(gn);
  }
  if (p->shape.size() != 1 || p->shape[0] != xs[axis])
    return NodeUnimplemented(n, "input '" + n.inputs[k] + "' has shape " + ShapeToString(p->shape) +
                                    "; only per-tensor (scalar), per-axis ([" + Str(xs[axis]) +
                                    "]) or blocked (block_size) quantization parameters are supported");
  std::vector<int64_t> s(static_cast<size_t>(rank - axis), 1);
  s[0] = xs[axis];
  return Reshape(b, v, ToDims(s), suffix);
}

// The integer range of a quantized type (every bound exact in float32).
bool QuantRange(DType t, float* lo, float* hi) {
  switch (t) {
    case DType::kUint8: *lo = 0.f; *hi = 255.f; return true;
    case DType::kInt8: *lo = -128.f; *hi = 127.f; return true;
    case DType::kUint16: *lo = 0.f; *hi = 65535.f; return true;
    case DType::kInt16: *lo = -32768.f; *hi = 32767.f; return true;
    case DType::kUint4: *lo = 0.f; *hi = 15.f; return true;
    case DType::kInt4: *lo = -8.f; *hi = 7.f; return true;
    default: return false;
  }
}

// The float types QuantizeLinear rounds into with Cast's rules (saturate).
bool IsQuantFloat(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ || t == DType::kFloat4E2M1;
}

// Requantizes float `v` (integer-valued or real) to integer type `to`:
// saturate(round_half_to_even(v) + zp).
void Requantize(Builder& b, const std::string& v, const std::string& zp_f, DType to, const std::string& out) {
  std::string r = b.Out(b.Add("Round", {v}, "rounded"));
  std::string z = zp_f.empty() ? r : b.Out(b.Add("Add", {r, zp_f}, "plus_zero_point"));
  float lo = 0.f, hi = 0.f;
  QuantRange(to, &lo, &hi);
  std::string c1 = b.Out(b.Add("Max", {z, ScalarF(b, lo, "qmin")}, "saturate_low"));
  std::string c2 = b.Out(b.Add("Min", {c1, ScalarF(b, hi, "qmax")}, "saturate_high"));
  CastTo(b, c2, to, "cast", out);
}

const char* kQuantTypes = "uint8/int8/uint16/int16/uint4/int4/FLOAT8E4M3FN/FLOAT8E4M3FNUZ/FLOAT8E5M2/FLOAT8E5M2FNUZ/"
                          "FLOAT4E2M1";

// QuantizeLinear of every opset: integer outputs (uint8, int8, uint16,
// int16, uint4, int4) round half to even, add the zero point and saturate;
// float8 outputs are x / scale cast with `saturate` (the zero point, zero by
// the specification, is not added, as in the ONNX reference); FLOAT4E2M1
// adds the zero point and casts (always saturating). `output_dtype` (21)
// names the output type when there is no zero point; `block_size` (21)
// gives blocked parameters (QuantParam); `precision` (23) of the division
// must be float32 (or unset: y_scale's type).
Status QuantizeLinear(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x || !HasInput(n, 1)) return NodeInvalid(n, "needs inputs x and y_scale with static shapes");
  if (x->dtype != DType::kFloat)
    return NodeUnimplemented(n, std::string("input x has data type ") + DTypeName(x->dtype) + "; only float32 is supported");
  const int64_t precision = n.GetInt("precision", 0);
  if (precision != 0 && precision != static_cast<int64_t>(DType::kFloat))
    return NodeUnimplemented(n, "precision " + Str(precision) + " (" + DTypeName(static_cast<DType>(precision)) +
                                    ") is not supported; the division is computed in float32");
  const int64_t output_dtype = n.GetInt("output_dtype", 0);
  DType to = output_dtype != 0 ? static_cast<DType>(output_dtype) : DType::kUint8;
  float lo = 0.f, hi = 0.f;
  auto supported = [&](DType t) { return QuantRange(t, &lo, &hi) || IsQuantFloat(t); };
  if (!HasInput(n, 2) && !supported(to))
    return NodeUnimplemented(n, std::string("output_dtype ") + DTypeName(to) + " is not supported; only " +
                                    kQuantTypes + " are");
  std::string zp;
  const int64_t axis = n.GetInt("axis", 1);
  if (HasInput(n, 2)) {
    const Tensor* z = InputWithShape(g, n, 2);
    if (!z) return NodeInvalid(n, "y_zero_point has no static shape");
    if (output_dtype != 0 && z->dtype != to)
      return NodeInvalid(n, std::string("output_dtype ") + DTypeName(to) + " differs from y_zero_point's type " +
                                DTypeName(z->dtype));
    to = z->dtype;
    if (!supported(to))
      return NodeUnimplemented(n, std::string("y_zero_point has data type ") + DTypeName(to) + "; only " +
                                      kQuantTypes + " are supported");
    if (to != DType::kFloat4E2M1 && IsQuantFloat(to)) {
      // Float8 zero points must be 0 (the specification); the reference ignores them.
      if (z->is_const)
        for (double d : z->AsDoubles())
          if (d != 0)
            return NodeInvalid(n, std::string("y_zero_point of type ") + DTypeName(to) +
                                      " must be 0 (float8 quantization has no zero point)");
    } else {
      OAAXVK_ASSIGN_OR_RETURN(zp, QuantParam(g, n, b, 2, x->shape, axis, "zero_point_b", true));
    }
  }
  OAAXVK_ASSIGN_OR_RETURN(std::string scale, QuantParam(g, n, b, 1, x->shape, axis, "scale_b", true));
  std::string q = b.Out(b.Add("Div", {n.inputs[0], scale}, "scaled"));
  if (IsQuantFloat(to)) {
    if (!zp.empty()) q = b.Out(b.Add("Add", {q, zp}, "plus_zero_point"));
    Node& c = b.Add("Cast", {q}, "cast", n.outputs[0]);
    c.SetInt("to", static_cast<int64_t>(to));
    c.SetInt("saturate", n.GetInt("saturate", 1));
    return Status::Ok();
  }
  Requantize(b, q, zp, to, n.outputs[0]);
  return Status::Ok();
}

// DequantizeLinear of every opset: (x - zero_point) * scale in float32, for
// every quantized type (kQuantTypes, int32 too), with per-tensor, per-axis
// or blocked parameters (QuantParam); the result has the scale's type
// (`output_dtype` (23), when given, must name it), rounded once from
// float32 when that is float16 / bfloat16.
Status DequantizeLinear(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* s = InputWithShape(g, n, 1);
  if (!x || !s) return NodeInvalid(n, "needs inputs x and x_scale with static shapes");
  const int64_t output_dtype = n.GetInt("output_dtype", 0);
  const DType out_t = output_dtype != 0 ? static_cast<DType>(output_dtype) : s->dtype;
  if (out_t != DType::kFloat && out_t != DType::kFloat16 && out_t != DType::kBfloat16)
    return NodeUnimplemented(n, std::string("output type ") + DTypeName(out_t) +
                                    " is not supported; only float32, float16 and bfloat16 are");
  float lo = 0.f, hi = 0.f;
  if (!QuantRange(x->dtype, &lo, &hi) && !IsQuantFloat(x->dtype) && x->dtype != DType::kInt32)
    return NodeUnimplemented(n, std::string("input x has data type ") + DTypeName(x->dtype) + "; only " +
                                    kQuantTypes + "/int32 are supported");
  const int64_t axis = n.GetInt("axis", 1);
  std::string xf = CastTo(b, n.inputs[0], DType::kFloat, "x_f");
  if (x->dtype == DType::kInt32) {
    // |x| may exceed 2^24, where float32 cannot hold every integer.
    const Tensor* xt = g.FindTensor(n.inputs[0]);
    double m = xt->is_const ? MaxAbsCentered(g, n.inputs[0], "") : std::ldexp(1.0, 31);
    if (m > std::ldexp(1.0, 24))
      return NodeUnimplemented(n, "int32 input x may exceed 2^24 in magnitude, which float32 cannot represent exactly");
  }
  if (HasInput(n, 2)) {
    OAAXVK_ASSIGN_OR_RETURN(std::string zf, QuantParam(g, n, b, 2, x->shape, axis, "zero_point_b", true));
    xf = b.Out(b.Add("Sub", {xf, zf}, "centered"));
  }
  OAAXVK_ASSIGN_OR_RETURN(std::string scale, QuantParam(g, n, b, 1, x->shape, axis, "scale_b", true));
  if (out_t == DType::kFloat) {
    b.Add("Mul", {xf, scale}, "scaled", n.outputs[0]);
  } else {
    CastTo(b, b.Out(b.Add("Mul", {xf, scale}, "scaled")), out_t, "cast", n.outputs[0]);
  }
  return Status::Ok();
}

// The ONNX function body: scale = (max(x_max, 0) - min(x_min, 0)) / 255,
// zero_point = round(clip(0 - min(x_min, 0) / scale, 0, 255)), y = QuantizeLinear.
Status DynamicQuantizeLinear(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->dtype != DType::kFloat)
    return NodeUnimplemented(n, std::string("input x has data type ") + DTypeName(x->dtype) + "; only float32 is supported");
  std::vector<int64_t> all;
  for (size_t i = 0; i < x->shape.size(); ++i) all.push_back(static_cast<int64_t>(i));
  std::string zero = ScalarF(b, 0.f, "zero");
  std::string qmax = ScalarF(b, 255.f, "qmax");
  std::string mn = Reduce(b, "ReduceMin", n.inputs[0], all, false, "x_min");
  std::string mx = Reduce(b, "ReduceMax", n.inputs[0], all, false, "x_max");
  std::string mna = b.Out(b.Add("Min", {mn, zero}, "x_min_adjusted"));
  std::string mxa = b.Out(b.Add("Max", {mx, zero}, "x_max_adjusted"));
  std::string range = b.Out(b.Add("Sub", {mxa, mna}, "x_range"));
  std::string scale = b.Out(b.Add("Div", {range, qmax}, "scale", OutputOrEmpty(n, 1)));
  std::string ms = b.Out(b.Add("Div", {mna, scale}, "min_scaled"));
  std::string zp0 = b.Out(b.Add("Sub", {zero, ms}, "initial_zero_point"));
  std::string zc1 = b.Out(b.Add("Max", {zp0, zero}, "zero_point_low"));
  std::string zc2 = b.Out(b.Add("Min", {zc1, qmax}, "zero_point_high"));
  std::string zr = b.Out(b.Add("Round", {zc2}, "zero_point_rounded"));
  std::string zp_out = OutputOrEmpty(n, 2);
  if (!zp_out.empty()) CastTo(b, zr, DType::kUint8, "zero_point_u8", zp_out);
  std::string q = b.Out(b.Add("Div", {n.inputs[0], scale}, "scaled"));
  Requantize(b, q, zr, DType::kUint8, n.outputs[0]);
  return Status::Ok();
}

// Checks that an integer dot product of `k` terms with |a| <= ma, |b| <= mb
// stays exact in float32 (every partial sum <= 2^24).
Status CheckExactSum(const Node& n, int64_t k, double ma, double mb, double bias = 0) {
  const double bound = static_cast<double>(k) * ma * mb + bias;
  if (bound > std::ldexp(1.0, 24))
    return NodeUnimplemented(n, "integer accumulation of " + Str(k) + " products bounded by " +
                                    Str(static_cast<int64_t>(ma)) + " x " + Str(static_cast<int64_t>(mb)) +
                                    (bias > 0 ? " plus a bias up to " + Str(static_cast<int64_t>(bias)) : std::string()) +
                                    " may exceed 2^24, which the float32 device arithmetic cannot represent exactly");
  return Status::Ok();
}

// (v - zp) as float; zp optional (input index zk). `per` selects how a
// non-scalar zero point broadcasts: 'r' per row of a [.., M, K] matrix,
// 'c' per column of [.., K, N] / per output channel of a weight [M, ...].
StatusOr<std::string> Centered(Graph& g, const Node& n, Builder& b, size_t vk, size_t zk, char per,
                               const std::string& suffix) {
  const Tensor* v = InputWithShape(g, n, vk);
  if (!v) return NodeInvalid(n, "input " + Str(vk) + " has no static shape");
  if (!IsQuantType(v->dtype))
    return NodeUnimplemented(n, "input '" + n.inputs[vk] + "' has data type " + DTypeName(v->dtype) +
                                    "; only uint8/int8 are supported");
  std::string vf = CastTo(b, n.inputs[vk], DType::kFloat, suffix + "_f");
  if (!HasInput(n, zk)) return vf;
  const Tensor* z = InputWithShape(g, n, zk);
  if (!z) return NodeInvalid(n, "input " + Str(zk) + " has no static shape");
  std::string zf = CastTo(b, n.inputs[zk], DType::kFloat, suffix + "_zero_point_f");
  if (z->numel() != 1 || z->shape.size() > 1) {
    const Shape& vs = v->shape;
    if (z->shape.size() != 1 || vs.size() < 2)
      return NodeUnimplemented(n, "zero point '" + n.inputs[zk] + "' of shape " + ShapeToString(z->shape) +
                                      " is not supported (scalar or 1-D only)");
    if (per == 'r') {
      if (z->shape[0] != vs[vs.size() - 2])
        return NodeInvalid(n, "zero point '" + n.inputs[zk] + "' must have " + Str(vs[vs.size() - 2]) + " entries");
      zf = Reshape(b, zf, {z->shape[0], 1}, suffix + "_zero_point_rows");
    } else if (per == 'c') {
      if (z->shape[0] != vs.back())
        return NodeInvalid(n, "zero point '" + n.inputs[zk] + "' must have " + Str(vs.back()) + " entries");
    } else {
      if (z->shape[0] != vs[0])
        return NodeInvalid(n, "zero point '" + n.inputs[zk] + "' must have " + Str(vs[0]) + " entries");
      std::vector<int64_t> s(vs.size(), 1);
      s[0] = vs[0];
      zf = Reshape(b, zf, ToDims(s), suffix + "_zero_point_channels");
    }
  } else if (!z->shape.empty()) {
    zf = Reshape(b, zf, {}, suffix + "_zero_point_scalar");
  }
  return b.Out(b.Add("Sub", {vf, zf}, suffix + "_centered"));
}

// Integer MatMul of (a - a_zp) and (b - b_zp) in float32; `ai/azi`,
// `bi/bzi` are input indices. Returns the float product.
StatusOr<std::string> IntMatMul(Graph& g, const Node& n, Builder& b, size_t ai, size_t azi, size_t bi, size_t bzi) {
  const Tensor* a = InputWithShape(g, n, ai);
  const Tensor* w = InputWithShape(g, n, bi);
  if (!a || !w || a->shape.empty() || w->shape.empty())
    return NodeInvalid(n, "inputs A and B need static shapes of rank >= 1");
  const int64_t k = a->shape.back();
  OAAXVK_RETURN_IF_ERROR(CheckExactSum(n, k, MaxAbsCentered(g, n.inputs[ai], HasInput(n, azi) ? n.inputs[azi] : ""),
                                       MaxAbsCentered(g, n.inputs[bi], HasInput(n, bzi) ? n.inputs[bzi] : "")));
  OAAXVK_ASSIGN_OR_RETURN(std::string af, Centered(g, n, b, ai, azi, 'r', "a"));
  OAAXVK_ASSIGN_OR_RETURN(std::string bf, Centered(g, n, b, bi, bzi, 'c', "b"));
  return b.Out(b.Add("MatMul", {af, bf}, "matmul_f"));
}

Status MatMulInteger(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(std::string p, IntMatMul(g, n, b, 0, 2, 1, 3));
  CastTo(b, p, DType::kInt32, "cast", n.outputs[0]);
  return Status::Ok();
}

// Real multiplier a_scale * b_scale / y_scale, broadcast like the product.
StatusOr<std::string> Multiplier(Graph& g, const Node& n, Builder& b, size_t as, size_t bs, size_t ys, char a_per,
                                 char b_per, int64_t out_rank) {
  std::string r[3];
  const size_t idx[3] = {as, bs, ys};
  const char per[3] = {a_per, b_per, 's'};
  for (int i = 0; i < 3; ++i) {
    const Tensor* t = InputWithShape(g, n, idx[i]);
    if (!t) return NodeInvalid(n, "scale input " + Str(idx[i]) + " has no static shape");
    if (t->dtype != DType::kFloat && t->dtype != DType::kFloat16)
      return NodeUnimplemented(n, "scale '" + n.inputs[idx[i]] + "' must be float32 or float16, got " +
                                      DTypeName(t->dtype));
    // A float16 scale widens to float32 exactly; the multiplier is then
    // computed in float32, as ONNX Runtime does.
    const std::string sc = t->dtype == DType::kFloat ? n.inputs[idx[i]]
                                                     : CastTo(b, n.inputs[idx[i]], DType::kFloat, "scale" + Str(i) + "_f");
    if (t->numel() == 1 && t->shape.size() <= 1) {
      r[i] = t->shape.empty() ? sc : Reshape(b, sc, {}, "scale" + Str(i) + "_scalar");
    } else if (t->shape.size() == 1 && per[i] == 'r') {
      r[i] = Reshape(b, sc, {t->shape[0], 1}, "scale" + Str(i) + "_rows");
    } else if (t->shape.size() == 1 && per[i] == 'c') {
      r[i] = sc;
    } else if (t->shape.size() == 1 && per[i] == 'o') {
      std::vector<int64_t> s(static_cast<size_t>(out_rank - 1), 1);
      s[0] = t->shape[0];
      r[i] = Reshape(b, sc, ToDims(s), "scale" + Str(i) + "_channels");
    } else {
      return NodeUnimplemented(n, "scale '" + n.inputs[idx[i]] + "' of shape " + ShapeToString(t->shape) +
                                      " is not supported (per-tensor or per-row/column/channel only)");
    }
  }
  std::string ab = b.Out(b.Add("Mul", {r[0], r[1]}, "scale_product"));
  return b.Out(b.Add("Div", {ab, r[2]}, "multiplier"));
}

StatusOr<std::string> OutputZeroPoint(Graph& g, const Node& n, Builder& b, size_t zk, DType* to) {
  *to = DType::kUint8;
  if (!HasInput(n, zk)) return std::string();
  const Tensor* z = InputWithShape(g, n, zk);
  if (!z || z->numel() != 1 || z->shape.size() > 1)
    return NodeUnimplemented(n, "y_zero_point must be a scalar (per-tensor) zero point");
  if (!IsQuantType(z->dtype))
    return NodeUnimplemented(n, std::string("y_zero_point has data type ") + DTypeName(z->dtype) + "; only uint8/int8 are supported");
  *to = z->dtype;
  std::string zs = z->shape.empty() ? n.inputs[zk] : Reshape(b, n.inputs[zk], {}, "y_zero_point_scalar");
  return CastTo(b, zs, DType::kFloat, "y_zero_point_f");
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
Status QLinearMatMul(Graph& g, const Node& n, Builder& b) {
  if (n.inputs.size() < 8) return NodeInvalid(n, "needs 8 inputs");
  OAAXVK_ASSIGN_OR_RETURN(std::string p, IntMatMul(g, n, b, 0, 2, 3, 5));
  const Tensor* a = InputWithShape(g, n, 0);
  OAAXVK_ASSIGN_OR_RETURN(std::string m,
                          Multiplier(g, n, b, 1, 4, 6, 'r', 'c', static_cast<int64_t>(a->shape.size())));
  DType to;
  OAAXVK_ASSIGN_OR_RETURN(std::string zp, OutputZeroPoint(g, n, b, 7, &to));
  std::string y = b.Out(b.Add("Mul", {p, m}, "requantize_scaled"));
  Requantize(b, y, zp, to, n.outputs[0]);
  return Status::Ok();
}

// Integer convolution in float32 through the Conv (1-D or 2-D) path.
StatusOr<std::string> IntConv(Graph& g, const Node& n, Builder& b, size_t xi, size_t xzi, size_t wi, size_t wzi,
                              const std::string& bias, double bias_max = 0) {
  const Tensor* x = InputWithShape(g, n, xi);
  const Tensor* w = InputWithShape(g, n, wi);
  if (!x || !w || w->shape.size() < 3) return NodeInvalid(n, "inputs x and w need static shapes of rank >= 3");
  int64_t k = 1;
  for (size_t i = 1; i < w->shape.size(); ++i) k *= w->shape[i];
  OAAXVK_RETURN_IF_ERROR(CheckExactSum(n, k, MaxAbsCentered(g, n.inputs[xi], HasInput(n, xzi) ? n.inputs[xzi] : ""),
                                       MaxAbsCentered(g, n.inputs[wi], HasInput(n, wzi) ? n.inputs[wzi] : ""),
                                       bias_max));
  if (HasInput(n, xzi)) {
    const Tensor* z = InputWithShape(g, n, xzi);
    if (!z || z->numel() != 1) return NodeUnimplemented(n, "x_zero_point must be a scalar (per-tensor) zero point");
  }
  OAAXVK_ASSIGN_OR_RETURN(std::string xf, Centered(g, n, b, xi, xzi, 's', "x"));
  OAAXVK_ASSIGN_OR_RETURN(std::string wf, Centered(g, n, b, wi, wzi, 'o', "w"));
  // Zero padding of (x - x_zp) is padding x with its zero point, as ONNX specifies.
  Node conv;
  conv.op_type = "Conv";
  conv.name = n.name + "/conv_f";
  conv.attrs = n.attrs;
  conv.inputs = {xf, wf};
  if (!bias.empty()) conv.inputs.push_back(bias);
  conv.outputs = {b.NewTensor("conv_f")};
  OAAXVK_RETURN_IF_ERROR(EmitWindow(g, conv, b, &x->shape, &w->shape));
  return conv.outputs[0];
}

Status ConvInteger(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(std::string p, IntConv(g, n, b, 0, 2, 1, 3, ""));
  CastTo(b, p, DType::kInt32, "cast", n.outputs[0]);
  return Status::Ok();
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B).
Status QLinearConv(Graph& g, const Node& n, Builder& b) {
  if (n.inputs.size() < 8) return NodeInvalid(n, "needs at least 8 inputs");
  std::string bias;
  double bias_max = 0;
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input x has no static shape");
  if (HasInput(n, 8)) {
    const Tensor* bt = InputWithShape(g, n, 8);
    if (!bt || bt->dtype != DType::kInt32) return NodeInvalid(n, "bias B must be an int32 tensor");
    // A runtime int32 bias is unbounded; a constant one counts into the 2^24 bound.
    if (!bt->is_const)
      return NodeUnimplemented(n, "bias input '" + n.inputs[8] +
                                      "' is not a constant: an arbitrary int32 bias cannot be accumulated exactly "
                                      "in float32");
    bias_max = MaxAbsCentered(g, n.inputs[8], "");
    bias = CastTo(b, n.inputs[8], DType::kFloat, "bias_f");
  }
  OAAXVK_ASSIGN_OR_RETURN(std::string p, IntConv(g, n, b, 0, 2, 3, 5, bias, bias_max));
  OAAXVK_ASSIGN_OR_RETURN(std::string m,
                          Multiplier(g, n, b, 1, 4, 6, 's', 'o', static_cast<int64_t>(x->shape.size())));
  DType to;
  OAAXVK_ASSIGN_OR_RETURN(std::string zp, OutputZeroPoint(g, n, b, 7, &to));
  std::string y = b.Out(b.Add("Mul", {p, m}, "requantize_scaled"));
  Requantize(b, y, zp, to, n.outputs[0]);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Einsum with one or two operands: diagonals by Where with an identity mask,
// products by broadcast Mul over a common letter order, contractions by
// ReduceSum, the result order by Transpose.

StatusOr<std::vector<std::string>> ParseEinsum(const Node& n, const std::string& eq, const std::vector<const Tensor*>& ins,
                                               std::string* out) {
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  const size_t arrow = s.find("->");
  std::string lhs = arrow == std::string::npos ? s : s.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ins.size())
    return NodeInvalid(n, "equation '" + eq + "' has " + Str(terms.size()) + " operands, the node " + Str(ins.size()) + " inputs");
  // Ellipsis dimensions: private labels '0'.. (aligned from the right).
  size_t ell_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    std::string named = terms[i];
    if (dots != std::string::npos) named.erase(dots, 3);
    for (char c : named)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return NodeInvalid(n, "equation '" + eq + "' has an invalid label in term '" + terms[i] + "'");
    const size_t rank = ins[i]->shape.size();
    if (dots == std::string::npos ? named.size() != rank : named.size() > rank)
      return NodeInvalid(n, "equation '" + eq + "' term '" + terms[i] + "' does not match input rank " + Str(rank));
    if (dots != std::string::npos) ell_rank = std::max(ell_rank, rank - named.size());
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    if (dots == std::string::npos) continue;
    const size_t e = ins[i]->shape.size() - (terms[i].size() - 3);
    std::string ell;
    for (size_t k = 0; k < e; ++k) ell += static_cast<char>('0' + (ell_rank - e) + k);
    terms[i] = terms[i].substr(0, dots) + ell + terms[i].substr(dots + 3);
  }
  std::string ell_all;
  for (size_t k = 0; k < ell_rank; ++k) ell_all += static_cast<char>('0' + k);
  if (arrow != std::string::npos) {
    std::string o = s.substr(arrow + 2);
    const size_t dots = o.find("...");
    if (dots != std::string::npos) o = o.substr(0, dots) + ell_all + o.substr(dots + 3);
    *out = o;
  } else {
    std::map<char, int> count;
    for (const std::string& t : terms)
      for (char c : t) ++count[c];
    std::string o = ell_all;
    for (const auto& [c, k] : count)
      if (k == 1 && std::isalpha(static_cast<unsigned char>(c))) o += c;
    *out = o;
  }
  std::set<char> seen;
  for (char c : *out) {
    if (!seen.insert(c).second) return NodeInvalid(n, "equation '" + eq + "' repeats a label in the output");
    bool found = false;
    for (const std::string& t : terms) found = found || t.find(c) != std::string::npos;
    if (!found) return NodeInvalid(n, "equation '" + eq + "' has an output label that is in no operand");
  }
  return terms;
}

// Removes repeated labels of one operand (diagonals): keeps x where the
// repeated indices are equal (Where with a constant identity mask, so that
// Inf/NaN elsewhere do not leak) and sums the second axis away. Updates
// `letters` (each label once, first occurrence kept) and `shape`.
std::string EinsumDiagonal(Builder& b, const std::string& x, DType dt, std::string* letters, Shape* shape,
                           const std::string& tag) {
  std::string cur = x;
  for (size_t i = 0; i < letters->size(); ++i) {
    for (size_t j = letters->find((*letters)[i], i + 1); j != std::string::npos;
         j = letters->find((*letters)[i], i + 1)) {
      Shape ms(shape->size(), 1);
      ms[i] = (*shape)[i];
      ms[j] = (*shape)[j];
      std::vector<double> mask(static_cast<size_t>(ms[i] * ms[j]), 0.0);
      for (int64_t p = 0; p < ms[i]; ++p) mask[static_cast<size_t>(p * ms[j] + p)] = 1.0;
      std::string m = b.AddConst(MakeConstFromDoubles("", DType::kBool, ms, mask), tag + "_diag_mask");
      std::string zero = b.AddConst(MakeConstFromDoubles("", dt, {}, {0.0}), tag + "_zero");
      std::string sel = b.Out(b.Add("Where", {m, cur, zero}, tag + "_diag_select"));
      cur = Reduce(b, "ReduceSum", sel, {static_cast<int64_t>(j)}, false, tag + "_diag_sum");
      letters->erase(j, 1);
      shape->erase(shape->begin() + static_cast<std::ptrdiff_t>(j));
    }
  }
  return cur;
}

Status Einsum(Graph& g, const Node& n, Builder& b) {
  const std::string eq = n.GetString("equation", "");
  std::vector<const Tensor*> ins;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Tensor* t = InputWithShape(g, n, k);
    if (!t) return NodeInvalid(n, "input " + Str(k) + " has no static shape");
    ins.push_back(t);
  }
  if (ins.empty() || ins.size() > 2)
    return NodeUnimplemented(n, "equation '" + eq + "' with " + Str(ins.size()) +
                                    " operands is not supported (1 or 2 operands only)");
  const DType dt = ins[0]->dtype;
  if ((dt != DType::kFloat && dt != DType::kDouble && dt != DType::kFloat16) ||
      (ins.size() == 2 && ins[1]->dtype != dt))
    return NodeUnimplemented(n, "equation '" + eq + "' on data type " + DTypeName(dt) +
                                    " is not supported (floating-point operands only)");
  std::string out;
  OAAXVK_ASSIGN_OR_RETURN(std::vector<std::string> terms, ParseEinsum(n, eq, ins, &out));
  // Label sizes (1 broadcasts, as for ellipsis dimensions).
  std::map<char, int64_t> dim;
  for (size_t k = 0; k < ins.size(); ++k)
    for (size_t i = 0; i < terms[k].size(); ++i) {
      const int64_t d = ins[k]->shape[i];
      auto it = dim.find(terms[k][i]);
      if (it == dim.end() || it->second == 1) {
        dim[terms[k][i]] = d;
      } else if (d != 1 && d != it->second) {
        return NodeInvalid(n, "equation '" + eq + "': label '" + std::string(1, terms[k][i]) + "' has sizes " +
                                  Str(it->second) + " and " + Str(d));
      }
    }
  // Common label order: the output labels, then the contracted ones.
  std::string all = out;
  for (const std::string& t : terms)
    for (char c : t)
      if (all.find(c) == std::string::npos) all += c;
  if (all.size() > 6)
    return NodeUnimplemented(n, "equation '" + eq + "' uses " + Str(all.size()) + " labels (at most 6 are supported)");
  std::vector<std::string> aligned;
  for (size_t k = 0; k < ins.size(); ++k) {
    const std::string tag = "operand" + Str(k);
    std::string letters = terms[k];
    Shape shape = ins[k]->shape;
    std::string cur = EinsumDiagonal(b, n.inputs[k], dt, &letters, &shape, tag);
    // Transpose to the order of `all`, then insert 1s for missing labels.
    std::vector<int64_t> perm;
    std::string sorted;
    for (char c : all) {
      size_t p = letters.find(c);
      if (p == std::string::npos) continue;
      perm.push_back(static_cast<int64_t>(p));
      sorted += c;
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      Node& t = b.Add("Transpose", {cur}, tag + "_transpose");
      t.SetInts("perm", perm);
      cur = b.Out(t);
    }
    std::vector<int64_t> full;
    for (char c : all) {
      const size_t p = sorted.find(c);
      full.push_back(p == std::string::npos ? int64_t{1} : shape[static_cast<size_t>(perm[p])].value());
    }
    if (sorted.size() != all.size()) cur = Reshape(b, cur, ToDims(full), tag + "_aligned");
    aligned.push_back(cur);
  }
  std::string prod = aligned[0];
  if (aligned.size() == 2) prod = b.Out(b.Add("Mul", {aligned[0], aligned[1]}, "product"));
  std::vector<int64_t> sum_axes;
  for (size_t i = out.size(); i < all.size(); ++i) sum_axes.push_back(static_cast<int64_t>(i));
  if (!sum_axes.empty()) prod = Reduce(b, "ReduceSum", prod, sum_axes, false, "contract");
  std::vector<int64_t> out_shape;
  for (char c : out) out_shape.push_back(dim[c]);
  Reshape(b, prod, ToDims(out_shape), "result", n.outputs[0]);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Upsample (opset 7: scales attribute; 9: scales input) -> Resize with the
// same scales, asymmetric coordinates, nearest floor or linear.
Status ResizeNd(Graph& g, const Node& n, Builder& b);

Status Upsample(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  std::string scales;
  if (HasInput(n, 1)) {
    const Tensor* s = g.FindTensor(n.inputs[1]);
    if (!s || !s->is_const) return NotConstant(g, n, "scales", n.inputs[1]);
    scales = n.inputs[1];
  } else if (n.HasAttr("scales")) {
    const Attr& a = n.attrs.at("scales");
    std::vector<float> v = a.floats;
    scales = b.AddConst(MakeConstF32("", {static_cast<int64_t>(v.size())}, v), "scales");
  } else {
    return NodeInvalid(n, "needs scales (attribute or input)");
  }
  const std::string mode = n.GetString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    return NodeUnimplemented(n, "mode '" + mode + "' is not supported (nearest, linear)");
  std::vector<std::string> ins = {n.inputs[0], scales};
  if (g.opset >= 11) ins = {n.inputs[0], "", scales};
  Node r;
  r.op_type = "Resize";
  r.name = n.name + "/resize";
  r.inputs = ins;
  r.outputs = {n.outputs[0]};
  r.SetString("mode", mode == "nearest" ? "nearest" : "linear");
  r.SetString("coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest") r.SetString("nearest_mode", "floor");
  return ResizeNd(g, r, b);  // 1-D and 3-D inputs resize their other axes there
}

Status ResizeInnermost(Graph& g, const Node& n, Builder& b);

// Resize-18 and -19 in the terms of Resize-13, then ResizeInnermost:
//  - `axes` (18): scales / sizes (and a tf_crop_and_resize roi) given for the
//    listed axes are spread over every axis (scale 1, the input's size, roi
//    [0, 1] elsewhere); they must be known at conversion;
//  - `keep_aspect_ratio_policy` not_larger / not_smaller (18, with sizes):
//    one scale, the smallest / largest size / input ratio over the axes,
//    gives every listed axis round_half_up(scale * input), at least 1 (the
//    ONNX definition), and is the kernel's coordinate scale on those axes,
//    computed in float32 as ONNX Runtime does;
//  - `antialias` (18) and coordinate_transformation_mode
//    half_pixel_symmetric (19) stay on the node for the kernel
//    (lower.cpp Resize: resize2d_aa, coordinate mode 6).
// Older opsets pass unchanged.
Status ResizeNd(Graph& g, const Node& n0, Builder& b) {
  if (g.opset < 18) return ResizeInnermost(g, n0, b);
  Node n = n0;
  n.attrs.erase("axes");
  n.attrs.erase("keep_aspect_ratio_policy");
  const std::string policy = n0.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return NodeInvalid(n0, "keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or not_smaller");
  const bool has_axes = n0.HasAttr("axes");
  const bool has_sizes = HasInput(n0, 3);
  if (!has_axes && (policy == "stretch" || !has_sizes)) return ResizeInnermost(g, n, b);
  const Tensor* x = InputWithShape(g, n0, 0);
  if (!x) return NodeInvalid(n0, "input '" + n0.inputs[0] + "' has no static shape");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> axes = n0.GetInts("axes", {});
  if (!has_axes)
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return NodeInvalid(n0, "axis " + Str(a) + " is out of range for rank " + Str(rank));
    if (a < 0) a += rank;
    if (seen[a]) return NodeInvalid(n0, "axis " + Str(a) + " is listed twice");
    seen[a] = true;
  }
  const size_t na = axes.size();
  auto constant = [&](size_t k, const std::string& what) -> StatusOr<const Tensor*> {
    const Tensor* t = g.FindTensor(n0.inputs[k]);
    if (t == nullptr || !t->is_const || !t->sym.empty()) return NotConstant(g, n0, what, n0.inputs[k]);
    return t;
  };
  if (has_sizes) {
    // Sizes read at run time (feature value_symbols) keep their expressions.
    const Tensor* zt = g.FindTensor(n0.inputs[3]);
    if (zt == nullptr || !zt->is_const) return NotConstant(g, n0, "sizes", n0.inputs[3]);
    const std::vector<Dim> z = zt->AsDims();
    if (z.size() != na) return NodeInvalid(n0, "sizes has " + Str(static_cast<int64_t>(z.size())) + " entries for " +
                                                  Str(static_cast<int64_t>(na)) + " axes");
    std::vector<Dim> full(x->shape.begin(), x->shape.end());
    for (size_t i = 0; i < na; ++i)
      if (x->shape[axes[i]].is_symbolic())
        return NodeUnimplemented(n0, "axis " + Str(axes[i]) + " of input " + ShapeToString(x->shape) +
                                         " is symbolic; sizes with axes or keep_aspect_ratio_policy need it static");
    if (policy == "stretch") {
      for (size_t i = 0; i < na; ++i) full[axes[i]] = z[i];
    } else if (!AnySymbolic(z)) {
      double scale = 0;
      float scale_f = 0.f;  // the interpolation's scale, in float32 as ONNX Runtime computes it
      for (size_t i = 0; i < na; ++i) {
        const double r = static_cast<double>(z[i].value()) / static_cast<double>(x->shape[axes[i]].value());
        const float rf = static_cast<float>(z[i].value()) / static_cast<float>(x->shape[axes[i]].value());
        scale = i == 0 ? r : policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
        scale_f = i == 0 ? rf : policy == "not_larger" ? std::min(scale_f, rf) : std::max(scale_f, rf);
      }
      std::vector<float> coord(rank, 0.f);  // 0: output / input (the axes not listed keep their size)
      for (size_t i = 0; i < na; ++i) {
        full[axes[i]] = std::max<int64_t>(
            1, static_cast<int64_t>(std::floor(scale * static_cast<double>(x->shape[axes[i]].value()) + 0.5)));
        coord[axes[i]] = scale_f;
      }
      Attr a;
      a.kind = Attr::kFloats;
      a.floats = coord;
      n.attrs["_policy_scales"] = std::move(a);
    } else {
      // Run-time sizes: round_half_up(r * in_j) is monotone in r, so the
      // size from the smallest (largest) ratio is the smallest (largest) of
      // the sizes each ratio z_i / in_i gives, each computed exactly as
      // floor((2 z_i in_j + in_i) / (2 in_i)).
      SymContext* sc = SymContext::Current();
      for (size_t i = 0; i < na && sc != nullptr; ++i)
        OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(z[i], Dim(0))).Node(sc),
                                            "Resize '" + n0.name + "': sizes[" + Str(static_cast<int64_t>(i)) + "] is negative"));
      for (size_t j = 0; j < na; ++j) {
        const Dim in_j = x->shape[axes[j]];
        Dim pick;
        for (size_t i = 0; i < na; ++i) {
          const Dim in_i = x->shape[axes[i]];
          const Dim s = FloorDiv(Dim(2) * z[i] * in_j + in_i, Dim(2) * in_i);
          pick = i == 0 ? s : policy == "not_larger" ? Min(pick, s) : Max(pick, s);
        }
        full[axes[j]] = Max(pick, Dim(1));  // at least 1, as ONNX Runtime
      }
      // The interpolation's scale, min / max of float(z_i) / float(in_i) as
      // ONNX Runtime computes it (not output / input), on the device: the
      // kernel reads it per axis (resize2d_scales, _policy_scales_input).
      if (n0.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
        return NodeUnimplemented(n0, "tf_crop_and_resize with keep_aspect_ratio_policy and sizes read at run time is "
                                     "not supported; bind the sizes (config.json \"input_values\")");
      std::vector<double> in_list;
      std::vector<Dim> pick(rank, Dim(static_cast<int64_t>(1)));
      for (size_t i = 0; i < na; ++i) {
        in_list.push_back(static_cast<double>(x->shape[axes[i]].value()));
        pick[axes[i]] = Dim(0);
      }
      const std::string zf = b.Cast(n0.inputs[3], DType::kFloat, "sizes_f");
      const std::string ins =
          b.AddConst(MakeConstFromDoubles("", DType::kFloat, {static_cast<int64_t>(na)}, in_list), "input_extents");
      const std::string ratios = b.Op("Div", {zf, ins}, "ratios");
      Node& red = b.Add(policy == "not_larger" ? "ReduceMin" : "ReduceMax", {ratios}, "policy_scale");
      red.SetInts("axes", {0});
      red.SetInt("keepdims", 1);
      const std::string one = b.AddConst(MakeConstFromDoubles("", DType::kFloat, {1}, {1.0}), "unit_scale");
      Node& cat = b.Add("Concat", {b.Out(red), one}, "policy_scale_and_unit");
      cat.SetInt("axis", 0);
      n.inputs.resize(5);
      n.inputs[4] = b.Op("Gather", {b.Out(cat), b.ConstI64("policy_positions", pick)}, "policy_scales");
      n.SetInt("_policy_scales_input", 1);
    }
    n.inputs[3] = b.ConstI64("sizes_all_axes", full);
  }
  if (const Tensor* rs = has_axes && HasInput(n0, 2) ? g.FindTensor(n0.inputs[2]) : nullptr;
      rs != nullptr && rs->is_const && AnyDependsOnValue(rs->sym)) {
    // Scales read at run time (the kernel reads them, resize2d_scales) for
    // the two innermost axes: the kernel takes the scales input as its H and
    // W entries (_scales_hw); listed W first, the resize runs on the input
    // with H and W swapped, which the separable interpolation allows.
    if (na != 2 || rank < 2 || std::min(axes[0], axes[1]) != rank - 2 || std::max(axes[0], axes[1]) != rank - 1)
      return NodeUnimplemented(n0, "scales read at run time with axes may resize only the two innermost axes; bind "
                                   "the scales (config.json \"input_values\")");
    n.SetInt("_scales_hw", 1);
    if (axes[0] == rank - 2) {
      Keep(n, b);
      return Status::Ok();
    }
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < rank - 2; ++i) perm.push_back(i);
    perm.push_back(rank - 1);
    perm.push_back(rank - 2);
    Node swapped = n;
    swapped.inputs[0] = b.Transpose(n0.inputs[0], perm, "hw_swapped");
    swapped.outputs = {b.NewTensor("resized_swapped")};
    Keep(swapped, b);
    Node& back = b.Add("Transpose", {swapped.outputs[0]}, "hw_restored", n0.outputs[0]);
    back.SetInts("perm", perm);
    return Status::Ok();
  }
  if (has_axes && HasInput(n0, 2)) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* st, constant(2, "scales"));
    const std::vector<double> sv = st->AsDoubles();
    if (!sv.empty()) {
      if (sv.size() != na) return NodeInvalid(n0, "scales has " + Str(static_cast<int64_t>(sv.size())) +
                                                      " entries for " + Str(static_cast<int64_t>(na)) + " axes");
      std::vector<double> full(rank, 1.0);
      for (size_t i = 0; i < na; ++i) full[axes[i]] = sv[i];
      n.inputs[2] = b.AddConst(MakeConstFromDoubles("", DType::kFloat, {rank}, full), "scales_all_axes");
    }
  }
  if (has_axes && HasInput(n0, 1) && n0.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    const Tensor* rd = g.FindTensor(n0.inputs[1]);
    if (rd != nullptr && !rd->is_const && rd->has_shape && has_sizes) {
      // A roi read at run time (the kernel reads it, resize2d_roi): spread
      // over every axis on the device, a Gather from the roi followed by
      // [0, 1] at the constant positions of the axes not listed.
      if (rd->shape.size() != 1 || rd->shape[0].is_symbolic() || rd->shape[0].value() != static_cast<int64_t>(2 * na))
        return NodeInvalid(n0, "roi has shape " + ShapeToString(rd->shape) + " for " + Str(static_cast<int64_t>(na)) +
                                   " axes (2 per axis)");
      const std::string unit = b.AddConst(MakeConstFromDoubles("", rd->dtype, {2}, {0.0, 1.0}), "roi_unit");
      Node& cat = b.Add("Concat", {n0.inputs[1], unit}, "roi_with_unit");
      cat.SetInt("axis", 0);
      std::vector<Dim> pick(2 * rank);
      for (int64_t i = 0; i < rank; ++i) {
        pick[i] = static_cast<int64_t>(2 * na);
        pick[rank + i] = static_cast<int64_t>(2 * na + 1);
      }
      for (size_t i = 0; i < na; ++i) {
        pick[axes[i]] = static_cast<int64_t>(i);
        pick[rank + axes[i]] = static_cast<int64_t>(na + i);
      }
      n.inputs[1] = b.Op("Gather", {b.Out(cat), b.ConstI64("roi_positions", pick)}, "roi_all_axes");
      return ResizeInnermost(g, n, b);
    }
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* rt, constant(1, "roi"));
    const std::vector<double> rv = rt->AsDoubles();
    if (rv.size() != 2 * na) return NodeInvalid(n0, "roi has " + Str(static_cast<int64_t>(rv.size())) +
                                                        " entries for " + Str(static_cast<int64_t>(na)) + " axes");
    std::vector<double> full(2 * rank, 0.0);
    for (int64_t i = 0; i < rank; ++i) full[rank + i] = 1.0;
    for (size_t i = 0; i < na; ++i) {
      full[axes[i]] = rv[i];
      full[rank + axes[i]] = rv[na + i];
    }
    n.inputs[1] = b.AddConst(MakeConstFromDoubles("", DType::kFloat, {2 * rank}, full), "roi_all_axes");
  }
  return ResizeInnermost(g, n, b);
}

// Resize of a 1-D or 3-D spatial input ([N, C, L] or [N, C, D, H, W]) with
// constant scales or sizes that keep N and C. The Resize kernel resizes the
// two innermost dimensions, so every resized axis except H and W is brought
// innermost as [rows, 1, length] (a unit axis maps every coordinate mode to
// its only element, exactly) and resized there; H and W of a 3-D input are
// then resized by a rank-5 Resize that keeps D. Each axis keeps its own scale
// or size, roi and coordinate mode, so the result is the separable N-D
// interpolation of the ONNX definition. Other Resizes are kept unchanged.
Status ResizeInnermost(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const size_t rank = x ? x->shape.size() : 0;
  if (rank != 3 && rank != 5) {
    Keep(n, b);
    return Status::Ok();
  }
  auto const_input = [&](size_t k) -> const Tensor* {
    if (!HasInput(n, k)) return nullptr;
    const Tensor* t = g.FindTensor(n.inputs[k]);
    return t && t->is_const && t->sym.empty() && t->numel() > 0 ? t : nullptr;
  };
  const size_t si = g.opset < 11 ? 1 : 2;
  const Tensor* sc_t = const_input(si);
  const Tensor* sz_t = g.opset < 11 ? nullptr : const_input(3);
  if (!sc_t && !sz_t) {  // run-time scales or sizes: shape inference and lowering check them
    Keep(n, b);
    return Status::Ok();
  }
  const Shape& xs = x->shape;
  std::vector<double> sc = sc_t ? sc_t->AsDoubles() : std::vector<double>{};
  std::vector<int64_t> sz = sz_t ? sz_t->AsInts() : std::vector<int64_t>{};
  if ((sc_t && sc.size() != rank) || (sz_t && sz.size() != rank)) {
    Keep(n, b);  // shape inference reports the entry count
    return Status::Ok();
  }
  for (size_t i = 0; i < 2; ++i)
    if (sc_t ? sc[i] != 1.0 : sz[i] != xs[i]) {
      Keep(n, b);  // N or C resized: the lowering refuses it with its message
      return Status::Ok();
    }
  const std::string ctm = n.GetString("coordinate_transformation_mode", g.opset < 11 ? "asymmetric" : "half_pixel");
  std::vector<double> roi;
  if (ctm == "tf_crop_and_resize") {
    const Tensor* r = const_input(1);
    if (!r) return NodeUnimplemented(n, "tf_crop_and_resize on a 1-D or 3-D input needs a constant roi");
    roi = r->AsDoubles();
    if (roi.size() != 2 * rank) return NodeInvalid(n, "roi must have " + Str(static_cast<int64_t>(2 * rank)) + " entries");
  }
  // One Resize of `in` (shape `ins`) over its axes `axes` (the others keep
  // scale 1 / their size, roi [0, 1]), each taking axis `from[j]` of the node.
  auto resize = [&](const std::string& in, const Shape& ins, const std::vector<size_t>& axes,
                    const std::vector<size_t>& from, const std::string& suffix, const std::string& out) {
    const size_t r = ins.size();
    std::vector<double> s(r, 1.0), ro(2 * r, 0.0);
    std::vector<Dim> z(ins.begin(), ins.end());
    for (size_t i = 0; i < r; ++i) ro[r + i] = 1.0;
    for (size_t j = 0; j < axes.size(); ++j) {
      if (sc_t) s[axes[j]] = sc[from[j]];
      if (sz_t) z[axes[j]] = sz[from[j]];
      if (!roi.empty()) {
        ro[axes[j]] = roi[from[j]];
        ro[r + axes[j]] = roi[rank + from[j]];
      }
    }
    const Shape rs = {static_cast<int64_t>(r)};
    auto empty_f32 = [&](const std::string& sfx) { return b.AddConst(MakeConstF32("", {0}, {}), sfx); };
    std::vector<std::string> ins_v = {in};
    const std::string scales =
        sc_t ? b.AddConst(MakeConstFromDoubles("", DType::kFloat, rs, s), suffix + "_scales") : "";
    if (g.opset < 11) {
      ins_v.push_back(scales);
    } else {
      ins_v.push_back(roi.empty() ? (g.opset >= 13 ? "" : empty_f32(suffix + "_no_roi"))
                                  : b.AddConst(MakeConstFromDoubles("", DType::kFloat, {static_cast<int64_t>(2 * r)}, ro),
                                               suffix + "_roi"));
      ins_v.push_back(sc_t ? scales : g.opset >= 13 ? "" : empty_f32(suffix + "_no_scales"));
      if (sz_t) ins_v.push_back(b.ConstI64(suffix + "_sizes", z));
    }
    Node& m = b.Add("Resize", ins_v, suffix, out);
    m.attrs = n.attrs;
    return b.Out(m);
  };
  // The output length of node axis i: floor(in * scale) (the scale as
  // float32, as shape inference computes it) or the given size.
  auto out_len = [&](size_t i) -> Dim {
    if (sz_t) return sz[i];
    return static_cast<int64_t>(std::floor(static_cast<double>(xs[i]) * static_cast<double>(static_cast<float>(sc[i]))));
  };
  const Dim N = xs[0], C = xs[1];
  if (rank == 3) {
    std::string rows = b.Reshape(n.inputs[0], {N * C, 1, xs[2]}, "x_rows");
    std::string y = resize(rows, {N * C, 1, xs[2]}, {2}, {2}, "resize_length", "");
    Reshape(b, y, {N, C, out_len(2)}, "y", n.outputs[0]);
    return Status::Ok();
  }
  const bool hw = sc_t ? (sc[3] != 1.0 || sc[4] != 1.0) : (sz[3] != xs[3] || sz[4] != xs[4]);
  const bool depth = sc_t ? sc[2] != 1.0 : sz[2] != xs[2];
  if (!depth) {
    Keep(n, b);  // H and W only: the Resize kernel's own axes
    return Status::Ok();
  }
  const Dim D = xs[2], H = xs[3], W = xs[4], OD = out_len(2);
  // [N, C, D, H, W] -> [N, C, H, W, D] -> [N*C*H*W, 1, D], resized on D.
  std::string t = b.Transpose(n.inputs[0], {0, 1, 3, 4, 2}, "x_depth_last");
  std::string rows = b.Reshape(t, {N * C * H * W, 1, D}, "x_depth_rows");
  std::string yd = resize(rows, {N * C * H * W, 1, D}, {2}, {2}, "resize_depth", "");
  yd = b.Reshape(yd, {N, C, H, W, OD}, "y_depth_last");
  Node& back = b.Add("Transpose", {yd}, "y_depth", hw ? "" : n.outputs[0]);
  back.SetInts("perm", {0, 1, 4, 2, 3});
  const std::string ydt = b.Out(back);
  if (hw) resize(ydt, {N, C, OD, H, W}, {3, 4}, {3, 4}, "resize_hw", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& NnDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"Conv", Window},
      {"ConvTranspose", Window},
      {"MaxPool", Window},
      {"AveragePool", Window},
      {"LpPool", LpPool},
      {"GlobalLpPool", GlobalLpPool},
      {"InstanceNormalization", InstanceNorm},
      {"MeanVarianceNormalization", MeanVarianceNorm},
      {"LRN", Lrn},
      {"BatchNormalization", BatchNorm},
      {"QuantizeLinear", QuantizeLinear},
      {"DequantizeLinear", DequantizeLinear},
      {"DynamicQuantizeLinear", DynamicQuantizeLinear},
      {"MatMulInteger", MatMulInteger},
      {"ConvInteger", ConvInteger},
      {"QLinearMatMul", QLinearMatMul},
      {"QLinearConv", QLinearConv},
      {"Einsum", Einsum},
      {"Upsample", Upsample},
      {"Resize", ResizeNd},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
