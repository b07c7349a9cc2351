// DFT and STFT (opset 17) as MatMuls with constant twiddle matrices, and the
// ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) as chains of
// elementwise operators.
//
// DFT along `axis` of a real ([..., 1]) or complex ([..., 2]) signal with
// L = dft_length points (the axis length when absent; shorter signals are
// zero-padded, longer ones truncated):
//   forward  re = xr C + xi S,      im = xi C - xr S
//   inverse  re = (xr C - xi S)/L,  im = (xi C + xr S)/L
// with C[n][k] = cos(2 pi n k / L), S[n][k] = sin(2 pi n k / L), k < K
// (K = L, or L/2 + 1 with onesided). The axis is moved last (Transpose) so
// each product is one MatMul with a constant [N, K] matrix.
// STFT gathers the frames with a constant index table (Gather), multiplies
// by the window and applies the same DFT to the frame axis.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "toolchain/ir/not_constant.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Thin view of the Builder's one-output helpers plus float constants.
class Ops {
 public:
  explicit Ops(Builder& b) : b_(b) {}
  std::string Op(const std::string& op, std::vector<std::string> in, const std::string& sfx) {
    return b_.Op(op, std::move(in), sfx);
  }
  std::string Reshape(const std::string& x, const std::vector<Dim>& shape, const std::string& sfx) {
    return b_.Reshape(x, shape, sfx);
  }
  std::string SliceAxis(const std::string& x, int64_t axis, int64_t start, int64_t end, const std::string& sfx) {
    return b_.SliceAxis(x, axis, start, end, sfx);
  }
  std::string Transpose(const std::string& x, const std::vector<int64_t>& perm, const std::string& sfx) {
    return b_.Transpose(x, perm, sfx);
  }
  std::string ConstF(const std::string& sfx, const Shape& shape, const std::vector<double>& v) {
    return b_.AddConst(MakeConstFromDoubles("", DType::kFloat, shape, v), sfx);
  }
  std::string Scalar(const std::string& sfx, double v) { return ConstF(sfx, {}, {v}); }

 private:
  Builder& b_;
};

