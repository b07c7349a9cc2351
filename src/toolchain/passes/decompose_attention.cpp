// The transformer operators of opsets 23 and 24, Attention, RotaryEmbedding
// and TensorScatter (the KV-cache update), as MatMul / Softmax / Scatter /
// elementwise chains of operators the toolchain already lowers; see docs/toolchain.md, "Decomposed
// neural-network and quantization operators".
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); }

bool IsFloatType(DType t) { return t == DType::kFloat || t == DType::kFloat16 || t == DType::kDouble; }

// The static dimensions of input k, which must have `rank` of them.
StatusOr<std::vector<int64_t>> Dims(const Graph& g, const Node& n, size_t k, size_t rank, const std::string& what) {
  const Tensor* t = InputWithShape(g, n, k);
  if (!t) return NodeInvalid(n, what + " input '" + (k < n.inputs.size() ? n.inputs[k] : "") + "' has no static shape");
  if (t->shape.size() != rank)
    return NodeInvalid(n, what + " '" + t->name + "' must have rank " + Str(static_cast<int64_t>(rank)) + ", got " +
                              ShapeToString(t->shape));
  std::vector<int64_t> d;
  for (const Dim& v : t->shape) {
    if (v.is_symbolic())
      return NodeUnimplemented(n, what + " '" + t->name + "' has shape " + ShapeToString(t->shape) + "; " + n.op_type +
                                      " needs static sizes (config.json \"input_shapes\")");
    d.push_back(v.value());
  }
  return d;
}

std::string Scalar(Builder& b, DType dtype, double v, const std::string& suffix) {
  return b.AddConst(MakeConstFromDoubles("", dtype, {}, {v}), suffix);
}

std::string Unsqueeze(Builder& b, const std::string& x, int64_t axis, const std::string& suffix) {
  return b.Op("Unsqueeze", {x, b.ConstI64(suffix + "_axes", {axis})}, suffix);
}

