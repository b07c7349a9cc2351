// Operators whose result structure is fixed by parameter inputs that must be
// known at conversion (constants, or graph inputs bound by config.json
// "input_values"):
//   Compress(input, condition)  -> Gather(input, constant indices of the true
//                                  entries, axis) (flattened first without axis)
//   MelWeightMatrix(...)        -> a constant [dft_length / 2 + 1, num_mel_bins]
//   MaxUnpool(X, I[, output_shape]) -> ScatterElements of X into a zero tensor
//                                  at the flattened positions I
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

StatusOr<const Tensor*> ConstInput(const Graph& g, const Node& n, size_t k, const char* what) {
  const Tensor* t = k < n.inputs.size() && !n.inputs[k].empty() ? g.FindTensor(n.inputs[k]) : nullptr;
  if (k >= n.inputs.size() || n.inputs[k].empty()) return NodeInvalid(n, std::string("missing input ") + what);
  if (!t || !t->is_const)
    return NodeInvalid(n, std::string(what) + " input '" + n.inputs[k] +
                              "' is not a compile-time constant (dynamic shapes are not supported)");
  return t;
}

// The extent tensor of a device operator whose output 0 has an extent that
// only the device knows (feature data_dependent_outputs, ir/extent.h): an
// int32 [1] the operator writes as its second output. Graph outputs with
// such an extent get a hidden graph output reading it (AddExtentOutputs).
std::string ExtentTensor(Builder& b) { return b.NewTensor("extent"); }

// Compress with a condition known only at run time, and NonZero: the device
// operator, with a second output, its result's extent (ExtentTensor).
Status CountedOutput(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (n.op_type == "Compress" && n.HasAttr("axis")) {
    const int64_t rank = static_cast<int64_t>(x->shape.size()), axis = n.GetInt("axis", 0);
    if (axis < -rank || axis >= rank) return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range");
  }
  const std::string count = ExtentTensor(b);
  Node& m = b.Add(n.op_type, n.inputs, "device", n.outputs[0]);
  m.outputs = {n.outputs[0], count};
  m.attrs = n.attrs;
  m.name = n.name;
  return Status::Ok();
}

// Unique(X): the device operator (shaders/unique.comp) with outputs Y,
// indices, inverse_indices and counts (fresh tensors for omitted ones), the
// extent of Y / indices / counts, and a scratch output.
Status Unique(Graph& g, const Node& n, Builder& b) {
  if (!InputWithShape(g, n, 0)) return NodeInvalid(n, "input '" + n.inputs.at(0) + "' has no static shape");
  static const char* kNames[] = {"Y", "indices", "inverse_indices", "counts"};
  std::vector<std::string> outs;
  for (size_t k = 0; k < 4; ++k)
    outs.push_back(k < n.outputs.size() && !n.outputs[k].empty() ? n.outputs[k] : b.NewTensor(kNames[k]));
  const std::string count = ExtentTensor(b);
  Node& m = b.Add("Unique", {n.inputs[0]}, "device", outs[0]);
  m.outputs = {outs[0], outs[1], outs[2], outs[3], count, b.NewTensor("scratch")};
  m.attrs = n.attrs;
  m.name = n.name;
  return Status::Ok();
}

// NonMaxSuppression(boxes, scores[, max_output_boxes_per_class,
// iou_threshold, score_threshold]): the device operator (two dispatches,
// lower_index.cpp) with the extent output and three scratch outputs: the
// selections per (batch, class) pair, their counts and the candidates' order
// keys. A constant max_output_boxes_per_class bounds the slots per pair
// (attribute _slots); a constant iou_threshold must lie in [0, 1] (as ONNX
// Runtime checks); one that is a graph input gets that range checked by the
// runtime at send_input (GraphIO::value_min/value_max).
Status NonMaxSuppression(Graph& g, const Node& n, Builder& b) {
  const int64_t center = n.GetInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return NodeInvalid(n, "center_point_box is " + std::to_string(center) + "; it must be 0 or 1");
  auto input = [&](size_t k) -> const Tensor* {
    return k < n.inputs.size() && !n.inputs[k].empty() ? g.FindTensor(n.inputs[k]) : nullptr;
  };
  int64_t slots = -1;  // none: as many as candidates
  if (const Tensor* m = input(2)) {
    if (m->is_const) {
      const std::vector<int64_t> v = m->AsInts();
      if (v.size() != 1) return NodeInvalid(n, "max_output_boxes_per_class must hold one value");
      slots = std::max<int64_t>(v[0], 0);
    }
  }
  if (const Tensor* t = input(3)) {
    if (t->is_const) {
      const std::vector<double> v = t->AsDoubles();
      if (v.size() != 1) return NodeInvalid(n, "iou_threshold must hold one value");
      if (!(v[0] >= 0.0 && v[0] <= 1.0))
        return NodeInvalid(n, "iou_threshold is " + std::to_string(v[0]) + "; it must lie in [0, 1]");
    } else {
      for (GraphIO& io : g.inputs)
        if (io.tensor == n.inputs[3]) {
          io.value_min = 0.0;
          io.value_max = 1.0;
          io.value_rule = "the iou_threshold of NonMaxSuppression '" + n.name + "' must lie in [0, 1]";
        }
    }
  }
  const std::string count = ExtentTensor(b);
  std::vector<std::string> in = n.inputs;
  in.resize(5);
  Node& m = b.Add("NonMaxSuppression", in, "device", n.outputs.at(0));
  m.outputs = {n.outputs[0], count, b.NewTensor("selected_per_class"), b.NewTensor("count_per_class"),
               b.NewTensor("order_keys")};
  m.attrs = n.attrs;
  m.name = n.name;
  if (slots >= 0) m.SetInt("_slots", slots);
  return Status::Ok();
}