// The DFT core: x [..., N, c] (c = 1 real, 2 complex) along `axis` (< rank-1)
// into `out` [..., K, 2].
// A length read at run time (`len_tensor`, an integer scalar whose value is
// the symbolic L; then xs[axis] == L): the twiddle matrices are gathered on
// the device from constant tables of cos / sin of 2 pi m / L for every
// length up to the range's largest (forward only).
Status DftCore(const Node& n, Builder& b, const std::string& x, const Shape& xs, int64_t axis, const Dim& L,
               bool inverse, bool onesided, const std::string& out, const std::string& len_tensor = "") {
  Ops o(b);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t c = xs[rank - 1];
  if (c != 1 && c != 2) return NodeInvalid(n, "the last dimension must be 1 (real) or 2 (complex), got " + std::to_string(c));
  if (L < 1) return NodeInvalid(n, "dft_length must be positive");
  const Dim K = onesided ? FloorDiv(L, Dim(2)) + 1 : L;
  std::string C, S;
  if (len_tensor.empty()) {
    const int64_t N = xs[axis], Lc = L.value(), Kc = K.value();
    if (N * Kc > (int64_t{1} << 24)) return NodeUnimplemented(n, "the twiddle matrix would exceed 2^24 elements");
    // Matrices [N, K]; rows n >= L (truncation) are zero.
    const double scale = inverse ? 1.0 / double(Lc) : 1.0;
    std::vector<double> cm(static_cast<size_t>(N * Kc)), sm(cm.size());
    for (int64_t i = 0; i < N; ++i)
      for (int64_t k = 0; k < Kc; ++k) {
        if (i >= Lc) continue;
        double th = 2.0 * kPi * double((i * k) % Lc) / double(Lc);
        cm[i * Kc + k] = std::cos(th) * scale;
        sm[i * Kc + k] = std::sin(th) * scale;
      }
    C = o.ConstF("cos", {N, Kc}, cm);
    S = o.ConstF("sin", {N, Kc}, sm);
  } else {
    if (inverse) return NodeUnimplemented(n, "an inverse DFT of a length read at run time");
    // cos / sin of 2 pi m / L for m = (n k) mod L, read from tables of every
    // length up to the range's largest (computed here in double): table
    // entry L (L - 1) / 2 + m. The device's cos / sin would do, but Vulkan
    // bounds their error only by 2^-11 (SwiftShader is ~1e-4 off).
    SymContext* sc = SymContext::Current();
    const int64_t lmax = sc != nullptr && L.is_symbolic() ? sc->UpperBound(L.expr()) : L.value();
    if (lmax > 2048)
      return NodeUnimplemented(n, "frame_length is read at run time and its range allows " + std::to_string(lmax) +
                                      "; the twiddle tables hold lengths up to 2048 (narrow its range in config.json "
                                      "\"dimensions\", or bind it in \"input_values\")");
    std::vector<double> ct, st;
    for (int64_t l = 1; l <= lmax; ++l)
      for (int64_t m = 0; m < l; ++m) {
        ct.push_back(std::cos(2.0 * kPi * double(m) / double(l)));
        st.push_back(std::sin(2.0 * kPi * double(m) / double(l)));
      }
    const int64_t entries = static_cast<int64_t>(ct.size());
    const std::string len64 = b.Cast(len_tensor, DType::kInt64, "dft_length_i64");
    const std::string rows = o.Reshape(b.RunTimeIota(L, DType::kInt64, false, "dft_n"), {L, 1}, "dft_n_col");
    const std::string cols = o.Reshape(b.RunTimeIota(K, DType::kInt64, false, "dft_k"), {1, K}, "dft_k_row");
    const std::string m = o.Op("Mod", {o.Op("Mul", {rows, cols}, "dft_nk"), len64}, "dft_nk_mod");
    auto i64 = [&](int64_t v, const std::string& sfx) { return b.AddConst(MakeConstI64("", {}, {v}), sfx); };
    const std::string offset = o.Op("Div", {o.Op("Mul", {len64, o.Op("Sub", {len64, i64(1, "one")}, "dft_l_m1")}, "dft_l_l1"),
                                            i64(2, "two")},
                                    "dft_table_offset");
    const std::string idx = o.Op("Add", {m, offset}, "dft_table_index");
    auto table = [&](const std::vector<double>& v, const std::string& sfx) {
      Node& gn = b.Add("Gather", {o.ConstF(sfx + "_table", {entries}, v), idx}, sfx);
      gn.SetInt("axis", 0);
      return b.Out(gn);
    };
    C = table(ct, "cos");
    S = table(st, "sin");
  }
  // Split real / imaginary parts and move `axis` last.
  Shape inner(xs.begin(), xs.end() - 1);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  auto part = [&](int64_t k, const std::string& sfx) {
    std::string p = o.Reshape(c == 1 ? x : o.SliceAxis(x, rank - 1, k, k + 1, sfx + "_slice"), inner, sfx);
    return o.Transpose(p, perm, sfx + "_t");
  };
  std::string xr = part(0, "re_in");
  std::string re = o.Op("MatMul", {xr, C}, "xr_c");
  std::string im = o.Op("MatMul", {xr, S}, "xr_s");
  // forward: im = -xr S (+ xi C); inverse: im = xr S (+ xi C)
  if (!inverse) im = o.Op("Neg", {im}, "neg_xr_s");
  if (c == 2) {
    std::string xi = part(1, "im_in");
    std::string xi_s = o.Op("MatMul", {xi, S}, "xi_s");
    re = o.Op(inverse ? "Sub" : "Add", {re, xi_s}, "re");
    im = o.Op("Add", {im, o.Op("MatMul", {xi, C}, "xi_c")}, "im");
  }
  Shape moved;
  for (int64_t p : perm) moved.push_back(p == axis ? K : inner[p]);
  moved.push_back(1);
  std::vector<int64_t> perm_back = inv;
  perm_back.push_back(rank - 1);
  auto finish = [&](const std::string& v, const std::string& sfx) {
    return o.Transpose(o.Reshape(v, moved, sfx + "_r"), perm_back, sfx);
  };
  Node& cat = b.Add("Concat", {finish(re, "re_out"), finish(im, "im_out")}, "complex", out);
  cat.SetInt("axis", rank - 1);
  return Status::Ok();
}