// ---------------------------------------------------------------------------
// Attention: Y = softmax(Q K^T * scale + bias) V per head, with
//  - 3-D Q/K/V [B, S, heads * size] split into heads (q_num_heads,
//    kv_num_heads) and Y merged back;
//  - past_key / past_value concatenated before K / V on the sequence axis
//    (present_key / present_value outputs);
//  - grouped-query attention: each K/V head repeated for q_num_heads /
//    kv_num_heads consecutive query heads;
//  - bias: attn_mask (bool: 0 where true, -inf where false; float: added),
//    padded with -inf to the total sequence length when shorter; is_causal
//    adds -inf above the diagonal shifted by the past length; nonpad_kv_seqlen
//    (opset 24) adds -inf from each batch's valid length on;
//  - softcap: c * tanh(x / c) before the softmax; softmax_precision: the
//    softmax in that float type;
//  - qk_matmul_output: Q K^T (mode 0), with the bias (1), after softcap (2),
//    after softmax (3).
// Q and K are each scaled by sqrt(scale) before their product, as the ONNX
// reference computes it.
Status Attention(Graph& g, const Node& n, Builder& b) {
  const Tensor* q = InputWithShape(g, n, 0);
  if (!q || !HasInput(n, 1) || !HasInput(n, 2)) return NodeInvalid(n, "needs inputs Q, K and V with static shapes");
  const DType dt = q->dtype;
  if (!IsFloatType(dt))
    return NodeUnimplemented(n, "Q has data type " + std::string(DTypeName(dt)) +
                                    "; Attention is supported on float32, float16 and float64 only");
  const size_t rank = q->shape.size();
  if (rank != 3 && rank != 4) return NodeInvalid(n, "Q must have rank 3 or 4, got " + ShapeToString(q->shape));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> qd, Dims(g, n, 0, rank, "Q"));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> kd, Dims(g, n, 1, rank, "K"));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> vd, Dims(g, n, 2, rank, "V"));
  const int64_t B = qd[0];
  if (kd[0] != B || vd[0] != B) return NodeInvalid(n, "Q, K and V must have the same batch size");
  std::string Q = n.inputs[0], K = n.inputs[1], V = n.inputs[2];
  int64_t qh, kvh, sq, skv, hd, vhd;
  if (rank == 3) {
    qh = n.GetInt("q_num_heads", 0);
    kvh = n.GetInt("kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) return NodeInvalid(n, "3-D Q, K, V need positive q_num_heads and kv_num_heads");
    if (qd[2] % qh != 0 || kd[2] % kvh != 0 || vd[2] % kvh != 0)
      return NodeInvalid(n, "the hidden sizes of Q, K, V (" + Str(qd[2]) + ", " + Str(kd[2]) + ", " + Str(vd[2]) +
                                ") must be multiples of q_num_heads / kv_num_heads");
    sq = qd[1];
    skv = kd[1];
    if (vd[1] != skv) return NodeInvalid(n, "K and V must have the same sequence length");
    hd = qd[2] / qh;
    if (kd[2] / kvh != hd) return NodeInvalid(n, "Q and K must have the same head size");
    vhd = vd[2] / kvh;
    Q = b.Transpose(b.Reshape(Q, {B, sq, qh, hd}, "q_heads"), {0, 2, 1, 3}, "q_bhsd");
    K = b.Transpose(b.Reshape(K, {B, skv, kvh, hd}, "k_heads"), {0, 2, 1, 3}, "k_bhsd");
    V = b.Transpose(b.Reshape(V, {B, skv, kvh, vhd}, "v_heads"), {0, 2, 1, 3}, "v_bhsd");
  } else {
    qh = qd[1];
    sq = qd[2];
    hd = qd[3];
    kvh = kd[1];
    skv = kd[2];
    vhd = vd[3];
    if (kd[3] != hd) return NodeInvalid(n, "Q and K must have the same head size");
    if (vd[1] != kvh || vd[2] != skv) return NodeInvalid(n, "K and V must have the same heads and sequence length");
  }
  if (qh % kvh != 0)
    return NodeInvalid(n, "q_num_heads " + Str(qh) + " must be a multiple of kv_num_heads " + Str(kvh));

  // KV cache.
  int64_t past = 0;
  const bool has_past_k = HasInput(n, 4), has_past_v = HasInput(n, 5);
  if (has_past_k != has_past_v) return NodeInvalid(n, "past_key and past_value must be given together");
  if (has_past_k) {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> pk, Dims(g, n, 4, 4, "past_key"));
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> pv, Dims(g, n, 5, 4, "past_value"));
    if (pk[0] != B || pk[1] != kvh || pk[3] != hd || pv[0] != B || pv[1] != kvh || pv[3] != vhd || pv[2] != pk[2])
      return NodeInvalid(n, "past_key / past_value must be [B, kv_num_heads, past, head size] matching K and V");
    past = pk[2];
    Node& ck = b.Add("Concat", {n.inputs[4], K}, "present_key_concat");
    ck.SetInt("axis", 2);
    K = b.Out(ck);
    Node& cv = b.Add("Concat", {n.inputs[5], V}, "present_value_concat");
    cv.SetInt("axis", 2);
    V = b.Out(cv);
  }
  const int64_t total = past + skv;
  // The present outputs: the (concatenated) K and V in [B, kvh, total, size].
  auto emit_present = [&](size_t out, const std::string& t, const std::string& suffix) {
    if (out < n.outputs.size() && !n.outputs[out].empty()) b.Add("Identity", {t}, suffix, n.outputs[out]);
  };
  emit_present(1, K, "present_key");
  emit_present(2, V, "present_value");

  // Grouped-query attention: head h of K/V serves query heads h * r ... h * r + r - 1.
  if (qh != kvh) {
    const int64_t r = qh / kvh;
    auto repeat = [&](const std::string& t, int64_t size, const std::string& suffix) {
      const std::string u = b.Reshape(t, {B, kvh, 1, total, size}, suffix + "_group");
      const std::string e = b.Op("Expand", {u, b.ConstI64(suffix + "_expand", {B, kvh, r, total, size})}, suffix + "_repeat");
      return b.Reshape(e, {B, qh, total, size}, suffix + "_heads");
    };
    K = repeat(K, hd, "k");
    V = repeat(V, vhd, "v");
  }

  const double scale = n.HasAttr("scale") ? n.GetFloat("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(hd));
  const std::string root = Scalar(b, dt, std::sqrt(scale), "sqrt_scale");
  const std::string qs = b.Op("Mul", {Q, root}, "q_scaled");
  const std::string ks = b.Transpose(b.Op("Mul", {K, root}, "k_scaled"), {0, 1, 3, 2}, "k_transposed");
  const std::string qk = b.Op("MatMul", {qs, ks}, "qk");  // [B, qh, sq, total]

  // The additive bias, built from its parts (each broadcast against qk).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::string> bias;
  if (HasInput(n, 3)) {
    const Tensor* m = InputWithShape(g, n, 3);
    if (!m || m->shape.empty()) return NodeInvalid(n, "attn_mask '" + n.inputs[3] + "' needs a static shape of rank >= 1");
    if (m->dtype != DType::kBool && m->dtype != dt)
      return NodeInvalid(n, "attn_mask has data type " + std::string(DTypeName(m->dtype)) + "; expected bool or " +
                                DTypeName(dt));
    const Dim last = m->shape.back();
    if (last.is_symbolic() || last.value() > total)
      return NodeInvalid(n, "attn_mask " + ShapeToString(m->shape) + " has a last dimension larger than the total "
                                "sequence length " + Str(total) + " (or a symbolic one)");
    std::string mb = n.inputs[3];
    if (m->dtype == DType::kBool)
      mb = b.Op("Where", {mb, Scalar(b, dt, 0.0, "mask_keep"), Scalar(b, dt, -inf, "mask_drop")}, "mask_bias");
    if (last.value() < total) {
      std::vector<Dim> pads(2 * m->shape.size(), 0);
      pads.back() = total - last.value();
      mb = b.Op("Pad", {mb, b.ConstI64("mask_pads", pads), Scalar(b, dt, -inf, "mask_pad_value")}, "mask_padded");
    }
    bias.push_back(mb);
  }
  if (n.GetInt("is_causal", 0) != 0) {
    std::vector<double> c(static_cast<size_t>(sq * total), 0.0);
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < total; ++j)
        if (j - past > i) c[static_cast<size_t>(i * total + j)] = -inf;
    bias.push_back(b.AddConst(MakeConstFromDoubles("", dt, {sq, total}, c), "causal_bias"));
  }
  if (HasInput(n, 6)) {
    const Tensor* l = InputWithShape(g, n, 6);
    if (!l || l->shape.size() != 1 || l->shape[0].is_symbolic() || l->shape[0].value() != B || l->dtype != DType::kInt64)
      return NodeInvalid(n, "nonpad_kv_seqlen must be an int64 [batch] tensor");
    std::vector<int64_t> pos(static_cast<size_t>(total));
    for (int64_t j = 0; j < total; ++j) pos[static_cast<size_t>(j)] = j;
    const std::string positions = b.AddConst(MakeConstI64("", {1, total}, pos), "kv_positions");
    const std::string lens = b.Reshape(n.inputs[6], {B, 1}, "kv_lengths");
    const std::string valid = b.Op("Less", {positions, lens}, "kv_valid");  // [B, total]
    const std::string pb = b.Op("Where", {valid, Scalar(b, dt, 0.0, "pad_keep"), Scalar(b, dt, -inf, "pad_drop")},
                                "kv_padding_bias");
    bias.push_back(b.Reshape(pb, {B, 1, 1, total}, "kv_padding_bias_4d"));
  }
  std::string scores = qk;
  for (size_t i = 0; i < bias.size(); ++i) scores = b.Op("Add", {scores, bias[i]}, "biased" + Str(static_cast<int64_t>(i)));

  const int64_t mode = n.GetInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return NodeInvalid(n, "qk_matmul_output_mode " + Str(mode) + " is not 0, 1, 2 or 3");
  std::string qk_out = mode == 0 ? qk : scores;
  const float softcap = n.GetFloat("softcap", 0.f);
  if (softcap > 0.f) {
    const std::string c = Scalar(b, dt, softcap, "softcap");
    scores = b.Op("Mul", {b.Op("Tanh", {b.Op("Div", {scores, c}, "capped_in")}, "capped_tanh"), c}, "capped");
    if (mode == 2) qk_out = scores;
  }
  if (n.HasAttr("softmax_precision")) {
    const int64_t p = n.GetInt("softmax_precision", 0);
    const DType pt = static_cast<DType>(p);
    if (!IsFloatType(pt))
      return NodeUnimplemented(n, "softmax_precision " + Str(p) + " (" + DTypeName(pt) +
                                      ") is not supported (float32, float16, float64)");
    if (pt != dt) scores = b.Cast(scores, pt, "softmax_in_precision");
  }
  Node& sm = b.Add("Softmax", {scores}, "softmax");
  sm.SetInt("axis", -1);
  std::string probs = b.Out(sm);
  // Back to Q's type for the product with V.
  if (n.HasAttr("softmax_precision") && static_cast<DType>(n.GetInt("softmax_precision", 0)) != dt)
    probs = b.Cast(probs, dt, "softmax_out_precision");
  if (mode == 3) qk_out = probs;
  if (n.outputs.size() > 3 && !n.outputs[3].empty()) b.Add("Identity", {qk_out}, "qk_matmul_output", n.outputs[3]);

  if (rank == 4) {
    b.Add("MatMul", {probs, V}, "y", n.outputs[0]);
  } else {
    const std::string y = b.Op("MatMul", {probs, V}, "y_heads");  // [B, qh, sq, vhd]
    const std::string t = b.Transpose(y, {0, 2, 1, 3}, "y_bshd");
    b.Add("Reshape", {t, b.ConstI64("y_shape", {B, sq, qh * vhd})}, "y", n.outputs[0]);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// RotaryEmbedding: in the [B, S, H, D] view of the input (4-D [B, H, S, D]
// transposed, 3-D [B, S, H * D] split with num_heads), the first
// rotary_embedding_dim (default D) channels are rotated in pairs, (x1, x2) ->
// (cos x1 - sin x2, sin x1 + cos x2): the pairs are the two halves, or
// neighbouring channels when interleaved. cos / sin come from the caches
// gathered at position_ids, or are given per batch and position.
Status RotaryEmbedding(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x || !HasInput(n, 1) || !HasInput(n, 2)) return NodeInvalid(n, "needs input, cos_cache and sin_cache");
  if (!IsFloatType(x->dtype))
    return NodeUnimplemented(n, "input has data type " + std::string(DTypeName(x->dtype)) +
                                    "; RotaryEmbedding is supported on float32, float16 and float64 only");
  const size_t rank = x->shape.size();
  if (rank != 3 && rank != 4) return NodeInvalid(n, "input must have rank 3 or 4, got " + ShapeToString(x->shape));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> xd, Dims(g, n, 0, rank, "input"));
  const int64_t B = xd[0];
  int64_t S, H, D;
  std::string v;  // [B, S, H, D]
  if (rank == 4) {
    H = xd[1];
    S = xd[2];
    D = xd[3];
    v = b.Transpose(n.inputs[0], {0, 2, 1, 3}, "bshd");
  } else {
    H = n.GetInt("num_heads", 0);
    if (H <= 0 || xd[2] % H != 0)
      return NodeInvalid(n, "a 3-D input needs num_heads dividing its hidden size " + Str(xd[2]));
    S = xd[1];
    D = xd[2] / H;
    v = b.Reshape(n.inputs[0], {B, S, H, D}, "bshd");
  }
  int64_t rd = n.GetInt("rotary_embedding_dim", 0);
  if (rd == 0) rd = D;
  if (rd < 0 || rd > D || rd % 2 != 0)
    return NodeInvalid(n, "rotary_embedding_dim " + Str(rd) + " must be even and at most the head size " + Str(D));
  const int64_t half = rd / 2;
  const bool interleaved = n.GetInt("interleaved", 0) != 0;

  // cos / sin as [B, S, 1, half].
  std::string cs = n.inputs[1], sn = n.inputs[2];
  if (HasInput(n, 3)) {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> cd, Dims(g, n, 1, 2, "cos_cache"));
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> sd, Dims(g, n, 2, 2, "sin_cache"));
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> pd, Dims(g, n, 3, 2, "position_ids"));
    if (cd != sd || cd[1] != half)
      return NodeInvalid(n, "cos_cache and sin_cache must be [max_position, rotary_embedding_dim / 2 = " + Str(half) + "]");
    if (pd[0] != B || pd[1] != S) return NodeInvalid(n, "position_ids must be [batch, sequence] = [" + Str(B) + ", " + Str(S) + "]");
    cs = b.Op("Gather", {cs, n.inputs[3]}, "cos_at_positions");
    sn = b.Op("Gather", {sn, n.inputs[3]}, "sin_at_positions");
  } else {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> cd, Dims(g, n, 1, 3, "cos_cache"));
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> sd, Dims(g, n, 2, 3, "sin_cache"));
    if (cd != sd || cd[0] != B || cd[1] != S || cd[2] != half)
      return NodeInvalid(n, "without position_ids, cos_cache and sin_cache must be [batch, sequence, "
                            "rotary_embedding_dim / 2] = [" + Str(B) + ", " + Str(S) + ", " + Str(half) + "]");
  }
  cs = Unsqueeze(b, cs, 2, "cos");
  sn = Unsqueeze(b, sn, 2, "sin");

  const std::string rot = rd == D ? v : b.SliceAxis(v, 3, 0, rd, "rotated_part");
  std::string x1, x2;
  if (interleaved) {
    const std::string pairs = b.Reshape(rot, {B, S, H, half, 2}, "pairs");
    x1 = b.Reshape(b.SliceAxis(pairs, 4, 0, 1, "even"), {B, S, H, half}, "x1");
    x2 = b.Reshape(b.SliceAxis(pairs, 4, 1, 2, "odd"), {B, S, H, half}, "x2");
  } else {
    x1 = b.SliceAxis(rot, 3, 0, half, "x1");
    x2 = b.SliceAxis(rot, 3, half, rd, "x2");
  }
  const std::string real = b.Op("Sub", {b.Op("Mul", {cs, x1}, "cos_x1"), b.Op("Mul", {sn, x2}, "sin_x2")}, "real");
  const std::string imag = b.Op("Add", {b.Op("Mul", {sn, x1}, "sin_x1"), b.Op("Mul", {cs, x2}, "cos_x2")}, "imag");
  std::string rotated;
  if (interleaved) {
    Node& c = b.Add("Concat", {Unsqueeze(b, real, 4, "real_pair"), Unsqueeze(b, imag, 4, "imag_pair")}, "pairs_rotated");
    c.SetInt("axis", 4);
    rotated = b.Reshape(b.Out(c), {B, S, H, rd}, "rotated");
  } else {
    Node& c = b.Add("Concat", {real, imag}, "rotated");
    c.SetInt("axis", 3);
    rotated = b.Out(c);
  }
  std::string y = rotated;
  if (rd < D) {
    Node& c = b.Add("Concat", {rotated, b.SliceAxis(v, 3, rd, D, "kept_part")}, "with_kept");
    c.SetInt("axis", 3);
    y = b.Out(c);
  }
  if (rank == 4) {
    Node& t = b.Add("Transpose", {y}, "bhsd", n.outputs[0]);
    t.SetInts("perm", {0, 2, 1, 3});
  } else {
    b.Add("Reshape", {y, b.ConstI64("output_shape", {B, S, H * D})}, "output", n.outputs[0]);
  }
  return Status::Ok();
}