Status Compress(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (const Tensor* c = n.inputs.size() > 1 ? g.FindTensor(n.inputs[1]) : nullptr; c != nullptr && !c->is_const)
    return CountedOutput(g, n, b);
  OAAXVK_ASSIGN_OR_RETURN(const Tensor* cond, ConstInput(g, n, 1, "condition"));
  if (cond->shape.size() != 1) return NodeInvalid(n, "condition must be 1-D");
  std::string data = n.inputs[0];
  int64_t axis = 0, dim = x->numel();
  if (n.HasAttr("axis")) {
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    axis = n.GetInt("axis", 0);
    if (axis < -rank || axis >= rank) return NodeInvalid(n, "axis " + std::to_string(axis) + " out of range");
    if (axis < 0) axis += rank;
    dim = x->shape[axis];
  } else {
    data = b.Out(b.Add("Reshape", {data, b.ConstI64("flat", {dim})}, "flatten"));
  }
  std::vector<int64_t> idx;
  std::vector<int64_t> c = cond->AsInts();
  if (static_cast<int64_t>(c.size()) > dim)
    return NodeInvalid(n, "condition has " + std::to_string(c.size()) + " entries, the axis only " + std::to_string(dim));
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] != 0) idx.push_back(static_cast<int64_t>(i));
  if (idx.empty()) return NodeUnimplemented(n, "the condition selects nothing (empty outputs are not supported)");
  std::string table = b.ConstI64("indices", ToDims(idx));
  b.Add("Gather", {data, table}, "gather", n.outputs[0]).SetInt("axis", axis);
  return Status::Ok();
}

Status MelWeightMatrix(Graph& g, const Node& n, Builder& b) {
  const char* names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
  double v[5];
  for (size_t k = 0; k < 5; ++k) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* t, ConstInput(g, n, k, names[k]));
    if (t->numel() != 1) return NodeInvalid(n, std::string(names[k]) + " must be a scalar");
    v[k] = t->AsDoubles()[0];
  }
  const int64_t mel = static_cast<int64_t>(v[0]), dft = static_cast<int64_t>(v[1]), rate = static_cast<int64_t>(v[2]);
  if (mel < 1 || dft < 1 || rate < 1 || mel > 4096 || dft > (1 << 20))
    return NodeInvalid(n, "num_mel_bins, dft_length and sample_rate must be positive (and reasonably small)");
  const int64_t bins = dft / 2 + 1;
  // Mel-spaced band edges (HTK formula), mapped to spectrogram bins, and
  // triangular filters between consecutive edges, as the ONNX reference.
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lo = to_mel(v[3]), hi = to_mel(v[4]);
  // The step divides by the number of edges (mel + 2), as the onnx 1.12
  // reference (backend test case) does.
  const double step = (hi - lo) / double(mel + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel + 2));
  for (int64_t i = 0; i < mel + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (double(i) * step + lo) / 2595.0) - 1.0);
    edge[i] = static_cast<int64_t>(std::floor(double(dft + 1) * hz / double(rate)));
  }
  std::vector<double> w(static_cast<size_t>(bins * mel), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * mel + i)]; };
  for (int64_t i = 0; i < mel; ++i) {
    const int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
    if (l < 0 || h >= bins + 1 || c >= bins) return NodeInvalid(n, "the band edges fall outside the spectrogram bins");
    if (c == l) {
      at(c, i) = 1.0;
    } else {
      for (int64_t j = l; j <= c; ++j) at(j, i) = double(j - l) / double(c - l);
    }
    if (h > c)
      for (int64_t j = c; j < h; ++j) at(j, i) = double(h - j) / double(h - c);
  }
  DType dt = static_cast<DType>(n.GetInt("output_datatype", 1));
  if (DTypeSize(dt) == 0) return NodeUnimplemented(n, "output_datatype " + std::to_string(int(dt)) + " is not supported");
  std::string c = b.AddConst(MakeConstFromDoubles("", dt, {bins, mel}, w), "weights");
  b.Add("Identity", {c}, "out", n.outputs[0]);
  return Status::Ok();
}