StatusOr<int64_t> ScalarInput(const Graph& g, const Node& n, size_t k, const char* what) {
  const Tensor* t = g.FindTensor(n.inputs[k]);
  if (!t || !t->is_const)
    return NodeInvalid(n, NotConstantMessage(g, what, n.inputs[k]));
  if (t->numel() != 1) return NodeInvalid(n, std::string(what) + " must be a scalar");
  return t->AsInts()[0];
}

Status DftByValueAxis(Graph& g, const Node& n, Builder& b, const Tensor& x, const Dim& axis);

Status Dft(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->dtype != DType::kFloat) return NodeUnimplemented(n, "only float32 signals are supported");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  if (rank < 3) return NodeInvalid(n, "input must have rank >= 3 ([batch, ..., 1 or 2])");
  if (const Tensor* at = g.opset >= 20 && n.inputs.size() > 2 && !n.inputs[2].empty() ? g.FindTensor(n.inputs[2]) : nullptr;
      at != nullptr && at->is_const && at->numel() == 1 && AnyDependsOnValue(at->sym))
    return DftByValueAxis(g, n, b, *x, at->sym[0]);
  // DFT-17: the attribute `axis` (default 1); DFT-20: the optional scalar
  // input 2 (default -2, the last signal axis), negative from the back of
  // the whole rank.
  int64_t axis = n.GetInt("axis", 1);
  if (g.opset >= 20) {
    axis = -2;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) { OAAXVK_ASSIGN_OR_RETURN(axis, ScalarInput(g, n, 2, "axis")); }
    if (axis < 0) axis += rank;
  } else if (axis < 0) {
    axis += rank - 1;
  }
  if (axis < 1 || axis >= rank - 1)
    return NodeInvalid(n, "axis " + std::to_string(axis) + " is out of range for input " + ShapeToString(x->shape) +
                              " (a signal axis: not the batch axis, not the last, real / imaginary, one)");
  int64_t L = x->shape[axis];
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) { OAAXVK_ASSIGN_OR_RETURN(L, ScalarInput(g, n, 1, "dft_length")); }
  return DftCore(n, b, n.inputs[0], x->shape, axis, L, n.GetInt("inverse", 0) != 0, n.GetInt("onesided", 0) != 0,
                 n.outputs[0]);
}