// TensorScatter-24 (the KV-cache update): present = past_cache with
// update[b, ..., s, ...] written at position write_indices[b] + s along
// `axis` (mode circular: modulo the cache length), as one ScatterElements
// whose indices are write_indices (0 when absent) plus a constant iota along
// `axis`, broadcast to the update's shape.
Status TensorScatter(Graph& g, const Node& n, Builder& b) {
  const Tensor* past = InputWithShape(g, n, 0);
  const Tensor* upd = InputWithShape(g, n, 1);
  if (!past || !upd) return NodeInvalid(n, "past_cache and update need static shapes");
  const size_t rank = past->shape.size();
  if (rank < 2 || upd->shape.size() != rank)
    return NodeInvalid(n, "past_cache " + ShapeToString(past->shape) + " and update " + ShapeToString(upd->shape) +
                              " must have the same rank, at least 2");
  int64_t axis = n.GetInt("axis", -2);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 1 || axis >= static_cast<int64_t>(rank))
    return NodeInvalid(n, "axis " + Str(n.GetInt("axis", -2)) + " must name a dimension other than the batch (0) of " +
                              ShapeToString(past->shape));
  const std::string mode = n.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return NodeInvalid(n, "mode '" + mode + "' is not one of linear, circular");
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> ps, Dims(g, n, 0, rank, "past_cache"));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> us, Dims(g, n, 1, rank, "update"));
  for (size_t i = 0; i < rank; ++i)
    if (static_cast<int64_t>(i) != axis && ps[i] != us[i])
      return NodeInvalid(n, "update " + ShapeToString(upd->shape) + " must match past_cache " +
                                ShapeToString(past->shape) + " in every dimension but axis " + Str(axis));
  const int64_t len = ps[static_cast<size_t>(axis)], seq = us[static_cast<size_t>(axis)];
  if (seq > len)
    return NodeInvalid(n, "update has " + Str(seq) + " positions along axis " + Str(axis) + ", more than the cache's " +
                              Str(len));
  std::vector<int64_t> iota_shape(rank, 1), iota(static_cast<size_t>(seq));
  iota_shape[static_cast<size_t>(axis)] = seq;
  for (int64_t s = 0; s < seq; ++s) iota[static_cast<size_t>(s)] = s;
  std::string idx = b.AddConst(MakeConstI64("", ToDims(iota_shape), iota), "positions");
  if (HasInput(n, 2)) {
    const Tensor* wi = InputWithShape(g, n, 2);
    if (!wi || wi->shape != Shape{past->shape[0]} || wi->dtype != DType::kInt64)
      return NodeInvalid(n, "write_indices must be int64 of shape [" + Str(ps[0]) + "]");
    std::vector<Dim> ws(rank, Dim(1));
    ws[0] = Dim(ps[0]);
    idx = b.Op("Add", {b.Reshape(n.inputs[2], ws, "write_indices_b"), idx}, "positions_b");
    if (mode == "circular") idx = b.Op("Mod", {idx, Scalar(b, DType::kInt64, static_cast<double>(len), "length")}, "wrapped");
  }
  idx = b.Op("Expand", {idx, b.ConstI64("update_shape", upd->shape)}, "indices");
  Node& sc = b.Add("ScatterElements", {n.inputs[0], idx, n.inputs[1]}, "scatter", n.outputs[0]);
  sc.SetInt("axis", axis);
  return Status::Ok();
}
}  // namespace

const std::map<std::string, DecomposeFn>& AttentionDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"Attention", Attention},
      {"RotaryEmbedding", RotaryEmbedding},
      {"TensorScatter", TensorScatter},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
