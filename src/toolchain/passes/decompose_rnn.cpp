// Recurrent layers (RNN, GRU, LSTM) unrolled over their static sequence
// length into MatMul / Add / Mul / activation / Slice / Concat nodes, and the
// signal windows (HannWindow, HammingWindow, BlackmanWindow) as constants.
//
// Unrolling (per direction d, time steps in processing order):
//   XW  = Reshape(X, [S*B, I]) x W[d]^T + (input biases)     once, all steps
//   t:   gates = XW[t] + H x R[d]^T (+ recurrent biases)      one MatMul / step
//        the gate equations of the ONNX operator, activations from the
//        `activations` attribute (default f = Sigmoid, g = h = Tanh), `clip`
//        applied to every gate pre-activation.
// With sequence_lens, a step t only updates batch entries with t < len[b]
// (Where on a device-computed mask), Y is 0 past a sequence's length and
// Y_h / Y_c hold the last valid state, as the ONNX specification requires.
// Y stacks the per-step outputs: [S, D, B, H] (layout 0) or [B, S, D, H]
// (layout 1). The reverse direction processes t = S-1 .. 0.
#include <cmath>
#include <cstdint>

#include "toolchain/ir/not_constant.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

struct Activation {
  std::string op;
  float alpha = 0.f, beta = 0.f;
  bool has_alpha = false, has_beta = false;
};

// ONNX recurrent activation names with their default alpha/beta.
StatusOr<Activation> ParseActivation(const Node& n, const std::string& name) {
  Activation a;
  a.op = name;
  if (name == "Sigmoid" || name == "Tanh" || name == "Relu" || name == "Softsign" || name == "Softplus") return a;
  if (name == "LeakyRelu") { a.alpha = 0.01f; a.has_alpha = true; return a; }
  if (name == "ThresholdedRelu" || name == "Elu") { a.alpha = 1.f; a.has_alpha = true; return a; }
  if (name == "HardSigmoid") { a.alpha = 0.2f; a.beta = 0.5f; a.has_alpha = a.has_beta = true; return a; }
  if (name == "Affine" || name == "ScaledTanh") { a.alpha = 1.f; a.beta = 0.f; a.has_alpha = a.has_beta = true; return a; }
  return NodeUnimplemented(n, "activation '" + name + "' is not supported");
}

class Unroller {
 public:
  Unroller(Graph& g, const Node& n, Builder& b) : g_(g), n_(n), b_(b) {}

