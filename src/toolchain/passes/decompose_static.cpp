// Operators whose result structure is fixed by parameter inputs that must be
// known at conversion (constants, or graph inputs bound by config.json
// "input_values"):
//   Compress(input, condition)  -> Gather(input, constant indices of the true
//                                  entries, axis) (flattened first without axis)
//   MelWeightMatrix(...)        -> a constant [dft_length / 2 + 1, num_mel_bins]
//                                  (elementwise on the device when an input is
//                                  read at run time)
//   MaxUnpool(X, I[, output_shape]) -> ScatterElements of X into a zero tensor
//                                  at the flattened positions I
//   GatherElements of rank > 6  -> merged non-axis dimensions, rank <= 6
//   TfIdfVectorizer(X)          -> per n-gram length, Gather of X at constant
//                                  window positions, Equal with the pool,
//                                  counts, Gather onto the output columns
#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdint>

#include "toolchain/ir/not_constant.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

StatusOr<const Tensor*> ConstInput(const Graph& g, const Node& n, size_t k, const char* what) {
  const Tensor* t = k < n.inputs.size() && !n.inputs[k].empty() ? g.FindTensor(n.inputs[k]) : nullptr;
  if (k >= n.inputs.size() || n.inputs[k].empty()) return NodeInvalid(n, std::string("missing input ") + what);
  if (!t || !t->is_const)
    return NodeInvalid(n, NotConstantMessage(g, what, n.inputs[k]));
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
  // The kernel reads max_output_boxes_per_class as a 32-bit integer; a
  // constant beyond that (torchvision's batched_nms passes INT64_MAX for
  // "no limit") keeps every candidate either way, so it is read as INT32_MAX.
  if (slots > std::numeric_limits<int32_t>::max())
    in[2] = b.ConstI64("max_output_boxes_per_class", {Dim(std::numeric_limits<int32_t>::max())});
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

// MelWeightMatrix whose num_mel_bins / dft_length are read at run time
// (feature value_symbols: the output shape [dft_length / 2 + 1,
// num_mel_bins] is an expression of them) or whose other inputs are graph
// inputs: the same formulas as the constant case below, elementwise on the
// device in float32. edge(i) = floor((dft_length + 1) * hz(i) / sample_rate)
// with hz(i) = 700 (10^((i step + lo) / 2595) - 1), and weight [j, i] =
// (h - j) / (h - c) for c <= j < h when h > c, else 1 at j = c when c = l,
// else (j - l) / (c - l) for l <= j <= c, else 0 (l, c, h = edges i, i + 1,
// i + 2), bins j outside the output dropped.
Status MelWeightMatrixOnDevice(const Node& n, Builder& b, const Dim& mel, const Dim& dft) {
  SymContext* sc = SymContext::Current();
  if (sc != nullptr) {
    OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(mel, Dim(1))).Node(sc), "MelWeightMatrix '" + n.name + "': num_mel_bins must be >= 1"));
    OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(dft, Dim(1))).Node(sc), "MelWeightMatrix '" + n.name + "': dft_length must be >= 1"));
  } else if (mel < 1 || dft < 1) {
    return NodeInvalid(n, "num_mel_bins and dft_length must be positive");
  }
  const Dim bins = FloorDiv(dft, Dim(2)) + 1;
  auto op = [&](const std::string& o, std::vector<std::string> in, const std::string& sfx) { return b.Op(o, std::move(in), sfx); };
  auto f = [&](double v, const std::string& sfx) { return b.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {v}), sfx); };
  auto to_float = [&](const std::string& x, const std::string& sfx) { return b.Cast(x, DType::kFloat, sfx); };
  auto iota = [&](const Dim& len, const std::string& sfx) {
    if (!len.is_symbolic()) {
      std::vector<double> v(static_cast<size_t>(len.value()));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
      return b.AddConst(MakeConstFromDoubles("", DType::kFloat, {len.value()}, v), sfx);
    }
    return b.RunTimeIota(len, DType::kFloat, false, sfx);
  };
  const double ln10 = std::log(10.0);
  // mel(hz) = 2595 log10(1 + hz / 700)
  auto to_mel = [&](const std::string& hz, const std::string& sfx) {
    return op("Mul", {op("Log", {op("Add", {op("Div", {to_float(hz, sfx + "_f"), f(700.0, sfx + "_700")}, sfx + "_r"), f(1.0, sfx + "_one")}, sfx + "_1p")}, sfx + "_ln"),
                      f(2595.0 / ln10, sfx + "_k")},
              sfx);
  };
  const std::string lo = to_mel(n.inputs[3], "mel_lo"), hi = to_mel(n.inputs[4], "mel_hi");
  const std::string mel_f = to_float(n.inputs[0], "mel_count");
  const std::string step = op("Div", {op("Sub", {hi, lo}, "mel_span"), op("Add", {mel_f, f(2.0, "two")}, "edges")}, "mel_step");
  const std::string scale = op("Div", {op("Add", {to_float(n.inputs[1], "dft_f"), f(1.0, "dft_one")}, "dft_p1"),
                                      to_float(n.inputs[2], "rate_f")},
                               "bin_scale");
  const std::string i0 = iota(mel, "band");
  // edge(i + k) as a [1, mel] row.
  auto edge = [&](double k, const std::string& sfx) {
    const std::string m = op("Add", {op("Mul", {op("Add", {i0, f(k, sfx + "_k")}, sfx + "_i"), step}, sfx + "_is"), lo}, sfx + "_mel");
    const std::string hz = op("Mul", {op("Sub", {op("Exp", {op("Mul", {m, f(ln10 / 2595.0, sfx + "_c")}, sfx + "_e")}, sfx + "_pow"),
                                                f(1.0, sfx + "_one")}, sfx + "_m1"),
                                      f(700.0, sfx + "_700")},
                              sfx + "_hz");
    return b.Reshape(op("Floor", {op("Mul", {hz, scale}, sfx + "_bin")}, sfx), {Dim(1), mel}, sfx + "_row");
  };
  const std::string l = edge(0, "left"), c = edge(1, "center"), h = edge(2, "right");
  const std::string j = b.Reshape(iota(bins, "bin"), {bins, Dim(1)}, "bin_col");
  const std::string zero = f(0.0, "zero"), one = f(1.0, "one");
  const std::string down = op("Div", {op("Sub", {h, j}, "h_minus_j"), op("Sub", {h, c}, "h_minus_c")}, "falling");
  const std::string up = op("Div", {op("Sub", {j, l}, "j_minus_l"), op("Sub", {c, l}, "c_minus_l")}, "rising");
  const std::string in_fall = op("And", {op("Greater", {h, c}, "h_gt_c"),
                                         op("And", {op("GreaterOrEqual", {j, c}, "j_ge_c"), op("Less", {j, h}, "j_lt_h")}, "j_in_ch")},
                                 "in_falling");
  const std::string in_rise = op("And", {op("GreaterOrEqual", {j, l}, "j_ge_l"), op("LessOrEqual", {j, c}, "j_le_c")}, "in_rising");
  const std::string flat = op("Where", {op("Equal", {j, c}, "j_eq_c"), one, zero}, "flat");
  const std::string rise = op("Where", {op("Equal", {c, l}, "c_eq_l"), flat, op("Where", {in_rise, up, zero}, "rise_or_0")}, "rise");
  const std::string w = op("Where", {in_fall, down, rise}, "weights");
  const DType dt = static_cast<DType>(n.GetInt("output_datatype", 1));
  if (DTypeSize(dt) == 0) return NodeUnimplemented(n, "output_datatype " + std::to_string(int(dt)) + " is not supported");
  if (dt == DType::kFloat) b.Add("Identity", {w}, "out", n.outputs[0]);
  else b.Cast(w, dt, "out", n.outputs[0]);
  return Status::Ok();
}