// DFT-20 with `axis` read at run time (feature value_symbols, a range from
// config.json): the axis decides which dimension the matrices multiply, so
// the DFT is computed along every axis the range allows (a signal axis:
// not the batch axis, not the last) and the result selected by Where on
// the axis value, computed on the device. Every candidate must give the
// same output shape (otherwise the axis decides the shape: bind it); a
// guard refuses an axis outside the candidates before anything runs.
Status DftByValueAxis(Graph& g, const Node& n, Builder& b, const Tensor& x, const Dim& axis) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  SymContext* sc = SymContext::Current();
  if (sc == nullptr) return Internal("node '" + n.name + "': run-time axis without a symbol context");
  const std::pair<int64_t, int64_t> range = sc->Range(axis.Node(sc));
  if (range.first < -rank || range.second > rank - 1)
    return NodeUnimplemented(n, "axis input '" + n.inputs[2] + "' is read at run time with a range beyond [" +
                                    std::to_string(-rank) + ", " + std::to_string(rank - 1) +
                                    "]; give it a range within the input's rank (config.json \"dimensions\") or bind it");
  std::vector<int64_t> candidates;
  for (int64_t v = range.first; v <= range.second; ++v) {
    const int64_t a = v < 0 ? v + rank : v;
    if (a >= 1 && a < rank - 1 && std::find(candidates.begin(), candidates.end(), a) == candidates.end())
      candidates.push_back(a);
  }
  if (candidates.empty())
    return NodeInvalid(n, "no value in the axis range [" + std::to_string(range.first) + ", " +
                              std::to_string(range.second) + "] is a signal axis of input " + ShapeToString(x.shape));
  const bool has_length = n.inputs.size() > 1 && !n.inputs[1].empty();
  int64_t length = 0;
  if (has_length) { OAAXVK_ASSIGN_OR_RETURN(length, ScalarInput(g, n, 1, "dft_length")); }
  const bool onesided = n.GetInt("onesided", 0) != 0;
  std::string names;
  Dim valid = 0;
  const Dim norm = axis + Lt(axis, Dim(0)) * Dim(rank);
  Shape first_out;
  for (int64_t a : candidates) {
    if (x.shape[a].is_symbolic())
      return NodeUnimplemented(n, "input " + ShapeToString(x.shape) + " has a symbolic dimension " + std::to_string(a) +
                                      " that the axis read at run time may select; bind the axis");
    Shape out = x.shape;
    const int64_t L = has_length ? length : x.shape[a].value();
    out[a] = onesided ? L / 2 + 1 : L;
    out[rank - 1] = 2;
    if (first_out.empty()) first_out = out;
    if (out != first_out)
      return NodeUnimplemented(n, "the axis read at run time decides the output's shape (" + ShapeToString(first_out) +
                                      " or " + ShapeToString(out) + "); bind the axis (config.json \"input_values\")");
    valid = valid + Eq(norm, Dim(a));
    names += (names.empty() ? "" : ", ") + std::to_string(a);
  }
  OAAXVK_RETURN_IF_ERROR(sc->AddGuard(Eq(valid, Dim(1)).Node(sc), "DFT '" + n.name + "': axis must be one of " + names +
                                                                      " (or that minus " + std::to_string(rank) + ")"));
  std::string acc;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const int64_t a = candidates[k];
    const bool last = k + 1 == candidates.size();
    Node sub = n;  // its own node names, so the candidates' nodes stay distinct
    sub.name = n.name + "/axis" + std::to_string(a);
    Builder bb(g, sub);
    const std::string y = last && acc.empty() ? n.outputs[0] : bb.NewTensor("y");
    const int64_t L = has_length ? length : x.shape[a].value();
    OAAXVK_RETURN_IF_ERROR(DftCore(sub, bb, n.inputs[0], x.shape, a, L, n.GetInt("inverse", 0) != 0, onesided, y));
    for (Node& m : bb.nodes()) b.nodes().push_back(std::move(m));
    if (acc.empty()) {
      acc = y;
      continue;
    }
    // axis == a or axis == a - rank, read from the input on the device.
    const std::string is_a = b.Op("Or", {b.Op("Equal", {n.inputs[2], b.ConstI64("axis_" + std::to_string(a), {Dim(a)})}, "is_axis" + std::to_string(a)),
                                         b.Op("Equal", {n.inputs[2], b.ConstI64("axis_neg_" + std::to_string(a), {Dim(a - rank)})}, "is_neg_axis" + std::to_string(a))},
                                  "selects_axis" + std::to_string(a));
    acc = b.Out(b.Add("Where", {b.Reshape(is_a, {}, "selects_scalar" + std::to_string(a)), y, acc}, "select" + std::to_string(a),
                      last ? n.outputs[0] : ""));
  }
  return Status::Ok();
}