  Status Run() {
    const std::string& op = n_.op_type;
    gates_ = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    const Tensor* x = InputWithShape(g_, n_, 0);
    const Tensor* w = InputWithShape(g_, n_, 1);
    const Tensor* r = InputWithShape(g_, n_, 2);
    if (!x || !w || !r) return NodeInvalid(n_, "X, W and R need static shapes");
    if (x->dtype != DType::kFloat) return NodeUnimplemented(n_, "only float32 X is supported");
    if (x->shape.size() != 3 || w->shape.size() != 3 || r->shape.size() != 3)
      return NodeInvalid(n_, "X, W and R must be 3-D");
    layout_ = n_.GetInt("layout", 0);
    if (layout_ != 0 && layout_ != 1) return NodeInvalid(n_, "layout must be 0 or 1");
    S_ = layout_ == 0 ? x->shape[0] : x->shape[1];
    B_ = layout_ == 0 ? x->shape[1] : x->shape[0];
    I_ = x->shape[2];
    H_ = n_.GetInt("hidden_size", r->shape[2]);
    const std::string dir = n_.GetString("direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
      return NodeInvalid(n_, "unknown direction '" + dir + "'");
    D_ = dir == "bidirectional" ? 2 : 1;
    // gates * hidden_size must not overflow before it is compared with W.
    if (H_ < 1 || H_ > (int64_t{1} << 32))
      return NodeInvalid(n_, "hidden_size " + std::to_string(H_) + " must be in [1, 2^32]");
    if (w->shape != Shape{D_, gates_ * H_, I_} || r->shape != Shape{D_, gates_ * H_, H_})
      return NodeInvalid(n_, "W " + ShapeToString(w->shape) + " / R " + ShapeToString(r->shape) +
                                 " do not match hidden_size " + std::to_string(H_) + " and direction " + dir);
    if (S_ < 1 || B_ < 1) return NodeUnimplemented(n_, "an empty sequence or batch is not supported");
    if (op == "LSTM" && n_.GetInt("input_forget", 0) != 0)
      return NodeUnimplemented(n_, "input_forget=1 is not supported");
    OAAXVK_RETURN_IF_ERROR(ParseActivations(dir));
    if (n_.HasAttr("clip")) {
      has_clip_ = true;
      clip_ = n_.GetFloat("clip", 0.f);
      if (!(clip_ > 0.f)) return NodeInvalid(n_, "clip must be positive");
    }

    // X in [S, B, I].
    std::string xs = n_.inputs[0];
    if (layout_ == 1) xs = Transpose(xs, {1, 0, 2}, "x_sbi");
    x2d_ = Reshape(xs, {S_ * B_, I_}, "x2d");
    OAAXVK_RETURN_IF_ERROR(SequenceLengths());

    std::vector<std::string> ys, yhs, ycs;
    for (int64_t d = 0; d < D_; ++d) {
      bool reverse = dir == "reverse" || d == 1;
      OAAXVK_RETURN_IF_ERROR(Direction(d, reverse));
      ys.push_back(dir_y_);
      yhs.push_back(Reshape(h_, {1, B_, H_}, "yh" + std::to_string(d)));
      if (gates_ == 4) ycs.push_back(Reshape(c_, {1, B_, H_}, "yc" + std::to_string(d)));
    }
    // Outputs.
    std::string y_out = OutputOrEmpty(n_, 0), yh_out = OutputOrEmpty(n_, 1), yc_out = OutputOrEmpty(n_, 2);
    if (!y_out.empty()) {
      std::string y = Concat(ys, 1, "y_sdbh");  // [S, D, B, H]
      if (layout_ == 1) TransposeTo(y, {2, 0, 1, 3}, "y", y_out);
      else Identity(y, y_out);
    }
    if (!yh_out.empty()) {
      std::string yh = Concat(yhs, 0, "y_h_dbh");
      if (layout_ == 1) TransposeTo(yh, {1, 0, 2}, "y_h", yh_out);
      else Identity(yh, yh_out);
    }
    if (gates_ == 4 && !yc_out.empty()) {
      std::string yc = Concat(ycs, 0, "y_c_dbh");
      if (layout_ == 1) TransposeTo(yc, {1, 0, 2}, "y_c", yc_out);
      else Identity(yc, yc_out);
    }
    return Status::Ok();
  }

 private:
  Status ParseActivations(const std::string& dir) {
    // Per direction: f (RNN), f g (GRU), f g h (LSTM).
    const size_t per = gates_ == 4 ? 3 : gates_ == 3 ? 2 : 1;
    std::vector<std::string> names;
    if (n_.HasAttr("activations")) {
      const Attr& a = n_.attrs.at("activations");
      if (a.kind == Attr::kStrings) names = a.strings;
      else if (a.kind == Attr::kString) names = {a.s};
      else return NodeInvalid(n_, "the activations attribute must be a list of strings");
    }
    std::vector<float> alphas, betas;
    if (n_.HasAttr("activation_alpha")) alphas = n_.attrs.at("activation_alpha").floats;
    if (n_.HasAttr("activation_beta")) betas = n_.attrs.at("activation_beta").floats;
    if (names.empty()) {
      for (int64_t d = 0; d < D_; ++d) {
        if (gates_ == 1) names.push_back("Tanh");
        else { names.push_back("Sigmoid"); names.push_back("Tanh"); if (gates_ == 4) names.push_back("Tanh"); }
      }
    }
    if (names.size() != per * static_cast<size_t>(D_))
      return NodeInvalid(n_, "activations lists " + std::to_string(names.size()) + " functions, " + dir +
                                 " needs " + std::to_string(per * D_));
    if ((!alphas.empty() && alphas.size() != names.size()) || (!betas.empty() && betas.size() != names.size()))
      return NodeUnimplemented(n_, "activation_alpha/activation_beta must have one entry per activation");
    for (size_t i = 0; i < names.size(); ++i) {
      OAAXVK_ASSIGN_OR_RETURN(Activation a, ParseActivation(n_, names[i]));
      if (!alphas.empty()) { a.alpha = alphas[i]; a.has_alpha = true; }
      if (!betas.empty()) { a.beta = betas[i]; a.has_beta = true; }
      acts_.push_back(a);
    }
    return Status::Ok();
  }

  Status SequenceLengths() {
    if (n_.inputs.size() <= 4 || n_.inputs[4].empty()) return Status::Ok();
    const Tensor* sl = InputWithShape(g_, n_, 4);
    if (!sl || sl->shape != Shape{B_}) return NodeInvalid(n_, "sequence_lens must have shape [batch_size]");
    if (sl->is_const) {
      for (int64_t v : sl->AsInts()) {
        if (v < 0 || v > S_) return NodeInvalid(n_, "sequence_lens value " + std::to_string(v) + " out of [0, seq_length]");
        if (v != S_) seq_lens_ = n_.inputs[4];
      }
      return Status::Ok();
    }
    seq_lens_ = n_.inputs[4];
    return Status::Ok();
  }

  // One direction; leaves its Y [S, 1, B, H] in dir_y_ and final h_/c_.
  Status Direction(int64_t d, bool reverse) {
    const std::string sfx = "d" + std::to_string(d);
    const int64_t GH = gates_ * H_;
    std::string wt = Transpose(Reshape(SliceAxis(n_.inputs[1], 0, d, d + 1, "w" + sfx), {GH, I_}, "w2" + sfx),
                               {1, 0}, "wt" + sfx);  // [I, GH]
    std::string rt = Transpose(Reshape(SliceAxis(n_.inputs[2], 0, d, d + 1, "r" + sfx), {GH, H_}, "r2" + sfx),
                               {1, 0}, "rt" + sfx);  // [H, GH]
    std::string xw = Add("MatMul", {x2d_, wt}, "xw" + sfx);  // [S*B, GH]
    std::string rbh;  // GRU: the recurrent bias of the h gate, kept apart
    if (n_.inputs.size() > 3 && !n_.inputs[3].empty()) {
      std::string bias = Reshape(SliceAxis(n_.inputs[3], 0, d, d + 1, "b" + sfx), {2 * GH}, "b1" + sfx);
      std::string wb = SliceAxis(bias, 0, 0, GH, "wb" + sfx);
      std::string rb = SliceAxis(bias, 0, GH, 2 * GH, "rb" + sfx);
      if (gates_ == 3) {
        std::string rb_zr = SliceAxis(rb, 0, 0, 2 * H_, "rbzr" + sfx);
        rbh = SliceAxis(rb, 0, 2 * H_, GH, "rbh" + sfx);
        std::string zero_h = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {H_}, std::vector<double>(H_, 0.0)), "zero_h");
        rb = Concat({rb_zr, zero_h}, 0, "rbzr0" + sfx);
      }
      xw = Add("Add", {xw, Add("Add", {wb, rb}, "bias" + sfx)}, "xwb" + sfx);
    }
    std::string xw3 = Reshape(xw, {S_, B_, GH}, "xw3" + sfx);
    std::string rt_zr, rt_h;
    if (gates_ == 3) {
      rt_zr = SliceAxis(rt, 1, 0, 2 * H_, "rtzr" + sfx);
      rt_h = SliceAxis(rt, 1, 2 * H_, GH, "rth" + sfx);
    }
    // Peepholes (LSTM): P[d] = [Pi, Po, Pf].
    std::string pi, po, pf;
    if (gates_ == 4 && n_.inputs.size() > 7 && !n_.inputs[7].empty()) {
      std::string p = Reshape(SliceAxis(n_.inputs[7], 0, d, d + 1, "p" + sfx), {3 * H_}, "p1" + sfx);
      pi = SliceAxis(p, 0, 0, H_, "pi" + sfx);
      po = SliceAxis(p, 0, H_, 2 * H_, "po" + sfx);
      pf = SliceAxis(p, 0, 2 * H_, 3 * H_, "pf" + sfx);
    }
    h_ = InitialState(5, d, "h0" + sfx);
    if (gates_ == 4) c_ = InitialState(6, d, "c0" + sfx);
    const size_t a0 = static_cast<size_t>(d) * (gates_ == 4 ? 3 : gates_ == 3 ? 2 : 1);
    std::vector<std::string> y_steps(static_cast<size_t>(S_));
    for (int64_t k = 0; k < S_; ++k) {
      const int64_t t = reverse ? S_ - 1 - k : k;
      const std::string ts = sfx + "t" + std::to_string(t);
      std::string xt = Reshape(SliceAxis(xw3, 0, t, t + 1, "xt" + ts), {B_, GH}, "xt2" + ts);
      std::string h_new, c_new;
      if (gates_ == 1) {
        std::string pre = Add("Add", {xt, Add("MatMul", {h_, rt}, "hr" + ts)}, "pre" + ts);
        h_new = Act(acts_[a0], Clip(pre, "clip" + ts), "h" + ts);
      } else if (gates_ == 3) {
        std::string zr = Add("Add", {SliceAxis(xt, 1, 0, 2 * H_, "xzr" + ts), Add("MatMul", {h_, rt_zr}, "hzr" + ts)},
                             "prezr" + ts);
        std::string z = Act(acts_[a0], Clip(SliceAxis(zr, 1, 0, H_, "prez" + ts), "clipz" + ts), "z" + ts);
        std::string r = Act(acts_[a0], Clip(SliceAxis(zr, 1, H_, 2 * H_, "prer" + ts), "clipr" + ts), "r" + ts);
        std::string xh = SliceAxis(xt, 1, 2 * H_, GH, "xh" + ts);
        std::string rec;
        if (n_.GetInt("linear_before_reset", 0) != 0) {
          std::string hh = Add("MatMul", {h_, rt_h}, "hh" + ts);
          if (!rbh.empty()) hh = Add("Add", {hh, rbh}, "hhb" + ts);
          rec = Add("Mul", {r, hh}, "rhh" + ts);
        } else {
          rec = Add("MatMul", {Add("Mul", {r, h_}, "rh" + ts), rt_h}, "rhr" + ts);
          if (!rbh.empty()) rec = Add("Add", {rec, rbh}, "rhrb" + ts);
        }
        std::string hc = Act(acts_[a0 + 1], Clip(Add("Add", {xh, rec}, "preh" + ts), "cliph" + ts), "hc" + ts);
        // H = (1 - z) * hc + z * H_prev
        std::string one = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {1.0}), "one");
        h_new = Add("Add", {Add("Mul", {Add("Sub", {one, z}, "omz" + ts), hc}, "a" + ts),
                            Add("Mul", {z, h_}, "zh" + ts)},
                    "h" + ts);
      } else {
        std::string pre = Add("Add", {xt, Add("MatMul", {h_, rt}, "hr" + ts)}, "pre" + ts);
        std::string gi = SliceAxis(pre, 1, 0, H_, "prei" + ts), go = SliceAxis(pre, 1, H_, 2 * H_, "preo" + ts);
        std::string gf = SliceAxis(pre, 1, 2 * H_, 3 * H_, "pref" + ts), gc = SliceAxis(pre, 1, 3 * H_, 4 * H_, "prec" + ts);
        if (!pi.empty()) {
          gi = Add("Add", {gi, Add("Mul", {pi, c_}, "pic" + ts)}, "preip" + ts);
          gf = Add("Add", {gf, Add("Mul", {pf, c_}, "pfc" + ts)}, "prefp" + ts);
        }
        std::string i = Act(acts_[a0], Clip(gi, "clipi" + ts), "i" + ts);
        std::string f = Act(acts_[a0], Clip(gf, "clipf" + ts), "f" + ts);
        std::string cc = Act(acts_[a0 + 1], Clip(gc, "clipc" + ts), "cc" + ts);
        c_new = Add("Add", {Add("Mul", {f, c_}, "fc" + ts), Add("Mul", {i, cc}, "icc" + ts)}, "c" + ts);
        if (!po.empty()) go = Add("Add", {go, Add("Mul", {po, c_new}, "poc" + ts)}, "preop" + ts);
        std::string o = Act(acts_[a0], Clip(go, "clipo" + ts), "o" + ts);
        h_new = Add("Mul", {o, Act(acts_[a0 + 2], c_new, "hcc" + ts)}, "h" + ts);
      }
      std::string y_t = h_new;
      if (!seq_lens_.empty()) {
        // Entries with t >= len[b] keep their state and output 0.
        std::string tc = b_.AddConst(MakeConstFromDoubles("", g_.FindTensor(seq_lens_)->dtype, {}, {double(t)}), "t" + ts);
        std::string mask = Reshape(Add("Less", {tc, seq_lens_}, "live" + ts), {B_, 1}, "live2" + ts);
        std::string zero = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {0.0}), "zero");
        y_t = Add("Where", {mask, h_new, zero}, "y" + ts);
        h_new = Add("Where", {mask, h_new, h_}, "hm" + ts);
        if (gates_ == 4) c_new = Add("Where", {mask, c_new, c_}, "cm" + ts);
      }
      y_steps[static_cast<size_t>(t)] = Reshape(y_t, {1, 1, B_, H_}, "y4" + ts);
      h_ = h_new;
      if (gates_ == 4) c_ = c_new;
    }
    dir_y_ = Concat(y_steps, 0, "y" + sfx);  // [S, 1, B, H]
    return Status::Ok();
  }

  // initial_h / initial_c are [D, B, H] (layout 0) or [B, D, H] (layout 1):
  // direction d's [B, H] state is a slice of the direction axis.
  std::string InitialState(size_t input, int64_t d, const std::string& sfx) {
    if (n_.inputs.size() > input && !n_.inputs[input].empty())
      return Reshape(SliceAxis(n_.inputs[input], layout_ == 1 ? 1 : 0, d, d + 1, sfx + "s"), {B_, H_}, sfx);
    return b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {B_, H_}, std::vector<double>(B_ * H_, 0.0)), sfx);
  }

  std::string Clip(const std::string& x, const std::string& sfx) {
    if (!has_clip_) return x;
    std::string lo = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {-double(clip_)}), "clip_lo");
    std::string hi = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {double(clip_)}), "clip_hi");
    return Add("Min", {Add("Max", {x, lo}, sfx + "lo"), hi}, sfx);
  }

  std::string Act(const Activation& a, const std::string& x, const std::string& sfx) {
    if (a.op == "Affine" || a.op == "ScaledTanh") {
      std::string al = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {a.alpha}), sfx + "_alpha");
      std::string be = b_.AddConst(MakeConstFromDoubles("", DType::kFloat, {}, {a.beta}), sfx + "_beta");
      if (a.op == "Affine") return Add("Add", {Add("Mul", {x, al}, sfx + "m"), be}, sfx);
      return Add("Mul", {Add("Tanh", {Add("Mul", {x, be}, sfx + "m")}, sfx + "t"), al}, sfx);
    }
    Node& m = b_.Add(a.op, {x}, sfx);
    if (a.has_alpha) m.SetFloat("alpha", a.alpha);
    if (a.has_beta) m.SetFloat("beta", a.beta);
    return m.outputs[0];
  }

  std::string Add(const std::string& op, std::vector<std::string> in, const std::string& sfx) {
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
  void TransposeTo(const std::string& x, const std::vector<int64_t>& perm, const std::string& sfx,
                   const std::string& out) {
    b_.Add("Transpose", {x}, sfx, out).SetInts("perm", perm);
  }
  std::string Concat(const std::vector<std::string>& xs, int64_t axis, const std::string& sfx) {
    if (xs.size() == 1) return xs[0];
    Node& c = b_.Add("Concat", xs, sfx);
    c.SetInt("axis", axis);
    return c.outputs[0];
  }
  void Identity(const std::string& x, const std::string& out) { b_.Add("Identity", {x}, "out", out); }

  Graph& g_;
  const Node& n_;
  Builder& b_;
  int64_t gates_ = 1, layout_ = 0, S_ = 0, B_ = 0, I_ = 0, H_ = 0, D_ = 1;
  std::vector<Activation> acts_;
  bool has_clip_ = false;
  float clip_ = 0.f;
  std::string x2d_, seq_lens_, h_, c_, dir_y_;
};