Status MelWeightMatrix(Graph& g, const Node& n, Builder& b) {
  const char* names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
  {
    // The output shape needs num_mel_bins and dft_length (constants or
    // run-time values); any input read at run time computes on the device.
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* mt, ConstInput(g, n, 0, names[0]));
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* dt, ConstInput(g, n, 1, names[1]));
    if (mt->numel() != 1 || dt->numel() != 1) return NodeInvalid(n, "num_mel_bins and dft_length must be scalars");
    bool device = AnyDependsOnValue(mt->sym) || AnyDependsOnValue(dt->sym);
    for (size_t k = 2; k < 5; ++k) {
      if (k >= n.inputs.size() || n.inputs[k].empty()) return NodeInvalid(n, std::string("missing input ") + names[k]);
      const Tensor* t = g.FindTensor(n.inputs[k]);
      if (!t) return NodeInvalid(n, std::string("missing input ") + names[k]);
      if (t->has_shape && t->numel() != 1) return NodeInvalid(n, std::string(names[k]) + " must be a scalar");
      device = device || !t->is_const || AnyDependsOnValue(t->sym);
    }
    if (device) return MelWeightMatrixOnDevice(n, b, mt->AsDims()[0], dt->AsDims()[0]);
  }
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
  // An output_shape read at run time (feature value_symbols): the output
  // dimensions are its values (guards: the batch and channel dimensions of
  // X, spatial sizes no smaller than the unpooled ones), the zero tensor is
  // an Expand and the re-addressing constants are expressions of it.
  bool run_time_shape = false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    OAAXVK_ASSIGN_OR_RETURN(const Tensor* os, ConstInput(g, n, 2, "output_shape"));
    out = os->AsDims();
    run_time_shape = AnyDependsOnValue(os->sym);
    if (static_cast<int64_t>(out.size()) != rank)
      return NodeInvalid(n, "output_shape " + ShapeToString(out) + " does not match X " + ShapeToString(x->shape));
    if (run_time_shape) {
      SymContext* sc = SymContext::Current();
      for (int64_t i = 0; i < rank; ++i) {
        const std::string what = "MaxUnpool '" + n.name + "': output_shape[" + std::to_string(i) + "] ";
        if (i < 2)
          OAAXVK_RETURN_IF_ERROR(sc->AddGuard(Eq(out[i], def[i]).Node(sc), what + "must be " + std::to_string(def[i].value()) +
                                                                               " (dimension " + std::to_string(i) + " of X)"));
        else
          OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(out[i], def[i])).Node(sc),
                                              what + "must be at least the unpooled size " + std::to_string(def[i].value())));
      }
    } else {
      if (out[0] != def[0] || out[1] != def[1])
        return NodeInvalid(n, "output_shape " + ShapeToString(out) + " does not match X " + ShapeToString(x->shape));
      for (int64_t i = 2; i < rank; ++i)
        if (out[i] < def[i])
          return NodeInvalid(n, "output_shape " + ShapeToString(out) + " is smaller than the unpooled shape " +
                                    ShapeToString(def));
    }
  }
  const Dim total = NumElements(out);
  if (total < 1 || total > (int64_t{1} << 31)) return NodeInvalid(n, "unsupported output size " + ShapeToString(out));
  std::string zeros;
  if (run_time_shape)
    zeros = b.Out(b.Add("Expand", {b.AddConst(MakeConstFromDoubles("", x->dtype, {1}, {0.0}), "zero"),
                                   b.ConstI64("zeros_shape", {total})}, "zeros"));
  else
    zeros = b.AddConst(MakeConstFromDoubles("", x->dtype, {total.value()}, std::vector<double>(total.value(), 0.0)), "zeros");
  std::string fx = b.Out(b.Add("Reshape", {n.inputs[0], b.ConstI64("x_flat", {x->numel()})}, "x_flat"));
  std::string fi = b.Out(b.Add("Reshape", {n.inputs[1], b.ConstI64("i_flat", {x->numel()})}, "i_flat"));
  if (run_time_shape || out != def) {
    // The indices address the default shape; a larger output_shape pads
    // each spatial axis (floor(extra / 2) before, the rest after, as ONNX
    // Runtime does): re-address index -> (plane, coordinates) -> output.
    auto c = [&](const Dim& v, const std::string& sfx) {
      return v.is_symbolic() ? b.ConstI64(sfx, {v}) : b.AddConst(MakeConstFromDoubles("", DType::kInt64, {}, {double(v.value())}), sfx);
    };
    auto op = [&](const std::string& o, std::vector<std::string> in, const std::string& sfx) {
      return b.Out(b.Add(o, std::move(in), sfx));
    };
    Dim def_plane = 1, out_plane = 1;
    for (size_t i = 0; i < sp; ++i) { def_plane = def_plane * def[2 + i]; out_plane = out_plane * out[2 + i]; }
    std::string rem = op("Mod", {fi, c(def_plane, "def_plane")}, "in_plane");
    std::string acc = op("Mul", {op("Div", {fi, c(def_plane, "def_plane2")}, "plane"), c(out_plane, "out_plane")}, "plane_base");
    Dim def_stride = def_plane, out_stride = out_plane;
    for (size_t i = 0; i < sp; ++i) {
      const std::string is = std::to_string(i);
      def_stride = FloorDiv(def_stride, def[2 + i]);
      out_stride = FloorDiv(out_stride, Max(out[2 + i], Dim(1)));
      std::string coord = op("Div", {rem, c(def_stride, "def_stride" + is)}, "coord" + is);
      rem = op("Mod", {rem, c(def_stride, "def_stride_m" + is)}, "rem" + is);
      std::string shifted = op("Add", {coord, c(FloorDiv(out[2 + i] - def[2 + i], Dim(2)), "pad" + is)}, "padded" + is);
      acc = op("Add", {acc, op("Mul", {shifted, c(out_stride, "out_stride" + is)}, "term" + is)}, "index" + is);
    }
    fi = acc;
  }
  std::string sc = b.Out(b.Add("ScatterElements", {zeros, fi, fx}, "scatter"));
  b.Add("Reshape", {sc, b.ConstI64("out_shape", out)}, "reshape", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

// TfIdfVectorizer over an integer pool (pool_int64s), ONNX Runtime's
// counting: for every gram length n in [min_gram_length, max_gram_length]
// with pool entries, every window start i and every skip distance
// d = 1 .. max_skip_count + 1 (unigrams once, d = 1) with i + (n - 1) d
// inside the row, the window [x_i, x_(i+d), ...] is compared with each pool
// n-gram. Per n: Gather of X at a constant [W, n] position matrix (all skip
// distances stacked) -> [B, W, n]; Equal with the pool [G, n] -> [B, W, G, n];
// all of the last axis (ReduceMin of the 0/1 values) and the sum over the
// windows -> [B, G] counts; the lengths' counts concatenated, a Gather puts
// each n-gram's count at its ngram_indexes column (a MatMul by a constant
// 0/1 matrix when columns are shared). Then TF = counts,
// IDF = min(counts, 1) * weights, TFIDF = counts * weights (weights default
// to 1). Output [V] for X [C], [B, V] for X [B, C], V = max(ngram_indexes) + 1.
Status TfIdfVectorizer(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->dtype != DType::kInt32 && x->dtype != DType::kInt64)
    return NodeUnimplemented(n, std::string("input '") + n.inputs[0] + "' has data type " + DTypeName(x->dtype) +
                                    "; only int32 / int64 token ids are supported (string pools are not)");
  if (n.HasAttr("pool_strings") && !n.HasAttr("pool_int64s"))
    return NodeUnimplemented(n, "pool_strings (string tokens) are not supported; use pool_int64s");
  if (x->shape.empty() || x->shape.size() > 2)
    return NodeInvalid(n, "input must have shape [C] or [N, C], got " + ShapeToString(x->shape));
  const std::string mode = n.GetString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return NodeInvalid(n, "mode must be TF, IDF or TFIDF, got '" + mode + "'");
  const int64_t min_n = n.GetInt("min_gram_length", 0), max_n = n.GetInt("max_gram_length", 0);
  const int64_t max_skip = n.GetInt("max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_skip < 0)
    return NodeInvalid(n, "needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got " +
                              std::to_string(min_n) + ", " + std::to_string(max_n) + ", " + std::to_string(max_skip));
  const std::vector<int64_t> pool = n.GetInts("pool_int64s", {}), counts = n.GetInts("ngram_counts", {}),
                             indexes = n.GetInts("ngram_indexes", {});
  std::vector<float> weights;
  if (n.HasAttr("weights")) weights = n.attrs.at("weights").floats;
  // Pool n-grams per length: ngram_counts[k] is where the (k+1)-grams start.
  std::vector<int64_t> first(counts.size() + 1, static_cast<int64_t>(pool.size()));
  for (size_t k = 0; k < counts.size(); ++k) first[k] = counts[k];
  int64_t grams = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t len = static_cast<int64_t>(k) + 1, span = first[k + 1] - first[k];
    if (first[k] < 0 || span < 0 || span % len != 0)
      return NodeInvalid(n, "ngram_counts does not split pool_int64s into whole n-grams (entry " + std::to_string(k) + ")");
    grams += span / len;
  }
  if (counts.empty() || static_cast<int64_t>(indexes.size()) != grams)
    return NodeInvalid(n, "ngram_indexes has " + std::to_string(indexes.size()) + " entries for " +
                              std::to_string(grams) + " pool n-grams");
  if (!weights.empty() && weights.size() != indexes.size())
    return NodeInvalid(n, "weights has " + std::to_string(weights.size()) + " entries for " +
                              std::to_string(indexes.size()) + " pool n-grams");
  int64_t V = 0;
  for (int64_t i : indexes) {
    if (i < 0) return NodeInvalid(n, "ngram_indexes holds a negative index");
    V = std::max(V, i + 1);
  }
  for (const Dim& d : x->shape)
    if (d.is_symbolic())
      return NodeUnimplemented(n, "input '" + n.inputs[0] + "' has a dynamic shape " + ShapeToString(x->shape) +
                                      "; the n-gram windows are built at conversion, so its shape must be static");
  const int64_t B = x->shape.size() == 2 ? x->shape[0].value() : 1, C = x->shape.back().value();
  const std::string x2 = b.Reshape(n.inputs[0], {B, C}, "rows");
  // Counts per pool n-gram, in pool order: float [B, G] per length (zeros
  // for lengths outside [min_gram_length, max_gram_length] or longer than
  // a row), then one zero column for output columns no n-gram maps to.
  std::vector<std::string> parts;
  auto zeros = [&](int64_t cols, const std::string& suffix) {
    return b.AddConst(MakeConstF32("", {B, cols}, std::vector<float>(static_cast<size_t>(B * cols), 0.0f)), suffix);
  };
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t len = static_cast<int64_t>(k) + 1, G = (first[k + 1] - first[k]) / len;
    if (G == 0) continue;
    const std::string tag = std::to_string(len) + "gram";
    std::vector<int64_t> positions;
    if (len >= min_n && len <= max_n)
      for (int64_t d = 1; d <= (len == 1 ? 1 : max_skip + 1); ++d)
        for (int64_t i = 0; i + (len - 1) * d < C; ++i)
          for (int64_t j = 0; j < len; ++j) positions.push_back(i + j * d);
    const int64_t W = static_cast<int64_t>(positions.size()) / len;
    if (W == 0) {
      parts.push_back(zeros(G, tag + "_none"));
      continue;
    }
    if (B * W * G * len > (int64_t{1} << 26))
      return NodeUnimplemented(n, "comparing " + std::to_string(W) + " windows with " + std::to_string(G) + " " +
                                      std::to_string(len) + "-grams in " + std::to_string(B) +
                                      " rows is above the supported size of 2^26 comparisons");
    const std::string pos = b.AddConst(MakeConstI64("", {W, len}, positions), tag + "_positions");
    Node& gather = b.Add("Gather", {x2, pos}, tag + "_windows");
    gather.SetInt("axis", 1);
    const std::string windows = b.Reshape(b.Out(gather), {B, W, 1, len}, tag + "_windows4");
    const std::vector<int64_t> ngrams(pool.begin() + first[k], pool.begin() + first[k] + G * len);
    Tensor pool_t = MakeConstI64("", {G, len}, ngrams);  // int64 exact; int32 pools converted
    if (x->dtype == DType::kInt32) {
      for (int64_t v : ngrams)
        if (v < INT32_MIN || v > INT32_MAX)
          return NodeInvalid(n, "pool_int64s value " + std::to_string(v) + " does not fit the int32 input");
      pool_t = MakeConstFromDoubles("", DType::kInt32, {G, len}, std::vector<double>(ngrams.begin(), ngrams.end()));
    }
    const std::string pool_c = b.AddConst(std::move(pool_t), tag + "_pool");
    const std::string eq = b.Op("Equal", {windows, pool_c}, tag + "_equal");
    Node& cast = b.Add("Cast", {eq}, tag + "_equal_f");
    cast.SetInt("to", static_cast<int64_t>(DType::kFloat));
    Node& all = b.Add("ReduceMin", {b.Out(cast)}, tag + "_match");
    all.SetInts("axes", {3});
    all.SetInt("keepdims", 0);
    Node& sum = b.Add("ReduceSum", {b.Out(all)}, tag + "_count");  // [B, G]
    sum.SetInt("keepdims", 0);
    sum.inputs.push_back(b.ConstI64(tag + "_count_axes", {1}));
    parts.push_back(b.Out(sum));
  }
  parts.push_back(zeros(1, "zero_column"));
  Node& cat = b.Add("Concat", parts, "pool_counts");  // [B, grams + 1]
  cat.SetInt("axis", 1);
  // Onto the output columns: a Gather when every column has at most one
  // n-gram (the usual case), else a MatMul by a 0/1 matrix that sums them.
  std::vector<int64_t> source(static_cast<size_t>(V), grams);
  bool unique = true;
  for (int64_t gi = 0; gi < grams; ++gi) {
    int64_t& c = source[static_cast<size_t>(indexes[static_cast<size_t>(gi)])];
    unique = unique && c == grams;
    c = gi;
  }
  std::string total;  // float [B, V]
  if (unique) {
    Node& place = b.Add("Gather", {b.Out(cat), b.AddConst(MakeConstI64("", {V}, source), "columns")}, "placed");
    place.SetInt("axis", 1);
    total = b.Out(place);
  } else {
    std::vector<float> place(static_cast<size_t>((grams + 1) * V), 0.0f);
    for (int64_t gi = 0; gi < grams; ++gi) place[static_cast<size_t>(gi * V + indexes[static_cast<size_t>(gi)])] = 1;
    total = b.Op("MatMul", {b.Out(cat), b.AddConst(MakeConstF32("", {grams + 1, V}, place), "columns")}, "placed");
  }
  if (mode != "TF") {
    std::vector<float> w(static_cast<size_t>(V), 0.0f);
    for (size_t gi = 0; gi < indexes.size(); ++gi)
      w[static_cast<size_t>(indexes[gi])] = weights.empty() ? 1.0f : weights[gi];
    std::string v = total;
    if (mode == "IDF") v = b.Op("Min", {total, b.AddConst(MakeConstF32("", {}, {1.0f}), "one")}, "present");
    total = b.Op("Mul", {v, b.AddConst(MakeConstF32("", {V}, w), "weights")}, "weighted");
  }
  const std::vector<Dim> out = x->shape.size() == 2 ? std::vector<Dim>{B, V} : std::vector<Dim>{V};
  b.Add("Reshape", {total, b.ConstI64("output_shape", out)}, "output", n.outputs[0]);
  return Status::Ok();
}