Status Stft(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (x->dtype != DType::kFloat) return NodeUnimplemented(n, "only float32 signals are supported");
  if (x->shape.size() != 3) return NodeInvalid(n, "signal must be [batch, signal_length, 1 or 2]");
  // A frame_step read at run time (feature value_symbols): the frame count
  // is an expression of it and the frame index table is computed on the
  // device; a constant step gives a constant table.
  const Tensor* step_t = g.FindTensor(n.inputs[1]);
  const bool run_time_step = step_t && step_t->is_const && AnyDependsOnValue(step_t->sym);
  int64_t step = 1;
  if (!run_time_step) { OAAXVK_ASSIGN_OR_RETURN(step, ScalarInput(g, n, 1, "frame_step")); }
  else if (step_t->numel() != 1) return NodeInvalid(n, "frame_step must be a scalar");
  const bool has_window = n.inputs.size() > 2 && !n.inputs[2].empty();
  int64_t len = -1;
  if (has_window) {
    const Tensor* w = InputWithShape(g, n, 2);
    if (!w || w->shape.size() != 1) return NodeInvalid(n, "window must be 1-D");
    len = w->shape[0];
  }
  // A frame_length read at run time (no window): the frame and the DFT
  // length are expressions of it, the twiddles are computed on the device.
  const Tensor* len_t = n.inputs.size() > 3 && !n.inputs[3].empty() ? g.FindTensor(n.inputs[3]) : nullptr;
  const bool run_time_len = !has_window && len_t && len_t->is_const && AnyDependsOnValue(len_t->sym);
  if (run_time_len && len_t->numel() != 1) return NodeInvalid(n, "frame_length must be a scalar");
  if (n.inputs.size() > 3 && !n.inputs[3].empty() && !run_time_len) {
    OAAXVK_ASSIGN_OR_RETURN(int64_t fl, ScalarInput(g, n, 3, "frame_length"));
    if (len >= 0 && fl != len) return NodeInvalid(n, "frame_length differs from the window length");
    len = fl;
  }
  const int64_t L = x->shape[1];
  SymContext* c = SymContext::Current();
  Dim lenD = len;
  if (run_time_len) {
    lenD = len_t->AsDims()[0];
    OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(lenD, Dim(1))).Node(c), "STFT '" + n.name + "': frame_length must be >= 1"));
    OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(Dim(L), lenD)).Node(c),
                                       "STFT '" + n.name + "': frame_length must be at most the signal length " +
                                           std::to_string(L)));
  } else {
    if (len < 1) return NodeInvalid(n, "needs a window or a frame_length");
    if (len > L) return NodeInvalid(n, "the frame is longer than the signal");
  }
  std::string table;
  Dim frames;
  if (run_time_step || run_time_len) {
    std::string step64;
    Dim d = step;
    if (run_time_step) {
      d = step_t->AsDims()[0];
      OAAXVK_RETURN_IF_ERROR(c->AddGuard((Dim(1) - Lt(d, Dim(1))).Node(c), "STFT '" + n.name + "': frame_step must be >= 1"));
      step64 = step_t->dtype == DType::kInt64 ? n.inputs[1] : b.Cast(n.inputs[1], DType::kInt64, "frame_step_i64");
    } else {
      if (step < 1) return NodeInvalid(n, "frame_step must be >= 1");
      step64 = b.AddConst(MakeConstI64("", {}, {step}), "frame_step");
    }
    frames = FloorDiv(Max(Dim(L) - lenD, Dim(0)), Max(d, Dim(1))) + 1;
    // index[f][k] = f * frame_step + k
    const std::string f = b.Reshape(b.RunTimeIota(frames, DType::kInt64, false, "frame"), {frames, 1}, "frame_col");
    std::string k_row;
    if (run_time_len) {
      k_row = b.Reshape(b.RunTimeIota(lenD, DType::kInt64, false, "frame_k"), {1, lenD}, "frame_k_row");
    } else {
      std::vector<int64_t> ks(static_cast<size_t>(len));
      std::iota(ks.begin(), ks.end(), int64_t{0});
      k_row = b.AddConst(MakeConstI64("", {1, len}, ks), "frame_k");
    }
    table = b.Op("Add", {b.Op("Mul", {f, step64}, "frame_start"), k_row}, "frame_index");
  } else {
    if (step < 1) return NodeInvalid(n, "frame_step must be >= 1");
    frames = (L - len) / step + 1;
    const int64_t nf = frames.value();
    std::vector<int64_t> idx(static_cast<size_t>(nf * len));
    for (int64_t f = 0; f < nf; ++f)
      for (int64_t k = 0; k < len; ++k) idx[f * len + k] = f * step + k;
    table = b.AddConst(MakeConstI64("", {nf, len}, idx), "frame_index");
  }
  Node& gather = b.Add("Gather", {n.inputs[0], table}, "frames");
  gather.SetInt("axis", 1);
  std::string fr = b.Out(gather);  // [batch, frames, len, c]
  Ops o(b);
  if (has_window) fr = o.Op("Mul", {fr, o.Reshape(n.inputs[2], {len, 1}, "window_col")}, "windowed");
  Shape fs = {x->shape[0], frames, lenD, x->shape[2]};
  return DftCore(n, b, fr, fs, 2, lenD, false, n.GetInt("onesided", 1) != 0, n.outputs[0],
                 run_time_len ? n.inputs[3] : std::string());
}