Status Recurrent(Graph& g, const Node& n, Builder& b) { return Unroller(g, n, b).Run(); }

// The coefficients a0, a1, a2 of a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N),
// as the ONNX function bodies define them (float32 constants).
void WindowCoefficients(const std::string& op, double* a0, double* a1, double* a2) {
  *a2 = 0.0;
  if (op == "HannWindow") { *a0 = 0.5; *a1 = 0.5; }
  else if (op == "HammingWindow") { *a0 = double(25.f / 46.f); *a1 = double(1.f - 25.f / 46.f); }
  else { *a0 = double(0.42f); *a1 = 0.5; *a2 = double(0.08f); }
}

// A window whose size is read at run time (feature value_symbols): computed
// on the device from k = [0, size) and N = size (periodic) or max(size - 1, 1)
// (symmetric; a window of one element is a0 - a1 + a2 either way).
Status WindowByValue(const Node& n, Builder& b, const Dim& len) {
  DType dt = static_cast<DType>(n.GetInt("output_datatype", 1));
  if (DTypeSize(dt) == 0) return NodeUnimplemented(n, "output_datatype " + std::to_string(int(dt)) + " is not supported");
  double a0, a1, a2;
  WindowCoefficients(n.op_type, &a0, &a1, &a2);
  auto scalar = [&](double v, const std::string& suffix) {
    return b.AddConst(MakeConstFromDoubles("", DType::kFloat, {1}, {v}), suffix);
  };
  std::string ones;
  const std::string k = b.RunTimeIota(len, DType::kFloat, false, "k", &ones);
  Node& count = b.Add("ReduceSum", {ones}, "count");
  count.SetInts("axes", {0});
  count.SetInt("keepdims", 1);
  std::string denom = b.Out(count);
  if (n.GetInt("periodic", 1) == 0)
    denom = b.Op("Max", {b.Op("Sub", {denom, scalar(1.0, "one")}, "count_m1"), scalar(1.0, "floor")}, "denominator");
  const double pi = 3.14159265358979323846;
  const std::string ph = b.Op("Div", {b.Op("Mul", {k, scalar(2.0 * pi, "two_pi")}, "angle_num"), denom}, "angle");
  std::string v = b.Op("Sub", {scalar(a0, "a0"), b.Op("Mul", {scalar(a1, "a1"), b.Op("Cos", {ph}, "cos1")}, "term1")},
                       "window1");
  if (a2 != 0.0) {
    const std::string ph2 = b.Op("Mul", {ph, scalar(2.0, "two")}, "angle2");
    v = b.Op("Add", {v, b.Op("Mul", {scalar(a2, "a2"), b.Op("Cos", {ph2}, "cos2")}, "term2")}, "window2");
  }
  if (dt == DType::kFloat) {
    b.Add("Identity", {v}, "out", n.outputs[0]);
  } else {
    Node& c = b.Add("Cast", {v}, "out", n.outputs[0]);
    c.SetInt("to", static_cast<int64_t>(dt));
  }
  return Status::Ok();
}