// GatherElements of rank above 6 (the index kernels' limit): adjacent
// dimensions other than `axis` where data and indices have the same extent
// index the same way, so they merge into one (row-major order is kept):
// Reshape both, gather along the moved axis, Reshape to the indices' shape.
// Rank <= 6, or nothing to merge, keeps the node.
Status GatherElementsHighRank(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  const Tensor* idx = InputWithShape(g, n, 1);
  auto keep = [&]() {
    Node& c = b.Add(n.op_type, n.inputs, "kept", n.outputs.empty() ? "" : n.outputs[0]);
    c.name = n.name;
    c.domain = n.domain;
    c.outputs = n.outputs;
    c.attrs = n.attrs;
    return Status::Ok();
  };
  if (!x || !idx || x->shape.size() <= 6 || x->shape.size() != idx->shape.size()) return keep();
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return keep();  // shape inference words the error
  for (const Dim& d : x->shape)
    if (d.is_symbolic()) return keep();
  for (const Dim& d : idx->shape)
    if (d.is_symbolic()) return keep();
  // Groups of consecutive dimensions: the axis alone; others merge while
  // data and indices agree on both neighbours' extents.
  std::vector<Dim> xs, is;
  int64_t new_axis = 0;
  bool can_merge = false;  // the last group may absorb the next dimension
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t dx = x->shape[static_cast<size_t>(k)].value(), di = idx->shape[static_cast<size_t>(k)].value();
    const bool same = k != axis && dx == di;
    if (same && can_merge) {
      xs.back() = xs.back().value() * dx;
      is.back() = is.back().value() * di;
      continue;
    }
    if (k == axis) new_axis = static_cast<int64_t>(xs.size());
    xs.push_back(dx);
    is.push_back(di);
    can_merge = same;
  }
  if (xs.size() > 6) return keep();  // the kernel refuses it, naming the rank
  const std::string xr = b.Reshape(n.inputs[0], xs, "data_merged");
  const std::string ir = b.Reshape(n.inputs[1], is, "indices_merged");
  Node& ge = b.Add("GatherElements", {xr, ir}, "merged");
  ge.SetInt("axis", new_axis);
  b.Add("Reshape", {b.Out(ge), b.ConstI64("output_shape", std::vector<Dim>(idx->shape.begin(), idx->shape.end()))},
        "output", n.outputs[0]);
  return Status::Ok();
}

const std::map<std::string, DecomposeFn>& StaticDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"Compress", Compress},
      {"NonZero", CountedOutput},
      {"NonMaxSuppression", NonMaxSuppression},
      {"Unique", Unique},
      {"MelWeightMatrix", MelWeightMatrix},
      {"MaxUnpool", MaxUnpool},
      {"TfIdfVectorizer", TfIdfVectorizer},
      {"GatherElements", GatherElementsHighRank},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