// ---- training optimizers (ai.onnx.preview.training, opset 1) ----

// Splits inputs [R, T, groups...] into `groups` lists of n tensors each.
StatusOr<std::vector<std::vector<std::string>>> OptimizerGroups(const Graph& g, const Node& n, size_t groups) {
  if (n.inputs.size() < 2 || (n.inputs.size() - 2) % groups != 0 ||
      n.outputs.size() != (n.inputs.size() - 2) / groups * (groups - 1))
    return NodeInvalid(n, "expects R, T and " + std::to_string(groups) + " equally long tensor lists, and " +
                              std::to_string(groups - 1) + " output lists of the same length");
  for (size_t k = 2; k < n.inputs.size(); ++k) {
    const Tensor* t = InputWithShape(g, n, k);
    if (!t || t->dtype != DType::kFloat) return NodeUnimplemented(n, "only float32 static-shape tensors are supported");
  }
  const size_t count = (n.inputs.size() - 2) / groups;
  std::vector<std::vector<std::string>> r(groups);
  for (size_t j = 0; j < groups; ++j)
    r[j].assign(n.inputs.begin() + 2 + j * count, n.inputs.begin() + 2 + (j + 1) * count);
  return r;
}

Status Adagrad(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(auto grp, OptimizerGroups(g, n, 3));
  Ops o(b);
  const size_t count = grp[0].size();
  // r = R / (1 + T * decay_factor)
  std::string tf = b.Out(b.Add("Cast", {n.inputs[1]}, "t_float"));
  b.nodes().back().SetInt("to", static_cast<int64_t>(DType::kFloat));
  std::string denom = o.Op("Add", {o.Scalar("one", 1.0), o.Op("Mul", {tf, o.Scalar("decay", n.GetFloat("decay_factor", 0.f))}, "t_decay")}, "denom");
  std::string r = o.Op("Div", {n.inputs[0], denom}, "r");
  std::string norm = o.Scalar("norm", n.GetFloat("norm_coefficient", 0.f)), eps = o.Scalar("eps", n.GetFloat("epsilon", 0.f));
  for (size_t i = 0; i < count; ++i) {
    const std::string s = std::to_string(i);
    const std::string &X = grp[0][i], &G = grp[1][i], &H = grp[2][i];
    std::string greg = o.Op("Add", {o.Op("Mul", {norm, X}, "nx" + s), G}, "greg" + s);
    b.Add("Add", {H, o.Op("Mul", {greg, greg}, "g2" + s)}, "h_new" + s, n.outputs[count + i]);
    std::string hadapt = o.Op("Add", {o.Op("Sqrt", {n.outputs[count + i]}, "hsqrt" + s), eps}, "hadapt" + s);
    std::string step = o.Op("Div", {o.Op("Mul", {r, greg}, "rg" + s), hadapt}, "step" + s);
    b.Add("Sub", {X, step}, "x_new" + s, n.outputs[i]);
  }
  return Status::Ok();
}

// beta_adjusted / R_adjusted selection: T > 0.
std::string TPositive(const Node& n, Builder& b) {
  std::string zero = b.AddConst(MakeConstFromDoubles("", DType::kInt64, {}, {0.0}), "t_zero");
  return b.Out(b.Add("Greater", {n.inputs[1], zero}, "t_positive"));
}

Status Momentum(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(auto grp, OptimizerGroups(g, n, 3));
  const std::string mode = n.GetString("mode", "standard");
  if (mode != "standard" && mode != "nesterov") return NodeInvalid(n, "unknown mode '" + mode + "'");
  Ops o(b);
  const size_t count = grp[0].size();
  const float alpha = n.GetFloat("alpha", 0.f), beta = n.GetFloat("beta", 0.f);
  std::string beta_adj = o.Op("Where", {TPositive(n, b), o.Scalar("beta", beta), o.Scalar("one", 1.0)}, "beta_adj");
  std::string a = o.Scalar("alpha", alpha), norm = o.Scalar("norm", n.GetFloat("norm_coefficient", 0.f));
  for (size_t i = 0; i < count; ++i) {
    const std::string s = std::to_string(i);
    const std::string &X = grp[0][i], &G = grp[1][i], &V = grp[2][i];
    std::string greg = o.Op("Add", {o.Op("Mul", {norm, X}, "nx" + s), G}, "greg" + s);
    const std::string& v_new = n.outputs[count + i];
    b.Add("Add", {o.Op("Mul", {a, V}, "av" + s), o.Op("Mul", {beta_adj, greg}, "bg" + s)}, "v_new" + s, v_new);
    std::string dir = v_new;
    if (mode == "nesterov") dir = o.Op("Add", {greg, o.Op("Mul", {a, v_new}, "av_new" + s)}, "nesterov" + s);
    b.Add("Sub", {X, o.Op("Mul", {n.inputs[0], dir}, "rstep" + s)}, "x_new" + s, n.outputs[i]);
  }
  return Status::Ok();
}