// HannWindow / HammingWindow / BlackmanWindow: a function of the size input
// only, so the output is a constant when the size is known at conversion.
Status Window(Graph& g, const Node& n, Builder& b) {
  const Tensor* size = g.FindTensor(n.inputs[0]);
  if (!size || !size->is_const)
    return NodeInvalid(n, NotConstantMessage(g, "size", n.inputs[0]));
  if (size->numel() != 1) return NodeInvalid(n, "size must be a scalar");
  if (AnyDependsOnValue(size->sym)) return WindowByValue(n, b, size->AsDims()[0]);
  const int64_t len = size->AsInts()[0];
  if (len < 0 || len > (int64_t{1} << 24)) return NodeInvalid(n, "size " + std::to_string(len) + " out of range");
  const bool periodic = n.GetInt("periodic", 1) != 0;
  const double denom = periodic ? double(len) : double(len - 1);
  double a0, a1, a2;
  WindowCoefficients(n.op_type, &a0, &a1, &a2);
  const double pi = 3.14159265358979323846;
  std::vector<double> v(static_cast<size_t>(len));
  for (int64_t k = 0; k < len; ++k) {
    double ph = denom > 0 ? 2.0 * pi * double(k) / denom : 0.0;
    v[static_cast<size_t>(k)] = a0 - a1 * std::cos(ph) + a2 * std::cos(2.0 * ph);
  }
  DType dt = static_cast<DType>(n.GetInt("output_datatype", 1));
  if (DTypeSize(dt) == 0) return NodeUnimplemented(n, "output_datatype " + std::to_string(int(dt)) + " is not supported");
  std::string c = b.AddConst(MakeConstFromDoubles("", dt, {len}, v), "window");
  b.Add("Identity", {c}, "out", n.outputs[0]);
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& RnnDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"RNN", Recurrent},         {"GRU", Recurrent},           {"LSTM", Recurrent},
      {"HannWindow", Window},     {"HammingWindow", Window},    {"BlackmanWindow", Window},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