// MaxUnpool: scatter X to the flattened output positions given by I (the
// MaxPool Indices, flattened over the whole output tensor) in a zero tensor.
Status MaxUnpool(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* ind = InputWithShape(g, n, 1);
  if (!x || !ind) return NodeInvalid(n, "X and I need static shapes");
  if (ind->shape != x->shape) return NodeInvalid(n, "I must have the shape of X");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  if (rank < 3) return NodeInvalid(n, "X must have rank >= 3");
  // The default output shape (what the indices refer to).
  const std::vector<int64_t> k = n.GetInts("kernel_shape", {});
  const size_t sp = static_cast<size_t>(rank - 2);
  if (k.size() != sp) return NodeInvalid(n, "kernel_shape must have one entry per spatial axis");
  const std::vector<int64_t> st = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pd = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (st.size() != sp || pd.size() != 2 * sp) return NodeInvalid(n, "strides/pads do not match the spatial rank");
  Shape def = {x->shape[0], x->shape[1]};
  for (size_t i = 0; i < sp; ++i) def.push_back((x->shape[2 + i] - 1) * st[i] + k[i] - pd[i] - pd[sp + i]);
  Shape out = def;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* os, ConstInput(g, n, 2, "output_shape"));
    out.clear();
    for (int64_t v : os->AsInts()) out.push_back(v);
    if (static_cast<int64_t>(out.size()) != rank || out[0] != def[0] || out[1] != def[1])
      return NodeInvalid(n, "output_shape " + ShapeToString(out) + " does not match X " + ShapeToString(x->shape));
    for (int64_t i = 2; i < rank; ++i)
      if (out[i] < def[i])
        return NodeInvalid(n, "output_shape " + ShapeToString(out) + " is smaller than the unpooled shape " +
                                  ShapeToString(def));
  }
  const int64_t total = NumElements(out);
  if (total < 1 || total > (int64_t{1} << 31)) return NodeInvalid(n, "unsupported output size " + ShapeToString(out));
  std::string zeros = b.AddConst(MakeConstFromDoubles("", x->dtype, {total}, std::vector<double>(total, 0.0)), "zeros");
  std::string fx = b.Out(b.Add("Reshape", {n.inputs[0], b.ConstI64("x_flat", {x->numel()})}, "x_flat"));
  std::string fi = b.Out(b.Add("Reshape", {n.inputs[1], b.ConstI64("i_flat", {x->numel()})}, "i_flat"));
  if (out != def) {
    // The indices address the default shape; a larger output_shape pads
    // each spatial axis (floor(extra / 2) before, the rest after, as ONNX
    // Runtime does): re-address index -> (plane, coordinates) -> output.
    auto c = [&](int64_t v, const std::string& sfx) {
      return b.AddConst(MakeConstFromDoubles("", DType::kInt64, {}, {double(v)}), sfx);
    };
    auto op = [&](const std::string& o, std::vector<std::string> in, const std::string& sfx) {
      return b.Out(b.Add(o, std::move(in), sfx));
    };
    int64_t def_plane = 1, out_plane = 1;
    for (size_t i = 0; i < sp; ++i) { def_plane *= def[2 + i]; out_plane *= out[2 + i]; }
    std::string rem = op("Mod", {fi, c(def_plane, "def_plane")}, "in_plane");
    std::string acc = op("Mul", {op("Div", {fi, c(def_plane, "def_plane2")}, "plane"), c(out_plane, "out_plane")}, "plane_base");
    int64_t def_stride = def_plane, out_stride = out_plane;
    for (size_t i = 0; i < sp; ++i) {
      const std::string is = std::to_string(i);
      def_stride /= def[2 + i];
      out_stride /= out[2 + i];
      std::string coord = op("Div", {rem, c(def_stride, "def_stride" + is)}, "coord" + is);
      rem = op("Mod", {rem, c(def_stride, "def_stride_m" + is)}, "rem" + is);
      std::string shifted = op("Add", {coord, c((out[2 + i] - def[2 + i]) / 2, "pad" + is)}, "padded" + is);
      acc = op("Add", {acc, op("Mul", {shifted, c(out_stride, "out_stride" + is)}, "term" + is)}, "index" + is);
    }
    fi = acc;
  }
  std::string sc = b.Out(b.Add("ScatterElements", {zeros, fi, fx}, "scatter"));
  b.Add("Reshape", {sc, b.ConstI64("out_shape", out)}, "reshape", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& StaticDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"Compress", Compress},
      {"NonZero", CountedOutput},
      {"NonMaxSuppression", NonMaxSuppression},
      {"Unique", Unique},
      {"MelWeightMatrix", MelWeightMatrix},
      {"MaxUnpool", MaxUnpool},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