Status Adam(Graph& g, const Node& n, Builder& b) {
  OAAXVK_ASSIGN_OR_RETURN(auto grp, OptimizerGroups(g, n, 4));
  Ops o(b);
  const size_t count = grp[0].size();
  const float alpha = n.GetFloat("alpha", 0.9f), beta = n.GetFloat("beta", 0.999f);
  const float post = n.GetFloat("norm_coefficient_post", 0.f);
  std::string norm = o.Scalar("norm", n.GetFloat("norm_coefficient", 0.f)), eps = o.Scalar("eps", n.GetFloat("epsilon", 1e-6f));
  // R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
  std::string tf = b.Out(b.Add("Cast", {n.inputs[1]}, "t_float"));
  b.nodes().back().SetInt("to", static_cast<int64_t>(DType::kFloat));
  std::string one = o.Scalar("one", 1.0);
  std::string bt = o.Op("Sub", {one, o.Op("Pow", {o.Scalar("beta", beta), tf}, "beta_t")}, "one_m_beta_t");
  std::string at = o.Op("Sub", {one, o.Op("Pow", {o.Scalar("alpha", alpha), tf}, "alpha_t")}, "one_m_alpha_t");
  std::string radj = o.Op("Div", {o.Op("Mul", {n.inputs[0], o.Op("Sqrt", {bt}, "sqrt_bt")}, "r_sqrt"), at}, "r_adj_t");
  radj = o.Op("Where", {TPositive(n, b), radj, n.inputs[0]}, "r_adj");
  std::string a = o.Scalar("alpha_c", alpha), oma = o.Scalar("one_m_alpha", 1.0 - double(alpha));
  std::string bb = o.Scalar("beta_c", beta), omb = o.Scalar("one_m_beta", 1.0 - double(beta));
  for (size_t i = 0; i < count; ++i) {
    const std::string s = std::to_string(i);
    const std::string &X = grp[0][i], &G = grp[1][i], &V = grp[2][i], &H = grp[3][i];
    std::string greg = o.Op("Add", {o.Op("Mul", {norm, X}, "nx" + s), G}, "greg" + s);
    const std::string& v_new = n.outputs[count + i];
    const std::string& h_new = n.outputs[2 * count + i];
    b.Add("Add", {o.Op("Mul", {a, V}, "av" + s), o.Op("Mul", {oma, greg}, "ag" + s)}, "v_new" + s, v_new);
    b.Add("Add", {o.Op("Mul", {bb, H}, "bh" + s), o.Op("Mul", {omb, o.Op("Mul", {greg, greg}, "g2" + s)}, "bg2" + s)},
          "h_new" + s, h_new);
    std::string hs = o.Op("Add", {o.Op("Sqrt", {h_new}, "hsqrt" + s), eps}, "hs" + s);
    std::string xn = o.Op("Sub", {X, o.Op("Mul", {radj, o.Op("Div", {v_new, hs}, "vh" + s)}, "step" + s)}, "xn" + s);
    b.Add("Mul", {o.Scalar("post" + s, 1.0 - double(post)), xn}, "x_new" + s, n.outputs[i]);
  }
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& SignalDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"DFT", Dft},
      {"STFT", Stft},
      {"ai.onnx.preview.training::Adagrad", Adagrad},
      {"ai.onnx.preview.training::Momentum", Momentum},
      {"ai.onnx.preview.training::Adam", Adam},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
